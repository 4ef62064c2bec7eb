"""Every room rule that refuses a request, on the sans-I/O core: the deciders of
server/core/decide.py on a server/core/room.py Room, no sockets. The lifecycle
table (server/core/lifecycle.py) is walked whole: for every state and action the
decider refuses exactly as the table says, and only there. A refusal adds no
record and leaves the room as it was. tests/test_transport.py shows a few of these
refusals reaching a client as error frames over a real socket."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from protocol.moves import Move, MoveKind, UnreadableMove, read_move
from protocol.strategy import Pace
from protocol.views import player_view
from server.core import decide as C
from server.core import records as R
from server.core.lifecycle import TABLE, TRANSITIONS, Action
from server.core.records import Decision
from server.core.room import Room
from server.core.values import MAX_PLAYERS, Role, RoomError, RoomState, logged_move
from server.core.views import room_view
from tests.support.room_core import Harness, setup_room
from tests.support.solver import board_from_view, solve

HOST, GUEST, SPEC = "p0", "p1", "s0"


def room_in(state: RoomState) -> Harness:
    """A room with a host, a second player and a spectator, in ``state``."""
    h = Harness()
    deals = 2 if state == RoomState.BREAK else 1
    setup_room(h, players=2, spectators=1, deals_per_round=deals, break_seconds=10)
    if state in (RoomState.PLAYING, RoomState.BREAK, RoomState.ROUND_OVER):
        h.run(C.decide_start(h.room, HOST, h.ctx()))
    if state in (RoomState.BREAK, RoomState.ROUND_OVER):
        for pid in (HOST, GUEST):
            h.run(
                C.decide_move(h.room, pid, 1, next_n(h.room, pid), Move(MoveKind.RESIGN), h.ctx())
            )
    if state == RoomState.CLOSED:
        h.run(C.decide_close(h.room, HOST))
    assert h.room.state == state
    return h


def next_n(room: Room, player: str) -> int:
    """The ``n`` a client sends for its next move: its log's length so far."""
    deal = room.deal  # the running deal, or the round's last
    return len(deal.logs.get(player, ())) if deal is not None else 0


def refused(decide: Callable[[], Decision]) -> RoomError:
    with pytest.raises(RoomError) as err:
        decide()
    return err.value


def request(h: Harness, action: Action) -> Callable[[], Decision]:
    """``action`` asked for by whoever may ask it (the host, or a newcomer to join),
    with arguments that are fine in themselves: only the state may refuse it."""
    room, ctx = h.room, h.ctx()
    deal = room.running.number if room.running is not None else 1
    return {
        Action.JOIN_AS_PLAYER: lambda: C.decide_join(room, "new", "New", Role.PLAYER, ctx),
        Action.JOIN_AS_SPECTATOR: lambda: C.decide_join(room, "new", "New", Role.SPECTATOR, ctx),
        # A member's request whose only state check is the MEMBER row.
        Action.MEMBER: lambda: C.decide_add_bot(room, HOST, "bot", Pace.STEADY, ctx),
        Action.LEAVE: lambda: C.decide_leave(room, GUEST, ctx),
        Action.SETTINGS: lambda: C.decide_settings(room, HOST, {"draw": 3}, ctx),
        Action.START: lambda: C.decide_start(room, HOST, ctx),
        Action.NEXT_DEAL: lambda: C.decide_next_deal(room, HOST, ctx),
        Action.REMOVE: lambda: C.decide_remove(room, HOST, GUEST, ctx),
        Action.REMATCH: lambda: C.decide_rematch(room, HOST, ctx),
        Action.CLOSE: lambda: C.decide_close(room, HOST),
        Action.READY: lambda: C.decide_ready(room, HOST, ctx),
        Action.MOVE: lambda: C.decide_move(
            room, HOST, deal, next_n(room, HOST), Move(MoveKind.DRAW), ctx
        ),
        Action.RETRY_MOVE: lambda: retry_first_move(h),
    }[action]


def retry_first_move(h: Harness) -> Decision:
    """The host sends its first move of the deal again (playing one first if it
    has none yet): a retry, which the room answers from its log."""
    room, ctx = h.room, h.ctx()
    deal = room.deal
    if room.running is not None and not room.running.logs[HOST]:
        h.run(C.decide_move(room, HOST, room.running.number, 0, Move(MoveKind.DRAW), ctx))
    logged = deal.logs.get(HOST, []) if deal is not None else []
    data = logged_move(logged[0]) if logged else Move(MoveKind.DRAW)
    return C.decide_move(room, HOST, deal.number if deal else 1, 0, data, ctx)


