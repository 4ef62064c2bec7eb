"""The socket under a session: URL rules, opening with a subprotocol, pacing sends.

Kept apart from :mod:`client.session` so that the session reads as protocol logic
only. The pacing is here because the server's rate limit (50 frames/s, bursts of
100, then ``rate_limited`` and eventually close code 4008) is per connection: a
flat-out bot must stay under it by itself rather than learn it from errors.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Subprotocol

from .codec import MSGPACK, SUBPROTOCOLS

__all__ = ["MAX_FRAME", "RateLimiter", "normalize_url", "open_socket"]

# Frames from the server may be large (a snapshot holds revealed boards and move
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


async def open_socket(url: str, kind: str = "msgpack") -> tuple[ClientConnection, str]:
    """Open the WebSocket offering one subprotocol; return it and what was agreed.

    ``kind`` is ``"msgpack"`` or ``"json"``. A server that picks none speaks msgpack
    (docs/protocol.md "Transport").
    """
    offered = SUBPROTOCOLS[kind]
    ws = await connect(
        normalize_url(url),
        subprotocols=[Subprotocol(offered)],
        max_size=MAX_FRAME,
        compression=None,  # frames are small maps; deflate costs more CPU than it saves
        open_timeout=10,
        close_timeout=2,
        proxy=None,
    )
    return ws, ws.subprotocol or MSGPACK


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
