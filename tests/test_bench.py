"""The benchmarks in bench/ run end to end, tiny, so none can rot unnoticed: each
prints its table for people, then one line of JSON with the keys its readers
use. No figure is asserted: what a shared test machine measures means little,
and the figures are bench/'s to report, not the tests'."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from bench.capacity import colyseus_skipped
from tests.support import ROOT


def run_bench(*args: str) -> tuple[list[str], dict[str, Any]]:
    """Run ``python -m bench.NAME ARGS``: its table's lines and its JSON last line."""
    proc = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=540,  # a bound under the test's own 600 s, for a busy machine
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]  # its traceback, when it failed
    lines = proc.stdout.strip().splitlines()
    assert len(lines) > 1, proc.stdout  # a table first
    result = json.loads(lines[-1])
    assert isinstance(result, dict)
    return lines[:-1], result


def is_figure(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def test_engine_bench() -> None:
    table, figures = run_bench("bench.engine", "--seconds", "0.2", "--games", "8")
    assert len(table) > 4
    for key in ("apply_moves_per_s", "legal_moves_per_s", "deals_per_s", "rescored_deals_per_s"):
        assert isinstance(figures[key], int), key
    assert set(figures["apply_moves_per_s_by_rules"]) == {
        "classic draw 1",
        "classic draw 3",
        "thoughtful draw 1",
        "double draw 1",
    }
    assert figures["target_apply_moves_per_s"] == 200_000
    assert isinstance(figures["meets_target"], bool)
    assert figures["python"].startswith(f"{sys.version_info[0]}.{sys.version_info[1]}.")
    assert figures["machine"] and figures["cpu"]
    assert figures["seconds_per_measure"] == 0.2


def test_boards_bench() -> None:
    table, figures = run_bench("bench.boards", "--boards", "8", "--seconds", "0.05")
    assert table[-1].startswith("Board.copy calls a second")
    assert figures["boards"] == 8
    for key in ("bytes_per_board", "tracked_per_board", "copies_per_s"):
        assert is_figure(figures[key]) and is_figure(figures[f"{key}_lists"]), key
    assert figures["seconds_per_measure"] == 0.05


def test_bot_winrate_bench() -> None:
    table, out = run_bench("bench.bot_winrate", "--deals", "20", "--jobs", "1")
    assert table[0].split()[:4] == ["variant", "style", "draw", "deals"]
    results = out["results"]
    assert [(r["style"], r["draw"], r["deals"]) for r in results] == [
        (style, draw, 20) for style in ("methodical", "cautious", "greedy") for draw in (1, 3)
    ]
    for r in results:  # counts of deals, not of time: these must add up
        assert r["won"] + r["resigned"] + r["dead"] == 20
        assert r["win_rate"] == r["won"] / 20


def test_server_bench() -> None:
    _, result = run_bench("bench.server", "--rooms", "1", "--seconds", "0.7", "--warmup", "0.3")
    for side in ("server", "baseline"):
        run = result[side]
        assert run["errors"] == 0 and run["bots_failed"] == 0, result
        assert run["connections"] == 9
        assert all(is_figure(run[k]) for k in ("moves_per_s", "p50_ms", "p99_ms")), run
    assert is_figure(result["ratio"])


def test_redis_bench() -> None:
    _, result = run_bench("bench.redis", "--rooms", "1", "--seconds", "0.6", "--warmup", "0.3")
    for name in ("memory", "redis", "redis_half_load", "two_nodes"):
        run = result[name]
        assert run["errors"] == 0, result
        assert all(is_figure(run[k]) for k in ("moves_per_s", "p50_ms", "p99_ms")), run
    assert is_figure(result["redis_vs_memory"])
    assert isinstance(result["targets_met"], bool)


def test_nodes_bench() -> None:
    """One process on each store and two on one Redis (the bench starts its own
    redis-server on a free port and stops it), every seat on its room's owner or
    half of them tunnelled: each measured, with redis-server's CPU beside the nodes'."""
    table, result = run_bench("bench.nodes", "--quick")
    text = "\n".join(table)
    assert "PROJECTION (not measured)" in text
    assert result["steps"] == [16] and result["redis_persistence"].endswith("appendfsync always")
    assert list(result["configs"]) == ["memory", "redis", "owner", "tunnel"]
    for name, steps in result["configs"].items():
        (step,) = steps
        assert step["errors"] == 0 and step["moves_per_s"] > 0, (name, step)
        for key in ("cpu_us_per_move", "redis_us_per_move", "deployment_us_per_move"):
            assert is_figure(step[key]), (name, key)
    assert result["configs"]["memory"][0]["redis_us_per_move"] == 0
    # A step the load could not drive (a busy host) is refused and left out of the
    # summary, never counted as the deployment's.
    measured = {name for name, (step,) in result["configs"].items() if not step["refused"]}
    assert set(result["summary"]) == measured
    assert all(is_figure(v) for v in result["costs_us"].values())


def test_sqlite_bench() -> None:
    table, result = run_bench("bench.sqlite", "--rooms", "1", "--seconds", "0.6", "--warmup", "0.3")
    text = "\n".join(table)
    for label in ("in-memory store", "embedded store", "embedded / memory"):
        assert label in text
    for run in ("memory", "sqlite", "sqlite_half_load"):
        assert result[run]["errors"] == 0, result
        assert is_figure(result[run]["moves_per_s"]), result
    assert is_figure(result["sqlite_vs_memory"])
    assert isinstance(result["targets_met"], bool)


def test_scoring_bench() -> None:
    """Per-move scoring cost, the reference replay and the running totals, at each
    log length, in the same run."""
    _, figures = run_bench(
        "bench.scoring", "--seconds", "0.02", "--rounds", "1", "--lengths", "10,200"
    )
    assert figures["lengths"] == [10, 200]
    for system in ("standard", "timed"):
        for length in ("10", "200"):
            cell = figures["per_move"][system][length]
            assert is_figure(cell["reference_us"]) and is_figure(cell["running_us"])
        assert set(figures["growth"][system]) == {"reference", "running"}


def test_outcomes_bench() -> None:
    """A move's reply with the whole board view (v1) and with its outcome and
    digest (v2), server and client side and in bytes, in the same run."""
    table, figures = run_bench("bench.outcomes", "--moves", "300", "--rounds", "1")
    assert "v1 (whole view)" in table[1] and figures["moves"] == 300
    for side in ("server", "client"):
        assert is_figure(figures[side]["v1_us"]) and is_figure(figures[side]["v2_us"])
    for kind in ("msgpack", "json"):
        assert figures[f"bytes_{kind}"]["v2"] < figures[f"bytes_{kind}"]["v1"]


def test_ratings_bench() -> None:
    """Rating a round of 8 against a round of 2, per round."""
    table, figures = run_bench("bench.ratings", "--rounds", "20", "--repeat", "1")
    assert is_figure(figures["round_of_2_us"]) and is_figure(figures["round_of_8_us"])
    assert len(table) >= 3


def test_takeover_bench() -> None:
    table, result = run_bench("bench.takeover", "--deals", "3", "--repeat", "1")
    assert any(line.startswith("compacted") for line in table)
    for way in ("whole_at_once", "whole_slices", "compacted"):
        for key in ("records", "bytes", "takeover_ms_p50", "takeover_ms_max", "longest_hold_ms"):
            assert is_figure(result[way][key]), (way, key)
    # a count, not a time: compaction leaves fewer records in the store
    assert result["compacted"]["records"] < result["whole_at_once"]["records"]
    assert isinstance(result["hold_under_50ms"], bool)


def test_winnable_bench() -> None:
    table, result = run_bench(
        "bench.winnable",
        *("--layouts", "2", "--budget", "20000", "--samples", "2", "--interval", "0.05"),
        *("--rooms", "1", "--rate", "50"),
    )
    text = "\n".join(table)
    for heading in ("Solver on random layouts", "Refilling a pool of 8", "`start` latency"):
        assert heading in text
    assert "91.9%" in text and "83.6%" in text and "81.945%" in text  # the published figures
    for draw in ("draw1", "draw3"):
        solver = result["solver"][draw]
        assert solver["layouts"] == 2 and sum(solver["verdicts"].values()) == 2  # counts
        assert set(solver["verdicts"]) == {"proven", "impossible", "undecided", "refused"}
        for key in ("proven_share", "proofs_per_core_s", "s_per_layout", "median_length"):
            assert is_figure(solver[key]), key
        assert result["refill"][draw]["layouts_judged"] >= 8
        assert is_figure(result["refill"][draw]["seconds"])
    for kind in ("random", "winnable"):
        start = result["start"][kind]
        assert start["samples"] == 2
        assert is_figure(start["p50_ms"]) and is_figure(start["p99_ms"])
    assert isinstance(result["start"]["winnable_waits"], int)
    assert result["start"]["other_rooms"]["errors"] == 0


def colyseus_installed() -> bool:
    """Whether bench/capacity.py can run its Colyseus baseline here, by its own test:
    ``node``, and the pinned Colyseus loading from ``npm install --prefix bench/colyseus``."""
    return colyseus_skipped() is None


def test_capacity_bench() -> None:
    """Every side, every step, with the load's own figures: a step the load could
    not drive is refused (so says ``refused``), never reported as the server's.
    Colyseus is measured like the relay wherever it is installed, and where it is
    not, the run says so and how to install it."""
    table, result = run_bench("bench.capacity", "--quick", "--profile")
    text = "\n".join(table)
    assert "race server held" in text and "bare relay held" in text and "colyseus:" in text
    assert result["steps"] == [8, 16]
    sides = ["race", "relay"]
    if colyseus_installed():
        sides.append("colyseus")
        assert "colyseus held" in text
        assert result["colyseus_skipped"] is None
        assert isinstance(result["colyseus_held_players"], int)
        package = json.loads((ROOT / "bench" / "colyseus" / "package.json").read_text())
        assert result["colyseus_version"] == package["dependencies"]["@colyseus/core"]
    else:
        assert result["colyseus"] == [] and result["colyseus_held_players"] is None
        assert "npm install --prefix bench/colyseus" in result["colyseus_skipped"]
    for side in sides:
        steps = result[side]
        assert [s["players"] for s in steps] == [8, 16]
        for step in steps:
            assert step["connections"] == step["players"] // 8 * 9  # a spectator a room
            assert step["errors"] == 0, step
            figures = ("moves_per_s", "p50_ms", "p99_ms", "max_ms", "server_cpu", "load_cpu")
            for key in (*figures, "wire_bytes_per_move", "frames_per_move"):
                assert is_figure(step[key]), (side, key)
            assert step["refused"] is None or isinstance(step["refused"], str)
    assert all("gc_passes" in s["profile"] for s in result["race"])
    assert all(isinstance(s["profile"]["stages"], dict) for s in result["race"])
    assert isinstance(result["held_players"], int)
    assert isinstance(result["relay_held_players"], int)


def test_compiled_bench() -> None:
    """The hot path compiled with mypyc beside the same server interpreted, in one
    run: the compiled copy is what served (its extensions in the server's memory
    map), and both answered every move, flat out and at human pace."""
    table, result = run_bench("bench.compiled", "--quick")
    text = "\n".join(table)
    assert "compiled 1 modules in" in text and "left interpreted:" in text
    assert result["compiled_modules"] == ["server/net/framing.py"]
    assert result["imported_compiled"] == ["server.net.framing"]
    assert is_figure(result["compile_seconds"])
    for kind in ("interpreted", "compiled", "relay"):
        figures = result["figures"][kind]
        assert figures["flat_errors"] == 0 and figures["human_errors"] == 0, result
        assert figures["flat_moves_per_s"] > 0, figures
        assert is_figure(figures["flat_cpu_us_per_move"])
        assert is_figure(figures["human_cpu_us_per_move"]["16"])
    assert is_figure(result["compiled_over_interpreted"]["flat_cpu"])
    assert set(result["against_relay"]["flat_moves"]) == {"interpreted", "compiled"}


def test_accounts_bench() -> None:
    """Sign-in by device token and a long record's profile, on both durable stores,
    each beside its baseline (a guest's resume; a short record's profile)."""
    table, result = run_bench(
        "bench.accounts", "--deals", "300", "--signins", "5", "--profiles", "3"
    )
    assert any(line.startswith("sign in by device token") for line in table)
    assert result["deals"] == 300
    for store in ("sqlite", "redis"):
        for row in ("sign_in_device", "resume_guest", "profile_big", "profile_small"):
            for key in ("p50_ms", "p99_ms"):
                assert is_figure(result[store][row][key]), (store, row, key)


def test_daily_bench() -> None:
    table, result = run_bench(
        "bench.daily", "--results", "300", "--baseline", "30", "--samples", "20", "--writers", "4"
    )
    assert any(line.startswith("sqlite") for line in table)
    for key in ("sqlite_baseline", "sqlite_day", "redis_baseline", "redis_day"):
        figures = result[key]
        assert figures["submit"]["p99_ms"] >= figures["submit"]["p50_ms"] > 0
        assert figures["rank"]["p50_ms"] > 0 and figures["page"]["p50_ms"] > 0
        assert figures["bytes_per_result"] > 0 and figures["bytes_per_line"] > 0
    assert result["redis_day"]["results"] == 300
    assert result["memory_store_heap_bytes_per_line"] > 0


def test_matchmaking_bench() -> None:
    table, figures = run_bench("bench.matchmaking", "--players", "40", "--baseline", "8")
    assert table[0].split()[:2] == ["players", "rooms"]
    assert figures["queued"]["players"] == 40 and figures["baseline"]["players"] == 8
    for key in ("match_ms", "match_cpu_ms", "rooms_ms", "rooms_cpu_ms"):
        assert is_figure(figures["queued"][key]), key
    assert figures["queued"]["rooms"] >= 1
