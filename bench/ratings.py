"""What rating a round costs: a round of 8 players against a round of 2.

A round's rating is computed once, at round over, from its final placings
(server/ratings/model.py: openskill's Plackett-Luce); its cost grows with the
square of the number of racers. This bench times ``rate_round`` for rounds of
2 and of 8 racers with varied ratings and placings (ties included).

Times are the process's CPU time per round, the median of several rounds.

Usage: .venv/bin/python bench/ratings.py [--rounds N] [--repeat K]
Prints a table, then one line of JSON (the last line) for scripts.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from server.ratings.model import Rating, rate_round

CLOCK = time.process_time


def cases(racers: int, count: int, seed: int = 1) -> list[tuple[dict[str, Rating], dict[str, int]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        players = [f"p{i}" for i in range(racers)]
        before = {
            p: Rating(rng.uniform(15, 35), rng.uniform(1, 8), rng.randint(0, 50), 0.0)
            for p in players
        }
        totals = {p: rng.randint(0, 4) * 100 for p in players}  # coarse: ties happen
        places = {p: 1 + sum(1 for q in players if totals[q] > totals[p]) for p in players}
        out.append((before, places))
    return out


def per_round_us(racers: int, rounds: int, repeat: int) -> float:
    work = cases(racers, rounds)
    samples = []
    for _ in range(repeat):
        start = CLOCK()
        for before, places in work:
            rate_round(before, places, 3600.0)
        samples.append((CLOCK() - start) / rounds * 1e6)
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    two = per_round_us(2, args.rounds, args.repeat)
    eight = per_round_us(8, args.rounds, args.repeat)
    print(f"{'racers':>7} {'µs per round':>14}")
    print(f"{2:>7} {two:>14.1f}")
    print(f"{8:>7} {eight:>14.1f}")
    print(
        json.dumps(
            {
                "round_of_2_us": round(two, 2),
                "round_of_8_us": round(eight, 2),
                "ratio": round(eight / two, 2) if two else None,
                "rounds": args.rounds,
                "python": platform.python_version(),
            }
        )
    )


if __name__ == "__main__":
    main()
