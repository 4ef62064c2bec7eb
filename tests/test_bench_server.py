"""bench/server.py runs end to end (tiny), so the benchmark cannot rot unnoticed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_server_smoke() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.server",
            "--rooms",
            "1",
            "--seconds",
            "0.7",
            "--warmup",
            "0.3",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    for side in ("server", "baseline"):
        assert result[side]["moves_per_s"] > 0, out.stdout
        assert result[side]["errors"] == 0 and result[side]["bots_failed"] == 0
        assert result[side]["p99_ms"] >= result[side]["p50_ms"] > 0
        assert result[side]["connections"] == 9
    assert result["ratio"] > 0
