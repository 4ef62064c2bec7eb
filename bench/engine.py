"""How fast the engine is, on one core.

(a) validated and applied moves a second: ``Board.apply`` replaying pre-recorded
    logs of mostly-greedy random play from many seeds, every variant. Only the
    ``apply`` calls are timed: the logs are recorded and the boards dealt before.
(b) legal-move generations a second: ``Board.legal_moves`` on positions taken
    from those games.
(c) deals a second: ``Board.deal`` (SHA-256 shuffle and layout).
(d) deals rescored a second: ``replay`` of a whole log and ``deal_score`` under
    every scoring system, what a change of scoring costs the server per deal.

Times are the process's CPU time (so other load on the machine hardly matters),
over rounds; each figure is the median round's rate.

Usage: .venv/bin/python bench/engine.py [--seconds N] [--games N]
Prints a table, then one line of JSON (the last line) for scripts.
The target for (a) is 200 000 moves a second.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol import (
    Board,
    DealRules,
    Move,
    MoveKind,
    Scoring,
    Status,
    TimedMove,
    Variant,
    deal_score,
    replay,
)

TARGET_APPLY = 200_000
# CPU time of this process, not wall time: on a shared machine other processes
# take the core away now and then, and that is not the engine's cost.
CLOCK = time.process_time
K = MoveKind
_HOME = (K.TABLEAU_TO_FOUNDATION, K.WASTE_TO_FOUNDATION, K.AUTO_COMPLETE)

# (label, rules) the recorded games are played under, in equal shares
RULE_SETS: list[tuple[str, DealRules]] = [
    ("classic draw 1", DealRules()),
    ("classic draw 3", DealRules(draw=3)),
    ("thoughtful draw 1", DealRules(variant=Variant.THOUGHTFUL)),
    ("double draw 1", DealRules(variant=Variant.DOUBLE)),
]

Game = tuple[str, DealRules, list[Move]]


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def pin_to_one_core() -> int | None:
    """Run on one CPU only, when the OS lets us choose."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[-1]})
    return cpus[-1]


def _uncovers(board: Board, m: Move) -> bool:
    if m.kind is not K.TABLEAU_TO_TABLEAU:
        return False
    pile = board.tableau[m.src]
    start = len(pile) - 1
    while start > board.down[m.src]:
        a, b = pile[start - 1], pile[start]
        if (13 <= a < 39) == (13 <= b < 39) or a % 13 != b % 13 + 1:
            break
        start -= 1
    return start > 0 and m.count == len(pile) - start


def record_game(seed: str, rules: DealRules, rng: random.Random, cap: int = 400) -> list[Move]:
    """A game of mostly-greedy random play (random play alone mostly shuffles cards
    between two piles; this reaches the later positions a real player does)."""
    board = Board.deal(seed, rules)
    log: list[Move] = []
    while board.status is Status.PLAYING and len(log) < cap:
        moves = board.legal_moves()
        if rng.random() < 0.2:
            pool = moves
        else:
            pool = (
                [m for m in moves if m.kind in _HOME]
                or [m for m in moves if m.kind is K.WASTE_TO_TABLEAU or _uncovers(board, m)]
                or [m for m in moves if m.kind in (K.DRAW, K.RECYCLE)]
                or moves
            )
        move = rng.choice(pool)
        board.apply(move)
        log.append(move)
    return log


def record_games(n: int) -> list[Game]:
    rng = random.Random(20240601)
    games: list[Game] = []
    for i in range(n):
        _, rules = RULE_SETS[i % len(RULE_SETS)]
        seed = f"bench-{i}"
        games.append((seed, rules, record_game(seed, rules, rng)))
    return games


@dataclass
class Figure:
    """Timed rounds of one measure. The median round's rate is the figure: other
    processes on a shared machine slow some rounds down, and the median shrugs
    that off while the mean does not; the best round is shown too."""

    rounds: list[tuple[float, int]]

    @property
    def rate(self) -> float:
        return statistics.median(n / dt for dt, n in self.rounds)

    @property
    def best(self) -> float:
        return max(n / dt for dt, n in self.rounds)

    @property
    def ops(self) -> int:
        return sum(n for _, n in self.rounds)

    @property
    def seconds(self) -> float:
        return sum(dt for dt, _ in self.rounds)


def timed_rounds(run: Callable[[], tuple[float, int]], seconds: float) -> Figure:
    """Call ``run`` (which returns its own timed seconds and op count) until the
    timed seconds add up to ``seconds``; at least once."""
    rounds: list[tuple[float, int]] = []
    elapsed = 0.0
    while True:
        gc.collect()
        dt, n = run()
        rounds.append((max(dt, 1e-9), n))
        elapsed += dt
        if elapsed >= seconds:
            return Figure(rounds)


