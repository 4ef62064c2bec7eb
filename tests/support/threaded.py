"""A RaceServer on its own event loop in a thread, for browser tests: Playwright's
sync API holds the test's thread, and a test that moves the server's clock (or
holds its solver back) needs the server in its own process space to reach it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, Self, TypeVar

from server.app import DEFAULT_STATIC, RaceServer
from tests.support.inprocess import UNLIMITED, FakeClock

T = TypeVar("T")


class ThreadedServer:
    """Started and stopped as a context manager. ``clock`` is the test's own
    (:class:`FakeClock`, moved with :meth:`advance`); without one the server
    keeps real time. ``options`` go to RaceServer as they are."""

    def __init__(self, clock: FakeClock | None = None, **options: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.clock = clock
        if clock is not None:
            options["clock"] = clock
        self.server = RaceServer(port=0, static_dir=DEFAULT_STATIC, limits=UNLIMITED, **options)
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def call(self, work: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        """``work`` run on the server's loop, its result awaited here."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout)

    def __enter__(self) -> Self:
        self._thread.start()
        self.call(self.server.start())
        return self

    def __exit__(self, *_exc: object) -> None:
        self.call(self.server.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(30)
        self.loop.close()

    def advance(self, ms: int) -> None:
        clock = self.clock
        assert clock is not None, "a server on real time"
        self.loop.call_soon_threadsafe(clock.advance, ms)

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"
