"""The server's view of one client: a session, and the connection it speaks through.

A leaf module on purpose. The service (server/service/), the room
runners (server/rooms/) and the cluster's relay (server/cluster/) all hand frames
to "a client connection" without knowing whether it is a local socket
(server/net/connection.py) or a client of another node reached through the relay
(server/cluster/relay.py ``RemoteConn``). Both satisfy :class:`Peer`, so neither
side imports the other and nothing needs a ``type: ignore``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from protocol.messages import CloseCode, Code, Message

__all__ = ["Peer", "SessionState", "Site"]


@dataclass(frozen=True, slots=True)
class Site:
    """Where a client's page lives, as WebAuthn names it (server/accounts/
    passkeys.py): the RP ID its passkeys are scoped to, and the origins a
    ceremony may run from. Read from the connection's handshake and the
    server's settings (server/net/http.py ``site_of``), once per connection."""

    rp_id: str
    origins: tuple[str, ...]  # the first: the page's own (``link_base``), then ``--origin``s


class Peer(Protocol):
    """A client connection as the rest of the server uses it."""

    session: SessionState | None
    binary: bool  # msgpack (True) or JSON frames
    closing: bool
    address: str  # the client's address, which its limits are keyed by
    # ``scheme://host`` as the client reached the server (its handshake's Host),
    # for the links the server hands it; None when not known (a relayed client)
    link_base: str | None
    site: Site | None  # passkeys' RP ID and origins; None as for ``link_base``

    def send(self, msg: Message) -> None:
        """Queue one message (encoded for this connection); never blocks."""

    def send_data(self, data: bytes | str) -> None:
        """Queue one frame already encoded for this connection's subprotocol."""

    def send_later(self, data: bytes | str) -> None:
        """:meth:`send_data` for a room event that may wait a little to leave with
        others (docs/protocol.md "Batched events"); before any frame sent after it."""

    def error(self, rid: Any, code: Code, message: str, **extra: Any) -> None:
        """Queue an ``error`` reply."""

    def close(self, code: CloseCode, reason: str) -> None:
        """Close after the frames already queued."""


@dataclass(slots=True)
class SessionState:
    """The server's side of a session: an identity behind a secret token.

    It outlives connections (``peer`` is whichever connection speaks for it now,
    if any). A guest's room is kept in the store beside its hashed token; a
    signed-in one's on its account, where every device of the account finds it.
    """

    token: str  # a guest's session token, or the signed-in device's token
    player: str  # the public id
    name: str
    room_code: str | None = None
    peer: Peer | None = None
    account: str | None = None  # the account it is signed in to (None: a guest)
    device: str | None = None  # the device it is signed in on
