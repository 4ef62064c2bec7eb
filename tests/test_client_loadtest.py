"""``loadtest``: a short run against a live server loses no move; the driver's parts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest

from client.bot import Bot
from client.load import (
    Decisions,
    Load,
    LoadProgress,
    LoadStats,
    Pacer,
    Player,
    open_rooms,
    percentile,
    run_load,
)
from protocol import Board, DealRules, Move, Status, player_view
from server.cli import klondike_race as main
from tests.support.processes import ServerProcess
from tests.support.waiting import eventually


def test_a_short_loadtest_acknowledges_every_move(
    live_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "loadtest",
            "--url",
            live_url,
            "--rooms",
            "3",
            "--players",
            "2",
            "--spectators",
            "1",
            "--duration",
            "3",
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and report["ok"]
    assert report["unacknowledged"] == 0 and report["disconnects"] == 0
    # Flat out, yet under the server's rate limit (the default --rate-limit 50).
    assert report["errors"] == {}
    # It played and measured; how fast is bench/'s business, not a test's.
    assert report["moves"] > 0 and isinstance(report["moves_per_s"], float)
    lat = report["latency_ms"]
    assert lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    assert report["events"] > report["moves"]  # spectators and rivals hear of each move
    assert sum(report["deals"].values()) > 0  # the bots finish deals, the host deals on


async def test_run_load_is_importable_and_reports(live_url: str) -> None:
    ticks: list[LoadProgress] = []
    report = await run_load(live_url, 1, 3, 0, 1.5, on_progress=ticks.append, tick=0.2)
    assert report.ok and report.moves > 0 and report.rooms == 1 and ticks
    assert ticks[-1].moves == report.moves


async def test_rate_paces_all_bots_together(live_url: str) -> None:
    """``rate`` is for all players together: each of the 4 seats moves every 0.1 s
    for 40 a second (or slower, to stay under the server's limit)."""
    stats = LoadStats()
    rooms = await open_rooms([live_url], 2, 2, 0, {"deals_per_round": 20}, stats)
    assert Load(rooms, stats, rate=40).interval == 4 / 40
    assert Load(rooms, stats, rate=40, rate_limit=50).interval == 4 / 40
    assert Load(rooms, stats, rate=400, rate_limit=50).interval == 1 / (0.9 * 50)
    assert Load(rooms, stats).interval == 0  # flat out
    await Load(rooms, stats).stop()
    report = await run_load(live_url, 2, 2, 0, 1.0, rate=40)
    assert report.ok and report.errors == {} and report.moves > 0


async def test_a_pacer_keeps_its_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    """One seat's moves come ``interval`` apart from a random phase, do not drift
    with latency, and a seat that fell behind catches up by one move, not a burst:
    on a clock the test moves itself."""
    import random

    from client import load

    now = [100.0]
    slept: list[float] = []

    async def sleep(delay: float) -> None:
        slept.append(delay)
        now[0] += delay

    monkeypatch.setattr(load.time, "perf_counter", lambda: now[0])
    monkeypatch.setattr(load.asyncio, "sleep", sleep)
    pacer = Pacer(0.5, random.Random(7))
    assert 100.0 <= pacer.next < 100.5  # a random phase within one interval
    first = pacer.next
    await pacer.wait()
    assert now[0] == first
    now[0] += 0.2  # the move took 0.2 s: the next one is still due on the schedule
    await pacer.wait()
    assert now[0] == pytest.approx(first + 0.5)
    # 3 s late, six slots missed: the late move, one to catch up, and the slot due
    # now go at once (not six), then one per interval again.
    now[0] += 3.0
    at = []
    for _ in range(4):
        await pacer.wait()
        at.append(now[0] - first)
    assert at == pytest.approx([3.5, 3.5, 3.5, 4.0])


async def test_a_dropped_player_resumes_and_plays_on(live_url: str) -> None:
    stats = LoadStats()
    rooms = await open_rooms([live_url], 1, 2, 1, {"deals_per_round": 20}, stats)
    load = Load(rooms, stats)
    seat = rooms[0].players[1]
    assert isinstance(seat, Player)
    load.start()
    try:
        await eventually(lambda: stats.moves > 0, what="the bots to play")
        old = seat.ws
        old.transport.abort()
        await eventually(lambda: seat.ws is not old, what="the seat to resume")
        assert not seat.ws.close_code
        before = stats.moves
        await eventually(lambda: stats.moves > before, what="moves after the resume")
    finally:
        await load.stop()
    assert stats.disconnects == 1 and stats.unacknowledged <= 1
    assert not [code for code in stats.errors if code.startswith("crashed:")]


async def test_seats_stop_when_the_server_forgot_their_tokens(
    server_process: ServerProcess,
) -> None:
    server = server_process
    await asyncio.to_thread(server.start)
    stats = LoadStats()
    rooms = await open_rooms([server.url], 1, 2, 1, {"deals_per_round": 20}, stats)
    load = Load(rooms, stats)
    load.start()
    try:
        server.kill()
        # Back on the same port with an empty memory store: every resume is refused.
        await asyncio.to_thread(server.start)
        await asyncio.wait(load._tasks)  # every seat stops by itself
        assert load.done
    finally:
        await load.stop()
    assert stats.disconnects == 3 and stats.unacknowledged <= 2
    assert not [code for code in stats.errors if code.startswith("crashed:")]


def test_a_room_asks_the_bot_once_per_position() -> None:
    calls = []

    class Counting(Bot):
        def decide(self, view: Mapping[str, Any]) -> Move:
            calls.append(view["moves"])
            return super().decide(view)

    board = Board.deal("one-room", DealRules())
    decisions = Decisions()
    bots = [Counting(search_budget=0) for _ in range(3)]
    for _ in range(40):
        if board.status is not Status.PLAYING:
            break
        view = player_view(board)
        moves = {decisions.decide(bot, 1, dict(view)) for bot in bots}
        assert len(moves) == 1  # the same position, the same move for all
        board.apply(moves.pop())
    assert len(calls) == len(set(calls)) > 0  # the bot was asked once per position
    # Another position (or another deal) is decided afresh, never taken from the room.
    other = player_view(Board.deal("another-deal", DealRules()))
    assert decisions.decide(Bot(), 1, other) == Bot().decide(other)
    assert decisions.decide(Bot(), 2, player_view(Board.deal("one-room", DealRules()))) == (
        Bot().decide(player_view(Board.deal("one-room", DealRules())))
    )


def test_percentiles() -> None:
    values = [float(v) for v in range(1, 101)]
    assert (percentile(values, 50), percentile(values, 99), percentile([], 50)) == (50, 99, 0)
