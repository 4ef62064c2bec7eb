"""Daily runs beyond their rooms: who has a run of which daily, the results, the
streaks; the interface every store implements, and what they share. Pure.

A run is a room (server/daily/runs.py); its room's log is the truth. What is
kept here is written from that log and only after it:

- a **claim**: the room of a player's run of one daily, taken atomically in the
  store before the room plays a move, so that two attempts (two devices, two
  nodes) cannot both start one: the second finds the first's room;
- a **result**: written once the record that ends the run is durable, kept once
  per (daily, player) however often it is written (a restart folds the room
  again and writes it again), which is what makes a run counted once; a claim
  with a result is over, and a new attempt is refused. It holds the ranking
  fields only, so that a leaderboard page reads no more than it shows;
- a **line**: the run's timed moves (:func:`pack_line`), what its ghost replays
  (server/daily/ghosts.py), its comparison and a challenge of it read. It is
  kept apart from its result, in the same atomic write (a run is never on the
  board without its line, nor counted twice), and read only by those;
- **streaks**: days in a row played and won, by UTC day, folded as results are
  counted (only when counted, so a result written twice counts once);
- a run's **ghosts**: which runs it races (:data:`GhostChoice`), kept the first
  time they are chosen, so that a run resumed after a restart (or on another
  node) races the same ones, whatever the board became since.

Stores: in memory (server/daily/memory_results.py), SQLite
(server/daily/sqlite_results.py), Redis (server/daily/redis_results.py). Like
every store, a write is durable when its coroutine returns, and one that cannot
write raises StoreUnavailable having written nothing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import msgpack  # type: ignore[import-untyped]

from protocol.placings import RunFinish, board_score
from protocol.settings import Variant

__all__ = [
    "LINE_KINDS",
    "Finished",
    "GhostChoice",
    "RankedRun",
    "ResultStore",
    "RunClaim",
    "RunResult",
    "Streaks",
    "TimedEntry",
    "day_number",
    "homes_of_line",
    "line_bytes",
    "line_from_bytes",
    "pack_line",
    "ranked",
    "streaks_after",
    "streaks_view",
    "unpack_line",
]


@dataclass(frozen=True, slots=True)
class RunClaim:
    """A player's run of one daily: its room, and whether it is over (has a result)."""

    code: str
    over: bool


@dataclass(frozen=True, slots=True)
class RunResult:
    """One finished run, as the leaderboard shows it."""

    date: str
    ladder: str
    player: str
    name: str  # the handle, or the guest's name, when the run ended
    result: str  # won, resigned, dead, or stopped (left, or idle, mid-run)
    ms: int  # from the first move to the end
    moves: int
    score: int
    home: int  # cards home at the end
    home_ms: int  # when the count of cards home last changed, from the first move (0: never)
    ended: float  # unix seconds
    code: str  # the run's room

    @property
    def won(self) -> bool:
        return self.result == "won"

    @property
    def finish(self) -> RunFinish:
        return RunFinish(self.won, self.ms, self.moves, self.home, self.score, self.home_ms)

    @property
    def board_score(self) -> int:
        return board_score(self.finish)

    @property
    def day(self) -> int:
        """The UTC day number of its daily (days since 1970-01-01): streaks compare these."""
        return day_number(self.date)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunResult:
        """A kept result. One kept before its cards home were (``home``,
        ``home_ms``) has them as far as the result alone tells: a won run had
        every card home, the last with its winning move; any other none. A
        store that keeps the run's line tells them exactly instead
        (:func:`homes_of_line`, on opening: server/daily/sqlite_results.py,
        redis_results.py)."""
        if "home" not in data:
            won = data["result"] == "won"
            cards = _cards(str(data["ladder"])) if won else 0
            data = {**data, "home": cards, "home_ms": data["ms"] if won else 0}
        return cls(**{f: data[f] for f in _FIELDS})

    def view(self, rank: int) -> dict[str, Any]:
        """One row of the leaderboard (docs/protocol.md, ``daily_board``)."""
        return {
            "rank": rank,
            "player": self.player,
            "name": self.name,
            "result": self.result,
            "seconds": round(self.ms / 1000, 3),
            "moves": self.moves,
            "score": self.score,
            "home": self.home,
            "home_seconds": round(self.home_ms / 1000, 3),
        }

    def with_line(self, line: Sequence[TimedEntry]) -> RunResult:
        """This result with its cards home as its line tells them: for a result
        kept before they were (see :meth:`from_json`)."""
        home, home_ms = homes_of_line(line, _cards(self.ladder))
        return dataclasses.replace(self, home=home, home_ms=home_ms)


