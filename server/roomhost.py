"""One live room in the shell: its lock, durable commits, fan-out and timer.

Every request for a room runs through :meth:`RoomHost.run` under the room's lock,
so a room's commands are strictly serialized (its seq order is its commit order)
while rooms run concurrently. ``run`` is where "acknowledged means durable" is
kept:

1. decide (pure, read-only: server/commands.py) — a refusal ends here;
2. ``await store.append(records)`` — if the store is unreachable, the room is
   unchanged and the client gets ``storage_unavailable``;
3. commit (fold the records in: server/room.py) and get the room events;
4. reply to the requester, then fan the events out, both synchronously (no await
   between the commit and the last frame queued), so each connection sees the
   reply before the events it caused, and every event in seq order.

Fan-out only queues bytes on each connection (server/connection.py), which writes
them at the next pass of the event loop; a slow reader is cut off there and never
holds the lock.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from protocol.wire import encode

from .commands import Ctx, decide_tick
from .records import encode_record
from .room import Decision, Fanout, Member, Room, RoomError
from .store import StoreUnavailable

if TYPE_CHECKING:
    from .service import Service

__all__ = ["RoomHost"]

log = logging.getLogger("klondike_race.room")

Reply = Callable[[Decision], None]


class RoomHost:
    def __init__(self, service: Service, room: Room) -> None:
        self.service = service
        self.room = room
        self.lock = asyncio.Lock()
        self._timer: asyncio.Task[None] | None = None
        self._timer_deadline: int | None = None

    @property
    def code(self) -> str:
        return self.room.code

    def ctx(self) -> Ctx:
        return Ctx(self.service.clock.now(), self.service.draw_seed)

    async def run(
        self, decide: Callable[[Room, Ctx], Decision], reply: Reply | None = None
    ) -> Decision:
        """Decide, persist, commit, reply, fan out: see the module docstring."""
        async with self.lock:
            ctx = self.ctx()
            if self.room.time_up(ctx.now):
                await self._commit(decide_tick(self.room, ctx), None)
            return await self._commit(decide(self.room, ctx), reply)

    async def _commit(self, decision: Decision, reply: Reply | None) -> Decision:
        room = self.room
        if decision.records:
            data = [encode_record(r) for r in decision.records]
            try:
                await self.service.store.append(room.code, data)
            except StoreUnavailable:
                raise RoomError(
                    "storage_unavailable", "the store is unreachable; nothing was done: try again"
                ) from None
            before = dict(room.members)
            try:
                events = room.commit(decision)
            except Exception:
                # A bug in the fold: the store holds the truth, so rebuild from it.
                log.exception("room %s: commit failed; rebuilding from the log", room.code)
                await self.reload()
                raise
        else:
            before, events = {}, []
        if reply is not None:
            reply(decision)
        if events:
            self.fanout(events, before)
        self.service.after_commit(self, decision)
        self.arm_timer()
        return decision

    async def reload(self) -> None:
        from .records import decode_record

        records = await self.service.store.load(self.room.code)
        self.room = Room.rebuild(self.room.code, (decode_record(r) for r in records))

    def fanout(self, events: Iterable[Fanout], before: dict[str, Member]) -> None:
        """Queue each event on each member's connection, every distinct map
        encoded once per frame kind. Members gone in this commit (removed) still
        get its events: that is how they learn they were removed."""
        recipients = dict(before)
        recipients.update(self.room.members)
        conns = []
        for pid, member in recipients.items():
            conn = self.service.connection_of(pid)
            if conn is not None:
                conns.append((member, conn))
        if not conns:
            return
        cache: dict[tuple[int, bool], bytes | str] = {}
        for fan in events:
            for member, conn in conns:
                msg = fan.for_member(member)
                key = (id(msg), conn.binary)
                data = cache.get(key)
                if data is None:
                    data = cache[key] = encode(msg, conn.binary)
                conn.send_data(data)

    # ------------------------------------------------------------------ timer

    def arm_timer(self) -> None:
        """Keep one timer task sleeping until the round's time limit, if any."""
        deadline = self.room.round_ends_at if self.room.state == "playing" else None
        if deadline == self._timer_deadline:
            return
        current = asyncio.current_task()
        if self._timer is not None and self._timer is not current:
            self._timer.cancel()
        self._timer = None
        self._timer_deadline = deadline
        if deadline is not None:
            self._timer = asyncio.get_running_loop().create_task(self._sleep_then_tick(deadline))

    async def _sleep_then_tick(self, deadline: int) -> None:
        try:
            await self.service.clock.sleep_until(deadline)
            self._timer_deadline = None  # let the commit re-arm if needed
            await self.run(decide_tick)
        except asyncio.CancelledError:
            raise
        except RoomError as exc:
            log.warning("room %s: time limit tick failed: %s", self.code, exc.message)
            self._retry_later()
        except Exception:
            log.exception("room %s: time limit tick failed", self.code)
            self._retry_later()

    def _retry_later(self) -> None:
        """The store was down when time ran out: try again shortly."""
        self._timer_deadline = None

        async def again() -> None:
            await asyncio.sleep(1.0)
            self.arm_timer()

        self.service.spawn(again())

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<RoomHost {self.code} {self.room.state} seq={self.room.seq}>"
