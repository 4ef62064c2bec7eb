"""The server's bot players: one task per bot member of a room, playing its board.

A bot is a member of the room like anyone (a ``joined`` record with its pace:
server/core/records.py), so it is in the log, the room view and every member list,
and a room rebuilt after a restart or on another node gets its bots back: its
runner starts a :class:`BotDriver` for every bot member it holds
(:meth:`BotSeats.sync`, after every command and at the rebuild) and stops the
ones removed, and all of them when it stops (the room closed or moved).

A driver sees exactly what a client of that member would: its view is the room
view for that member (server/core/views.py ``room_view``), read in turn with
the room's commands like a ``snapshot`` request (:meth:`RoomRunner.read`), so it
never sees a rival's board, a face-down card or anything not yet durable. It
decides with the same strategy as ``klondike-race bot`` (protocol/strategy.py),
in a worker thread so that a long think never holds the event loop, and its move
goes through the same decider and commit as a person's (``decide_move``):
durable before it is applied, scored the same.

Bots are players, not clones. Each plays its recorded style (protocol/strategy.py
``Style``: drawn when it is seated, server/core/decide.py ``bot_style``), and
pauses before each move for its pace, on the server's clock, at a tempo of its
own: the pace's range stretched or shrunk by a factor drawn once per bot. The
pause, the tempo and the choice among equally good moves come from a random
source seeded by the room and the bot, so bots in one room neither play a deal
alike nor move in step, and a bot rebuilt after a restart keeps its tempo. In a
break it presses Ready after a pause of its pace, as a person does once they
have seen the results, so a break of bots and ready people ends early.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from typing import Any, Protocol

from protocol.messages import ErrorCode, Reaction
from protocol.moves import Move, Reason
from protocol.strategy import RESIGN, Bot, Pace, Style

from ..core.decide import Ctx, decide_move, decide_ready
from ..core.records import Decision
from ..core.room import Room
from ..core.values import Fanout, Member, RoomError, RoomState
from ..core.views import reaction_event, room_view
from ..net.clock import Clock
from .memo import ViewMemo
from .timer import RETRY_S, Release

__all__ = ["BotDriver", "BotSeats"]

log = logging.getLogger("klondike_race.bots")

SEARCH_BUDGET = 3000
"""Positions a bot searches for a winning line when every card is on show: a
fraction of a second, in its worker thread."""

# Refusals that mean the room moved on under the bot (another deal, its deal
# ended, the round is over): it looks again, as a client would after a ``snapshot`` request.
_MOVED_ON = frozenset(
    {
        ErrorCode.WRONG_DEAL,
        ErrorCode.WRONG_STATE,
        ErrorCode.WRONG_MOVE_NUMBER,
        ErrorCode.NOT_IN_ROOM,
        Reason.DEAL_OVER,
    }
)
_STORE_AWAY = frozenset({ErrorCode.STORAGE_UNAVAILABLE, ErrorCode.STORAGE_UNCERTAIN})

TEMPO = (0.8, 1.25)
"""The factor a bot's pauses are stretched by, drawn once per bot in this range:
two fast bots are not equally fast, as two quick people are not."""


class Seated(Protocol):
    """What a driver needs of its room's runner (server/rooms/runner.py)."""

    room: Room
    memo: ViewMemo

    @property
    def code(self) -> str: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def stopped(self) -> bool: ...

    async def run(self, decide: Callable[[Room, Ctx], Decision]) -> Decision: ...

    async def read(self, make: Callable[[], Release]) -> None: ...

    def fanout(self, events: list[Fanout], recipients: dict[str, Member]) -> None: ...