_FIELDS = tuple(f.name for f in dataclasses.fields(RunResult))


def _cards(ladder: str) -> int:
    """The cards of a ladder's deal (``double-draw3``: 104)."""
    return Variant(ladder.partition("-")[0]).cards


TimedEntry = tuple[int, str, int, int, int]
"""One move of a run: ms from its first move, kind, from, to, count."""

Finished = tuple[RunResult, list[TimedEntry]]
"""A run over, as it is written: its result and its line."""

GhostChoice = list[tuple[str, str]]
"""A run's ghosts, in order: each one's kind (friend, leader, median) and player."""

LINE_KINDS = (
    "draw",
    "recycle",
    "waste_tableau",
    "waste_foundation",
    "tableau_foundation",
    "tableau_tableau",
    "foundation_tableau",
    "undo",
    "resign",
    "auto_complete",
)
"""Move kinds by their number in a packed line: stored data, so a new kind is
added at the end and none is ever moved (protocol/moves.py ``MoveKind``)."""

_KIND_NUMBER = {kind: i for i, kind in enumerate(LINE_KINDS)}
_FIELD_BITS = 4  # from, to, count: each below 16 (double klondike's 9 piles, 8 foundations)
_KIND_BITS = 4
_MOVE_BITS = 3 * _FIELD_BITS + _KIND_BITS


def pack_line(moves: Iterable[TimedEntry]) -> list[int]:
    """A line as integers, one a move: the ms since the move before (since the
    first, for the first) above the move's count, to, from and kind's number.
    A move up to a minute after the one before fits 32 bits: msgpack keeps it
    in 5 bytes, where its text took about 30."""
    out: list[int] = []
    before = 0
    top = 1 << _FIELD_BITS
    for t, kind, src, dst, count in moves:
        if not (0 <= src < top and 0 <= dst < top and 0 <= count < top):
            raise ValueError(f"a move out of a line's range: {kind} {src} {dst} {count}")
        move = ((count << _FIELD_BITS | dst) << _FIELD_BITS | src) << _KIND_BITS
        out.append((t - before) << _MOVE_BITS | move | _KIND_NUMBER[kind])
        before = t
    return out


def unpack_line(packed: Iterable[int]) -> list[TimedEntry]:
    """The moves :func:`pack_line` packed."""
    out: list[TimedEntry] = []
    t = 0
    mask = (1 << _FIELD_BITS) - 1
    for n in packed:
        t += n >> _MOVE_BITS
        kind = LINE_KINDS[n & ((1 << _KIND_BITS) - 1)]
        src = (n >> _KIND_BITS) & mask
        dst = (n >> (_KIND_BITS + _FIELD_BITS)) & mask
        count = (n >> (_KIND_BITS + 2 * _FIELD_BITS)) & mask
        out.append((t, kind, src, dst, count))
    return out


def line_bytes(moves: Iterable[TimedEntry]) -> bytes:
    """A line as the stores keep it: msgpack of :func:`pack_line`."""
    data: bytes = msgpack.packb(pack_line(moves))
    return data


def line_from_bytes(data: bytes) -> list[TimedEntry]:
    return unpack_line(msgpack.unpackb(data))


_HOMED = {"waste_foundation": 1, "tableau_foundation": 1, "foundation_tableau": -1}


def homes_of_line(line: Sequence[TimedEntry], cards: int) -> tuple[int, int]:
    """How many cards a line left home, and when that count last changed (its
    ``t``; 0 if it never did): read off the moves' kinds, since a line keeps no
    card. An undo takes back the move before it (and only that one: there is
    no undoing an undo); an auto-complete plays every card left home."""
    standing: list[int] = []  # each move still standing: the cards it put home
    home = at = 0
    for t, kind, *_ in line:
        if kind == "undo":
            homed = -standing.pop() if standing else 0
        else:
            homed = cards - home if kind == "auto_complete" else _HOMED.get(kind, 0)
            standing.append(homed)
        if homed:
            home += homed
            at = t
    return home, at