def test_the_table_covers_every_action_and_state() -> None:
    assert set(TABLE) == set(Action)
    for row in TABLE.values():
        assert set(row) == set(RoomState)


@pytest.mark.parametrize("state", list(RoomState))
@pytest.mark.parametrize("action", list(Action))
def test_each_decider_refuses_exactly_as_the_lifecycle_table_says(
    state: RoomState, action: Action
) -> None:
    h = room_in(state)
    before = copy.deepcopy([room_view(h.room, m, h.now) for m in h.room.members])
    expected = TABLE[action][state]
    if expected is None:
        decision = request(h, action)()  # allowed: no refusal at all
        assert isinstance(decision, Decision)
        return
    err = refused(request(h, action))
    code, message = expected
    assert (err.code, err.message) == (code, message.format(state=state.value))
    assert [room_view(h.room, m, h.now) for m in h.room.members] == before


def host_only(h: Harness, actor: str) -> list[Callable[[], Decision]]:
    room, ctx = h.room, h.ctx()
    return [
        lambda: C.decide_settings(room, actor, {"draw": 3}, ctx),
        lambda: C.decide_start(room, actor, ctx),
        lambda: C.decide_next_deal(room, actor, ctx),
        lambda: C.decide_remove(room, actor, HOST, ctx),
        lambda: C.decide_rematch(room, actor, ctx),
        lambda: C.decide_close(room, actor),
        lambda: C.decide_add_bot(room, actor, "bnew", Pace.FAST, ctx),
    ]


@pytest.mark.parametrize(
    "state", [RoomState.LOBBY, RoomState.PLAYING, RoomState.BREAK, RoomState.ROUND_OVER]
)
@pytest.mark.parametrize("actor", [GUEST, SPEC])
def test_host_only_requests(state: RoomState, actor: str) -> None:
    h = room_in(state)
    for decide in host_only(h, actor):
        assert refused(decide).code == "not_host"


def test_who_is_not_in_the_room() -> None:
    h = room_in(RoomState.PLAYING)
    room, ctx = h.room, h.ctx()
    for decide in (
        lambda: C.decide_leave(room, "stranger", ctx),
        lambda: C.decide_settings(room, "stranger", {}, ctx),
        lambda: C.decide_close(room, "stranger"),
        lambda: C.decide_move(
            room, "stranger", 1, next_n(room, "stranger"), Move(MoveKind.DRAW), ctx
        ),
    ):
        assert refused(decide).code == "not_in_room"
    err = refused(lambda: C.decide_remove(room, HOST, "pNOBODY", ctx))
    assert err.code == "no_such_player"
    assert refused(lambda: C.decide_remove(room, HOST, HOST, ctx)).code == "bad_request"
    assert refused(lambda: C.decide_join(room, GUEST, "P1", Role.SPECTATOR, h.ctx())).code == (
        "already_in_room"
    )


def test_bad_settings_name_the_field() -> None:
    h = room_in(RoomState.LOBBY)
    for changes, field in (
        ({"draw": 2}, "draw"),
        ({"colour": "red"}, "colour"),
        ({"race_bonus": 7}, "race_bonus"),
    ):
        err = refused(lambda c=changes: C.decide_settings(h.room, HOST, c, h.ctx()))
        assert (err.code, err.extra) == ("bad_setting", {"field": field})
        err = refused(lambda c=changes: C.validate_settings(c))  # create_room's check
        assert (err.code, err.extra) == ("bad_setting", {"field": field})


def test_move_refusals() -> None:
    h = room_in(RoomState.PLAYING)
    room, ctx = h.room, h.ctx()

    def move(actor: str, deal: int, data: Move | UnreadableMove) -> RoomError:
        return refused(lambda: C.decide_move(room, actor, deal, next_n(room, actor), data, ctx))

    assert move(SPEC, 1, Move(MoveKind.DRAW)).code == "not_a_player"
    assert move(HOST, 2, Move(MoveKind.DRAW)).code == "wrong_deal"
    assert move(HOST, 1, read_move({"kind": "jump"})).code == "bad_move"
    assert move(HOST, 1, Move(MoveKind.WASTE_TO_FOUNDATION)).code == "waste_empty"
    assert move(HOST, 1, Move(MoveKind.UNDO)).code == "undo_off"
    assert move(HOST, 1, Move(MoveKind.RECYCLE)).code == "stock_not_empty"
    assert move(HOST, 1, Move(MoveKind.TABLEAU_TO_TABLEAU, 9, 0)).code == ("no_such_pile")
    # A refusal by the rules of play lists every rule the move breaks (its code first).
    err = move(HOST, 1, Move(MoveKind.TABLEAU_TO_TABLEAU, 9, 0))
    assert err.extra == {"reasons": ["no_such_pile"]}
    assert "reasons" not in move(HOST, 2, Move(MoveKind.DRAW)).extra  # not the engine's
    h.run(C.decide_join(room, "late", "Late", Role.SPECTATOR, h.ctx()))
    assert move("late", 1, Move(MoveKind.DRAW)).code == "not_a_player"