class BotDriver:
    """Plays for one bot member until stopped (removed, or the room's runner stops)."""

    def __init__(self, runner: Seated, bot: str, pace: Pace, style: Style) -> None:
        self.runner = runner
        self.bot = bot
        self.pace = pace
        self.style = style
        self.chance = random.Random(f"{runner.code}/{bot}")
        low, high = TEMPO
        self.tempo = low + (high - low) * self.chance.random()
        self.strategy = Bot(search_budget=SEARCH_BUDGET, chance=self.chance, style=style)
        self._deal: tuple[int, int] | None = None  # (round, deal) the strategy plays
        self._readied: tuple[int, int] | None = None  # the break it last got ready in
        self._refused = 0  # engine refusals in a row: resign rather than spin
        # The last round it said "good game" after: a driver started on a round
        # already over (the room rebuilt after a restart) said it, or never will.
        room = runner.room
        self._greeted = room.round if room.state == RoomState.ROUND_OVER else 0
        self._woken = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._play())

    def poke(self) -> None:
        """The room changed: look again if waiting for a turn."""
        self._woken.set()

    def stop(self) -> None:
        self._task.cancel()

    @property
    def done(self) -> bool:
        return self._task.done()

    def _may_move(self) -> bool:
        """A cheap look at the live room before building a view: a deal runs and
        this bot's board in it is still being played."""
        deal = self.runner.room.running
        board = deal.board(self.bot) if deal is not None else None
        return board is not None and board.status.value == "playing"

    async def _pause(self) -> None:
        """Think for a while: a pause of its pace, at its tempo."""
        clock = self.runner.clock
        pause = self.pace.pause(self.chance) * self.tempo
        await clock.sleep_until(clock.now() + int(pause * 1000))

    def _unready(self) -> tuple[int, int] | None:
        """The break (round, deal just over) the room is in, if this bot plays in
        its round and is not ready yet."""
        room = self.runner.room
        if room.state != RoomState.BREAK or not room.deals:
            return None
        if self.bot not in room.round_players or self.bot in room.ready:
            return None
        return room.round, room.deals[-1].number

    def _break(self) -> tuple[int, int] | None:
        """The break this bot has still to get ready in: it has not tried yet."""
        key = self._unready()
        return None if key == self._readied else key

    async def _get_ready(self, key: tuple[int, int]) -> None:
        """Press Ready once in the break ``key``, after a pause of its pace. The
        break may have ended meanwhile (the clock, the host, the last person ready):
        then the room refuses it and the bot plays on."""
        self._readied = key
        await self._pause()
        runner = self.runner
        if self._unready() != key or runner.stopped:
            return
        try:
            await runner.run(lambda room, ctx: decide_ready(room, self.bot, ctx))
        except RoomError as exc:
            if exc.code in _STORE_AWAY:
                self._readied = None  # try again, after a while
                await asyncio.sleep(RETRY_S)
            elif exc.code not in _MOVED_ON:
                log.warning("room %s: bot %s not ready: %s", runner.code, self.bot, exc.message)
        except Exception:
            log.exception("room %s: bot %s failed to get ready", runner.code, self.bot)
            await asyncio.sleep(RETRY_S)

    def _round_to_greet(self) -> bool:
        """A round this bot played is over and it has not said "good game" yet."""
        room = self.runner.room
        return (
            room.state == RoomState.ROUND_OVER
            and self._greeted != room.round
            and self.bot in room.round_players
        )

    async def _good_game(self) -> None:
        """Say "good game" to the room, once a round, after a pause of its pace,
        as people at a table do (a reaction: docs/protocol.md ``react``)."""
        runner = self.runner
        self._greeted = runner.room.round
        await self._pause()

        def make() -> Release:
            room = runner.room
            if self.bot not in room.members or room.state != RoomState.ROUND_OVER:
                return lambda: None  # removed, or the next round began meanwhile
            event, recipients = reaction_event(room, self.bot, Reaction.GG)
            return lambda: runner.fanout([event], recipients)

        await runner.read(make)

    async def _view(self) -> tuple[tuple[int, int], int, dict[str, Any]] | None:
        """(round and deal, deal number, own board view) from the room view this
        member would get now, or None when it has no move to make."""
        runner = self.runner
        got: list[dict[str, Any]] = []

        def make() -> Release:
            view = room_view(
                runner.room, self.bot, runner.clock.now(), revealed=runner.memo.revealed
            )
            return lambda: got.append(view)

        await runner.read(make)
        view = got[0]
        deal = view["deal"]
        board = deal["board"] if view["state"] == "playing" and deal is not None else None
        if board is None or board["status"] != "playing":
            return None
        return (view["round"], deal["number"]), deal["number"], board

    async def _play(self) -> None:
        try:
            await self._moves()
        except asyncio.CancelledError:
            # Stopped. The task ends rather than keep the CancelledError, whose
            # traceback holds this frame, and so this driver and its task, in a
            # cycle that only a full collection (every half hour) would free.
            return

    async def _moves(self) -> None:
        runner = self.runner
        while not runner.stopped:
            self._woken.clear()
            if not self._may_move():
                if self._round_to_greet():
                    await self._good_game()
                    continue
                in_break = self._break()
                if in_break is not None:
                    await self._get_ready(in_break)
                    continue
                await self._woken.wait()
                continue
            await self._pause()
            try:
                await self._turn()
            except RoomError as exc:
                if exc.code in _STORE_AWAY:
                    await asyncio.sleep(RETRY_S)
                elif exc.code not in _MOVED_ON:
                    self._refused += 1
                    log.warning("room %s: bot %s refused: %s", runner.code, self.bot, exc.message)
            except Exception:
                log.exception("room %s: bot %s failed to move", runner.code, self.bot)
                self._refused += 1
                await asyncio.sleep(RETRY_S)

    async def _turn(self) -> None:
        """One move, decided from this member's own view."""
        seen = await self._view()
        if seen is None or self.runner.stopped:
            return
        key, number, board = seen
        if key != self._deal:
            self.strategy.new_deal()
            self._deal = key
            self._refused = 0
        move: Move = RESIGN
        if self._refused < 3:  # the engine disagreed thrice: give the deal up
            move = await asyncio.to_thread(self.strategy.decide, board)
        n = int(board["logged"])
        await self.runner.run(lambda room, ctx: decide_move(room, self.bot, number, n, move, ctx))
        self._refused = 0


class BotSeats:
    """The drivers of one room's bot members, kept in step with its members."""

    def __init__(self, runner: Seated) -> None:
        self.runner = runner
        self.drivers: dict[str, BotDriver] = {}

    def sync(self) -> None:
        """Start a driver for each bot member without one, stop those of bots gone,
        and wake the rest (the room changed)."""
        bots = {} if self.runner.stopped else self.runner.room.bots()
        for bot in [b for b in self.drivers if b not in bots]:
            self.drivers.pop(bot).stop()
        for bot, (pace, style) in bots.items():
            driver = self.drivers.get(bot)
            if driver is None or driver.done or (driver.pace, driver.style) != (pace, style):
                if driver is not None:
                    driver.stop()
                driver = self.drivers[bot] = BotDriver(self.runner, bot, pace, style)
            driver.poke()

    def stop(self) -> None:
        for driver in self.drivers.values():
            driver.stop()
        self.drivers = {}
