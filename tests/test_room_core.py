"""The sans-I/O room core on its own: decide never mutates, the log rebuilds the room
exactly, host hand-over, time limits. Its refusals: tests/test_room_refusals.py."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest

from client.bot import Bot
from protocol.board import MAX_MOVES, Board
from protocol.moves import IllegalMove, Move, MoveKind, Status
from protocol.scoring import replay_outcomes
from protocol.settings import DealRules
from protocol.strategy import Pace, Style
from protocol.views import outcome_view, player_view
from server.core import decide as C
from server.core import records as R
from server.core.records import decode_record, encode_record
from server.core.room import Room
from server.core.values import Role, RoomError, logged_move
from server.core.views import board_view, deal_logs, replayed_move, room_view, told_move
from tests.support.room_core import Harness, setup_room
from tests.support.solver import board_from_view, solve


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
        move = bot.decide(player_view(board))
        if step % 90 == 89:
            move = Move(MoveKind.RESIGN)
        state = copy.deepcopy(room_view(h.room, pid, h.now))
        fp = board.fingerprint()
        n = len(deal.logs[pid])
        decision = C.decide_move(h.room, pid, deal.number, n, move, h.ctx())
        assert board.fingerprint() == fp  # validated on a copy
        assert room_view(h.room, pid, h.now) == state
        h.run(decision)
        if step == 100:
            h.run(C.decide_settings(h.room, ids[0], {"scoring": "timed"}, h.ctx()))
    rebuilt = h.rebuilt()
    assert rebuilt.seq == h.room.seq and rebuilt.n_records == len(h.log)
    for member in [*ids, "s0"]:
        assert room_view(rebuilt, member, h.now) == room_view(h.room, member, h.now)


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


def test_a_bots_style_is_drawn_apart_recorded_and_defaults_for_older_logs() -> None:
    """Bots of one pace get styles no other bot of that pace has while one is
    free; the style is in the ``joined`` record, so a rebuilt room and a snapshot
    keep it, and a record or snapshot written before styles reads as methodical,
    its bytes unchanged."""
    h = Harness()
    (host,) = setup_room(h, players=1)
    for i in range(4):
        h.run(C.decide_add_bot(h.room, host, f"b{i}", Pace.FAST, h.ctx()))
    h.run(C.decide_add_bot(h.room, host, "b9", Pace.RELAXED, h.ctx()))
    bots = h.room.bots()
    assert {bots[f"b{i}"][1] for i in range(3)} == set(Style)  # three fast bots, three styles
    assert bots["b9"][0] is Pace.RELAXED
    joined = [decode_record(b) for b in h.log if decode_record(b).KIND == "joined"]
    assert [(r.bot, r.style) for r in joined if r.bot is not None] == list(bots.values())
    assert h.rebuilt().bots() == bots
    restored = Room.rebuild("ABCDEF", [decode_record(encode_record(h.room.checkpoint_record()))])
    assert restored.bots() == bots
    assert room_view(h.room, host, h.now)["players"][1] == {
        "id": "b0",
        "name": "Bot Ada",
        "connected": True,
        "bot": "fast",
        "style": bots["b0"][1].value,
    }

    # Written before styles: no ``style`` key, a snapshot's member without one.
    old = msgpack.packb({"k": "joined", "p": "b7", "name": "Bot Old", "role": "player",
                         "at": 5, "bot": "steady"})  # fmt: skip
    record = decode_record(old)
    assert isinstance(record, R.Joined) and record.style is None
    assert encode_record(record) == old
    h.run(C.Decision([record]))
    assert h.room.bots()["b7"] == (Pace.STEADY, Style.METHODICAL)
    assert room_view(h.room, host, h.now)["players"][-1]["style"] == "methodical"
    snap = h.room.checkpoint_record()
    members = [m[:5] for m in snap.members]  # as a snapshot written before styles
    older = replace(snap, members=members)
    again = Room.rebuild("ABCDEF", [decode_record(encode_record(older))])
    assert set(again.bots().values()) == {(Pace.STEADY, Style.METHODICAL),
                                          (Pace.FAST, Style.METHODICAL),
                                          (Pace.RELAXED, Style.METHODICAL)}  # fmt: skip


def test_leaving_last_player_ends_the_deal_and_round() -> None:
    h = Harness()
    ids = setup_room(h, players=2, spectators=1)
    h.run(C.decide_start(h.room, ids[0], h.ctx()))
    h.run(C.decide_move(h.room, ids[0], 1, 0, Move(MoveKind.RESIGN), h.ctx()))
    assert h.room.running is not None and h.room.running.number == 1
    h.run(C.decide_remove(h.room, ids[0], ids[1], h.ctx()))
    assert h.room.deal is not None and h.room.deal.number == 2  # p1 was the last one playing
    h.run(C.decide_leave(h.room, ids[0], h.ctx()))
    assert h.room.state == "round_over" and h.room.round_players == []
    assert h.room.host == "s0"
    kinds = [type(decode_record(b)) for b in h.log[-3:]]
    assert kinds == [R.Left, R.DealEnded, R.RoundOver]


def test_time_limit_shortened_past_now_ends_round() -> None:
    h = Harness()
    ids = setup_room(h, players=2)
    h.run(C.decide_start(h.room, ids[0], h.ctx()))
    h.now += 6 * 60_000
    assert C.decide_tick(h.room, h.ctx()).records == []
    h.run(C.decide_settings(h.room, ids[0], {"time_limit_minutes": 5}, h.ctx()))
    assert h.room.state == "round_over"
    records = [decode_record(b) for b in h.log]
    reasons = [r.reason for r in records if isinstance(r, R.DealEnded)]
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
    assert [type(r) for r in decision.records] == [R.DealEnded, R.RoundOver]
    assert h.room.round_ends_at is not None and h.room.state == "round_over"


def test_a_deal_ends_when_a_log_reaches_the_move_limit() -> None:
    """docs/rules.md §4.11: a player who draws and recycles forever is dead at
    the 5 000th move, the deal (here the round) ends as for any dead deal, and the
    rebuilt room agrees; the past deal's summary counts the whole log."""
    h = Harness()
    (pid,) = setup_room(h, players=1, deals_per_round=1)
    h.run(C.decide_start(h.room, pid, h.ctx()))
    deal = h.room.running
    assert deal is not None
    for n in range(MAX_MOVES):
        h.now += 5
        kind = "draw" if deal.replays[pid].board.stock else "recycle"  # a copy per move
        decision = h.run(C.decide_move(h.room, pid, 1, n, Move(MoveKind(kind)), h.ctx()))
        assert decision.outcome is not None
        want = Status.DEAD if n == MAX_MOVES - 1 else Status.PLAYING
        assert decision.outcome.status is want, n
    assert deal.over and h.room.state == "round_over"
    with pytest.raises(RoomError) as info:
        C.decide_move(h.room, pid, 1, MAX_MOVES, Move(MoveKind.DRAW), h.ctx())
    assert info.value.code == "wrong_state"
    summary = room_view(h.room, pid, h.now)["history"][0]["summary"][pid]
    assert summary == {
        "logged": MAX_MOVES,
        "moves": MAX_MOVES,
        "status": "dead",
        "finished_t": 5 * MAX_MOVES,  # the last move's, 5 ms apart from the deal's start
        "score": 0,
        "scored_t": 0,  # draws and recycles: its score never left 0
        "place": 1,
    }
    rebuilt = h.rebuilt()
    assert room_view(rebuilt, pid, h.now) == room_view(h.room, pid, h.now)


