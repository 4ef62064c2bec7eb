"""The operator removes a rated result: ``klondike-race ratings --remove KEY``
replays the ladder without it, and ``--check`` recomputes a ladder from its
rated rounds and compares it with what the store holds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from server.accounts.sqlite import SqliteAccounts
from server.ratings.model import Applied, RatedRound, rate_round, replay

LADDER = "classic-draw1"
ROUNDS = [
    RatedRound("R1-1/1", LADDER, 1000.0, {"pa": 1, "pb": 2, "pc": 3}),
    RatedRound("R1-1/2", LADDER, 2000.0, {"pa": 2, "pb": 1, "pc": 2}),
    RatedRound("R2-5/1", LADDER, 3000.0, {"pa": 1, "pd": 2}),
    RatedRound("R2-5/2", LADDER, 90_000.0, {"pb": 1, "pd": 2, "pc": 3}),
]


def ratings(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "klondike-race"
    return subprocess.run([str(exe), "ratings", *args], capture_output=True, text=True, timeout=60)


async def test_remove_a_result_and_the_ladder_is_replayed(tmp_path: Path) -> None:
    store = await SqliteAccounts.at(tmp_path)
    for rnd in ROUNDS:
        before = await store.ratings(LADDER, rnd.places)
        after = rate_round(before, rnd.places, rnd.t)
        seen = {p: r.rounds for p, r in before.items()}
        assert await store.apply_rated_round(rnd, seen, after) is Applied.NEW
    await store.close()

    check = ratings("--check", LADDER, "--data-dir", str(tmp_path))
    assert check.returncode == 0 and "as replayed" in check.stdout, check

    removed = ratings("--remove", "R1-1/2", "--data-dir", str(tmp_path))
    assert removed.returncode == 0, removed
    assert "removed R1-1/2" in removed.stdout

    store = await SqliteAccounts.at(tmp_path)
    try:
        kept = [r for r in ROUNDS if r.key != "R1-1/2"]
        assert await store.rated_rounds(LADDER) == kept
        # Recomputed from scratch, the ladder is what the store now holds.
        assert await store.ratings(LADDER, ["pa", "pb", "pc", "pd"]) == replay(kept)
        assert [pt.key for pt in await store.rating_chart(LADDER, "pb")] == ["R1-1/1", "R2-5/2"]
    finally:
        await store.close()
    assert ratings("--check", LADDER, "--data-dir", str(tmp_path)).returncode == 0

    unknown = ratings("--remove", "nope/1", "--data-dir", str(tmp_path))
    assert unknown.returncode == 1 and "no rated round" in unknown.stdout


async def test_check_finds_a_ladder_that_is_not_its_replay(tmp_path: Path) -> None:
    store = await SqliteAccounts.at(tmp_path)
    rnd = ROUNDS[0]
    after = rate_round({}, rnd.places, rnd.t)
    after["pa"] = rate_round({}, {"pa": 2, "pb": 1}, rnd.t)["pa"]  # not what the round says
    await store.apply_rated_round(rnd, {}, after)
    await store.close()
    check = ratings("--check", LADDER, "--data-dir", str(tmp_path))
    assert check.returncode == 1 and "pa" in check.stdout
