"""The server in this process (``RaceServer`` on a free port), and what a test
puts into it instead of the real thing: a clock it moves by hand, a store it can
switch off, a seed source it controls."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from server.app import RaceServer
from server.net.connection import Connection, Limits
from server.store.base import StoreUnavailable
from server.store.memory import MemoryStore
from tests.support.waiting import eventually

# Tests open many sessions and rooms from one address, flat out: no caps unless a
# test sets its own limits.
UNLIMITED = Limits(
    rate=1e6,
    burst=1e6,
    connections_per_address=10**6,
    sessions_per_minute=10**6,
    rooms_per_minute=10**6,
    wrong_codes_per_minute=10**6,
    sign_ups_per_minute=10**6,
    sign_ins_per_minute=10**6,
    wrong_link_codes_per_minute=10**6,
    friend_asks_per_minute=10**6,
)


class FakeClock:
    """A server clock the test moves by hand; timers wake when it passes them.

    :meth:`settled` is how a test knows that moving the clock has had all its
    effect: every timer asleep on it has seen the new time (the ones it woke have
    left, and fired). :meth:`next_deadline` and :meth:`asleep` let a test move it
    from one wake-up to the next, as a real clock would pass them."""

    def __init__(self, start: int = 1_764_430_000_000) -> None:
        self.ms = start
        self._changed = asyncio.Event()
        # Each sleeper (its task): the time it last saw, and when it wakes.
        self._asleep: dict[object, tuple[int, int]] = {}

    def now(self) -> int:
        return self.ms

    def advance(self, ms: int) -> None:
        self.ms += ms
        self._changed.set()

    async def sleep_until(self, deadline: int) -> None:
        me = asyncio.current_task() or object()
        try:
            while self.ms < deadline:
                self._asleep[me] = (self.ms, deadline)
                self._changed.clear()
                await self._changed.wait()
        finally:
            self._asleep.pop(me, None)

    @property
    def sleepers(self) -> int:
        return len(self._asleep)

    def asleep(self, task: object) -> bool:
        """Whether ``task`` sleeps on this clock and has seen its latest move."""
        got = self._asleep.get(task)
        return got is not None and got[0] == self.ms

    def next_deadline(self) -> int | None:
        """The earliest time a sleeper waits for (None: nobody sleeps)."""
        return min((deadline for _, deadline in self._asleep.values()), default=None)

    async def settled(self) -> None:
        """Until every timer still asleep has looked at the clock since it last moved.
        A timer the move woke does its work (with the in-memory store, up to
        queueing its frames) before it is off the list, so what it sends is on the
        sockets by now: a ping after this is answered after it."""
        await eventually(
            lambda: all(seen == self.ms for seen, _ in self._asleep.values()),
            what="the timers to see the clock",
        )


class FlakyStore(MemoryStore):
    """The memory store with a switch that makes appends fail like a lost Redis."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    async def append(self, code: str, records: Any) -> int:
        if self.down:
            raise StoreUnavailable("switched off by the test")
        return await super().append(code, records)


class Seeds:
    """A seed source for the server: queued seeds first, then made-up ones."""

    def __init__(self, *seeds: str) -> None:
        self.queue = list(seeds)
        self.counter = itertools.count()
        self.drawn: list[str] = []

    def __call__(self) -> str:
        seed = self.queue.pop(0) if self.queue else f"test-seed-{next(self.counter)}"
        self.drawn.append(seed)
        return seed


@asynccontextmanager
async def running_server(**kwargs: Any) -> AsyncIterator[RaceServer]:
    kwargs.setdefault("port", 0)
    kwargs.setdefault("static_dir", None)
    kwargs.setdefault("limits", UNLIMITED)
    # The daily deals are proven at start in a worker process: only the tests
    # about them ask for that (tests/test_daily.py).
    kwargs.setdefault("publish_daily", False)
    server = RaceServer(**kwargs)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


class Outbox:
    """Every frame the in-process server queues on any connection, at the moment
    it queues it. The server runs in the test's own event loop, so at any point
    where the test runs, ``len(outbox)`` is exactly what the server has sent so
    far: how a test proves nothing was sent up to that point, with no window."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.frames: list[bytes | str] = []
        # Both ways a frame is handed to a connection: at once, or to wait a
        # little and leave with others (docs/protocol.md "Batched events").
        for name in ("send_data", "send_later"):
            monkeypatch.setattr(Connection, name, self._tap(getattr(Connection, name)))

    def _tap(
        self, send: Callable[[Connection, bytes | str], None]
    ) -> Callable[[Connection, bytes | str], None]:
        def tapped(conn: Connection, data: bytes | str) -> None:
            self.frames.append(data)
            send(conn, data)

        return tapped

    def __len__(self) -> int:
        return len(self.frames)
