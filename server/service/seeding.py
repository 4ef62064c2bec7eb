"""Where rooms get their seeds: drawn at random, or, for ``deals: winnable``,
taken from the pools of seeds proven winnable (server/rooms/proofs.py), which
live in the store (shared, with Redis) and report to the metrics."""

from __future__ import annotations

from collections.abc import Callable

from protocol.settings import DealRules

from ..net.metrics import Metrics
from ..rooms.proofs import ProvenPools
from ..store.base import Store

__all__ = ["Seeding"]


def _rules_label(rules: DealRules) -> str:
    f2t = "" if rules.foundation_to_tableau else "/no_f2t"
    return f"{rules.variant.value}/draw{rules.draw}/passes{rules.pass_limit}{f2t}"


class Seeding:
    def __init__(
        self, draw: Callable[[], str], proofs: ProvenPools, store: Store, metrics: Metrics
    ) -> None:
        self.draw = draw
        self.proofs = proofs
        self.metrics = metrics
        proofs.use(store)
        proofs.report_to(
            counted=lambda v: metrics.winnable_layouts.labels(v.value).inc(),
            sized=lambda rules, n: metrics.winnable_pool.labels(_rules_label(rules)).set(n),
        )

    async def proven(self, rules: DealRules, dry: Callable[[], None]) -> tuple[str, str]:
        """A seed proven winnable under ``rules`` and its line; ``dry()`` once
        (and the wait counted) if the pool is dry and it must wait."""

        def waiting() -> None:
            self.metrics.winnable_waits.inc()
            dry()

        return await self.proofs.take(rules, waiting)
