"""The requests about the daily deal (docs/protocol.md, "Daily deal").

Part of :data:`protocol.requests.REQUESTS`; parsed the same way as every request.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .messages import ErrorCode, RequestId
from .request_fields import Request, opt_bool, opt_str, req_str
from .wire import WireError

__all__ = [
    "BOARD_PAGE",
    "DAILY_AT_THE_EDGE",
    "DAILY_REQUESTS",
    "Daily",
    "DailyBoard",
    "DailyCompare",
    "DailyLine",
    "DailyStart",
]

BOARD_PAGE = 50
"""Runs on one leaderboard page."""


@dataclass(frozen=True, slots=True)
class Daily(Request):
    """The published days: the commitments of today and the days ahead, the
    seeds and proofs of the days that are over."""

    TYPE: ClassVar[str] = "daily"


def _ladder(msg: Mapping[str, Any]) -> str:
    """A ladder's name (which names are daily ladders is the server's to say:
    ``no_such_ladder``)."""
    ladder = req_str(msg, "ladder")
    if len(ladder) > 40:
        raise WireError(ErrorCode.BAD_REQUEST, "field 'ladder' is too long")
    return ladder


def _date(msg: Mapping[str, Any]) -> str | None:
    """An optional ``date``, ``YYYY-MM-DD``."""
    date = opt_str(msg, "date")
    if date is not None:
        try:
            dt.date.fromisoformat(date)
        except ValueError:
            raise WireError(ErrorCode.BAD_REQUEST, "field 'date' must be YYYY-MM-DD") from None
        if len(date) != 10:
            raise WireError(ErrorCode.BAD_REQUEST, "field 'date' must be YYYY-MM-DD")
    return date


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
        date = _date(msg)
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


@dataclass(frozen=True, slots=True)
class DailyCompare(Request):
    """One's run of today's daily of ``ladder`` against the day's leader's, once
    one's run is over (``date``: today's; a day over may be asked too)."""

    TYPE: ClassVar[str] = "daily_compare"
    ladder: str
    date: str | None = None

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, _ladder(msg), _date(msg))

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ladder": self.ladder}
        if self.date is not None:
            out["date"] = self.date
        return out


@dataclass(frozen=True, slots=True)
class DailyLine(Request):
    """The leader's run of the daily of ``date`` on ``ladder``, move by move, as a
    past deal's replay shows it: only once that day is over."""

    TYPE: ClassVar[str] = "daily_line"
    ladder: str
    date: str

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        date = _date(msg)
        if date is None:
            raise WireError(ErrorCode.BAD_REQUEST, "field 'date' is required (YYYY-MM-DD)")
        return cls(rid, _ladder(msg), date)

    def fields(self) -> dict[str, Any]:
        return {"ladder": self.ladder, "date": self.date}


DAILY_REQUESTS: tuple[type[Request], ...] = (
    Daily,
    DailyStart,
    DailyBoard,
    DailyCompare,
    DailyLine,
)

DAILY_AT_THE_EDGE: tuple[type[Request], ...] = (Daily, DailyBoard, DailyCompare, DailyLine)
"""The daily requests a node answers for its own clients, from the stores every
node shares; but ``daily_board`` and ``daily_compare`` of a client whose room
runs on another node are answered there, where its run's result write, if it
just ended, is under way. Not
``daily_start``: a client in a room elsewhere is relayed there, as for any room
request, where its room is known (and a run is refused, ``already_in_room``)."""
