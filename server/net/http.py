"""Plain HTTP on the WebSocket port: /healthz, /metrics and the browser client.

websockets hands every request to ``process_request`` before its handshake; a
request for ``/ws`` goes on to become a WebSocket, anything else is answered here
and the connection closes. Static files come from client/web/ (when it exists),
``/`` being its index.html; paths are resolved and must stay inside that folder.

As a careful server does it: GET and HEAD only (405 otherwise; HEAD gets the
headers of GET and no body); every answer forbids framing and inline code
(``Content-Security-Policy``: the page's own scripts, styles and socket only)
and sends no referrer. The WebSocket handshake is refused (403) to a page of
another origin — a browser sends ``Origin``, so another site's page cannot drive
a player's session with the player's cookies or network — unless that origin is
listed (a client hosted elsewhere); clients without ``Origin`` (the Python
client, tools) are not browsers and pass. ``/metrics`` tells about every room, so
it answers loopback peers only, unless it has a listener of its own
(``serve --metrics HOST:PORT``).

``/p/HANDLE`` is a player's public page: the browser client's own index.html,
which reads the handle from its address and asks the server for that record
over its socket (whether the handle exists is not told here). ``/daily`` is
that page too, opened on the daily deals: the published commitments and the
revealed days, which it asks for with ``daily`` (server/daily/).

``/invite/CODE.svg`` is a room's invite link as a QR code, drawn here (with
segno) rather than by a script in the page, so the page keeps its strict policy
and friends at the same table join by pointing a phone at the host's screen. It
names the link from the request's own ``Host`` and :func:`page_scheme` (https
when this server speaks TLS, ``serve --tls-cert``, or the proxy in deploy/ says
so in ``X-Forwarded-Proto``), and answers for any well-formed code: whether a room
exists is not told to anyone who asks.

An address longer than :data:`MAX_PATH` is refused, 414, before anything looks
at it: none of this server's is half as long, and a name past the file
system's own limit would fail in the look-up. Longer request lines (and header
lines) never get here: websockets reads at most 8 KiB a line and 128 headers,
and refuses anything over, 414 or 431, without buffering more.
"""

from __future__ import annotations

import email.utils
import http
import io
import ipaddress
import json
import mimetypes
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import segno
from prometheus_client import CONTENT_TYPE_LATEST
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from ..peer import Site

__all__ = [
    "DEFAULT_STATIC",
    "WS_PATH",
    "HttpRoutes",
    "link_base",
    "page_scheme",
    "qr_svg",
    "site_of",
]

WS_PATH = "/ws"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
_METHODS = ("GET", "HEAD")
_INVITE_QR = re.compile(r"/invite/([0-9A-Z]{6})\.svg")
_PROFILE = re.compile(r"/p/[^/]{1,200}/?")  # a player's public page: the page itself
_HOST = re.compile(r"[A-Za-z0-9.-]+(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?")
DEFAULT_STATIC = Path(__file__).resolve().parents[2] / "client" / "web"
MAX_PATH = 2048  # characters of the request target, query included
_MAX_FILE = 16 * 1024 * 1024

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".webmanifest": "application/manifest+json",
    ".wasm": "application/wasm",
    ".txt": "text/plain; charset=utf-8",
}


def response(status: int, body: bytes, content_type: str, **headers: str) -> Response:
    code = http.HTTPStatus(status)
    hdrs = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(body))),
            ("Content-Type", content_type),
            ("X-Content-Type-Options", "nosniff"),
            ("Content-Security-Policy", CSP),
            ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY"),
        ]
    )
    for name, value in headers.items():
        hdrs[name.replace("_", "-")] = value
    return Response(code.value, code.phrase, hdrs, body)


def _text(status: int, text: str, **headers: str) -> Response:
    return response(status, text.encode(), "text/plain; charset=utf-8", **headers)


def not_found() -> Response:
    return _text(404, "not found\n")


def too_many(why: str) -> Response:
    return _text(429, f"too many requests: {why}\n", Retry_After="10")


def other_protocol(spoken: Sequence[str]) -> Response:
    """A handshake that offers only subprotocols this server does not speak: a
    client of an older version (docs/protocol.md, "Transport"), told so plainly
    instead of being handed frames it would misread."""
    text = f"this server speaks {' or '.join(spoken)}: update or reload the client\n"
    return _text(426, text, Upgrade="websocket")


def page_scheme(headers: Headers, secure: bool) -> str:
    """The scheme the browser reached the page by: https when this listener
    speaks TLS, or when a proxy in front says it does (deploy/nginx.conf)."""
    return "https" if secure or headers.get("X-Forwarded-Proto") == "https" else "http"


def link_base(headers: Headers, secure: bool = False) -> str | None:
    """``scheme://host`` as the client reached us: the request's own ``Host`` and
    :func:`page_scheme`; None without a sane Host."""
    host = headers.get("Host") or ""
    if not _HOST.fullmatch(host):
        return None
    return f"{page_scheme(headers, secure)}://{host}"


