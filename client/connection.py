"""The socket under a session: URL rules, opening with a subprotocol, reopening
with backoff after a drop, pacing sends.

Kept apart from :mod:`client.session` so that the session reads as protocol logic
only; the load driver's seats (:mod:`client.load`) open and reopen their sockets
with the same functions. The pacing is here because the server's rate limit (50 frames/s, bursts of
100, then ``rate_limited`` and eventually close code 4008) is per connection: a
flat-out bot must stay under it by itself rather than learn it from errors.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Subprotocol

from .codec import MSGPACK, SUBPROTOCOLS, FrameError

__all__ = ["MAX_FRAME", "RETRYABLE", "RateLimiter", "normalize_url", "open_socket", "with_backoff"]

log = logging.getLogger(__name__)

T = TypeVar("T")

# Frames from the server may be large (a room view holds revealed boards and move
# logs of up to 8 players); the 64 KiB limit of the protocol binds what we send.
MAX_FRAME = 16 * 1024 * 1024


def normalize_url(url: str) -> str:
    """Accept ``ws://host:port``, ``http://host:port/`` or ``host:port``; give ``…/ws``.

    People paste the invite link's origin; the socket always lives at ``/ws``.
    """
    if "://" not in url:
        url = "ws://" + url
    parts = urlsplit(url)
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    path = parts.path.rstrip("/")
    if not path.endswith("/ws"):
        path += "/ws"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


async def open_socket(
    url: str, kind: str = "msgpack", *, open_timeout: float = 10, max_queue: int | None = 16
) -> tuple[ClientConnection, str]:
    """Open the WebSocket offering one subprotocol; return it and what was agreed.

    ``kind`` is ``"msgpack"`` or ``"json"``. A server that picks none speaks msgpack
    (docs/protocol.md "Transport"). ``max_queue`` is websockets' bound on frames
    received and not yet read (None: no bound).
    """
    offered = SUBPROTOCOLS[kind]
    ws = await connect(
        normalize_url(url),
        subprotocols=[Subprotocol(offered)],
        max_size=MAX_FRAME,
        max_queue=max_queue,
        compression=None,  # frames are small maps; deflate costs more CPU than it saves
        open_timeout=open_timeout,
        close_timeout=2,
        proxy=None,
    )
    return ws, ws.subprotocol or MSGPACK


# What a failed attempt to reopen a session may raise and still deserve another
# try: the server is away or refused the handshake, or the socket broke (or said
# something unreadable) during hello. A refusal of the hello itself (a
# ServerError: ``unknown_token``) is final.
RETRYABLE = (OSError, InvalidHandshake, TimeoutError, ConnectionClosed, FrameError)


async def with_backoff(
    attempt: Callable[[], Awaitable[T]], *, lasting: float, stopped: Callable[[], bool]
) -> T | None:
    """Await ``attempt()`` until it returns, again after each :data:`RETRYABLE` error.

    The pauses between tries start at 0.1 s and double up to 2 s. Gives up (None)
    when the next try would begin more than ``lasting`` seconds after the first, or
    when ``stopped()`` is true before a try. Any other error is raised.

    websockets' reconnecting iterator (``async for ws in connect(…)``) does not fit
    a session: it counts a try as good once the handshake is done, so a socket that
    breaks during ``hello`` is reopened at once, with no backoff; it has no time
    limit; it retries the first connection too, which must fail loudly; and each
    socket lives only for one turn of the loop's body, where a session hands its
    socket to a reader task.
    """
    deadline = time.monotonic() + lasting
    delay = 0.1
    while not stopped():
        try:
            return await attempt()
        except RETRYABLE as exc:
            log.info("resume failed: %s", exc)
        if time.monotonic() + delay > deadline:
            return None
        await asyncio.sleep(delay)
        delay = min(delay * 2, 2.0)
    return None


class RateLimiter:
    """A token bucket: ``rate`` frames a second, ``burst`` at once; 0 disables it.

    The defaults sit under the server's limit with room for timing jitter between
    our clock and the server's.
    """

    def __init__(self, rate: float = 40.0, burst: int = 40) -> None:
        self.rate = rate
        self.burst = float(burst)
        self._tokens = float(burst)
        self._stamp = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        if self.rate <= 0:
            return
        async with self._lock:  # first come, first served
            while True:
                now = time.monotonic()
                self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
                self._stamp = now
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return
                await asyncio.sleep((1.0 - self._tokens) / self.rate)
