"""Flood control that a client cannot reset by reconnecting.

Frames (requests, and WebSocket pings and pongs too: they cost the server a
write each) are paid from **token buckets keyed by session and by client
address**, not by connection: a client that resumes its session, or opens a new
one from the same address, finds its buckets as it left them. A session's
bucket holds the documented rate (docs/protocol.md "Transport": 50 frames/s,
bursts of 100); an address's holds a few times that, for friends behind one
router. Before ``hello`` only the address pays.

Strikes (frames refused for being over the limit) are kept with the bucket and
forgiven only once it has filled up again, i.e. after the client has been quiet
for a while: a flooder that paces itself to just above the limit, or reconnects,
still piles them up, and is closed with 4008.

What an address may **create** is capped per minute (server/net/allowances.py)
by :class:`Allowance`, a bucket without strikes, kept here beside the frame
buckets.

Buckets that are full again and idle are dropped (:meth:`Limiter.prune`), so
memory follows the clients active in the last minutes, whatever came before.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Allowance", "Limiter", "TokenBucket", "client_address"]


class TokenBucket:
    def __init__(self, rate: float = 50.0, burst: float = 100.0, max_strikes: int = 200) -> None:
        self.rate = rate
        self.burst = burst
        self.max_strikes = max_strikes
        self.tokens = burst
        self.strikes = 0
        self._last: float | None = None

    def refill(self, now: float) -> None:
        if self._last is not None:
            self.tokens = min(self.burst, self.tokens + (now - self._last) * self.rate)
        self._last = now
        if self.tokens >= self.burst:
            self.strikes = 0

    def take(self, now: float) -> bool:
        """Spend a token for one frame at ``now`` (seconds, monotonic); False when
        over the limit (a strike)."""
        self.refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        self.strikes += 1
        return False

    @property
    def exhausted(self) -> bool:
        """The client kept flooding: close it."""
        return self.strikes >= self.max_strikes

    def idle(self, now: float) -> bool:
        """Full again, with nothing owed: as good as a new bucket."""
        self.refill(now)
        return self.tokens >= self.burst


@dataclass(frozen=True, slots=True)
class Allowance:
    """How many of one thing an address may create a minute."""

    per_minute: int

    def bucket(self) -> TokenBucket:
        return TokenBucket(self.per_minute / 60.0, float(self.per_minute), max_strikes=1 << 30)


class Limiter:
    """The buckets of every session and address, shared by their connections."""

    def __init__(self, rate: float, burst: float, max_strikes: int, address_factor: float) -> None:
        self.rate = rate
        self.burst = burst
        self.max_strikes = max_strikes
        self.address_factor = address_factor
        self._frames: dict[str, TokenBucket] = {}
        self._allowances: dict[tuple[str, str], TokenBucket] = {}
        self._pruned_at = 0.0

    def frames(self, key: str, *, address: bool) -> TokenBucket:
        """The frame bucket of a session (``address`` False) or an address."""
        bucket = self._frames.get(key)
        if bucket is None:
            factor = self.address_factor if address else 1.0
            bucket = TokenBucket(self.rate * factor, self.burst * factor, self.max_strikes)
            self._frames[key] = bucket
        return bucket

    def allow(self, what: str, address: str, allowance: Allowance, now: float) -> bool:
        """Spend one of ``address``'s ``what`` for this minute; False when none is left."""
        return self._allowance(what, address, allowance).take(now)

    def left(self, what: str, address: str, allowance: Allowance, now: float) -> bool:
        """Whether ``address`` has one ``what`` left this minute, spending none."""
        bucket = self._allowance(what, address, allowance)
        bucket.refill(now)
        return bucket.tokens >= 1.0

    def _allowance(self, what: str, address: str, allowance: Allowance) -> TokenBucket:
        key = (what, address)
        bucket = self._allowances.get(key)
        if bucket is None:
            bucket = self._allowances[key] = allowance.bucket()
        return bucket

    def prune(self, now: float, every: float = 60.0) -> None:
        """Drop the buckets that are as good as new; at most once per ``every`` s."""
        if now - self._pruned_at < every:
            return
        self._pruned_at = now
        for table in (self._frames, self._allowances):
            for key in [k for k, b in table.items() if b.idle(now)]:
                del table[key]  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self._frames) + len(self._allowances)


def client_address(peer: str, forwarded_for: str | None, trusted: Iterable[str]) -> str:
    """Who the client is: the socket's peer, or — when the peer is a trusted
    proxy (an address or network, e.g. the compose file's nginx) — the last
    address that proxy put in ``X-Forwarded-For`` (the one it saw connect;
    earlier entries are the client's own word)."""
    if forwarded_for:
        try:
            ip = ipaddress.ip_address(peer)
        except ValueError:
            return peer
        if any(ip in ipaddress.ip_network(net, strict=False) for net in trusted):
            last = forwarded_for.split(",")[-1].strip()
            try:
                return str(ipaddress.ip_address(last))
            except ValueError:
                return peer
    return peer