def site_of(
    headers: Headers, secure: bool, rp_id: str | None, origins: Sequence[str] = ()
) -> Site | None:
    """Where passkeys of a connection with these handshake headers belong.

    The origin is the one the page was loaded from: the scheme and ``Host`` the
    browser reached this server by (a browser's socket opens only from there or
    from a listed ``--origin``, which are its other possible origins). The RP ID
    is ``--rp-id`` when the operator set one, else the ``Host``'s name: right for
    ``localhost`` and for one LAN name without any setting. Taking them from the
    request gives an attacker nothing: a passkey signs only for the RP ID it was
    made under, and only a page of that domain can ask it to (the browser
    enforces both), so a forged ``Host`` can only expect signatures that no
    victim's passkey makes. None without a usable ``Host``."""
    own = link_base(headers, secure)
    if own is None:
        return None
    own = own.lower()
    host = own.split("://", 1)[1]
    name = host.rpartition("]")[0].lstrip("[") if host.startswith("[") else host.split(":")[0]
    listed = tuple(o.rstrip("/").lower() for o in origins if o.rstrip("/").lower() != own)
    return Site(rp_id.lower() if rp_id else name, (own, *listed))


def qr_svg(url: str, title: str) -> str:
    """``url`` as an SVG QR code, black on white whatever the page's theme:
    scanners want the contrast."""
    out = io.BytesIO()
    segno.make(url, error="m").save(
        out, kind="svg", scale=6, border=2, dark="#000", light="#fff", xmldecl=False,
        title=title,
    )  # fmt: skip
    return out.getvalue().decode("utf-8")


def invite_qr(code: str, headers: Headers, secure: bool) -> Response:
    """The invite link of room ``code`` (``/#join=CODE``, as the page's Copy gives
    it) as an SVG QR code."""
    base = link_base(headers, secure)
    if base is None:
        return _text(400, "a Host header is needed to name the invite link\n")
    svg = qr_svg(f"{base}/#join={code}", f"Invite to room {code}")
    return response(200, svg.encode("utf-8"), "image/svg+xml", Cache_Control="no-store")


def _loopback(connection: Any) -> bool:
    peer = getattr(connection, "remote_address", None)
    try:
        return peer is not None and ipaddress.ip_address(peer[0]).is_loopback
    except ValueError:
        return False


class HttpRoutes:
    """Answers the plain HTTP requests; ``health`` and ``metrics`` are callbacks
    into the server so this module knows nothing of rooms.

    ``origins``: browser origins besides the server's own that may open the
    WebSocket. ``metrics_anywhere``: answer /metrics to any peer (its own
    listener, bound where the operator chose); otherwise loopback peers only.
    ``secure``: this listener speaks TLS (links it names are https)."""

    def __init__(
        self,
        health: Callable[[], dict[str, Any]],
        metrics: Callable[[], bytes],
        static_dir: Path | None = DEFAULT_STATIC,
        *,
        origins: Sequence[str] = (),
        metrics_anywhere: bool = False,
        metrics_here: bool = True,
        secure: bool = False,
    ) -> None:
        self._health = health
        self.secure = secure
        self._metrics = metrics
        self._static = static_dir.resolve() if static_dir is not None else None
        self._origins = {o.rstrip("/").lower() for o in origins}
        self._metrics_anywhere = metrics_anywhere
        self._metrics_here = metrics_here

    def __call__(self, connection: Any, request: Request) -> Response | None:
        if len(request.path) > MAX_PATH:
            return _text(414, f"the address is too long: at most {MAX_PATH} characters\n")
        path = urlsplit(request.path).path
        if request.method not in _METHODS or (path == WS_PATH and request.method != "GET"):
            allow = "GET" if path == WS_PATH else ", ".join(_METHODS)
            return _text(405, f"method not allowed: use {allow}\n", Allow=allow)
        if path == WS_PATH:
            if not self._origin_ok(request):
                return _text(403, "this origin may not open the game socket\n")
            return None  # the WebSocket handshake goes on
        answer = self._answer(connection, path, request.headers)
        if request.method == "HEAD":
            return Response(answer.status_code, answer.reason_phrase, answer.headers, b"")
        return answer

    def _answer(self, connection: Any, path: str, headers: Headers) -> Response:
        invite = _INVITE_QR.fullmatch(path)
        if invite is not None:
            return invite_qr(invite.group(1), headers, self.secure)
        if _PROFILE.fullmatch(path) or path in ("/daily", "/daily/"):
            return self._file("/")
        if path == "/healthz":
            body = json.dumps(self._health()).encode()
            return response(200, body, "application/json", Cache_Control="no-store")
        if path == "/metrics" and self._metrics_here:
            if not (self._metrics_anywhere or _loopback(connection)):
                return _text(403, "metrics answer loopback peers only\n")
            return response(200, self._metrics(), CONTENT_TYPE_LATEST, Cache_Control="no-store")
        return self._file(path)

    def _origin_ok(self, request: Request) -> bool:
        origin = request.headers.get("Origin")
        if origin is None:
            return True  # not a browser
        origin = origin.rstrip("/").lower()
        if origin in self._origins:
            return True
        parts = urlsplit(origin)
        host = (request.headers.get("Host") or "").lower()
        return parts.scheme in ("http", "https") and bool(host) and parts.netloc == host

    def _file(self, path: str) -> Response:
        root = self._static
        if root is None or not root.is_dir():
            return _text(404, "no browser client is installed on this server\n")
        rel = unquote(path).lstrip("/")
        if "\x00" in rel or "\\" in rel:
            return _text(404, "not found\n")
        try:
            target = (root / rel).resolve()
        except (OSError, RuntimeError):
            return _text(404, "not found\n")
        if not target.is_relative_to(root):
            return _text(404, "not found\n")
        try:  # (a name too long for the file system is an OSError too)
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file() or target.stat().st_size > _MAX_FILE:
                return _text(404, "not found\n")
            body = target.read_bytes()
        except OSError:
            return _text(404, "not found\n")
        ctype = _TYPES.get(target.suffix.lower()) or (
            mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        )
        return response(200, body, ctype, Cache_Control="no-cache")
