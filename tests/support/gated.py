"""A solver worker the test holds back: ``deals: winnable`` pools that stay dry
until the test says (tests/test_server_winnable.py, tests/test_web_winnable_wait.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

from server.rooms.proofs import solver_workers

__all__ = ["GatedExecutor"]


class GatedExecutor(Executor):
    """A worker process that solves one layout per permit the test hands out, so
    the test knows a refill is in progress (a solve submitted, not finished)."""

    def __init__(self) -> None:
        self._inner = solver_workers(1)  # as the server starts its own
        self._waiters = ThreadPoolExecutor(max_workers=4)
        self._permits = threading.Semaphore(0)
        self.submitted = 0
        self.finished = 0
        self.asked = asyncio.Event()  # set on every submit (from the event loop)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.submitted += 1
        self.asked.set()
        return self._waiters.submit(self._gated, fn, *args, **kwargs)

    def _gated(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self._permits.acquire()
        try:
            return self._inner.submit(fn, *args, **kwargs).result()
        finally:
            self.finished += 1

    @property
    def in_progress(self) -> int:
        return self.submitted - self.finished

    def allow(self, n: int = 1) -> None:
        self._permits.release(n)

    async def until_asked(self, submitted: int) -> None:
        while self.submitted < submitted:
            self.asked.clear()
            await self.asked.wait()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._permits.release(100)
        self._waiters.shutdown(wait=wait, cancel_futures=cancel_futures)
        self._inner.shutdown(wait=wait, cancel_futures=cancel_futures)
