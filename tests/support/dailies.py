"""Daily deals for tests: proven for real (the solver, in this process), once
per test session, and published into a server's daily store by hand, so a
test need not wait for the publisher to prove a week of them."""

from __future__ import annotations

import functools
import time
from datetime import date
from pathlib import Path

from protocol.moves import Move
from protocol.proof import moves_from_solver
from server.daily.schedule import LADDERS, DailyDeal, day_of
from server.daily.sqlite import SqliteDaily
from server.daily.store import DailyStore
from server.rooms.proofs import Verdict, prove_seed

BUDGET = 200_000


@functools.cache
def proven(ladder: str, n: int) -> tuple[str, str]:
    """The ``n``-th proven seed of a ladder (from a fixed list), and its line."""
    rules = LADDERS[ladder].rules
    found = 0
    for i in range(100):
        seed = f"daily-test-{ladder}-{i}"
        verdict, line, _ = prove_seed(seed, rules, BUDGET)
        if verdict is Verdict.PROVEN:
            if found == n:
                return seed, line
            found += 1
    raise AssertionError("no proven seed found")


async def publish(store: DailyStore, day: date, n: int = 0) -> dict[str, DailyDeal]:
    """Publish a proven deal of ``day`` on every daily ladder; the deals kept."""
    out = {}
    for ladder in LADDERS:
        seed, line = proven(ladder, n)
        out[ladder] = await store.publish(DailyDeal.made(day, ladder, seed, line, 0.0))
    return out


async def published_on_disk(data: Path) -> dict[str, DailyDeal]:
    """Today's deals published in the embedded store of data directory ``data``,
    as a server started on it then finds them."""
    daily = await SqliteDaily.at(data)
    try:
        return await publish(daily, day_of(time.time_ns() // 1_000_000))
    finally:
        await daily.close()


def winning_moves(deal: DailyDeal) -> list[Move]:
    return moves_from_solver(deal.line)