def _undoable(board: Board, move: Move) -> bool:
    trial = board.copy()
    trial.apply(move)
    try:
        trial.apply(Move(MoveKind.UNDO))
    except IllegalMove:
        return False
    return True


def test_a_move_number_plays_retries_or_refuses() -> None:
    """The three fates of a move's ``n``, decided by the core alone: the next number
    is played; a logged number with its logged move is a retry (no records, and the
    reply rebuilt from the log is the one sent then), also once the deal and the
    round are over; any other number is ``wrong_move_number`` with the position."""
    h = Harness()
    h.seeds = iter(["race-27", "seed-2", "seed-3"])
    ids = setup_room(
        h, players=2, variant="thoughtful", undo=True, scoring="timed", deals_per_round=2
    )
    p0, p1 = ids
    h.run(C.decide_start(h.room, p0, h.ctx()))
    sent: dict[tuple[int, str, int], tuple[Any, ...]] = {}  # what each reply said

    def play(pid: str, move: Move) -> None:
        deal = h.room.running
        assert deal is not None
        h.now += 1500
        n = len(deal.logs[pid])
        decision = h.run(C.decide_move(h.room, pid, deal.number, n, move, h.ctx()))
        assert decision.retry is None and decision.outcome is not None
        t = deal.logs[pid][-1][0]
        told = copy.deepcopy(told_move(deal.replays[pid].board, decision.outcome))
        score = h.room.score(deal, pid, deal.started_at + t)
        sent[(deal.number, pid, n)] = (t, told, score)

    deal = h.room.running
    assert deal is not None
    solution = solve(board_from_view(board_view(deal, p0)))
    assert solution is not None
    board = deal.replays[p0].board
    takeback = next(m for m in board.legal_moves() if _undoable(board, m))
    play(p0, takeback)
    play(p0, Move(MoveKind.UNDO))  # the log grows, the board's move count does not
    assert board_view(deal, p0)["moves"] == 0 and board_view(deal, p0)["logged"] == 2
    for move in solution:
        play(p0, move)
    assert deal.first == p0
    play(p1, Move(MoveKind.DRAW))

    # Wrong numbers, in the running deal: ahead of the log, and a logged number
    # with another move. Neither adds a record.
    records = h.room.n_records
    with pytest.raises(RoomError) as err:
        C.decide_move(h.room, p1, 1, 5, Move(MoveKind.DRAW), h.ctx())
    assert (err.value.code, err.value.extra) == ("wrong_move_number", {"expected": 1})
    with pytest.raises(RoomError) as err:
        C.decide_move(h.room, p1, 1, 0, Move(MoveKind.RESIGN), h.ctx())
    assert (err.value.code, err.value.extra) == ("wrong_move_number", {"expected": 1})
    # The usual refusals come before a number ahead of the log.
    with pytest.raises(RoomError) as err:
        C.decide_move(h.room, p0, 1, len(deal.logs[p0]) + 5, Move(MoveKind.DRAW), h.ctx())
    assert err.value.code == "deal_over"
    with pytest.raises(RoomError) as err:
        C.decide_move(h.room, p1, 2, 1, Move(MoveKind.DRAW), h.ctx())
    assert err.value.code == "wrong_deal"
    assert h.room.n_records == records

    play(p1, Move(MoveKind.RESIGN))  # deal 1 is over for everyone: deal 2 runs
    assert h.room.running is not None and h.room.running.number == 2
    play(p0, Move(MoveKind.RESIGN))
    play(p1, Move(MoveKind.RESIGN))  # the last deal: the round is over
    assert h.room.state == "round_over"

    h.now += 60_000  # Timed: the score a retry carries is the one of its move's time
    state = copy.deepcopy(room_view(h.room, p0, h.now))
    for (number, pid, n), original in sent.items():
        d = h.room.deals[number - 1]
        move = logged_move(d.logs[pid][n])
        decision = C.decide_move(h.room, pid, number, n, move, h.ctx())
        assert (decision.records, decision.retry, decision.deal_number) == ([], n, number)
        assert replayed_move(h.room, d, pid, n) == original
    assert room_view(h.room, p0, h.now) == state
    sent_logs = h.room.deals[0].logs
    last = len(sent_logs[p0])
    with pytest.raises(RoomError) as err:
        C.decide_move(h.room, p0, 1, 0, Move(MoveKind.UNDO), h.ctx())
    assert (err.value.code, err.value.extra) == ("wrong_move_number", {"expected": last})
    with pytest.raises(RoomError) as err:  # a new move once the round is over
        C.decide_move(h.room, p0, 2, 1, Move(MoveKind.DRAW), h.ctx())
    assert err.value.code == "wrong_state"

    # A rematch drops the round's logs: deal 1 is the new round's, its log empty.
    h.run(C.decide_rematch(h.room, p0, h.ctx()))
    old = logged_move(sent_logs[p0][3])
    with pytest.raises(RoomError) as err:
        C.decide_move(h.room, p0, 1, 3, old, h.ctx())
    assert (err.value.code, err.value.extra) == ("wrong_move_number", {"expected": 0})


