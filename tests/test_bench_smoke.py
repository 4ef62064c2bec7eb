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


def test_scoring_bench_prints_json_last() -> None:
    """bench/scoring.py: per-move scoring cost, reference and running, at each
    log length, in the same run (no figure asserted)."""
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "scoring.py"),
            "--seconds",
            "0.02",
            "--rounds",
            "1",
            "--lengths",
            "10,200",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = proc.stdout.strip().splitlines()
    assert len(lines) > 3  # the human table comes first
    figures = json.loads(lines[-1])
    assert figures["lengths"] == [10, 200]
    for system in ("standard", "timed"):
        for length in ("10", "200"):
            cell = figures["per_move"][system][length]
            assert cell["reference_us"] > 0 and cell["running_us"] > 0
        assert set(figures["growth"][system]) == {"reference", "running"}
