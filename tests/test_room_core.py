"""The sans-I/O room core on its own: decide never mutates, the log rebuilds the room
exactly, and the room rules that the socket tests do not reach."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest

from client.bot import Bot
from protocol.board import Board
from protocol.moves import Status
from protocol.settings import DealRules
from protocol.views import player_view
from server.core import decide as C
from server.core.records import decode_record, encode_record
from server.core.room import Room
from server.core.values import Decision, Role, RoomError
from server.core.views import snapshot


class Harness:
    """A room driven like the shell drives it, with the log kept as bytes."""

    def __init__(self) -> None:
        self.room = Room("ABCDEF")
        self.log: list[bytes] = []
        self.now = 1_000_000
        self.seeds = (f"seed-{i}" for i in itertools.count())
        self.events: list[Any] = []

    def ctx(self) -> C.Ctx:
        return C.Ctx(self.now, lambda: next(self.seeds))

    def run(self, decision: Decision) -> Decision:
        self.log.extend(encode_record(r) for r in decision.records)
        self.events.extend(self.room.commit(decision))
        return decision

    def rebuilt(self) -> Room:
        return Room.rebuild(self.room.code, (decode_record(b) for b in self.log))


def setup_room(h: Harness, players: int = 3, spectators: int = 0, **settings: Any) -> list[str]:
    ids = [f"p{i}" for i in range(players)]
    h.run(C.decide_create(h.room, ids[0], "P0", settings, h.ctx()))
    for pid in ids[1:]:
        h.run(C.decide_join(h.room, pid, pid.upper(), Role.PLAYER))
    for i in range(spectators):
        h.run(C.decide_join(h.room, f"s{i}", f"S{i}", Role.SPECTATOR))
    return ids


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


def test_refusals_add_nothing() -> None:
    h = Harness()
    ids = setup_room(h)
    with pytest.raises(RoomError) as err:
        C.decide_move(h.room, ids[1], 1, {"kind": "draw"}, h.ctx())
    assert err.value.code == "wrong_state"
    h.run(C.decide_start(h.room, ids[0], h.ctx()))
    with pytest.raises(RoomError) as err:
        C.decide_move(h.room, ids[1], 1, {"kind": "recycle"}, h.ctx())
    assert err.value.code == "stock_not_empty"
    with pytest.raises(RoomError) as err:
        C.decide_settings(h.room, ids[0], {"race_bonus": 7}, h.ctx())
    assert (err.value.code, err.value.extra) == ("bad_setting", {"field": "race_bonus"})


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


def test_join_rules() -> None:
    h = Harness()
    ids = setup_room(h, players=8)
    with pytest.raises(RoomError) as err:
        C.decide_join(h.room, "p9", "P9", Role.PLAYER)
    assert err.value.code == "room_full"
    h.run(C.decide_join(h.room, "s", "S", Role.SPECTATOR))
    h.run(C.decide_start(h.room, ids[0], h.ctx()))
    h.run(C.decide_leave(h.room, ids[7], h.ctx()))
    with pytest.raises(RoomError) as err:
        C.decide_join(h.room, "p9", "P9", Role.PLAYER)
    assert err.value.code == "round_in_progress"