def day_number(date: str) -> int:
    """Days since 1970-01-01 of a ``YYYY-MM-DD`` date."""
    return (dt.date.fromisoformat(date) - dt.date(1970, 1, 1)).days


RankedRun = tuple[int, RunResult]
"""A run and its rank on its leaderboard (equal runs share one)."""


def ranked(runs: Sequence[RunResult], first_rank: int, first_position: int) -> list[RankedRun]:
    """Ranks for consecutive runs of a leaderboard, in order: the first has
    ``first_rank`` (1 + the runs strictly ahead of it), at ``first_position``
    (0-based); each next one shares its predecessor's rank when equal, else
    has its own position's (protocol/placings.py: one plus those strictly ahead)."""
    out: list[RankedRun] = []
    for i, run in enumerate(runs):
        if i == 0:
            rank = first_rank
        elif run.board_score == runs[i - 1].board_score:
            rank = out[-1][0]
        else:
            rank = first_position + i + 1
        out.append((rank, run))
    return out


@dataclass(frozen=True, slots=True)
class Streaks:
    """Days in a row a player played a daily (any ladder), and won one: each
    with the UTC day number it last grew on, and the best ever."""

    played: int = 0
    played_day: int = -1
    won: int = 0
    won_day: int = -1
    best_played: int = 0
    best_won: int = 0


def _grow(count: int, last: int, day: int) -> tuple[int, int]:
    if day <= last:
        return count, last  # that day counted already (or a late result: no change)
    return (count + 1 if day == last + 1 else 1), day


def streaks_after(s: Streaks, day: int, won: bool) -> Streaks:
    """A counted result of UTC day ``day`` folded in (every store folds alike)."""
    played, played_day = _grow(s.played, s.played_day, day)
    won_n, won_day = _grow(s.won, s.won_day, day) if won else (s.won, s.won_day)
    return Streaks(
        played,
        played_day,
        won_n,
        won_day,
        max(s.best_played, played),
        max(s.best_won, won_n),
    )


def streaks_view(s: Streaks, today: int) -> dict[str, int]:
    """The profile's ``streaks``: a streak whose last day is before yesterday is
    broken (0); today's may still grow, so yesterday's still counts."""
    return {
        "played": s.played if s.played_day >= today - 1 else 0,
        "won": s.won if s.won_day >= today - 1 else 0,
        "best_played": s.best_played,
        "best_won": s.best_won,
    }


class ResultStore(Protocol):
    async def claim(self, date: str, ladder: str, player: str, code: str) -> RunClaim:
        """The player's run of this daily: the one claimed already, or, if none,
        one in room ``code``, claimed now (atomically: of two claims, one wins)."""

    async def claimed(self, date: str, ladder: str, player: str) -> RunClaim | None: ...

    async def keep_ghosts(
        self, date: str, ladder: str, player: str, ghosts: GhostChoice
    ) -> GhostChoice:
        """The ghosts of the player's run of this daily: those kept already, or,
        if none, ``ghosts``, kept now (atomically: of two choices, one is kept)."""

    async def kept_ghosts(self, date: str, ladder: str, player: str) -> GhostChoice | None: ...

    async def add_result(self, result: RunResult, line: Sequence[TimedEntry]) -> bool:
        """Keep a finished run and its line, in one atomic write: True if counted
        now, False if it was already (a second write changes nothing) or its
        room is not the one the player's claim names (it never counts).
        Counting it folds it into the streaks."""

    async def rank(self, date: str, ladder: str, player: str) -> RankedRun | None:
        """The player's run and its rank, if it is on the board."""

    async def board(self, date: str, ladder: str, start: int, limit: int) -> list[RankedRun]:
        """The runs at positions ``start`` … ``start + limit - 1``, in order."""

    async def results_of(self, date: str, ladder: str, players: Sequence[str]) -> list[RunResult]:
        """The runs of these players (those who have one), in no order."""

    async def lines(
        self, date: str, ladder: str, players: Sequence[str]
    ) -> dict[str, list[TimedEntry]]:
        """The lines of these players' runs (those who have one): for ghosts,
        comparisons and challenges only, never a leaderboard."""

    async def count(self, date: str, ladder: str) -> int: ...

    async def runs_of(self, player: str) -> list[RunResult]:
        """Every run of the player's that is counted, in no order (their data:
        the account export)."""

    async def streaks(self, player: str) -> Streaks: ...

    async def close(self) -> None: ...
