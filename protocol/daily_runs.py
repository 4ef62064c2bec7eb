"""One run of a daily deal: its requests, its ladders and days, and the one
number a leaderboard sorts it by. Pure.

Part of :data:`protocol.requests.REQUESTS` (docs/protocol.md, "Daily deal").
A daily is named by its UTC date (``YYYY-MM-DD``) and its ladder; a player has
one run of each. The leaderboard's order is :func:`protocol.placings.run_key`;
:func:`board_score` packs that key into one integer, exact in a double, so that
a Redis sorted set orders runs by it and a SQLite index does too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .messages import ErrorCode, RequestId
from .placings import RunFinish
from .request_fields import Request, opt_bool, opt_str, req_str
from .settings import Settings
from .wire import WireError

__all__ = [
    "BOARD_PAGE",
    "DAILY_REQUESTS",
    "LADDERS",
    "DailyBoard",
    "DailyStart",
    "board_score",
    "daily_settings",
    "day_number",
    "finish_of",
    "utc_date",
]

LADDERS: dict[str, int] = {"draw1": 1, "draw3": 3}
"""The daily ladders: classic Klondike, drawing one or three."""

BOARD_PAGE = 50
"""Runs on one leaderboard page."""

_MS_BITS = 27  # 37 hours: a run is closed long before (an idle room closes in 30 min)
_MOVES_BITS = 20


def daily_settings(ladder: str) -> Settings:
    """A daily run's room: one classic deal of the ladder's draw, Standard
    scoring, no undo, nobody watching, no bonus (nobody to race), no break."""
    return Settings().updated(
        {
            "draw": LADDERS[ladder],
            "deals_per_round": 1,
            "race_bonus": 0,
            "break_seconds": 0,
            "undo": False,
            "spectators": "none",
            "deals": "winnable",
        }
    )


def utc_date(ms: int) -> str:
    """The UTC date of a server time (ms since the epoch): the daily it is in."""
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).date().isoformat()


def day_number(date: str) -> int:
    """Days since 1970-01-01 of a ``YYYY-MM-DD`` date: streaks compare these."""
    return (dt.date.fromisoformat(date) - dt.date(1970, 1, 1)).days


def board_score(finish: RunFinish) -> int:
    """:func:`protocol.placings.run_key` as one integer (smaller is better): the
    win in the top bit, then the time in ms, then the moves; each capped, so the
    whole stays below 2**48 and exact as a double."""
    ms = min(max(finish.ms, 0), (1 << _MS_BITS) - 1)
    moves = min(max(finish.moves, 0), (1 << _MOVES_BITS) - 1)
    lost = 0 if finish.won else 1
    return (lost << (_MS_BITS + _MOVES_BITS)) | (ms << _MOVES_BITS) | moves


def finish_of(score: int) -> RunFinish:
    """The run a :func:`board_score` was packed from (within its caps)."""
    moves = score & ((1 << _MOVES_BITS) - 1)
    ms = (score >> _MOVES_BITS) & ((1 << _MS_BITS) - 1)
    return RunFinish(won=not score >> (_MS_BITS + _MOVES_BITS), ms=ms, moves=moves)


def _ladder(msg: Mapping[str, Any]) -> str:
    ladder = req_str(msg, "ladder")
    if ladder not in LADDERS:
        names = " or ".join(LADDERS)
        raise WireError(ErrorCode.BAD_REQUEST, f"field 'ladder' must be {names}")
    return ladder


@dataclass(frozen=True, slots=True)
class DailyStart(Request):
    """Play today's daily of ``ladder``: a run begins, or the one going resumes."""

    TYPE: ClassVar[str] = "daily_start"
    ladder: str

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, _ladder(msg))

    def fields(self) -> dict[str, Any]:
        return {"ladder": self.ladder}


@dataclass(frozen=True, slots=True)
class DailyBoard(Request):
    """A page of a daily's leaderboard (``date`` None: today's), everyone's or
    one's friends' (and one's own), after the first ``before`` runs of it."""

    TYPE: ClassVar[str] = "daily_board"
    ladder: str
    date: str | None = None
    friends: bool = False
    before: int = 0

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        date = opt_str(msg, "date")
        if date is not None:
            try:
                dt.date.fromisoformat(date)
            except ValueError:
                raise WireError(ErrorCode.BAD_REQUEST, "field 'date' must be YYYY-MM-DD") from None
            if len(date) != 10:
                raise WireError(ErrorCode.BAD_REQUEST, "field 'date' must be YYYY-MM-DD")
        before = msg.get("before", 0)
        if isinstance(before, bool) or not isinstance(before, int) or not 0 <= before <= 10**9:
            raise WireError(ErrorCode.BAD_REQUEST, "field 'before' must be a count of runs")
        friends = opt_bool(msg, "friends")
        return cls(rid, _ladder(msg), date, bool(friends), before)

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ladder": self.ladder, "friends": self.friends}
        if self.date is not None:
            out["date"] = self.date
        if self.before:
            out["before"] = self.before
        return out


DAILY_REQUESTS: tuple[type[Request], ...] = (DailyStart, DailyBoard)