def test_snapshot_bytes_and_revealed_logs_match_the_replay() -> None:
    """A snapshot splices in the deals already over, encoded once; its bytes decode
    to the whole record all the same. A revealed deal's results are kept from the
    fold: they are what a replay of the log from the seed says."""
    h = Harness()
    ids = setup_room(h, players=2, deals_per_round=3)
    h.run(C.decide_start(h.room, ids[0], h.ctx()))
    bots: dict[tuple[str, int], Bot] = {}
    checked = 0
    for step in range(3000):
        deal = h.room.running
        if deal is None:
            break
        h.now += 500
        pid = ids[step % 2]
        board = deal.replays[pid].board
        if board.status is not Status.PLAYING:
            continue
        move = bots.setdefault((pid, deal.number), Bot()).decide(player_view(board))
        h.run(C.decide_move(h.room, pid, deal.number, len(deal.logs[pid]), move, h.ctx()))
        if not deal.over:
            continue
        for p, log in deal_logs(deal).items():
            moves = [logged_move(e) for e in deal.logs[p]]
            outcomes = replay_outcomes(deal.seed, deal.rules, moves)
            assert [e["result"] for e in log] == [outcome_view(o) for o in outcomes]
        room = copy.deepcopy(h.room)
        record = room.checkpoint_record()
        assert decode_record(room.take_checkpoint()) == record
        assert decode_record(room.take_checkpoint()) == replace(record, index=record.index + 1)
        assert all((d.packed is not None) == d.over for d in room.deals)  # once over, once
        checked += 1
    assert checked == 3