def test_a_move_after_the_deal_is_won_is_deal_over() -> None:
    h = Harness("race-27")  # Thoughtful: tests/support/solver.py wins it
    setup_room(h, players=2, variant="thoughtful", deals_per_round=2)
    h.run(C.decide_start(h.room, HOST, h.ctx()))
    deal = h.room.running
    assert deal is not None
    solution = solve(board_from_view(player_view(deal.replays[HOST].board)))
    assert solution is not None
    for move in solution:
        h.run(C.decide_move(h.room, HOST, 1, next_n(h.room, HOST), move, h.ctx()))
    assert deal.replays[HOST].board.status.value == "won"
    err = refused(
        lambda: C.decide_move(h.room, HOST, 1, next_n(h.room, HOST), Move(MoveKind.DRAW), h.ctx())
    )
    assert err.code == "deal_over"
    h.run(
        C.decide_move(h.room, GUEST, 1, next_n(h.room, GUEST), Move(MoveKind.DRAW), h.ctx())
    )  # the deal goes on


def test_join_rules() -> None:
    h = Harness()
    ids = setup_room(h, players=MAX_PLAYERS)
    err = refused(lambda: C.decide_join(h.room, "p9", "P9", Role.PLAYER, h.ctx()))
    assert err.code == "room_full"
    h.run(C.decide_join(h.room, "s", "S", Role.SPECTATOR, h.ctx()))
    h.run(C.decide_start(h.room, ids[0], h.ctx()))
    err = refused(lambda: C.decide_join(h.room, "p9", "P9", Role.PLAYER, h.ctx()))
    assert err.code == "room_full"  # mid-round as before it
    h.run(C.decide_leave(h.room, ids[7], h.ctx()))
    h.run(C.decide_join(h.room, "p9", "P9", Role.PLAYER, h.ctx()))  # a seat is free
    assert h.room.joining("p9") and "p9" in h.room.round_players
    err = refused(lambda: C.decide_move(h.room, "p9", 1, 0, Move(MoveKind.DRAW), h.ctx()))
    assert err.code == "wrong_state"  # sits the running deal out


def test_a_round_needs_a_player() -> None:
    h = Harness()
    setup_room(h, players=1, spectators=1)
    h.run(C.decide_leave(h.room, HOST, h.ctx()))
    assert h.room.host == SPEC and h.room.state == RoomState.LOBBY
    err = refused(lambda: C.decide_start(h.room, SPEC, h.ctx()))
    assert (err.code, err.message) == ("wrong_state", "a round needs at least one player")


def test_refusals_add_nothing() -> None:
    """A refused request leaves the log and every member's view as they were."""
    h = room_in(RoomState.PLAYING)
    log, seq = list(h.log), h.room.seq
    views = copy.deepcopy([room_view(h.room, m, h.now) for m in h.room.members])
    for decide in (
        lambda: C.decide_move(
            h.room, GUEST, 1, next_n(h.room, GUEST), Move(MoveKind.RECYCLE), h.ctx()
        ),
        lambda: C.decide_settings(h.room, HOST, {"race_bonus": 7}, h.ctx()),
        lambda: C.decide_start(h.room, HOST, h.ctx()),
        lambda: C.decide_remove(h.room, GUEST, HOST, h.ctx()),
    ):
        refused(decide)
    assert h.log == log and h.room.seq == seq
    assert [room_view(h.room, m, h.now) for m in h.room.members] == views


def test_the_fold_enters_a_state_only_as_the_transitions_table_says() -> None:
    h = room_in(RoomState.LOBBY)
    with pytest.raises(ValueError, match="ready record in a lobby room"):
        h.room.apply(R.Ready(HOST))
    assert h.room.state == RoomState.LOBBY
    for kind, row in TRANSITIONS.items():
        assert row, kind  # every record kind comes in some state
