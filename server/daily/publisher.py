"""The daily deals of a running server: the next days kept published, and the
list anyone may read.

:class:`DailyDeals` runs one task on the server's clock (server/net/clock.py,
so a test moves days by hand): at start, and at every UTC midnight after, it
makes sure today and the next :data:`~server.daily.schedule.DAYS_AHEAD` days
are published on every daily ladder. A missing day gets a seed drawn from the
CSPRNG and proven winnable as a winnable room's is (server/rooms/proofs.py
``ProvenPools.prove``): solved in the solver's worker processes, never on the
event loop, replayed to a win by the engine, and taken from no pool the rooms
deal from (a room's next proven seed waits behind one daily layout at most,
not behind a week of them). The store keeps the
first deal published for a day (store.py): when another node, or this one
before a restart, got there first, its deal stands and the seed proven here is
thrown away unseen.

Seeds leave through :func:`~server.daily.schedule.public_view` only, which
shows a day's seed once the day is over. A revealed day never changes, so its
view (the proof replayed by the engine) is made once and kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import date, timedelta
from typing import Any

from ..core.values import RoomError
from ..net.clock import Clock
from ..rooms.proofs import ProvenPools
from ..store.base import StoreUnavailable
from .schedule import (
    DAYS_AHEAD,
    LADDERS,
    PAST_DAYS,
    DailyDeal,
    day_of,
    day_start,
    public_view,
    wanted,
)
from .store import DailyStore, MemoryDaily

__all__ = ["RETRY_MS", "DailyDeals"]

log = logging.getLogger(__name__)

RETRY_MS = 30_000
"""After a failure (the store away, the pools closing), publishing is tried
again this much later on the server's clock."""


class DailyDeals:
    """The server's daily deals; see the module docstring."""

    def __init__(self, clock: Clock, proofs: ProvenPools, store: DailyStore | None = None) -> None:
        self.clock = clock
        self.proofs = proofs
        self.store: DailyStore = store if store is not None else MemoryDaily()
        self._task: asyncio.Task[None] | None = None
        self._revealed: dict[tuple[date, str], dict[str, Any]] = {}
        self._published = asyncio.Condition()
        self.published_through: date | None = None
        """The last day of the window published in full (None: not yet)."""

    def use(self, store: DailyStore) -> None:
        """The store, connected once the event loop runs (server/app.py)."""
        self.store = store

    def today(self) -> date:
        return day_of(self.clock.now())

    # ------------------------------------------------------------------ reading

    async def deal(self, day: date, ladder: str) -> DailyDeal | None:
        """The published deal of ``day`` on ``ladder``, seed and all: for the
        server's own use (dealing it), never to be sent before the day is over."""
        kept = await self.store.days(day, day)
        return next((d for d in kept if d.ladder == ladder), None)

    async def listing(self) -> tuple[date, list[dict[str, Any]]]:
        """Today, and what the ``daily`` reply lists: the last :data:`PAST_DAYS`
        days revealed, then today and the days ahead by their commitments."""
        today = self.today()
        kept = await self.store.days(today - timedelta(PAST_DAYS), today + timedelta(DAYS_AHEAD))
        return today, [self._view(d, today) for d in kept]

    def _view(self, deal: DailyDeal, today: date) -> dict[str, Any]:
        if deal.day >= today:
            return public_view(deal, today)
        key = (deal.day, deal.ladder)
        view = self._revealed.get(key)
        if view is None:
            view = self._revealed[key] = public_view(deal, today)
            oldest = today - timedelta(PAST_DAYS)
            for old in [k for k in self._revealed if k[0] < oldest]:
                del self._revealed[old]
        return view

    async def until_published(self, day: date) -> None:
        """Until the window that ends with ``day`` is published in full."""
        async with self._published:
            await self._published.wait_for(
                lambda: self.published_through is not None and self.published_through >= day
            )

    # ------------------------------------------------------------------ publishing

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._keep_published())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _keep_published(self) -> None:
        while True:
            today = self.today()
            try:
                await self._publish_window(today)
            except (StoreUnavailable, RoomError) as exc:
                log.warning("daily deals not published yet: %s", exc)
                await self.clock.sleep_until(self.clock.now() + RETRY_MS)
                continue
            await self.clock.sleep_until(day_start(today + timedelta(1)))

    async def _publish_window(self, today: date) -> None:
        last = today + timedelta(DAYS_AHEAD)
        kept = {(d.day, d.ladder) for d in await self.store.days(today, last)}
        for day, ladder in wanted(today):
            if (day, ladder) in kept:
                continue
            seed, line = await self.proofs.prove(LADDERS[ladder].rules)
            deal = DailyDeal.made(day, ladder, seed, line, self.clock.now() / 1000)
            stands = await self.store.publish(deal)
            if stands.seed != seed:
                log.info("daily %s %s: another node published it first", day, ladder)
        async with self._published:
            self.published_through = last
            self._published.notify_all()
