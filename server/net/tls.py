"""HTTPS and WSS on the game port, from a certificate the operator provides.

Passkeys (server/accounts/passkeys.py) work in a secure context only: a page on
``https://`` or on ``http://localhost``. Friends on a LAN reach the server by a
name or an address that is not localhost, so their browsers need the page over
HTTPS; ``serve --tls-cert FILE --tls-key FILE`` gives it without a reverse proxy
(a certificate for the LAN name, e.g. from mkcert, whose root the friends'
devices trust). The one listener then speaks TLS for everything it serves: the
page, /healthz, /invite/CODE.svg and the game socket.
"""

from __future__ import annotations

import ssl
from pathlib import Path

__all__ = ["TlsError", "tls_context"]


class TlsError(ValueError):
    """The certificate or key cannot be used; the message says which and why."""


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server context of the library's secure defaults (TLS 1.2 or later) with
    the certificate chain and its key loaded, so a wrong file fails at start-up
    rather than at a player's first handshake."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(certfile=cert, keyfile=key)
    except FileNotFoundError as exc:
        raise TlsError(f"no such file: {exc.filename}") from None
    except ssl.SSLError as exc:
        raise TlsError(f"{cert} and {key} are not a certificate and its key: {exc}") from None
    return context