def test_a_countdown_in_the_log_starts_the_round_once_wherever_it_is_rebuilt() -> None:
    """A quick match's countdown is its ``created`` record's: a room rebuilt from
    the log (a checkpoint's too) counts down to the same moment, and the clock
    starts the round once, at it or at once when it has passed."""
    h = Harness()
    starts = h.now + 5_000
    h.run(C.decide_create(h.room, "p0", "P0", {"rated": True}, h.ctx(), {"p0"}, starts_at=starts))
    h.run(C.decide_join(h.room, "p1", "P1", Role.PLAYER, h.ctx(), signed={"p1"}))
    assert decode_record(h.log[0]) == R.Created(
        h.room.settings.to_wire(), "p0", h.now, starts_at=starts
    )
    rebuilt = h.rebuilt()
    assert rebuilt.starts_at == h.room.starts_at == starts
    assert room_view(rebuilt, "p1", h.now)["starts_at"] == starts
    checkpoint = decode_record(encode_record(rebuilt.checkpoint_record()))
    assert isinstance(checkpoint, R.Checkpoint) and checkpoint.starts_at == starts
    h.now = starts - 1
    assert not rebuilt.due(h.now) and C.decide_tick(rebuilt, h.ctx()).records == []
    h.now = starts + 60_000  # rebuilt late: at once
    assert rebuilt.due(h.now)
    started = h.run(C.decide_tick(rebuilt, h.ctx()))
    assert [type(r) for r in started.records] == [R.RoundStarted, R.DealStarted]
    assert h.room.state == "playing" and h.room.starts_at is None
    assert room_view(h.room, "p1", h.now)["starts_at"] is None
    assert C.decide_tick(h.room, h.ctx()).records == []  # once
    after = h.rebuilt()
    assert after.state == "playing" and after.round == 1 and not after.due(h.now)


def test_a_countdown_with_no_player_left_waits() -> None:
    h = Harness()
    starts = h.now + 5_000
    h.run(C.decide_create(h.room, "p0", "P0", {}, h.ctx(), starts_at=starts))
    h.run(C.decide_join(h.room, "s0", "S0", Role.SPECTATOR, h.ctx()))
    h.run(C.decide_leave(h.room, "p0", h.ctx()))
    h.now = starts
    assert h.room.starts_at is None and not h.room.due(h.now)
    h.run(C.decide_join(h.room, "p1", "P1", Role.PLAYER, h.ctx()))
    assert h.room.due(h.now)  # a player again: the countdown is long over
