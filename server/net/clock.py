"""The server's clock, injectable so that tests need not wait five minutes.

The room core never reads a clock: the shell reads this one and passes ``now`` in
(docs/rules.md §5.4: "the clock is the server's"). Round time limits are the only timers, and
they sleep through :meth:`Clock.sleep_until`, so a test clock can jump ahead and
wake them at once.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

__all__ = ["Clock", "SystemClock"]


class Clock(Protocol):
    def now(self) -> int:
        """Wall-clock milliseconds since the Unix epoch."""

    async def sleep_until(self, deadline: int) -> None:
        """Return once :meth:`now` has reached ``deadline`` (or about then)."""


class SystemClock:
    def now(self) -> int:
        return time.time_ns() // 1_000_000

    async def sleep_until(self, deadline: int) -> None:
        # Sleep in bounded steps: the wall clock may be stepped while we sleep.
        while (left := deadline - self.now()) > 0:
            await asyncio.sleep(min(left, 60_000) / 1000)
