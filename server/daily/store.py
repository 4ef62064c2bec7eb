"""Where published days live: the interface every daily store implements, and
the one in this process.

A published day is a promise to the public (its commitment), so a store keeps
it for ever and never changes it. The one write is :meth:`DailyStore.publish`,
*create if absent*, atomic in the store: when two nodes (or a node and itself
after a restart) publish the same day with different seeds, both are answered
with the deal that was kept first, and that is the day everyone sees. A write
is durable when its coroutine returns, as with every store here; a store that
cannot be reached raises :class:`~server.store.base.StoreUnavailable`.
"""

from __future__ import annotations

from datetime import date
from typing import Protocol

from .schedule import DailyDeal, in_order

__all__ = ["DailyStore", "MemoryDaily"]


class DailyStore(Protocol):
    async def publish(self, deal: DailyDeal) -> DailyDeal:
        """Keep ``deal`` unless its (day, ladder) is kept already; the deal kept."""

    async def days(self, first: date, last: date) -> list[DailyDeal]:
        """The published deals from ``first`` to ``last`` (both included), in
        calendar order, the ladders of a day by name."""

    async def close(self) -> None: ...


class MemoryDaily:
    """In this process (``serve --memory``, tests): a restart forgets it."""

    def __init__(self) -> None:
        self._kept: dict[tuple[date, str], DailyDeal] = {}

    async def publish(self, deal: DailyDeal) -> DailyDeal:
        return self._kept.setdefault((deal.day, deal.ladder), deal)

    async def days(self, first: date, last: date) -> list[DailyDeal]:
        return in_order(d for (day, _), d in self._kept.items() if first <= day <= last)

    async def close(self) -> None:
        return None
