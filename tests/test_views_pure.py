"""The room's views are pure: building any of them twice changes nothing.

Each view of server/core/views.py, and each the runner keeps
(server/rooms/memo.py), is built twice, for every member (and a stranger), of
every deal of a round with a deal over and one running, spectators watching:
the second is the first, and the room, its deals included, is what it was."""

from __future__ import annotations

import copy
import dataclasses
from array import array
from collections.abc import Callable
from enum import Enum
from typing import Any

from client.bot import Bot
from protocol.messages import Reaction
from protocol.moves import Move, MoveKind, Outcome, Status
from protocol.views import player_view
from server.core import decide as C
from server.core import views as V
from server.core.room import Room
from server.core.views import (
    SPECTATOR_VIEW,
    board_view,
    deal_logs,
    deal_over_event,
    deal_started_event,
    deal_view,
    members_event,
    past_deal,
    past_summary,
    progress_of,
    reaction_event,
    replayed_move,
    revealed_deal,
    room_info,
    room_view,
    tick_event,
)
from server.rooms.memo import ViewMemo
from tests.support.room_core import Harness, setup_room


def plain(value: Any) -> Any:
    """``value`` as nested plain data, by what it holds rather than by identity
    (a board compares by identity), so that two states can be compared."""
    if isinstance(value, Enum):
        return value
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [type(value).__name__, *(plain(v) for v in value)]
    if isinstance(value, array):
        return value.tolist()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return type(value).__name__, plain(
            {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        )
    slots = [s for c in type(value).__mro__ for s in getattr(c, "__slots__", ())]
    if slots and not isinstance(value, str | int | float | bytes):
        return type(value).__name__, plain({s: getattr(value, s, None) for s in slots})
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return type(value).__name__, plain(vars(value))
    return value


def room_value(room: Room) -> Any:
    """Everything the room holds but its private memo of the sheet
    (:meth:`Room.sheet`), which is the rest of the room's sheet, remembered."""
    return plain({k: v for k, v in vars(room).items() if k != "_sheet"})


def a_round_under_way() -> tuple[Room, list[str]]:
    """Three players and a spectator who sees boards: deal 1 played and over,
    deal 2 running with moves made."""
    h = Harness()
    ids = setup_room(h, players=3, spectators=1, deals_per_round=3)
    h.run(C.decide_start(h.room, ids[0], h.ctx()))
    bots: dict[tuple[str, int], Bot] = {}
    for step in range(240):
        deal = h.room.running
        assert deal is not None
        h.now += 400
        pid = ids[step % 3]
        board = deal.replays[pid].board
        if board.status is not Status.PLAYING:
            continue
        n = len(deal.logs[pid])
        if deal.number == 1 and step >= 150:
            move = Move(MoveKind.RESIGN)
        else:
            move = bots.setdefault((pid, deal.number), Bot()).decide(player_view(board))
        h.run(C.decide_move(h.room, pid, deal.number, n, move, h.ctx()))
    assert h.room.deals[0].over and h.room.running is not None
    assert h.room.running.number == 2 and all(h.room.running.logs.values())
    return h.room, ids


def views_of(room: Room, ids: list[str], memo: ViewMemo) -> dict[str, Callable[[], Any]]:
    now = room.deals[-1].started_at + 90_000
    seq = room.seq
    views: dict[str, Callable[[], Any]] = {
        "room_info": lambda: room_info(room),
        "members_event": lambda: members_event(room, seq),
    }
    for who in [*ids, "s0", "stranger"]:
        views[f"room_view {who}"] = lambda who=who: room_view(room, who, now, 2)
        views[f"kept room_view {who}"] = lambda who=who: room_view(
            room, who, now, revealed=memo.revealed
        )
        if who in room.members:
            views[f"reaction_event {who}"] = lambda who=who: reaction_event(room, who, Reaction.GG)
    for deal in room.deals:
        d = deal.number
        views[f"tick_event {d}"] = lambda deal=deal: tick_event(room, deal, 3, now)
        views[f"deal_started_event {d}"] = lambda deal=deal: deal_started_event(
            room, deal, None, deal.started_at, seq
        )
        for who in [*deal.replays, SPECTATOR_VIEW, None]:
            views[f"deal_view {d} {who}"] = lambda deal=deal, who=who: deal_view(
                room, deal, who, now
            )
        for p, log in deal.logs.items():
            views[f"board_view {d} {p}"] = lambda deal=deal, p=p: board_view(deal, p)
            views[f"progress_of {d} {p}"] = lambda deal=deal, p=p: progress_of(room, deal, p, now)
            views[f"told_move {d} {p}"] = lambda deal=deal, p=p: V.told_move(
                deal.replays[p].board, Outcome(Move(MoveKind.DRAW), (), (), None, 0, Status.PLAYING)
            )
            for n in (0, len(log) // 2, len(log) - 1):
                views[f"replayed_move {d} {p} {n}"] = lambda deal=deal, p=p, n=n: replayed_move(
                    room, deal, p, n
                )
                views[f"kept replayed_move {d} {p} {n}"] = lambda deal=deal, p=p, n=n: (
                    memo.replayed_move(room, deal, p, n)
                )
        if deal.over:
            views[f"revealed_deal {d}"] = lambda deal=deal: revealed_deal(deal)
            views[f"withheld_deal {d}"] = lambda deal=deal: V.withheld_deal(deal)
            views[f"kept revealed_deal {d}"] = lambda deal=deal: memo.revealed(deal)
            views[f"past_deal {d}"] = lambda deal=deal: past_deal(room, deal, now)
            views[f"past_summary {d}"] = lambda deal=deal: past_summary(room, deal, now)
            views[f"deal_logs {d}"] = lambda deal=deal: deal_logs(deal)
            views[f"deal_over_event {d}"] = lambda deal=deal: deal_over_event(room, deal, now, seq)
            for binary in (True, False):
                views[f"kept deal_logs {d} {binary}"] = lambda deal=deal, binary=binary: (
                    memo.deal_logs(deal, binary)
                )
    return views


def test_building_any_view_twice_changes_nothing() -> None:
    room, ids = a_round_under_way()
    memo = ViewMemo()
    views = views_of(room, ids, memo)
    shown = {name.removeprefix("kept ").split()[0] for name in views}
    assert shown >= {name for name in V.__all__ if name[0].islower()}  # every view
    for name, build in views.items():
        before = room_value(room)
        deals = [plain(d) for d in room.deals]
        first = copy.deepcopy(build())
        second = build()
        assert second == first, name
        assert [plain(d) for d in room.deals] == deals, name
        assert room_value(room) == before, name
