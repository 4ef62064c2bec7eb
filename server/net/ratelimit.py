"""Per-connection flood control: a token bucket, and strikes for a client that
keeps going over it (docs/protocol.md "Transport": 50 frames/s sustained, bursts of 100; 200
frames over the limit close the connection with 4008).

Strikes are forgiven only once the bucket has filled up again, i.e. after the
client has been quiet for a while: a flooder that paces itself to just above the
limit still piles up strikes.
"""

from __future__ import annotations

__all__ = ["TokenBucket"]


class TokenBucket:
    def __init__(self, rate: float = 50.0, burst: float = 100.0, max_strikes: int = 200) -> None:
        self.rate = rate
        self.burst = burst
        self.max_strikes = max_strikes
        self.tokens = burst
        self.strikes = 0
        self._last: float | None = None

    def take(self, now: float) -> bool:
        """Spend a token for one frame at ``now`` (seconds, monotonic); False when
        over the limit (a strike)."""
        if self._last is not None:
            self.tokens = min(self.burst, self.tokens + (now - self._last) * self.rate)
        self._last = now
        if self.tokens >= self.burst:
            self.strikes = 0
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        self.strikes += 1
        return False

    @property
    def exhausted(self) -> bool:
        """The client kept flooding: close it."""
        return self.strikes >= self.max_strikes
