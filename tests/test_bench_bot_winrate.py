"""bench/bot_winrate.py runs and ends with one line of JSON (no rate is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bot_winrate_bench_prints_a_table_then_json() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bot_winrate.py"), "--deals", "20", "--jobs", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = proc.stdout.strip().splitlines()
    assert lines[0].split()[:3] == ["variant", "draw", "deals"]
    results = json.loads(lines[-1])["results"]
    assert [(r["draw"], r["deals"]) for r in results] == [(1, 20), (3, 20)]
    for r in results:
        assert r["won"] + r["resigned"] + r["dead"] == 20
        assert 0 <= r["win_rate"] <= 1
