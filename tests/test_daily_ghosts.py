"""Ghosts in a daily run, over real sockets: two runs of the day played earlier
(a friend's and a stranger's) race the third player's run, their progress
sent as the server's clock (moved by the test, never slept on) reaches each
of their moves, in order, holding nothing a live rival's progress would not;
once the run is over, its comparison with the leader's, refused before.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import subprocess
import sys
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

from protocol.board import Board
from protocol.views import outcome_view, revealed_view
from server.app import RaceServer
from server.daily.schedule import day_of
from tests.support.dailies import publish, winning_moves
from tests.support.inprocess import FakeClock, running_server
from tests.support.raw_client import Client, player, resume
from tests.support.waiting import TIMEOUT, eventually
from tests.test_daily_runs import D1, D3, DAY_MS, ROOT, clock_at_noon, finish, refused

PROGRESS_KEYS = {"score", "home", "moves", "status", "finished"}  # a live rival's, exactly


async def test_a_run_races_a_friend_and_the_leader_at_their_pace_then_compares() -> None:
    clock = clock_at_noon()
    async with running_server_at(clock) as server:
        deals = await publish(server.service.daily.store, day_of(clock.now()))
        ann, bob, cyd = [await player(server, n) for n in ("Ann", "Bob", "Cyd")]
        for client, handle in ((ann, "Ann"), (cyd, "Cyd")):
            made = await client.ok("take_handle", handle=handle)
            client.token = made["device_token"]
        await cyd.ok("befriend", handle="Ann")
        await ann.ok("answer_friend", handle="Cyd", accept=True)
        # Bob, a stranger, wins at 300 ms a move (the leader); Ann, Cyd's
        # friend, at 700 ms a move.
        await finish(server, bob, clock, "won", 300)
        await finish(server, ann, clock, "won", 700)
        await refused(cyd, "daily_compare", "daily_not_over", ladder=D1)

        joined = await cyd.ok("daily_start", ladder=D1)
        listing = await cyd.event("ghosts")
        assert listing["deal"] == 1
        assert [(g["name"], g["kind"]) for g in listing["ghosts"]] == [
            ("Ann", "friend"),
            ("Bob", "leader"),
        ]
        start = {"score": 0, "home": 0, "moves": 0, "status": "playing", "finished": False}
        assert all(g["progress"] == start for g in listing["ghosts"])
        pace = {g["ghost"]: (700 if g["name"] == "Ann" else 300) for g in listing["ghosts"]}
        await refused(cyd, "daily_compare", "daily_not_over", ladder=D1)

        # Looking at the deal starts nothing: the ghosts wait for the first move.
        clock.advance(30_000)
        await clock.settled()
        await cyd.caught_up()
        assert cyd.unseen("ghost_progress") == []

        moves = winning_moves(deals[D1])
        n_moves = len(moves)
        clock.advance(1000)
        first = clock.now()
        assert (await cyd.request("move", deal=1, move=moves[0].to_wire()))["type"] == "moved"
        seen: dict[int, list[dict[str, Any]]] = {number: [] for number in pace}
        # The clock moves 100 ms at a time; after each step, every ghost has been
        # sent exactly its moves due by then (its pace times its move number).
        while clock.now() - first < (n_moves - 1) * max(pace.values()):
            clock.advance(100)
            await clock.settled()
            await cyd.caught_up()
            for msg in cyd.unseen("ghost_progress"):
                await cyd.event("ghost_progress")
                assert msg["deal"] == 1 and set(msg["progress"]) == PROGRESS_KEYS
                seen[msg["ghost"]].append(msg["progress"])
            elapsed = clock.now() - first
            for number, step in pace.items():
                due = min(n_moves, elapsed // step + 1)
                assert len(seen[number]) == due, (number, elapsed, len(seen[number]))
        for number in pace:
            got = seen[number]
            assert [p["moves"] for p in got] == list(range(1, n_moves + 1))
            assert got[-1]["status"] == "won" and got[-1]["finished"] is True
            assert all(not p["finished"] for p in got[:-1])
            homes = [p["home"] for p in got]
            assert homes == sorted(homes) and homes[-1] == 52

        # The ghosts' frames name no card and no board: nothing of the deal.
        for frame in cyd.frames:
            if frame.msg.get("type") in ("ghosts", "ghost_progress"):
                raw = frame.raw if isinstance(frame.raw, bytes) else frame.raw.encode()
                assert deals[D1].seed.encode() not in raw
                assert "board" not in frame.msg and "cards" not in str(frame.msg)

        # Cyd resigns: the run is over, the comparison is given.
        await cyd.ok("move", deal=1, move={"kind": "resign"})
        await cyd.event("deal_over")
        compare = await cyd.ok("daily_compare", ladder=D1)
        assert compare["date"] == joined["room"]["daily"]["date"] and compare["ladder"] == D1
        leader, you = compare["leader"], compare["you"]
        assert leader["name"] == "Bob" and leader["result"] == "won"
        assert leader["home_at"][-1] == pytest.approx((n_moves - 1) * 0.3)
        assert len(leader["home_at"]) == 52 and len(leader["line"]) == n_moves
        assert you["name"] == "Cyd" and you["result"] == "resigned"
        assert len(you["line"]) == 2
        # Cyd got no card home: the gap opened at the first, which the leader had.
        assert compare["gap"] == {
            "card": 1, "you": None, "leader": leader["home_at"][0], "grew": None,
        }  # fmt: skip
        # Timings only: no move and no card of the leader's run.
        assert deals[D1].seed not in str(compare) and "cards" not in str(compare)
        for client in (ann, bob, cyd):
            await client.close()


def running_server_at(clock: FakeClock) -> AbstractAsyncContextManager[RaceServer]:
    return running_server(clock=clock)


async def test_a_guest_with_no_runs_before_races_no_ghost() -> None:
    clock = clock_at_noon()
    async with running_server_at(clock) as server:
        await publish(server.service.daily.store, day_of(clock.now()))
        eve: Client = await player(server, "Eve")
        await eve.ok("daily_start", ladder=D1)
        listing = await eve.event("ghosts")
        assert listing["ghosts"] == []
        await eve.close()


async def test_a_run_resumed_after_a_drop_finds_its_ghosts_where_they_stand() -> None:
    clock = clock_at_noon()
    async with running_server_at(clock) as server:
        deals = await publish(server.service.daily.store, day_of(clock.now()))
        bob, cyd = [await player(server, n) for n in ("Bob", "Cyd")]
        await finish(server, bob, clock, "won", 500)  # the leader, a move every 0.5 s
        await bob.close()
        await cyd.ok("daily_start", ladder=D1)
        (ghost,) = (await cyd.event("ghosts"))["ghosts"]
        assert (ghost["name"], ghost["kind"]) == ("Bob", "leader")
        moves = winning_moves(deals[D1])
        clock.advance(1000)
        first = clock.now()
        await cyd.ok("move", deal=1, move=moves[0].to_wire())
        clock.advance(1200)  # the leader's moves at 0, 0.5 and 1 s are due
        await clock.settled()
        await cyd.caught_up()
        assert [m["progress"]["moves"] for m in cyd.unseen("ghost_progress")] == [1, 2, 3]
        await cyd.close()

        clock.advance(3000)  # away: the run's clock runs on, and the ghost with it
        back, welcome = await resume(server.url, cyd.token)
        assert welcome["room"]["daily"]["first_move_at"] == first
        listing = await back.event("ghosts")
        (where,) = listing["ghosts"]
        assert where["progress"]["moves"] == 9  # its moves at 0 … 4 s
        assert set(where["progress"]) == PROGRESS_KEYS
        clock.advance(300)  # 4.5 s: its tenth move, and no move sent twice
        await clock.settled()
        await back.caught_up()
        assert [m["progress"]["moves"] for m in back.unseen("ghost_progress")] == [10]
        await back.close()


async def test_the_leaders_line_is_replayed_once_the_day_is_over_and_never_before() -> None:
    """``daily_line``: refused to everyone (the leader too) while the day runs,
    and no frame sent until then holds the seed; once the day is over, the
    leader's run move by move, as a past deal's replay shows it, ending on the
    board it won."""
    clock = clock_at_noon()
    async with running_server_at(clock) as server:
        today = day_of(clock.now())
        deals = await publish(server.service.daily.store, today)
        ann, bob = [await player(server, n) for n in ("Ann", "Bob")]
        await finish(server, bob, clock, "won", 300)  # the leader
        await finish(server, ann, clock, "resigned", 5)
        date = today.isoformat()
        for client in (ann, bob):
            await refused(client, "daily_line", "day_not_over", ladder=D1, date=date)
            tomorrow = (today + dt.timedelta(1)).isoformat()
            await refused(client, "daily_line", "day_not_over", ladder=D1, date=tomorrow)
            await client.ok("daily_compare", ladder=D1)
            await client.ok("daily_board", ladder=D1)
            await client.caught_up()
            # Nothing sent while the day runs tells its deal: not the seed, and
            # no move of the leader's with what it turned up.
            for frame in client.frames:
                raw = frame.raw if isinstance(frame.raw, bytes) else frame.raw.encode()
                assert deals[D1].seed.encode() not in raw
                if frame.msg.get("type") in ("daily_compare", "daily_board", "ghosts"):
                    assert "logs" not in str(frame.msg) and "cards" not in str(frame.msg)

        clock.advance(DAY_MS)  # the day is over: its seed is public
        await refused(ann, "daily_line", "no_such_deal", ladder=D3, date=date)  # nobody played it
        reply = await ann.ok("daily_line", ladder=D1, date=date)
        assert (reply["date"], reply["ladder"]) == (date, D1)
        deal = reply["deal"]
        assert deal["key"] == f"daily/{date}/{D1}"
        assert (deal["seed"], deal["commitment"]) == (deals[D1].seed, deals[D1].commitment)
        assert deal["rules"] == deals[D1].rules.to_wire()
        (leader,) = deal["logs"]
        assert deal["names"] == {leader: "Bob"} and set(deal["boards"]) == {leader}
        moves = winning_moves(deals[D1])
        log = deal["logs"][leader]
        assert [e["move"] for e in log] == [m.to_wire() for m in moves]
        assert [e["t"] for e in log] == [i * 300 for i in range(len(moves))]
        assert log[-1]["result"]["status"] == "won"
        # Each result is the engine's, as the run's own moves were reported.
        board = Board.deal(deals[D1].seed, deals[D1].rules)
        for entry, move in zip(log, moves, strict=True):
            assert entry["result"] == outcome_view(board.apply(move))
        assert deal["boards"][leader] == revealed_view(board)
        summary = deal["summary"][leader]
        assert (summary["status"], summary["moves"], summary["place"]) == ("won", len(moves), 1)
        for client in (ann, bob):
            await client.close()


async def test_the_terminal_run_prints_its_ghosts_as_they_advance() -> None:
    """``klondike-race daily --play`` as users run it, against a real server: the
    leader's ghost is listed at the start, then a line each time it moves, as
    the server's clock reaches its moves, until it has won."""
    clock = clock_at_noon()
    async with running_server_at(clock) as server:
        deals = await publish(server.service.daily.store, day_of(clock.now()))
        bob = await player(server, "Bob")
        await finish(server, bob, clock, "won", 300)  # the leader, a move every 0.3 s
        n_moves = len(winning_moves(deals[D1]))
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "server.cli", "daily", "--url", server.url, "--play",
            "--name", "Terminal", "--pace", "0.1",
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert proc.stdout is not None
        lines: list[str] = []
        final = f"ghost 1 leader Bob: {n_moves} moves, 52 home"

        async def read() -> None:
            assert proc.stdout is not None
            async for raw in proc.stdout:
                lines.append(raw.decode().rstrip("\n"))

        reader = asyncio.create_task(read())
        try:
            await eventually(lambda: "ghost 1 leader Bob: 0 moves, 0 home, score 0" in lines)
            # The server's clock moves on while the bot plays: the ghost's moves
            # come due (from the bot's first move) and each is printed as it is sent.
            async with asyncio.timeout(8 * TIMEOUT):  # a bound on a hang, not a measure
                while not any(line.startswith(final) for line in lines):
                    assert not reader.done(), lines  # the run ended before its ghost did
                    clock.advance(300)
                    await clock.settled()
            await asyncio.wait_for(proc.wait(), 120)
            await reader
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        assert proc.returncode == 0, lines
        ghost = [line for line in lines if line.startswith("ghost 1 leader Bob: ")]
        moves = [int(line.split(": ")[1].split(" ")[0]) for line in ghost]
        assert moves == list(range(n_moves + 1))  # listed at 0, then each move in turn
        assert ghost[-1].endswith(", won")
        assert lines[0] == f"playing the {D1} daily of 2026-12-02"
        assert lines[-1].startswith("you: ")
        await bob.close()
