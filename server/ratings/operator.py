"""The operator's hand on the ladders: ``klondike-race ratings``.

An operator removes a result (a round played to farm a rating, say) by its
round key; since a ladder's ratings are a pure function of its rated rounds in
order (model.py ``replay``), the ladder is then replayed without it and the
store's ratings, table and charts replaced in one step. ``--check`` replays a
ladder and compares it with what the store holds.

A command on the operator's machine rather than a request on the wire: the
wire has no operator role, and one would be a standing secret on the network
for a rare act; whoever runs this already holds the store (the data directory,
which the embedded server locks while it runs, or the Redis URL).
"""

from __future__ import annotations

from ..accounts.store import AccountStore
from .model import RatedRound, replay

__all__ = ["check_ladder", "remove_result"]


async def remove_result(store: AccountStore, key: str) -> RatedRound | None:
    """Remove the rated round ``key`` and replay its ladder; None if unknown.

    Safe on a live store: the ladder is replaced only while its log is still
    the one replayed, in one step, so a round a room applies meanwhile (on any
    node) is neither lost nor undone; the replay is then made again with it."""
    while True:
        removed = await store.rated_round(key)
        if removed is None:
            return None
        logged = await store.rated_rounds(removed.ladder)
        rounds = [r for r in logged if r.key != key]
        if await store.replace_ladder(removed.ladder, rounds, [r.key for r in logged]):
            return removed


async def check_ladder(store: AccountStore, ladder: str) -> list[str]:
    """The players whose stored rating differs from the ladder's replay."""
    replayed = replay(await store.rated_rounds(ladder))
    stored = await store.ratings(ladder, replayed)
    return sorted(p for p, r in replayed.items() if stored.get(p) != r)
