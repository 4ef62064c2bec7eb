"""Waiting for a condition that no event announces: the tests' one poll loop.

A test waits on the event that proves what it needs (a frame, a reply, a counter
in the server, a process state); where the only sign is a state to look at (a key
in Redis, a counter, a line in a log), it polls that state here, never with a
bare ``sleep``. The timeout only bounds a wait that would otherwise hang: no test
asserts how long anything took (figures belong in bench/).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

import pytest

# A bound on a wait that would otherwise hang, never a measure: generous, because
# the suite runs beside other work (a second copy of itself, on two cores) and a
# wait that takes a second on a quiet machine takes many on a busy one.
TIMEOUT = 60.0
PAUSE = 0.01  # between two looks


async def eventually(
    check: Callable[[], Any],
    timeout: float = TIMEOUT,
    *,
    what: str = "",
    retry: tuple[type[BaseException], ...] = (),
    pause: float = PAUSE,
) -> Any:
    """Until ``check()`` (awaited when it returns an awaitable) is truthy; returns
    that value. An exception of a ``retry`` type counts as "not yet" (the last one
    is raised on timeout); the test fails on timeout otherwise. ``pause`` is the
    time between two looks, shorter for a wait repeated thousands of times."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return value
        except retry:
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what or check}")
        await asyncio.sleep(pause)


def eventually_blocking(
    check: Callable[[], Any],
    timeout: float = TIMEOUT,
    *,
    what: str = "",
    pause: Callable[[], None] = lambda: time.sleep(PAUSE),
) -> Any:
    """:func:`eventually` for code with no event loop: a process starting, a page
    under Playwright's sync API (``pause`` then lets the page run its callbacks)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what or check} (last: {value!r})")
        pause()
