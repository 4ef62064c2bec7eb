"""Fan-out of room updates: event streams for readers, a wake-up for pollers.

Two ways to follow a room, because consumers differ: the watcher wants every event
in order (:meth:`EventHub.events`), while a bot only needs to know that *something*
changed so it can look at :attr:`Session.room` again (:meth:`EventHub.wait_update`)
and must not build up a backlog of events it never reads.

Every room event comes through, the unnumbered ones too (a Timed tick, and
``finding_deal``: the server is finding a winnable deal, folded into
:attr:`RoomView.finding_deal`), with the seq of the event before them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from .errors import ClientError
from .room import RoomEvent

__all__ = ["EventHub"]


class EventHub:
    def __init__(self) -> None:
        self._subscribers: list[asyncio.Queue[RoomEvent | None]] = []
        self._changed = asyncio.Event()
        self._finished = False
        self._failure: ClientError | None = None

    def _publish(self, event: RoomEvent) -> None:
        for queue in self._subscribers:
            queue.put_nowait(event)
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _end_streams(self) -> None:
        for queue in self._subscribers:
            queue.put_nowait(None)
        self._notify()

    async def wait_update(self, timeout: float | None = None) -> bool:
        """Wait until the room changes (or the session ends); False on timeout."""
        if self._finished:
            return True
        changed = self._changed
        try:
            async with asyncio.timeout(timeout):
                await changed.wait()
        except TimeoutError:
            return False
        return True

    def events(self) -> AsyncIterator[RoomEvent]:
        """Room events from now on, in ``seq`` order, until the session ends.

        Subscribes at the call, so call it before the request whose events you want.
        Events wait in memory until read: iterate promptly, or follow the room with
        :meth:`wait_update` instead.
        Ends quietly after ``close()``; raises ``ConnectionLost`` when the session
        dropped and could not be resumed.
        """
        queue: asyncio.Queue[RoomEvent | None] = asyncio.Queue()
        if self._finished:
            queue.put_nowait(None)
        self._subscribers.append(queue)
        return self._drain(queue)

    async def _drain(self, queue: asyncio.Queue[RoomEvent | None]) -> AsyncIterator[RoomEvent]:
        try:
            while (event := await queue.get()) is not None:
                yield event
            if self._failure is not None:
                raise self._failure
        finally:
            self._subscribers.remove(queue)
