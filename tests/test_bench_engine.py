"""bench/engine.py runs and ends with one line of JSON (no speed is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_engine_bench_prints_json_last() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "engine.py"), "--seconds", "0.2", "--games", "8"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = proc.stdout.strip().splitlines()
    assert len(lines) > 5  # the human table comes first
    figures = json.loads(lines[-1])
    for key in (
        "apply_moves_per_s",
        "legal_moves_per_s",
        "deals_per_s",
        "rescored_deals_per_s",
        "python",
        "machine",
        "cpu",
    ):
        assert key in figures, key
    for key in ("apply_moves_per_s", "legal_moves_per_s", "deals_per_s", "rescored_deals_per_s"):
        assert isinstance(figures[key], int) and figures[key] > 0, key
    assert set(figures["apply_moves_per_s_by_rules"]) == {
        "classic draw 1",
        "classic draw 3",
        "thoughtful draw 1",
        "double draw 1",
    }
    assert figures["target_apply_moves_per_s"] == 200_000
    assert isinstance(figures["meets_target"], bool)
    assert figures["python"].startswith(f"{sys.version_info[0]}.{sys.version_info[1]}.")
    assert figures["seconds_per_measure"] == 0.2
