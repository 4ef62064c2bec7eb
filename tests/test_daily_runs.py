"""One attempt at each daily, over real sockets: a run is a room of one, dealt
the day's seed; it is played, dropped and resumed, and ends once; its result is
ranked on the leaderboard (everyone's, friends') and folded into the streaks.
The in-process server runs on a clock the test moves by hand (days pass
without waiting); the days' deals are proven for real and published into its
daily store (tests/support/dailies.py).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from client.daily_run import board_lines
from protocol.board import Board
from protocol.moves import Move
from protocol.placings import moment_text
from protocol.views import hidden_cards
from server.app import RaceServer
from server.daily.schedule import DailyDeal, day_of, day_start
from tests.support.dailies import publish, winning_moves
from tests.support.inprocess import FakeClock, running_server
from tests.support.raw_client import Client, player, resume
from tests.support.waiting import eventually

ROOT = Path(__file__).resolve().parent.parent
DAY_MS = 86_400_000
D1 = "classic-draw1"
D3 = "classic-draw3"


def clock_at_noon() -> FakeClock:
    return FakeClock(day_start(dt.date(2026, 12, 2)) + DAY_MS // 2)


async def refused(client: Client, kind: str, why: str, **fields: Any) -> dict[str, Any]:
    reply = await client.request(kind, **fields)
    assert (reply["type"], reply.get("code")) == ("error", why), reply
    return reply


async def play(client: Client, moves: list[Move], clock: FakeClock, step_ms: int = 1000) -> None:
    for move in moves:
        clock.advance(step_ms)
        reply = await client.request("move", deal=1, move=move.to_wire())
        assert reply["type"] == "moved", reply


async def resign(client: Client) -> dict[str, Any]:
    reply = await client.request("move", deal=1, move={"kind": "resign"})
    assert reply["type"] == "moved", reply
    return reply


async def test_a_daily_is_played_to_a_win_once_and_nothing_hidden_is_sent_before(
    tmp_path: Any,
) -> None:
    clock = clock_at_noon()
    async with running_server(clock=clock) as server:
        deals = await publish(server.service.daily.store, day_of(clock.now()))
        deal = deals[D1]
        ann = await player(server, "Ann")
        joined = await ann.ok("daily_start", ladder=D1)
        assert joined["type"] == "joined"
        room = joined["room"]
        assert room["settings"]["draw"] == 1 and room["settings"]["undo"] is False
        assert [m["name"] for m in room["players"]] == ["Ann"]
        assert room["daily"] == {"date": "2026-12-02", "ladder": D1, "first_move_at": None}
        assert room["deal"]["commitment"] == deal.commitment  # the day's own deal

        # Nobody else gets in, and the room is not to be changed.
        bob = await player(server, "Bob")
        await refused(bob, "join_room", "wrong_state", code=room["code"], role="player")
        await refused(bob, "join_room", "wrong_state", code=room["code"], role="spectator")
        await refused(ann, "update_settings", "wrong_state", settings={"draw": 3})
        await refused(ann, "add_bot", "wrong_state", pace="fast")

        # Time looking at the deal does not count: the clock starts at the first move.
        clock.advance(60_000)
        moves = winning_moves(deal)
        sent: list[Move] = []
        for move in moves:
            clock.advance(1000)
            reply = await ann.request("move", deal=1, move=move.to_wire())
            assert reply["type"] == "moved", reply
            sent.append(move)
        await ann.event("deal_over")

        # No frame, during the run or after it, names the seed, nor a card then
        # face down or in the stock (replayed move by move against the frames).
        assert_nothing_hidden(ann, deal, sent)

        board_reply = await ann.ok("daily_board", ladder=D1)
        assert board_reply["count"] == 1
        you = board_reply["you"]
        assert you["rank"] == 1 and you["result"] == "won" and you["name"] == "Ann"
        assert you["seconds"] == (len(moves) - 1) * 1.0  # from the first move to the last
        assert you["moves"] == len(moves)
        assert board_reply["runs"] == [you]

        # One attempt: over is over, on this ladder; the other is its own daily.
        await ann.ok("leave_room")
        await refused(ann, "daily_start", "daily_played", ladder=D1)
        again = await ann.ok("daily_start", ladder=D3)
        assert again["room"]["settings"]["draw"] == 3
        await ann.close(), await bob.close()


def assert_nothing_hidden(
    client: Client, deal: DailyDeal, sent: list[Move], before: Sequence[Move] = ()
) -> None:
    """Every frame ``client`` got: no seed, no proof, and no card that was face
    down or in the stock on its board when the frame came (a daily run's end
    reveals nothing: the day's deal is revealed with the day). ``before``: the
    moves made on the board before this client's first frame."""
    board = Board.deal(deal.seed, deal.rules)
    for move in before:
        board.apply(move)
    n = 0
    for frame in client.frames:
        msg = frame.msg
        raw = frame.raw if isinstance(frame.raw, bytes) else frame.raw.encode()
        assert deal.seed.encode() not in raw, msg.get("type")
        assert b"proof" not in raw, msg.get("type")
        if msg.get("type") == "moved":
            board.apply(sent[n])
            n += 1
        assert not (_cards(msg) & hidden_cards(board)), msg.get("type")
    assert n == len(sent)


def _cards(msg: Any) -> set[str]:
    from tests.test_hidden_information import cards_in

    return cards_in(msg, set())


async def test_a_drop_mid_run_resumes_the_same_board_with_the_clock_running() -> None:
    clock = clock_at_noon()
    async with running_server(clock=clock) as server:
        deals = await publish(server.service.daily.store, day_of(clock.now()))
        ann = await player(server, "Ann")
        joined = await ann.ok("daily_start", ladder=D1)
        first_five = winning_moves(deals[D1])[:5]
        await play(ann, first_five, clock)
        before = (await ann.ok("snapshot"))["room"]["deal"]
        await ann.close()
        clock.advance(120_000)  # away two minutes: the run's clock runs on

        back, welcome = await resume(server.url, ann.token)
        room = welcome["room"]
        assert room["code"] == joined["room"]["code"]
        assert room["deal"]["board"] == before["board"]
        assert room["deal"]["started_at"] == before["started_at"]
        # The run's clock started at its first move, a second after the deal.
        assert room["daily"]["first_move_at"] == before["started_at"] + 1000
        # A second daily_start while it runs seats the player in the same run.
        same = await back.ok("daily_start", ladder=D1)
        assert same["room"]["code"] == room["code"]
        clock.advance(1000)
        await resign(back)
        await back.event("deal_over")
        you = (await back.ok("daily_board", ladder=D1))["you"]
        assert you["result"] == "resigned" and you["moves"] == 6
        assert you["seconds"] == 4 + 120 + 1  # moves 2..5, the time away, the resignation
        # Over, the run shows what its player saw and nothing more: no seed, no
        # card never turned, no proof, no replay in the history.
        assert_nothing_hidden(ann, deals[D1], first_five)
        resign_move = Move.from_wire({"kind": "resign"})
        assert_nothing_hidden(back, deals[D1], [resign_move], first_five)
        past = (await back.ok("snapshot"))["room"]["history"][0]
        assert "seed" not in past and "proof" not in past
        assert (await back.ok("history"))["deals"] == []
        await back.close()


async def test_leaving_mid_run_ends_it() -> None:
    clock = clock_at_noon()
    async with running_server(clock=clock) as server:
        deals = await publish(server.service.daily.store, day_of(clock.now()))
        ann = await player(server, "Ann")
        await ann.ok("daily_start", ladder=D3)
        await play(ann, winning_moves(deals[D3])[:3], clock)
        await ann.ok("leave_room")
        you = (await ann.ok("daily_board", ladder=D3))["you"]
        assert you["result"] == "stopped" and you["moves"] == 3 and you["seconds"] == 2
        await refused(ann, "daily_start", "daily_played", ladder=D3)
        await ann.close()


async def finish(server: RaceServer, client: Client, clock: FakeClock, how: str, n: int) -> None:
    """Play ``n`` moves of today's draw-one daily, then win it (``won``) or resign."""
    deal = await server.service.daily.deal(server.service.daily.today(), D1)
    assert deal is not None
    await client.ok("daily_start", ladder=D1)
    moves = winning_moves(deal)
    if how == "won":
        await play(client, moves, clock, step_ms=n)
    else:
        await play(client, moves[:n], clock)
        await resign(client)
    await client.event("deal_over")
    await client.ok("leave_room")


def up_to_home(deal: DailyDeal, cards: int) -> list[Move]:
    """The winning line up to the move that brings ``cards`` cards home."""
    board = Board.deal(deal.seed, deal.rules)
    out: list[Move] = []
    for move in winning_moves(deal):
        board.apply(move)
        out.append(move)
        if board.home == cards:
            return out
    raise AssertionError(f"the line never has {cards} cards home")


async def got_to(
    client: Client, clock: FakeClock, moves: list[Move], step_ms: int, then_ms: int = 0
) -> None:
    """Play ``moves`` of today's draw-one daily a step apart, wait ``then_ms``
    (playing on without scoring, or idle: the same to the board) and resign."""
    await client.ok("daily_start", ladder=D1)
    await play(client, moves, clock, step_ms)
    clock.advance(then_ms)
    await resign(client)
    await client.event("deal_over")
    await client.ok("leave_room")


async def test_the_board_ranks_wins_by_time_the_rest_by_how_far_they_got() -> None:
    """Won runs first, by time then moves; the others by cards home, then
    score, then the earlier last card home, however soon they ended: a run
    resigned at once with few cards home ranks below one that got more home
    and ran on for ten minutes. Where two are told apart by time alone, each
    row carries its moment. The friends' board ranks alike."""
    clock = clock_at_noon()
    async with running_server(clock=clock) as server:
        deal = (await publish(server.service.daily.store, day_of(clock.now())))[D1]
        names = ["Ann", "Bea", "Cyd", "Dan", "Eve", "Fay"]
        c = {n: await player(server, n) for n in names}
        for name in ("Ann", "Bea", "Cyd"):
            made = await c[name].ok("take_handle", handle=name)
            c[name].token = made["device_token"]
        await c["Ann"].ok("befriend", handle="Cyd")
        await c["Cyd"].ok("answer_friend", handle="Ann", accept=True)

        few, more = up_to_home(deal, 2), up_to_home(deal, 6)
        await got_to(c["Ann"], clock, few, 1000)  # resigned at once, 2 home: last
        await finish(server, c["Bea"], clock, "won", 900)  # won, slower
        await finish(server, c["Cyd"], clock, "won", 500)  # won, fastest
        await finish(server, c["Dan"], clock, "won", 500)  # the same as Cyd: shared
        await got_to(c["Eve"], clock, more, 3000, 600_000)  # 6 home, then ten minutes on
        await got_to(c["Fay"], clock, more, 4000)  # as far, later, resigned at once

        everyone = await c["Ann"].ok("daily_board", ladder=D1)
        ranks = [(r["name"], r["rank"]) for r in everyone["runs"]]
        assert sorted(ranks[:2]) == [("Cyd", 1), ("Dan", 1)]
        assert ranks[2:] == [("Bea", 3), ("Eve", 4), ("Fay", 5), ("Ann", 6)]
        rows = {r["name"]: r for r in everyone["runs"]}
        assert rows["Ann"]["seconds"] < rows["Fay"]["seconds"] < rows["Eve"]["seconds"]
        assert (rows["Eve"]["home"], rows["Fay"]["home"], rows["Ann"]["home"]) == (6, 6, 2)
        assert rows["Eve"]["score"] == rows["Fay"]["score"]
        # Told apart by the moment their last card went home, from their first move.
        assert rows["Eve"]["home_seconds"] == 3 * (len(more) - 1)
        assert rows["Fay"]["home_seconds"] == 4 * (len(more) - 1)
        assert rows["Cyd"]["home"] == 52 and rows["Cyd"]["home_seconds"] == rows["Cyd"]["seconds"]
        assert everyone["you"]["rank"] == 6 and everyone["count"] == 6
        assert everyone["next"] is None
        # The terminal's board says the two moments, and no other.
        lines = board_lines(everyone)
        for line, name, step in ((lines[4], "Eve", 3_000), (lines[5], "Fay", 4_000)):
            assert f" {name} " in line and f"   6 home {rows[name]['score']:>5} " in line
            assert line.endswith(f"(last card home {moment_text(step * (len(more) - 1))})")
        assert sum("last card home" in line for line in lines) == 2

        friends = await c["Ann"].ok("daily_board", ladder=D1, friends=True)
        assert [(r["name"], r["rank"]) for r in friends["runs"]] == [("Cyd", 1), ("Ann", 2)]
        assert friends["you"]["rank"] == 2 and friends["count"] == 2
        # A guest has no friends: only their own run.
        alone = await c["Eve"].ok("daily_board", ladder=D1, friends=True)
        assert [r["name"] for r in alone["runs"]] == ["Eve"]
        # Paging: the runs after the first two.
        page = await c["Eve"].ok("daily_board", ladder=D1, before=2)
        assert [r["rank"] for r in page["runs"]] == [3, 4, 5, 6]
        await refused(c["Eve"], "daily_board", "bad_request", ladder="vegas")
        # A deleted account's run stays on the board, under no name of theirs.
        await c["Bea"].ok("delete_account", handle="Bea")
        after = await c["Eve"].ok("daily_board", ladder=D1)
        assert [r["name"] for r in after["runs"]][2] == "a deleted player"
        for client in c.values():
            await client.close()


async def test_streaks_count_days_in_a_row_played_and_won() -> None:
    clock = clock_at_noon()
    async with running_server(clock=clock) as server:
        store = server.service.daily.store
        ann = await player(server, "Ann")
        await ann.ok("take_handle", handle="Ann")

        async def streaks() -> dict[str, int]:
            return dict((await ann.ok("profile"))["profile"]["streaks"])

        assert await streaks() == {"played": 0, "won": 0, "best_played": 0, "best_won": 0}
        for day, how in enumerate(("won", "resigned", "won")):
            await publish(store, day_of(clock.now()), day)
            await finish(server, ann, clock, how, 100 if how == "won" else 2)
            if day == 0:  # the other ladder the same day adds no day
                await ann.ok("daily_start", ladder=D3)
                await resign(ann)
                await ann.event("deal_over")
                await ann.ok("leave_room")
            if day < 2:
                clock.advance(DAY_MS)
        assert await streaks() == {"played": 3, "won": 1, "best_played": 3, "best_won": 1}
        # One's own data holds them: every run, and the streaks as kept.
        mine = (await ann.ok("export_account"))["data"]["daily"]
        assert [(r["date"], r["ladder"], r["result"]) for r in mine["runs"]] == [
            ("2026-12-02", D1, "won"),
            ("2026-12-02", D3, "resigned"),
            ("2026-12-03", D1, "resigned"),
            ("2026-12-04", D1, "won"),
        ]
        assert mine["streaks"]["played"] == 3
        clock.advance(2 * DAY_MS)  # a day missed: both streaks are broken
        assert await streaks() == {"played": 0, "won": 0, "best_played": 3, "best_won": 1}
        await ann.close()


async def daily_command(url: str, *options: str) -> list[str]:
    """``klondike-race daily`` as users run it; its output's lines."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.cli", "daily", "--url", url, *options,
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()[-3000:]
    return out.decode().splitlines()


async def test_the_terminal_plays_a_run_with_the_bot_and_prints_the_board() -> None:
    clock = clock_at_noon()
    async with running_server(clock=clock) as server:
        await publish(server.service.daily.store, day_of(clock.now()))
        played = await daily_command(server.url, "--play", "--name", "Terminal")
        assert played[0] == f"playing the {D1} daily of 2026-12-02"
        assert played[-1].startswith("you:    1. Terminal")
        board = await daily_command(server.url, "--board", "--ladder", D1)
        assert board[0] == f"daily 2026-12-02 {D1} (everyone): 1 runs"
        assert "Terminal" in board[1] and board[-1] == "you: no run over yet"
        # The bot's run is over: its result is on the board, once.
        assert await server.service.daily_results.count("2026-12-02", D1) == 1


async def test_a_run_left_idle_ends_and_counts_once_before_its_room_is_forgotten() -> None:
    clock = clock_at_noon()
    async with running_server(clock=clock) as server:
        deals = await publish(server.service.daily.store, day_of(clock.now()))
        ann = await player(server, "Ann")
        code = (await ann.ok("daily_start", ladder=D1))["room"]["code"]
        await play(ann, winning_moves(deals[D1])[:2], clock)
        await ann.close()
        runner = server.service.rooms[code]
        await eventually(lambda: not any(m.connected for m in runner.room.members.values()))
        clock.advance(server.service.idle_room_ms)
        await eventually(lambda: code not in server.service.rooms, what="the idle close")
        ranked = await server.service.daily_results.rank(
            day_of(clock.now()).isoformat(), D1, ann.player or ""
        )
        assert ranked is not None
        rank, run = ranked
        assert (rank, run.result, run.moves, run.ms) == (
            1,
            "stopped",
            2,
            1000 + server.service.idle_room_ms,
        )
        back, welcome = await resume(server.url, ann.token)
        assert welcome["room"] is None
        await refused(back, "daily_start", "daily_played", ladder=D1)
        await back.close()


async def test_two_daily_starts_at_once_give_one_run() -> None:
    clock = clock_at_noon()
    async with running_server(clock=clock) as server:
        await publish(server.service.daily.store, day_of(clock.now()))
        ann = await player(server, "Ann")
        first, second = await asyncio.gather(
            ann.request("daily_start", ladder=D1), ann.request("daily_start", ladder=D1)
        )
        assert first["type"] == second["type"] == "joined", (first, second)
        assert first["room"]["code"] == second["room"]["code"]
        assert list(server.service.rooms) == [first["room"]["code"]]
        await ann.close()
