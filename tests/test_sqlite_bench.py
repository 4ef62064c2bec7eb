"""bench/sqlite.py runs end to end (tiny), so the benchmark cannot rot unnoticed. No
speed is asserted: the figures of a shared test machine mean little."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_sqlite_smoke() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.sqlite",
            "--rooms",
            "1",
            "--seconds",
            "0.6",
            "--warmup",
            "0.3",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = out.stdout.strip().splitlines()
    table = "\n".join(lines[:-1])
    for label in ("in-memory store", "embedded store", "embedded / memory"):
        assert label in table, out.stdout
    result = json.loads(lines[-1])
    for run in ("memory", "sqlite", "sqlite_half_load"):
        assert result[run]["moves_per_s"] > 0, out.stdout
        assert result[run]["errors"] == 0, out.stdout
        assert result[run]["p99_ms"] >= result[run]["p50_ms"] > 0
    assert result["sqlite_vs_memory"] > 0
    assert result["sqlite_half_load"]["target_rate"] > 0
    assert isinstance(result["targets_met"], bool)
