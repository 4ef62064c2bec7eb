"""bench/winnable.py runs end to end (tiny), so the benchmark cannot rot unnoticed.
No figure is asserted: the solver's share of a few layouts and the latencies of a
shared test machine mean little; the table and the JSON keys are."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_winnable_smoke() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.winnable",
            "--layouts",
            "2",
            "--budget",
            "20000",
            "--samples",
            "2",
            "--interval",
            "0.05",
            "--rooms",
            "1",
            "--rate",
            "50",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    lines = out.stdout.strip().splitlines()
    text = "\n".join(lines[:-1])
    for heading in ("Solver on random layouts", "Refilling a pool of 8", "`start` latency"):
        assert heading in text, out.stdout
    assert "91.9%" in text and "83.6%" in text and "81.945%" in text
    result = json.loads(lines[-1])
    for draw in ("draw1", "draw3"):
        solver = result["solver"][draw]
        assert solver["layouts"] == 2
        assert sum(solver["verdicts"].values()) == 2
        assert set(solver["verdicts"]) == {"proven", "impossible", "undecided", "refused"}
        assert 0.0 <= solver["proven_share"] <= 1.0
        assert {"proofs_per_core_s", "s_per_layout", "wall_s", "median_length"} <= set(solver)
        assert result["refill"][draw]["layouts_judged"] >= 8
        assert result["refill"][draw]["seconds"] > 0
    for kind in ("random", "winnable"):
        start = result["start"][kind]
        assert start["samples"] == 2
        assert start["p99_ms"] >= start["p50_ms"] > 0
    assert isinstance(result["start"]["winnable_waits"], int)
    assert result["start"]["other_rooms"]["errors"] == 0
