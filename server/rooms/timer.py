"""What the clock does to a room, in the shell: one task per room, asleep until next.

Several things happen to a room without anyone asking, all on the server's clock
(server/net/clock.py, so tests move a fake one):

- **The round's time limit** runs out: ``decide_tick`` ends the deal and the
  round, through the normal command path.
- **A quick match's countdown** runs out: ``decide_tick`` starts its first
  round. Its end is in the room's ``created`` record, so a room rebuilt after a
  crash (on this node, or on another one taking it over) starts at the same
  moment, or at once when that has passed; whichever node does, the round's
  record makes it once.
- **A break between deals** runs out: ``decide_tick`` deals the next deal (with
  ``deals: winnable``, the runner waits for a proven seed as for any deal). The
  break's end is derived from the durable ``deal_ended`` record and the settings,
  so a room rebuilt after a restart arms for it like the live one did.
- **Timed scoring ticks.** Under Timed, a running deal's scores drop by 2 at every
  full 10 s. Scores are derived from the move log and the clock, so there is
  nothing to persist: at every tick the room sends a record-free ``sheet`` event
  (server/core/views.py ``tick_event``) with the sheet and the deal's progress.
  It goes through :meth:`RoomRunner.read`, queued behind undurable commands like
  any answer. Ticks missed (a busy loop, a clock that jumped) fold into one.
- **Idle rooms close.** With nobody connected for ``Service.idle_room_ms`` (30
  minutes by default), the room closes the normal way (a ``closed`` record with
  reason ``idle``; the store then forgets it), so an abandoned room does not
  live as long as the process.

The timer always sleeps until the earliest of these. It is re-armed after every
command that may move a deadline (a new deal, a setting, a member dropping: any
but a lone move) and after a rollback. The room does not record when members dropped: the idle clock
starts when this timer first sees nobody connected (after a restart, when the
room is rebuilt), which may only make a room live longer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from protocol.scoring import TICK_MS
from protocol.settings import Scoring

from ..core.decide import Ctx, decide_expiry, decide_idle_close, decide_tick
from ..core.records import Decision
from ..core.room import Room
from ..core.values import Fanout, Member, RoomError, RoomState, people_connected
from ..core.views import tick_event
from ..net.clock import Clock

Release = Callable[[], None]


class Timed(Protocol):
    """What the timer drives: its room's runner (server/rooms/runner.py)."""

    room: Room

    @property
    def code(self) -> str: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def idle_room_ms(self) -> int: ...

    async def run(self, decide: Callable[[Room, Ctx], Decision]) -> Decision: ...

    async def read(self, make: Callable[[], Release]) -> None: ...

    def fanout(self, events: list[Fanout], recipients: dict[str, Member]) -> None: ...


__all__ = ["RETRY_S", "RoomTimer"]

log = logging.getLogger("klondike_race.room")

RETRY_S = 1.0  # after a failure (the store down when time ran out), try again this much later


class RoomTimer:
    def __init__(self, runner: Timed) -> None:
        self.runner = runner
        self._task: asyncio.Task[None] | None = None
        self._deadline: int | None = None
        self._busy = False  # firing: arm() waits for it to finish
        self._stopped = False
        self._ticked: tuple[int, int, int] = (0, 0, 0)  # (round, deal, tick) last sent
        self._idle_since: int | None = None

    def arm(self) -> None:
        """Keep one task sleeping until the room's next deadline, if it has one."""
        if self._stopped or self._busy:
            return
        runner = self.runner
        room = runner.room
        if room.state != RoomState.CLOSED and not people_connected(room.members.values()):
            if self._idle_since is None:
                self._idle_since = runner.clock.now()
        else:
            self._idle_since = None
        deadline = self._next()
        if deadline == self._deadline:
            return
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        self._deadline = deadline
        self._task = None
        if deadline is not None:
            self._task = asyncio.get_running_loop().create_task(self._sleep_then_fire(deadline))

    def stop(self) -> None:
        self._stopped = True
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        self._task = None

    def _next(self) -> int | None:
        room = self.runner.room
        times = []
        ends = room.round_ends_at
        if ends is not None and room.round_under_way:
            times.append(ends)
        next_deal = room.next_deal_at
        if next_deal is not None:
            times.append(next_deal)
        starts = room.starts_at
        if starts is not None:
            times.append(starts)
        tick = self._next_tick()
        if tick is not None:
            times.append(tick[1])
        if self._idle_since is not None:
            times.append(self._idle_since + self.runner.idle_room_ms)
        if room.expires_at is not None:
            times.append(room.expires_at)
        return min(times) if times else None

    def _next_tick(self) -> tuple[tuple[int, int], int] | None:
        """The running deal, and when its next Timed tick is due (None: no ticks)."""
        room = self.runner.room
        deal = room.running
        if deal is None or room.settings.scoring is not Scoring.TIMED:
            return None
        key = (room.round, deal.number)
        last = self._ticked[2] if self._ticked[:2] == key else 0
        return key, deal.started_at + (last + 1) * TICK_MS

    async def _sleep_then_fire(self, deadline: int) -> None:
        runner = self.runner
        await runner.clock.sleep_until(deadline)
        self._busy = True
        retry = False
        try:
            await self._fire()
        except RoomError as exc:
            log.warning("room %s: timer: %s", runner.code, exc.message)
            retry = True
        except Exception:
            log.exception("room %s: timer failed", runner.code)
            retry = True
        finally:
            self._busy = False
            self._task = None
            self._deadline = None
        if retry:  # the store is down: not again at once
            await asyncio.sleep(RETRY_S)
        self.arm()

    async def _fire(self) -> None:
        runner = self.runner
        clock = runner.clock
        if runner.room.due(clock.now()):
            await runner.run(decide_tick)
        due = self._next_tick()
        now = clock.now()
        if due is not None and now >= due[1]:
            deal = runner.room.running
            assert deal is not None
            tick = deal.t(now) // TICK_MS
            self._ticked = (*due[0], tick)
            await runner.read(lambda: self._tick(tick))
        idle = self._idle_since
        if idle is not None and clock.now() >= idle + runner.idle_room_ms:
            await runner.run(decide_idle_close)
        expires = runner.room.expires_at
        if expires is not None and clock.now() >= expires:
            await runner.run(decide_expiry)

    def _tick(self, tick: int) -> Release:
        """The tick event, built now (the room as of the commands before it)."""
        runner = self.runner
        room = runner.room
        deal = room.running
        if deal is None or room.settings.scoring is not Scoring.TIMED:
            return lambda: None  # the deal ended, or scoring changed, before the tick's turn
        event = Fanout(room.seq, tick_event(room, deal, tick, runner.clock.now()))
        recipients = dict(room.members)
        return lambda: runner.fanout([event], recipients)
