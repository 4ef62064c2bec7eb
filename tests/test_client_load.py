"""``loadtest``: a short run against a live server loses no move; the driver's parts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from client.bot import Bot
from client.load import (
    Decisions,
    Load,
    LoadProgress,
    LoadStats,
    Player,
    open_rooms,
    percentile,
    run_load,
)
from protocol import Board, DealRules, Move, Status, player_view
from server.cli import klondike_race as main
from tests.client_fixtures import live_url
from tests.redis_fixtures import ServerProcess

__all__ = ["live_url"]


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
    assert report["moves"] > 100 and report["moves_per_s"] > 30
    lat = report["latency_ms"]
    assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    assert report["events"] > report["moves"]  # spectators and rivals hear of each move
    assert sum(report["deals"].values()) > 0  # the bots finish deals, the host deals on


async def test_run_load_is_importable_and_reports(live_url: str) -> None:
    ticks: list[LoadProgress] = []
    report = await run_load(live_url, 1, 3, 0, 1.5, on_progress=ticks.append, tick=0.2)
    assert report.ok and report.moves > 0 and report.rooms == 1 and ticks
    assert ticks[-1].moves == report.moves


async def test_rate_paces_all_bots_together(live_url: str) -> None:
    report = await run_load(live_url, 2, 2, 0, 2.5, rate=40)
    assert report.ok and report.errors == {}
    assert 25 <= report.moves_per_s <= 48, report.moves_per_s


async def test_a_dropped_player_resumes_and_plays_on(live_url: str) -> None:
    stats = LoadStats()
    rooms = await open_rooms([live_url], 1, 2, 1, {"deals_per_round": 20}, stats)
    load = Load(rooms, stats)
    load.start()
    try:
        await asyncio.sleep(0.5)
        seat = rooms[0].players[1]
        assert isinstance(seat, Player)
        old = seat.ws
        old.transport.abort()
        await asyncio.sleep(1.0)
        assert seat.ws is not old and not seat.ws.close_code
        before = stats.moves
        await asyncio.sleep(0.5)
        assert stats.moves > before
    finally:
        await load.stop()
    assert stats.disconnects == 1 and stats.unacknowledged <= 1
    assert not [code for code in stats.errors if code.startswith("crashed:")]


async def test_seats_stop_when_the_server_forgot_their_tokens(tmp_path: Path) -> None:
    server = ServerProcess(None, tmp_path / "server.log")
    await asyncio.to_thread(server.start)
    stats = LoadStats()
    try:
        rooms = await open_rooms([server.url], 1, 2, 1, {"deals_per_round": 20}, stats)
        load = Load(rooms, stats)
        load.start()
        try:
            server.kill()
            # Back on the same port with an empty memory store: every resume is refused.
            await asyncio.to_thread(server.start)
            await asyncio.wait(load._tasks, timeout=20)
            assert load.done
        finally:
            await load.stop()
    finally:
        server.kill()
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
