"""``loadtest``: a short run against a live server loses no move."""

from __future__ import annotations

import json

import pytest

from client.cli import main
from client.load import percentile, run_load
from tests.client_fixtures import live_url

__all__ = ["live_url"]


def test_a_short_loadtest_acknowledges_every_move(
    live_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["loadtest", "--url", live_url, "--rooms", "3", "--players", "2",
                 "--spectators", "1", "--duration", "3", "--json"])
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and report["ok"]
    assert report["unacknowledged"] == 0 and report["disconnects"] == 0
    assert report["moves"] > 100 and report["moves_per_s"] > 30
    lat = report["latency_ms"]
    assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    assert report["events"] > report["moves"]  # spectators and rivals hear of each move


async def test_run_load_is_importable_and_reports(live_url: str) -> None:
    ticks = []
    report = await run_load(live_url, 1, 3, 0, 1.5, on_progress=ticks.append, tick=0.2)
    assert report.ok and report.moves > 0 and report.rooms == 1 and ticks
    assert ticks[-1].moves == report.moves


def test_percentiles() -> None:
    values = [float(v) for v in range(1, 101)]
    assert (percentile(values, 50), percentile(values, 99), percentile([], 50)) == (50, 99, 0)
