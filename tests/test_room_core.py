"""The sans-I/O room core on its own: decide never mutates, the log rebuilds the room
exactly, host hand-over, time limits. Its refusals: tests/test_room_refusals.py."""

from __future__ import annotations

import copy

from client.bot import Bot
from protocol.board import Board
from protocol.moves import Status
from protocol.settings import DealRules
from protocol.views import player_view
from server.core import decide as C
from server.core.records import decode_record
from server.core.views import snapshot
from tests.support.room_core import Harness, setup_room


def test_board_copy_is_a_full_copy() -> None:
    board = Board.deal("x", DealRules())
    copy_ = board.copy()
    assert copy_.fingerprint() == board.fingerprint()
    bot = Bot()
    for _ in range(50):
        if copy_.status is not Status.PLAYING:
            break
        copy_.apply(bot.decide(player_view(copy_)))
    assert board.fingerprint() == Board.deal("x", DealRules()).fingerprint()


def test_decide_does_not_touch_the_room_and_rebuild_is_exact() -> None:
    h = Harness()
    ids = setup_room(h, spectators=1, deals_per_round=2)
    h.run(C.decide_start(h.room, ids[0], h.ctx()))
    bots: dict[tuple[str, int], Bot] = {}  # one per player and deal
    for step in range(400):
        h.now += 700
        pid = ids[step % 3]
        deal = h.room.running
        if deal is None:
            break
        board = deal.replays[pid].board
        if board.status.value != "playing":
            continue
        bot = bots.setdefault((pid, deal.number), Bot())
        move = bot.decide(player_view(board)).to_wire()
        if step % 90 == 89:
            move = {"kind": "resign"}
        state = copy.deepcopy(snapshot(h.room, pid, h.now))
        fp = board.fingerprint()
        decision = C.decide_move(h.room, pid, deal.number, move, h.ctx())
        assert board.fingerprint() == fp  # validated on a copy
        assert snapshot(h.room, pid, h.now) == state
        h.run(decision)
        if step == 100:
            h.run(C.decide_settings(h.room, ids[0], {"scoring": "timed"}, h.ctx()))
    rebuilt = h.rebuilt()
    assert rebuilt.seq == h.room.seq and rebuilt.n_records == len(h.log)
    for member in [*ids, "s0"]:
        assert snapshot(rebuilt, member, h.now) == snapshot(h.room, member, h.now)


def test_host_passes_to_longest_present_connected_player() -> None:
    h = Harness()
    ids = setup_room(h, players=4, spectators=1)
    h.run(C.decide_presence(h.room, ids[1], False))
    h.run(C.decide_leave(h.room, ids[0], h.ctx()))
    assert h.room.host == ids[2]  # p1 is longest present but offline
    h.run(C.decide_leave(h.room, ids[2], h.ctx()))
    assert h.room.host == ids[3]
    h.run(C.decide_leave(h.room, ids[3], h.ctx()))
    assert h.room.host == ids[1]  # offline, but the only player left
    h.run(C.decide_leave(h.room, ids[1], h.ctx()))
    assert h.room.host == "s0"
    h.run(C.decide_leave(h.room, "s0", h.ctx()))
    assert h.room.state == "closed" and h.room.closed_reason == "empty"
    assert h.rebuilt().state == "closed"


def test_leaving_last_player_ends_the_deal_and_round() -> None:
    h = Harness()
    ids = setup_room(h, players=2, spectators=1)
    h.run(C.decide_start(h.room, ids[0], h.ctx()))
    h.run(C.decide_move(h.room, ids[0], 1, {"kind": "resign"}, h.ctx()))
    assert h.room.running is not None and h.room.running.number == 1
    h.run(C.decide_remove(h.room, ids[0], ids[1], h.ctx()))
    assert h.room.deal is not None and h.room.deal.number == 2  # p1 was the last one playing
    h.run(C.decide_leave(h.room, ids[0], h.ctx()))
    assert h.room.state == "round_over" and h.room.round_players == []
    assert h.room.host == "s0"
    kinds = [decode_record(b)["k"] for b in h.log[-3:]]
    assert kinds == ["left", "deal_ended", "round_over"]


def test_time_limit_shortened_past_now_ends_round() -> None:
    h = Harness()
    ids = setup_room(h, players=2)
    h.run(C.decide_start(h.room, ids[0], h.ctx()))
    h.now += 6 * 60_000
    assert C.decide_tick(h.room, h.ctx()).records == []
    h.run(C.decide_settings(h.room, ids[0], {"time_limit_minutes": 5}, h.ctx()))
    assert h.room.state == "round_over"
    reasons = [
        decode_record(b).get("reason") for b in h.log if decode_record(b)["k"] == "deal_ended"
    ]
    assert reasons == ["time"]


def test_time_limit_tick() -> None:
    h = Harness()
    ids = setup_room(h, players=1, time_limit_minutes=5)
    h.run(C.decide_start(h.room, ids[0], h.ctx()))
    assert h.room.round_ends_at == h.now + 5 * 60_000
    h.now += 5 * 60_000 - 1
    assert not h.room.time_up(h.now)
    h.now += 1
    decision = h.run(C.decide_tick(h.room, h.ctx()))
    assert [r["k"] for r in decision.records] == ["deal_ended", "round_over"]
    assert h.room.round_ends_at is not None and h.room.state == "round_over"
