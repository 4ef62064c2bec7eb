"""Bots at the table: a :class:`~client.bot.Bot` driving a live :class:`Session`.

The loop reads only ``session.room`` (kept current by the session's reader) and
the replies to its own moves, so it never piles up unread events. When a move is
refused because the view was stale (the host moved on, a reconnect happened) it
waits for the room to change or asks for a snapshot, and decides again.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.messages import Role
from protocol.placings import placing_text

from .bot import RESIGN, Bot
from .errors import ClientError, NotRated, ServerError
from .room import RoomView
from .session import Session, connect

__all__ = ["BotPlayer", "BotStats", "deal_line", "run_bots"]

# Refusals that mean "the deal moved on under you", not "your move was wrong".
_MOVED_ON = frozenset({"wrong_deal", "deal_over", "wrong_state"})


@dataclass(slots=True)
class BotStats:
    """What a bot (or a crowd of them) did, for `klondike-race bot` to report."""

    moves: int = 0  # acknowledged moves
    latencies: list[float] = field(default_factory=list)  # seconds, send to ack
    errors: Counter[str] = field(default_factory=Counter)  # refusals by code
    unacknowledged: int = 0  # moves sent whose reply never came
    deals: Counter[str] = field(default_factory=Counter)  # finished deals by status
    # Every deal over for everyone that a bot was dealt in, by how it ended for
    # it (won, resigned, lost): what `klondike-race bot` sums up at its end.
    outcomes: Counter[str] = field(default_factory=Counter)

    def merge(self, other: BotStats) -> None:
        self.moves += other.moves
        self.latencies.extend(other.latencies)
        self.errors.update(other.errors)
        self.unacknowledged += other.unacknowledged
        self.deals.update(other.deals)
        self.outcomes.update(other.outcomes)

    def summary(self, bots: int = 1) -> str:
        """One readable line: deals played and how they went, moves, refusals."""
        played = sum(self.outcomes.values())
        who = "1 bot" if bots == 1 else f"{bots} bots"
        how = ", ".join(f"{n} {what}" for what, n in sorted(self.outcomes.items()))
        parts = [
            f"{who} played {played} deal{'' if played == 1 else 's'}" + (f" ({how})" if how else "")
        ]
        parts.append(f"{self.moves} move{'' if self.moves == 1 else 's'} accepted")
        refused = sum(self.errors.values())
        if refused:
            codes = ", ".join(f"{code} ×{n}" for code, n in sorted(self.errors.items()))
            parts.append(f"{refused} refused ({codes})")
        else:
            parts.append("none refused")
        if self.unacknowledged:
            parts.append(f"{self.unacknowledged} never answered")
        return "; ".join(parts) + "."


# How a deal ended for a player (its history summary's status), in words.
_OUTCOME = {"won": "won", "resigned": "resigned", "dead": "lost", "playing": "lost"}
_WHY_UNFINISHED = {"host": "the host moved on", "time": "time ran out"}


def deal_line(number: int, summaries: dict[str, Any], player: str, ended_by: str | None) -> str:
    """``deal 2: won in 87 moves, score 240, placed =1st``: one deal as ``player``
    saw it end, placed as the server placed everyone in it (``summaries``)."""
    summary: dict[str, Any] = summaries[player]
    places = {p: int(s.get("place", 0)) for p, s in summaries.items() if isinstance(s, dict)}
    status = str(summary.get("status", "playing"))
    outcome = _OUTCOME.get(status, status)
    moves = int(summary.get("moves", 0))
    why = ""
    if status == "dead":
        why = " (no move left)"
    elif status == "playing":
        why = f" (unfinished: {_WHY_UNFINISHED.get(ended_by or '', 'the deal ended')})"
    plural = "" if moves == 1 else "s"
    placed = placing_text(places, player)
    return (
        f"deal {number}: {outcome}{why} in {moves} move{plural}, score {summary.get('score', 0)}"
        + (f", placed {placed}" if placed else "")
    )


def rounds_played(count: int) -> Callable[[RoomView], bool]:
    """A stop rule: true once ``count`` rounds have ended since the bot sat down."""
    first: list[int] = []  # the first round this bot plays, fixed at the first look

    def stop(room: RoomView) -> bool:
        if not first:
            waiting = room.state in ("lobby", "round_over")
            first.append(room.round + 1 if waiting else room.round)
        return room.state == "round_over" and room.round >= first[0] + count - 1

    return stop


class BotPlayer:
    """Plays every deal of the room it sits in until ``stop`` says so or it closes.

    ``pace`` is the mean pause between moves in seconds (0: flat out, within the
    session's rate limit); pauses vary ±40 % so a room of bots does not tick.
    """

    def __init__(
        self,
        session: Session,
        *,
        pace: float = 0.6,
        stop: Callable[[RoomView], bool] | None = None,
        stats: BotStats | None = None,
        seed: int | None = None,
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.session = session
        self.report = report  # told each deal's end and each round's, in plain lines
        self._reported: set[tuple[int, int]] = set()  # (round, deal); deal 0: the round
        self.pace = pace
        self.stop = stop
        self.stats = stats or BotStats()
        self._random = random.Random(seed)
        self._bot = Bot(chance=self._random)  # seeded apart: bots of a room differ
        self._deal: int | None = None
        self._refused = 0  # engine refusals in a row: our view and the server's differ
        self.in_flight = False  # a move is sent and not yet answered

    async def play(self) -> None:
        session = self.session
        while not session.closed:
            room = session.room
            if room is None or room.state == "closed" or room.removed:
                return
            self._report_ends(room)
            if self.stop is not None and self.stop(room):
                return
            board = room.my_board
            number = room.deal_number
            if (
                room.state != "playing"
                or board is None
                or board.get("status") != "playing"
                or room.deal_is_over()
            ):
                await session.wait_update(timeout=2.0)
                continue
            if number != self._deal:
                self._bot.new_deal()
                self._deal = number
                self._refused = 0
            await self._move(board, number)
            if self.pace > 0:
                await asyncio.sleep(self.pace * self._random.uniform(0.6, 1.4))

    async def _move(self, board: dict[str, Any], number: int | None) -> None:
        # Refused again and again even after a fresh snapshot: give the deal up
        # rather than spin (the engine is the referee, the bot may be wrong).
        move = self._bot.decide(board) if self._refused < 3 else RESIGN
        self.in_flight = True
        try:
            moved = await self.session.move(move, deal=number)
        except ServerError as exc:
            self.in_flight = False
            self.stats.errors[exc.code] += 1
            if exc.code in _MOVED_ON:
                # An event is on its way (deal_started, or our own end); if none
                # comes, our picture is off: fetch it whole.
                if not await self.session.wait_update(timeout=1.0):
                    await self._resync()
            elif exc.code == "rate_limited":
                await asyncio.sleep(0.5)
            elif exc.code == "wrong_move_number":
                pass  # our board was behind; the session fetched a snapshot already
            else:
                self._refused += 1
                await self._resync()  # the engine disagreed with our view of the board
            return
        except ClientError:
            # The session sent it again after resuming, unless it could not: the
            # round moved on, or it stayed down. Its room says where we stand.
            self.in_flight = False
            self.stats.unacknowledged += 1
            return
        self.in_flight = False
        self._refused = 0
        self.stats.moves += 1
        self.stats.latencies.append(moved.latency)
        if moved.status != "playing":
            self.stats.deals[moved.status] += 1

    def _report_ends(self, room: RoomView) -> None:
        """Count (and report) each deal over for everyone that this bot was dealt
        in, and the end of each round it played a deal of, once each: a bot that
        sits down in a room whose round is over, or that sat the whole round out,
        has nothing to say about it."""
        name = self.session.name or room.me
        for past in room.history:
            number = int(past.get("number", 0))
            summaries = past.get("summary") or {}
            summary = summaries.get(room.me)
            if (room.round, number) in self._reported or not isinstance(summary, dict):
                continue
            self._reported.add((room.round, number))
            self.stats.outcomes[_OUTCOME.get(str(summary.get("status")), "lost")] += 1
            if self.report is not None:
                line = deal_line(number, summaries, room.me, past.get("ended_by"))
                self.report(f"{name}: {line}")
        sheet = room.sheet or {}
        dealt = any(room.me in (row.get("cells") or {}) for row in sheet.get("rows") or [])
        if room.state == "round_over" and dealt and (room.round, 0) not in self._reported:
            self._reported.add((room.round, 0))
            if self.report is not None:
                totals = sheet.get("totals") or {}
                placed = placing_text(sheet.get("places") or {}, room.me)
                winners = " and ".join(room.name_of(w) for w in room.winners) or "nobody"
                self.report(
                    f"{name}: round {room.round} over, won by {winners}; "
                    f"my total {totals.get(room.me, 0)}" + (f", placed {placed}" if placed else "")
                )

    async def _resync(self) -> None:
        with contextlib.suppress(ClientError, ServerError):
            await self.session.snapshot()


async def run_bots(
    url: str,
    code: str,
    count: int = 1,
    *,
    pace: float = 0.6,
    name: str = "bot",
    stop: Callable[[RoomView], bool] | None = None,
    report: Callable[[str], None] | None = None,
    stats: BotStats | None = None,
) -> BotStats:
    """Seat ``count`` bots in room ``code`` and play until ``stop`` or the room ends;
    ``report`` hears what each does, in plain lines (joined, each deal's end).
    ``stats`` is where the counts go: a caller that cancels the run (a signal) still
    holds them, to sum up what was played. However the run ends, the bots leave
    the room (:meth:`Session.leave`): a bot that is done is no player to deal in."""
    sessions: list[Session] = []
    stats = BotStats() if stats is None else stats
    try:
        for i in range(count):
            session = await connect(url, name=f"{name}-{i + 1}" if count > 1 else name)
            sessions.append(session)
            try:
                room = await session.join_room(code, Role.PLAYER)
            except ServerError as exc:
                if exc.code == "not_ratable":  # a rated room: its seats are not a bot's
                    raise NotRated(f"room {code} is rated: bots are never rated") from exc
                raise
            if report is not None:
                report(f"joined room {room.code} as {session.name} ({room.state})")
        bots = [
            BotPlayer(s, pace=pace, stop=stop, stats=stats, seed=i, report=report)
            for i, s in enumerate(sessions)
        ]
        await asyncio.gather(*(b.play() for b in bots))
    finally:
        await asyncio.gather(*(s.leave() for s in sessions), return_exceptions=True)
    return stats
