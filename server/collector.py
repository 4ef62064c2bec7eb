"""How the server process keeps the garbage collector's passes short.

CPython's collector scans the objects of a generation on each of its passes, and
a busy server holds mostly not long-lived but *middle-aged* objects: each
connection's read path (the coroutines, future and frame of websockets' wait for
that connection's next frame) and each room's last board view live until the next
frame, seconds later, and are then freed by reference counting. Left to itself,
the collector's young passes scan every one of them alive and promote them, and
the older passes that promotion sets off scan the whole heap: at 4,000 players,
passes of tens to hundreds of ms, each a stall of every room on the core
(docs/performance.md has the measurements).

Play makes no reference cycles (no young pass measured under load collected
anything), and a closed connection or room leaves none either
(tests/test_collector.py; websockets' subprotocol selector closure was one,
dropped after the handshake, server/net/connection.py; a room's timer and bots
hold its runner weakly, server/rooms/runner.py), so scanning what has lived a
moment buys nothing.
Ten times a second everything alive is frozen out of the collector
(``gc.freeze``: constant time; a frozen object is still freed by its reference
count), and the young passes see at most a tenth of a second of allocations. A
second was too long: at 6,000 players (2,000 moves a second) a second of what is
alive for the next frame made gen-0 passes of 25–30 ms, ten in ten seconds; at a
tenth of a second, none ran. A cycle made all the same (a
failed task's traceback, a library's) is reclaimed by one full collection,
everything thawed, every half hour: the one long pass left, as long as the whole
heap takes to walk (docs/performance.md gives it at each scale).

:class:`Collector` is that policy with time passed in (it reads no clock), so a
test drives it; :func:`collect_garbage` runs it in the server's event loop.
"""

from __future__ import annotations

import asyncio
import gc
from dataclasses import dataclass

__all__ = ["FREEZE_EVERY", "FULL_EVERY", "Collector", "collect_garbage"]

FREEZE_EVERY = 0.1  # seconds between two freezes of everything alive
FULL_EVERY = 1800.0  # seconds between two full collections, everything thawed


@dataclass(slots=True)
class Collector:
    full_every: float = FULL_EVERY
    full_at: float | None = None  # when the last full collection ran

    def tick(self, now: float) -> None:
        """Called every :data:`FREEZE_EVERY` seconds (the first call collects in full)."""
        if self.full_at is None or now - self.full_at >= self.full_every:
            gc.unfreeze()
            gc.collect()
            self.full_at = now
        gc.freeze()


async def collect_garbage(every: float = FREEZE_EVERY) -> None:
    loop = asyncio.get_running_loop()
    collector = Collector()
    while True:
        collector.tick(loop.time())
        await asyncio.sleep(every)
