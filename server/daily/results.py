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
  with a result is over, and a new attempt is refused;
- **streaks**: days in a row played and won, by UTC day, folded as results are
  counted (only when counted, so a result written twice counts once).

Stores: in memory (server/daily/memory_results.py), SQLite
(server/daily/sqlite_results.py), Redis (server/daily/redis_results.py). Like
every store, a write is durable when its coroutine returns, and one that cannot
write raises StoreUnavailable having written nothing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from protocol.placings import RunFinish, board_score

__all__ = [
    "RankedRun",
    "ResultStore",
    "RunClaim",
    "RunResult",
    "Streaks",
    "TimedEntry",
    "day_number",
    "line_text",
    "ranked",
    "streaks_after",
    "streaks_view",
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
    ended: float  # unix seconds
    code: str  # the run's room
    # Its timed moves (:func:`line_text`): what its ghost replays
    # (server/daily/ghosts.py). Kept with the result, in the same write, so a
    # run on the board always has its ghost; kept as one string, so that a
    # leaderboard page, which reads results and never their moves, reads no
    # more than one string more a run.
    line: str = ""

    @property
    def won(self) -> bool:
        return self.result == "won"

    @property
    def finish(self) -> RunFinish:
        return RunFinish(self.won, self.ms, self.moves)

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
        return cls(**data)

    @property
    def timed_moves(self) -> list[TimedEntry]:
        """Its moves, as :func:`line_text` wrote them."""
        out: list[TimedEntry] = []
        for entry in self.line.split(";") if self.line else ():
            t, kind, src, dst, count = entry.split(",")
            out.append((int(t), kind, int(src), int(dst), int(count)))
        return out

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
        }


TimedEntry = tuple[int, str, int, int, int]
"""One move of a run: ms from its first move, kind, from, to, count."""


def line_text(moves: Sequence[TimedEntry]) -> str:
    """A run's timed moves as kept: ``t,kind,from,to,count`` each, ``;`` between."""
    return ";".join(f"{t},{kind},{src},{dst},{count}" for t, kind, src, dst, count in moves)


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

    async def add_result(self, result: RunResult) -> bool:
        """Keep a finished run: True if counted now, False if it was already (a
        second write changes nothing) or its room is not the one the player's
        claim names (it never counts). Counting it folds it into the streaks."""

    async def rank(self, date: str, ladder: str, player: str) -> RankedRun | None:
        """The player's run and its rank, if it is on the board."""

    async def board(self, date: str, ladder: str, start: int, limit: int) -> list[RankedRun]:
        """The runs at positions ``start`` … ``start + limit - 1``, in order."""

    async def results_of(self, date: str, ladder: str, players: Sequence[str]) -> list[RunResult]:
        """The runs of these players (those who have one), in no order."""

    async def count(self, date: str, ladder: str) -> int: ...

    async def runs_of(self, player: str) -> list[RunResult]:
        """Every run of the player's that is counted, in no order (their data:
        the account export)."""

    async def streaks(self, player: str) -> Streaks: ...

    async def close(self) -> None: ...
