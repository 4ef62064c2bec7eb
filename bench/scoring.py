"""What scoring one move costs the server, at move 10 and at move 10,000.

Every accepted move is scored at once (its ``moved`` reply and its ``progress``
event carry the score). The reference, ``deal_score``, counts the whole trace
again: its cost grows with the log, so a deal's scoring work grows with the
square of its length. The server reads ``DealReplay.score`` instead, the running
totals each step keeps (protocol/scoring.py): the same cost at any length. This
bench times both, in the same run, per move: fold one move into a trace of
``L`` steps (``DealReplay.record``) and score it, under Standard and Timed (Vegas
reads the board alone, the same for both).

The traces are made of real outcomes (random mostly-greedy play, cycled), so
the events per step are what play produces; a trace may be longer than the
engine's move limit (docs/rules.md §4.11), to show the trend past it.

Times are the process's CPU time; each figure is the median of several rounds.

Usage: .venv/bin/python bench/scoring.py [--seconds N] [--lengths 10,1000,10000]
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

from protocol import Board, DealReplay, DealRules, Outcome, Scoring, Status, TimedMove, deal_score
from protocol.moves import Move, MoveKind

CLOCK = time.process_time
SYSTEMS = (Scoring.STANDARD, Scoring.TIMED)


def outcomes(count: int, seed: int = 1) -> list[Outcome]:
    """``count`` outcomes of random play that keep the deal in play: moves that
    ended a deal are left out, and a new deal is dealt when one ends."""
    rng = random.Random(seed)
    out: list[Outcome] = []
    game = 0
    while len(out) < count:
        board = Board.deal(f"bench-{game}", DealRules(undo=False))
        game += 1
        while board.status is Status.PLAYING and len(out) < count:
            moves = board.legal_moves()
            home = [m for m in moves if m.kind.value.endswith("foundation")]
            outcome = board.apply(rng.choice(home or moves))
            if outcome.status is Status.PLAYING:
                out.append(outcome)
    return out


def trace(length: int, pool: list[Outcome]) -> DealReplay:
    """A trace of ``length`` steps, one every 700 ms."""
    result = DealReplay(Board.deal("bench", DealRules()))
    for i in range(length):
        o = pool[i % len(pool)]
        result.record(TimedMove(i * 700, i, o.move), o)
    return result


def per_move(
    result: DealReplay, outcome: Outcome, scoring: Scoring, reference: bool, seconds: float
) -> float:
    """Seconds of CPU per move: fold ``outcome`` in, score, take it out again
    with an undo (so the trace keeps its length)."""
    t = len(result.steps) * 700
    timed = TimedMove(t, 0, outcome.move)
    undo = Outcome(Move(MoveKind.UNDO), (), (), None, 0, Status.PLAYING, undone=True)
    reps = 0
    start = CLOCK()
    deadline = start + seconds
    while True:
        for _ in range(20):
            result.record(timed, outcome)
            if reference:
                deal_score(result, scoring, t)
            else:
                result.score(scoring, t)
            result.record(timed, undo)
        reps += 20
        now = CLOCK()
        if now >= deadline:
            return (now - start) / reps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.3, help="CPU seconds per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lengths", default="10,1000,10000")
    args = parser.parse_args(argv)
    lengths = [int(x) for x in args.lengths.split(",")]
    pool = outcomes(2_000)
    probe = next(o for o in pool if o.events)  # a move that scores
    rows: dict[str, dict[str, dict[str, float]]] = {}
    print(f"{'scoring':<10} {'log':>7} {'reference µs':>13} {'running µs':>11} {'speed-up':>9}")
    for scoring in SYSTEMS:
        rows[scoring.value] = {}
        for length in lengths:
            result = trace(length, pool)
            ref = statistics.median(
                per_move(result, probe, scoring, True, args.seconds) for _ in range(args.rounds)
            )
            run = statistics.median(
                per_move(result, probe, scoring, False, args.seconds) for _ in range(args.rounds)
            )
            rows[scoring.value][str(length)] = {
                "reference_us": round(ref * 1e6, 3),
                "running_us": round(run * 1e6, 3),
            }
            print(
                f"{scoring.value:<10} {length:>7} {ref * 1e6:>13.2f} {run * 1e6:>11.2f}"
                f" {ref / run:>8.0f}×"
            )
    first, last = str(lengths[0]), str(lengths[-1])
    growth = {
        s: {
            "reference": round(r[last]["reference_us"] / r[first]["reference_us"], 1),
            "running": round(r[last]["running_us"] / r[first]["running_us"], 1),
        }
        for s, r in rows.items()
    }
    print(f"cost at {last} moves over cost at {first}: {json.dumps(growth)}")
    figures = {
        "per_move": rows,
        "growth": growth,
        "lengths": lengths,
        "seconds_per_measure": args.seconds,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
