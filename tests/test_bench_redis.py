"""bench/redis.py runs end to end (tiny), so the benchmark cannot rot unnoticed. No
speed is asserted: the figures of a shared test machine mean little."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_redis_smoke() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.redis",
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
    result = json.loads(out.stdout.strip().splitlines()[-1])
    for run in ("memory", "redis", "redis_half_load", "two_nodes"):
        assert result[run]["moves_per_s"] > 0, out.stdout
        assert result[run]["errors"] == 0, out.stdout
        assert result[run]["p99_ms"] >= result[run]["p50_ms"] > 0
    assert result["redis_vs_memory"] > 0
    assert isinstance(result["targets_met"], bool)
