"""What a player's history keeps of a room: built from the room core's state. Pure.

A deal joins its players' histories when it is over for everyone — not before,
since until then its boards and logs are hidden information — and a round when
it is over. Both are built here from the room as the record that ended them
left it (server/core/room.py), with the engine's numbers only: the score and
race bonus of the sheet, the placing of protocol/placings.py (the one ranking
rule, ties shared), the time of the move that ended each player's deal.

Every entry is named by a key made of the room (its code and when it was made:
a code is drawn again once its room closed), the round and the deal, so
building them again from the same state (a restarted server folding the
room's log again: server/service/adoption.py) gives the same keys, and the
store keeps each once. The replay of a deal is the revealed deal with every
move log, as ``deal_over`` carried it to the room, so the browser's replayer
(client/web/replay.js) checks and tells it as it does a deal of the room.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import msgpack  # type: ignore[import-untyped]

from protocol.messages import DealEnd
from protocol.moves import Status
from protocol.settings import DealRules

from ..core import records as R
from ..core.series import RoundResult
from ..core.values import Deal
from ..core.views import RoomLike, deal_logs, past_summary, revealed_deal
from .model import DealEntry, RoundEntry

__all__ = [
    "REPLAY_DAYS",
    "DealOver",
    "deal_key",
    "deal_over",
    "deals_over",
    "ladder",
    "read_replay",
    "room_key",
    "round_entries",
    "round_key",
]

REPLAY_DAYS = 90
"""How long a deal's replay is kept (its entries are kept for ever): the boards
and logs are what make history big, and an old race is looked up by its numbers."""


def ladder(rules: DealRules) -> str:
    """The rule set a deal counts toward (``DealRules.ladder``)."""
    return rules.ladder


def room_key(code: str, created_at: int) -> str:
    """A room for good: its code with the time it was made, since a code is
    drawn again once its room has closed."""
    return f"{code}-{created_at}"


def round_key(room: str, round_number: int) -> str:
    return f"{room}/{round_number}"


def deal_key(room: str, round_number: int, deal_number: int) -> str:
    return f"{room}/{round_number}/{deal_number}"


class KeptRoom(RoomLike, Protocol):
    """What history reads of a room (server/core/room.py ``Room``): its views'
    fields, and when it was made (part of every key)."""

    created_at: int


@dataclass(frozen=True, slots=True)
class DealOver:
    """A deal over for everyone, as its players' histories keep it: an entry per
    player who was dealt in, and the replay every one of them may open."""

    key: str
    entries: dict[str, DealEntry]
    replay: bytes
    t: float  # unix seconds: when it ended


def _result(status: Status, ended_by: str | None) -> str:
    if status is Status.PLAYING:
        return "timed_out" if ended_by == DealEnd.TIME.value else "unfinished"
    return status.value  # won, resigned, dead


def deal_over(room: KeptRoom, deal: Deal) -> DealOver:
    """Deal ``deal`` of the room's current round, over for everyone."""
    assert deal.ended_at is not None, "a deal joins history once it is over"
    at = deal.ended_at
    key = deal_key(room_key(room.code, room.created_at), room.round, deal.number)
    settings = room.settings
    # Scores and placings as the room showed them (its deal_over's summary).
    summary = past_summary(room, deal, at)
    places = {p: s["place"] for p, s in summary.items()}
    shared = {place: list(places.values()).count(place) > 1 for place in places.values()}
    rules = deal.rules
    t = at / 1000
    entries: dict[str, DealEntry] = {}
    for p, replay in deal.replays.items():
        board = replay.board
        won = board.status is Status.WON
        entries[p] = DealEntry(
            key=key,
            t=t,
            room=room.code,
            round=room.round,
            deal=deal.number,
            ladder=ladder(rules),
            rules=rules.to_wire(),
            scoring=settings.scoring.value,
            placing=places[p],
            tied=shared[places[p]],
            score=summary[p]["score"],
            bonus=settings.race_bonus if deal.first == p else 0,
            seconds=replay.ended_at / 1000 if won and replay.ended_at is not None else None,
            moves=board.moves,
            result=_result(board.status, deal.ended_by),
            players=len(deal.replays),
        )
    # A player who left is named as the series remembers them, if it does.
    names = {**room.series.names, **{p: m.name for p, m in room.members.items()}}
    shown = {
        **revealed_deal(deal),
        "summary": summary,
        "logs": deal_logs(deal),
        "key": key,
        "room": room.code,
        "round": room.round,
        "t": t,
        "rules": rules.to_wire(),
        "scoring": settings.scoring.value,
        "names": {p: names.get(p, "a player who left") for p in deal.replays},
    }
    data: bytes = msgpack.packb(shown, use_bin_type=True)
    return DealOver(key, entries, data, t)


def read_replay(data: bytes) -> dict[str, Any]:
    """A kept replay back as the map ``past_deal`` sends."""
    replay: dict[str, Any] = msgpack.unpackb(data, raw=False, strict_map_key=False)
    return replay


def deals_over(room: KeptRoom, records: Iterable[R.Record]) -> list[DealOver]:
    """The deals the ``deal_ended`` records among ``records`` ended, built from the
    room as those records (and any after them in the same decision) left it:
    nothing of an ended deal changes after its end within one decision."""
    numbers = [r.number for r in records if isinstance(r, R.DealEnded)]
    return [deal_over(room, room.deals[n - 1]) for n in numbers if n <= len(room.deals)]


def every_deal_over(room: KeptRoom) -> list[DealOver]:
    """Every deal over in the room's state (its current round's), for writing
    again after a restart: the store keeps each key once."""
    return [deal_over(room, d) for d in room.deals if d.over]


def round_entries(code: str, created_at: int, result: RoundResult) -> dict[str, RoundEntry]:
    """A finished round, per player of it, from the result the series keeps
    (server/core/series.py): its totals and placings are frozen at its end."""
    places = result.to_wire()["places"]
    shared = {place: list(places.values()).count(place) > 1 for place in places.values()}
    key = round_key(room_key(code, created_at), result.number)
    return {
        p: RoundEntry(
            key=key,
            t=result.ended_at / 1000,
            room=code,
            round=result.number,
            deals=len(result.deals),
            total=result.totals.get(p, 0),
            placing=places[p],
            tied=shared[places[p]],
            players=[q for q in result.players if q != p],
        )
        for p in result.players
    }


def rounds_over(room: KeptRoom, records: Iterable[R.Record]) -> dict[str, RoundEntry]:
    """The round a ``round_over`` among ``records`` ended, per player (the series
    has its result by then: the fold adds it)."""
    if not any(isinstance(r, R.RoundOver) for r in records):
        return {}
    for result in room.series.rounds:
        if result.number == room.round:
            return round_entries(room.code, room.created_at, result)
    return {}


def every_round(room: KeptRoom) -> list[dict[str, RoundEntry]]:
    """Every round the series lists, for writing again after a restart."""
    return [round_entries(room.code, room.created_at, r) for r in room.series.rounds]
