"""Waiting on a client/ library session: for its room to reach a state, or for the
event that says it did."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import pytest

from client import Session
from client.room import RoomEvent, RoomView
from tests.support.waiting import TIMEOUT


async def until(
    session: Session, check: Callable[[RoomView], bool], timeout: float = TIMEOUT
) -> RoomView:
    """Wait until the session's room satisfies ``check`` (woken by each update of
    the room, not polled); fail the test on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        room = session.room
        if room is not None and check(room):
            return room
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"timed out waiting; room is {room}")
        await session.wait_update(timeout=left)


async def next_event(
    events: AsyncIterator[RoomEvent],
    check: Callable[[RoomEvent], bool] = lambda _: True,
    timeout: float = TIMEOUT,
) -> tuple[RoomEvent, list[RoomEvent]]:
    """The first event of the stream that satisfies ``check``, and every event
    read up to it (itself included)."""
    seen: list[RoomEvent] = []
    async with asyncio.timeout(timeout):
        async for event in events:
            seen.append(event)
            if check(event):
                return event, seen
    pytest.fail(f"the stream ended first; it held {[e.type for e in seen]}")