def bench_apply(games: list[Game], seconds: float) -> Figure:
    def run() -> tuple[float, int]:
        boards = [Board.deal(seed, rules) for seed, rules, _ in games]  # not timed
        n = 0
        clock = CLOCK
        t0 = clock()
        for board, (_, _, log) in zip(boards, games, strict=True):
            apply = board.apply
            for move in log:
                apply(move)
            n += len(log)
        return clock() - t0, n

    return timed_rounds(run, seconds)


def positions(games: list[Game], every: int = 5) -> list[Board]:
    out: list[Board] = []
    for seed, rules, log in games:
        board = Board.deal(seed, rules)
        for i, move in enumerate(log):
            if i % every == 0 and board.status is Status.PLAYING:
                out.append(copy.deepcopy(board))
            board.apply(move)
    return out


def bench_legal(boards: list[Board], seconds: float) -> Figure:
    def run() -> tuple[float, int]:
        clock = CLOCK
        t0 = clock()
        for board in boards:
            board.legal_moves()
        return clock() - t0, len(boards)

    return timed_rounds(run, seconds)


def bench_deal(seconds: float) -> Figure:
    rules = [r for _, r in RULE_SETS]
    counter = [0]

    def run() -> tuple[float, int]:
        base = counter[0]
        counter[0] += 400
        clock = CLOCK
        t0 = clock()
        for i in range(base, base + 400):
            Board.deal(f"deal-{i}", rules[i % 4])
        return clock() - t0, 400

    return timed_rounds(run, seconds)


def bench_rescore(games: list[Game], seconds: float) -> Figure:
    logs = [
        (seed, rules, [TimedMove(500 * i, i, m) for i, m in enumerate(log)])
        for seed, rules, log in games
    ]

    def run() -> tuple[float, int]:
        clock = CLOCK
        t0 = clock()
        for seed, rules, log in logs:
            result = replay(seed, rules, log)
            end = log[-1].t if log else 0
            for scoring in Scoring:
                deal_score(result, scoring, end)
        return clock() - t0, len(logs)

    return timed_rounds(run, seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="timed seconds per measurement (default 3)"
    )
    parser.add_argument(
        "--games", type=int, default=400, help="recorded games to replay (default 400)"
    )
    args = parser.parse_args(argv)
    seconds = max(args.seconds, 0.0)
    core = pin_to_one_core()

    t0 = time.perf_counter()
    games = record_games(max(args.games, len(RULE_SETS)))
    boards = positions(games)
    setup = time.perf_counter() - t0
    moves_recorded = sum(len(log) for _, _, log in games)

    rows: list[tuple[str, Figure]] = []
    apply = bench_apply(games, seconds)
    rows.append(("apply: validated+applied moves", apply))
    per_rules: dict[str, Figure] = {}
    for label, rules in RULE_SETS:
        subset = [g for g in games if g[1] == rules]
        per_rules[label] = bench_apply(subset, seconds / len(RULE_SETS))
        rows.append((f"  {label}", per_rules[label]))
    legal = bench_legal(boards, seconds)
    rows.append(("legal_moves() generations", legal))
    deal = bench_deal(seconds)
    rows.append(("Board.deal", deal))
    rescore = bench_rescore(games, seconds)
    rows.append(("replay + score (4 systems)", rescore))

    machine = f"{platform.system()} {platform.release()} {platform.machine()}"
    print(f"klondike-race engine benchmark: Python {platform.python_version()}, {machine}")
    print(f"CPU: {cpu_model()}" + (f" (pinned to core {core})" if core is not None else ""))
    print(
        f"{len(games)} recorded games, {moves_recorded} moves, "
        f"{len(boards)} positions; setup {setup:.1f} s"
    )
    print()
    print(
        f"{'measure':<32} {'per second':>12} {'best round':>12} {'ops':>9} {'rounds':>6}"
        f" {'seconds':>7}"
    )
    for label, fig in rows:
        print(
            f"{label:<32} {fig.rate:>12,.0f} {fig.best:>12,.0f} {fig.ops:>9}"
            f" {len(fig.rounds):>6} {fig.seconds:>7.2f}"
        )
    print("(per second: the median round's rate, in CPU time)")
    apply_rate = apply.rate
    verdict = "meets" if apply_rate >= TARGET_APPLY else "MISSES"
    print(f"\napply {verdict} the target of {TARGET_APPLY:,} moves a second")
    result = {
        "apply_moves_per_s": round(apply_rate),
        "apply_moves_per_s_best": round(apply.best),
        "apply_moves_per_s_by_rules": {k: round(v.rate) for k, v in per_rules.items()},
        "legal_moves_per_s": round(legal.rate),
        "deals_per_s": round(deal.rate),
        "rescored_deals_per_s": round(rescore.rate),
        "target_apply_moves_per_s": TARGET_APPLY,
        "meets_target": apply_rate >= TARGET_APPLY,
        "games": len(games),
        "moves_recorded": moves_recorded,
        "seconds_per_measure": seconds,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": machine,
        "cpu": cpu_model(),
        "core": core,
    }
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
