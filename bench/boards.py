"""What a board in play holds: bytes, objects the collector tracks, and the copy.

A room keeps one engine board per player for as long as a deal runs, and the
server copies a board to try each move on, so at thousands of rooms the board's
layout is memory and collector work. This deals boards of recorded games
(bench/engine.py's mostly-greedy play, every variant), plays each part way, and
measures, per board:

(a) bytes: what tracemalloc sees allocated for the boards while they live;
(b) objects the garbage collector tracks (``gc.get_objects()`` before and after,
    once a collection has untracked what it may);
(c) ``Board.copy`` calls a second (CPU time, median round).

The baseline, measured in the same run, is the engine's earlier layout: the same
positions held as lists of int (a list a pile, ``down``, ``stock``, ``waste`` and
``foundations`` lists, the undo record a ``(move, foundation)`` tuple) in an
object of the same slots, copied pile by pile as that engine's ``Board.copy``
did. Its lists are built at their exact length, where the engine's grew and
shrank, so its bytes are a lower bound of what that engine held.

Usage: .venv/bin/python -m bench.boards [--boards N] [--seconds N]
Prints a table, then one line of JSON (the last line) for scripts.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.engine import RULE_SETS, cpu_model, pin_to_one_core, record_game
from protocol import Board, DealRules, Move

CLOCK = time.process_time


class ListBoard:
    """The earlier layout of a board: every pile and array a list of int."""

    __slots__ = Board.__slots__  # the same fields, each as the earlier layout held it

    def __init__(self, board: Board, last: Move | None) -> None:
        self.rules = board.rules
        self.packs = board.packs
        self.total = board.total
        self.tableau = [list(p) for p in board.tableau]
        self.down = list(board.down)
        self.stock = list(board.stock)
        self.waste = list(board.waste)
        self.foundations = list(board.foundations)
        self.home = board.home
        self.passes = board.passes
        self.moves = board.moves
        self.logged = board.logged
        self.status = board.status
        # The earlier undo record: the move itself and a foundation index.
        self._undo = None if last is None or board._undo is None else (last, -1)

    def copy(self) -> ListBoard:
        """What the earlier ``Board.copy`` did: every list copied."""
        new = ListBoard.__new__(ListBoard)
        new.rules = self.rules
        new.packs = self.packs
        new.total = self.total
        new.tableau = [pile[:] for pile in self.tableau]
        new.down = self.down[:]
        new.stock = self.stock[:]
        new.waste = self.waste[:]
        new.foundations = self.foundations[:]
        new.home = self.home
        new.passes = self.passes
        new.moves = self.moves
        new.logged = self.logged
        new.status = self.status
        new._undo = self._undo
        return new


Position = tuple[str, DealRules, list[Move]]  # a seed, its rules, the moves played


def positions(n: int) -> list[Position]:
    """``n`` games of recorded play, each cut at a random point of its first 200
    moves: a room's boards are mid-deal."""
    rng = random.Random(20261202)
    out: list[Position] = []
    for i in range(n):
        _, rules = RULE_SETS[i % len(RULE_SETS)]
        seed = f"boards-{i}"
        log = record_game(seed, rules, rng, cap=200)
        out.append((seed, rules, log[: rng.randrange(len(log) + 1)]))
    return out


def play(position: Position) -> Board:
    seed, rules, log = position
    board = Board.deal(seed, rules)
    for move in log:
        board.apply(move)
    return board


def held(build: Callable[[], list[object]]) -> tuple[float, float, list[object]]:
    """Bytes and tracked objects that what ``build`` returns holds, per item."""
    gc.collect()
    objects = len(gc.get_objects())
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    items = build()
    gc.collect()  # untracks the tuples that hold only atoms
    size = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    tracked = len(gc.get_objects()) - objects - 1  # less the list of items
    return size / len(items), tracked / len(items), items


def copy_rate(boards: list[Board] | list[ListBoard], seconds: float) -> float:
    rates: list[float] = []
    elapsed = 0.0
    while not rates or elapsed < seconds:
        gc.collect()
        t0 = CLOCK()
        for board in boards:
            board.copy()
        dt = max(CLOCK() - t0, 1e-9)
        rates.append(len(boards) / dt)
        elapsed += dt
    return statistics.median(rates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", type=int, default=2000, help="boards held (default 2000)")
    parser.add_argument(
        "--seconds", type=float, default=2.0, help="timed seconds per copy measure (default 2)"
    )
    args = parser.parse_args(argv)
    core = pin_to_one_core()
    games = positions(max(args.boards, len(RULE_SETS)))

    # Each layout holds the same positions: the engine's boards are played from the
    # deal; the baseline's are built from them (and their last move, for undo).
    now_bytes, now_tracked, now = held(lambda: [play(g) for g in games])
    boards = [b for b in now if isinstance(b, Board)]
    lasts = [log[-1] if log else None for _, _, log in games]
    pairs = list(zip(boards, lasts, strict=True))
    old_bytes, old_tracked, old = held(lambda: [ListBoard(b, m) for b, m in pairs])
    olds = [b for b in old if isinstance(b, ListBoard)]
    now_copy = copy_rate(boards, args.seconds)
    old_copy = copy_rate(olds, args.seconds)
    moves = statistics.mean(len(log) for _, _, log in games)

    machine = f"{platform.system()} {platform.release()} {platform.machine()}"
    print(f"klondike-race boards benchmark: Python {platform.python_version()}, {machine}")
    print(f"CPU: {cpu_model()}" + (f" (pinned to core {core})" if core is not None else ""))
    print(f"{len(boards)} boards of 4 rule sets, {moves:.0f} moves played on average")
    print()
    print(f"{'per board':<34} {'lists (before)':>15} {'engine (now)':>13} {'ratio':>7}")
    rows = [
        ("bytes held (tracemalloc)", old_bytes, now_bytes, "{:,.0f}"),
        ("objects the collector tracks", old_tracked, now_tracked, "{:.1f}"),
        ("Board.copy calls a second (CPU)", old_copy, now_copy, "{:,.0f}"),
    ]
    for label, before, after, form in rows:
        print(
            f"{label:<34} {form.format(before):>15} {form.format(after):>13}"
            f" {after / before if before else 0:>7.2f}"
        )
    result = {
        "boards": len(boards),
        "moves_played_mean": round(moves, 1),
        "bytes_per_board": round(now_bytes),
        "bytes_per_board_lists": round(old_bytes),
        "tracked_per_board": round(now_tracked, 2),
        "tracked_per_board_lists": round(old_tracked, 2),
        "copies_per_s": round(now_copy),
        "copies_per_s_lists": round(old_copy),
        "seconds_per_measure": args.seconds,
        "python": platform.python_version(),
        "machine": machine,
        "cpu": cpu_model(),
        "core": core,
    }
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
