"""The bot's win rate, played locally through the engine (no server).

Each deal: ``Board.deal(seed)`` → ``player_view`` → ``Bot.decide`` → ``Board.apply``,
until the deal is won, resigned or dead — exactly the loop a bot plays over the
wire, minus the wire. Seeds are ``bench-<variant>-<draw>-<i>``, so runs compare.
Each style of bot (protocol/strategy.py ``Style``) is measured on the same deals,
so that a style that plays differently is seen not to play much worse.

Usage: .venv/bin/python bench/bot_winrate.py [--deals 1000] [--jobs N] [--style S]
Prints a table, then one line of JSON (the last line) for scripts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol import Board, DealRules, Status, Variant, player_view
from protocol.strategy import Bot, Style


@dataclass
class Result:
    variant: str
    style: str
    draw: int
    deals: int
    won: int
    resigned: int
    dead: int
    moves: int
    seconds: float

    @property
    def win_rate(self) -> float:
        return self.won / self.deals if self.deals else 0.0


def play(seed: str, rules: DealRules, style: Style) -> tuple[Status, int]:
    """One deal, bot against the engine; the final status and the moves made."""
    board = Board.deal(seed, rules)
    bot = Bot(style=style)
    while board.status is Status.PLAYING:
        board.apply(bot.decide(player_view(board)))
    return board.status, board.moves


def _batch(args: tuple[str, Style, int, int, int]) -> list[tuple[Status, int]]:
    variant, style, draw, start, stop = args
    rules = DealRules(variant=Variant(variant), draw=draw)
    return [play(f"bench-{variant}-{draw}-{i}", rules, style) for i in range(start, stop)]


def measure(variant: str, style: Style, draw: int, deals: int, jobs: int) -> Result:
    began = time.perf_counter()
    step = max(1, deals // (jobs * 4))
    chunks = [(variant, style, draw, i, min(deals, i + step)) for i in range(0, deals, step)]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            outcomes = [o for part in pool.map(_batch, chunks) for o in part]
    else:
        outcomes = [o for chunk in chunks for o in _batch(chunk)]
    count = {s: sum(1 for st, _ in outcomes if st is s) for s in Status}
    return Result(
        variant,
        style.value,
        draw,
        deals,
        count[Status.WON],
        count[Status.RESIGNED],
        count[Status.DEAD],
        sum(m for _, m in outcomes),
        time.perf_counter() - began,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=1000, help="deals per configuration")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--variant", default="classic", choices=[v.value for v in Variant])
    parser.add_argument(
        "--style", choices=[s.value for s in Style], help="one style only (default: each)"
    )
    args = parser.parse_args()
    styles = list(Style) if args.style is None else [Style(args.style)]
    results = [
        measure(args.variant, style, draw, args.deals, args.jobs)
        for style in styles
        for draw in (1, 3)
    ]
    print(
        f"{'variant':<10} {'style':<10} {'draw':>4} {'deals':>6} {'won':>5} {'win %':>6} "
        f"{'resigned':>8} {'dead':>5} {'moves/deal':>10} {'seconds':>7}"
    )
    for r in results:
        print(
            f"{r.variant:<10} {r.style:<10} {r.draw:>4} {r.deals:>6} {r.won:>5} "
            f"{100 * r.win_rate:>6.1f} "
            f"{r.resigned:>8} {r.dead:>5} {r.moves / max(1, r.deals):>10.0f} {r.seconds:>7.1f}"
        )
    print(
        json.dumps({"results": [asdict(r) | {"win_rate": round(r.win_rate, 4)} for r in results]})
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
