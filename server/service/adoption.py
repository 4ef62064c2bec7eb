"""One runner per room: a room rebuilt from its log, once, however many ask.

A room is rebuilt from its log (:meth:`Adoption.adopt`) after a restart, or when
this node takes over a dead node's room, often because many of its clients
resume here at the same moment. Adoption is single-flight per room code:
whoever asks while one is under way waits for that one, so they all get the
same runner. Each adoption is a new incarnation with a writer of its own (with
several nodes, a fresh lease token: server/cluster/leases.py), and a runner
that is replaced or given up is stopped, timer included. Presence after a
rebuild is decided in one step, before anything else can reach the room: a
member is online exactly when a session of theirs is connected to this node now.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import Protocol

from ..accounts.keeping import HistoryKeeper
from ..core.durable import DurableLog
from ..core.room import Room
from ..core.values import RoomError
from ..daily.runs import RunKeeper
from ..net.metrics import Metrics
from ..ratings.keeping import RatingKeeper
from ..rooms.runner import RoomRunner
from ..store.base import Store, StoreUnavailable
from .hooks import ClusterHooks
from .presence import presence_of_all

__all__ = ["Adoption", "fold_room"]

log = logging.getLogger("klondike_race.service")

FOLD_SLICE_S = 0.005
"""How long a rebuild folds before it lets the event loop run (other rooms' moves
wait that long at most). The room is not published until the fold is done, so
nothing sees it half-built; see :func:`fold_room`."""


async def fold_room(code: str, records: Sequence[bytes]) -> tuple[Room, DurableLog]:
    """A room and its durable log rebuilt from the log the store holds
    (:meth:`DurableLog.folding`), in slices of ``FOLD_SLICE_S``: a compacted log is
    short, but its checkpoint replays every board of the round, and a log that was
    never compacted (or a round of many long deals) may take far longer than the
    few ms a move may wait on the rest of the server."""
    steps = DurableLog.folding(code, records)
    clock = time.perf_counter
    until = clock() + FOLD_SLICE_S
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: tuple[Room, DurableLog] = done.value
            return result
        if clock() >= until:
            await asyncio.sleep(0)
            until = clock() + FOLD_SLICE_S


class Home(Protocol):
    """What adoption needs of the service: where rooms run, and how a runner is
    made (server/service/service.py ``Service``)."""

    store: Store
    metrics: Metrics
    rooms: dict[str, RoomRunner]
    cluster: ClusterHooks | None
    history: HistoryKeeper
    ratings: RatingKeeper
    runs: RunKeeper

    def runner(self, room: Room, durable: DurableLog) -> RoomRunner: ...

    def connected(self, player: str) -> bool:
        """Whether a session of ``player``'s is connected to this node now."""


class Adoption:
    """The rebuilds under way, by room code; see the module docstring."""

    def __init__(self, home: Home) -> None:
        self._home = home
        self._under_way: dict[str, asyncio.Task[bool]] = {}

    def __contains__(self, code: str) -> bool:
        """A rebuild of the room is under way here (the cluster keeps its lease)."""
        return code in self._under_way

    async def adopt(self, code: str) -> bool:
        """Run the room here, rebuilt from its log unless it runs here already;
        False when it cannot: it is closed, or (several nodes) another node runs it.

        Single-flight: every caller for one code while a rebuild is under way
        (eight clients resuming at once, the cluster's scan) shares that rebuild
        and its runner. A waiter that gives up (its connection closed) does not
        cancel it for the others."""
        if code in self._home.rooms:
            return True
        task = self._under_way.get(code)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._adopt(code))
            self._under_way[code] = task
            task.add_done_callback(lambda done: self._adopted(code, done))
        return await asyncio.shield(task)

    def _adopted(self, code: str, task: asyncio.Task[bool]) -> None:
        """The rebuild is over; its failure is logged once here (waiters get it
        too, or none is left to retrieve it): the store being away is expected."""
        if self._under_way.get(code) is task:
            del self._under_way[code]
        if task.cancelled() or (exc := task.exception()) is None:
            return
        if isinstance(exc, StoreUnavailable):
            log.warning("room %s not rebuilt: %s", code, exc)
        else:
            log.error("room %s not rebuilt", code, exc_info=exc)

    async def _adopt(self, code: str) -> bool:
        """Claim (with several nodes), load, fold, then publish the runner with
        every member's presence decided in the same step.

        The presence decision and the runner's publication have no await between
        them, so nothing can decide on the room before it: a client that resumes
        meanwhile is either connected now (marked online here) or arrives after
        (and its own hello marks it online). Whoever the log says is connected but
        is not connected here now is marked offline. If those records cannot be
        stored the rebuild is given up: the runner is withdrawn and stopped, and
        the lease handed back for whoever tries next."""
        home = self._home
        if code in home.rooms:
            return True
        cluster = home.cluster
        if cluster is not None and not await cluster.claim(code):
            return False
        runner: RoomRunner | None = None
        try:
            records = await home.store.load(code)
            room, durable = await fold_room(code, records)
            # What the log says is over is in its players' history, whether or
            # not the history write after its record happened before a crash.
            await home.history.recovered(room)
            await home.ratings.recovered(room)  # a rated round is applied once, by its key
            await home.runs.recovered(room)
            if not records or room.state == "closed":
                await home.store.close_room(code)
                if cluster is not None:
                    await cluster.release(code)
                return False
            runner = home.runner(room, durable)
            old = home.rooms.get(code)
            if old is not None:  # cannot happen (single-flight); never leave two running
                log.error("room %s was running while it was rebuilt; the old runner stops", code)
                old.stop()
            home.rooms[code] = runner
            home.metrics.room_adoptions.inc()
            try:
                await runner.run(presence_of_all(home.connected))
            except RoomError as exc:
                why = f"presence after the rebuild not stored: {exc.message}"
                raise StoreUnavailable(why) from None
        except BaseException:
            if runner is not None:
                if home.rooms.get(code) is runner:
                    del home.rooms[code]
                runner.stop()
            if cluster is not None:
                await cluster.release(code)
            raise
        runner.timer.arm()
        log.info("room %s rebuilt (%d records, seq %d)", code, len(records), runner.room.seq)
        return True

    async def stop(self) -> None:
        """At shutdown: give up the rebuilds under way."""
        for task in list(self._under_way.values()):
            task.cancel()
        for task in list(self._under_way.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
