"""bench/takeover.py runs end to end (tiny), so the benchmark cannot rot unnoticed.
No figure is asserted: the timings of a shared test machine mean little."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_takeover_smoke() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench.takeover", "--deals", "3", "--repeat", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lines = out.stdout.strip().splitlines()
    assert any(line.startswith("compacted") for line in lines), out.stdout
    result = json.loads(lines[-1])
    for way in ("whole_at_once", "whole_slices", "compacted"):
        for key in ("records", "bytes", "takeover_ms_p50", "takeover_ms_max", "longest_hold_ms"):
            assert result[way][key] >= 0, out.stdout
    assert result["compacted"]["records"] < result["whole_at_once"]["records"]
    assert isinstance(result["hold_under_50ms"], bool)
