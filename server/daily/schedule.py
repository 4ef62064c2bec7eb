"""The daily ladders, the daily deal and its calendar. Pure: no clock is read here.

Each UTC day has one deal per daily ladder (docs/rules.md §10). Its seed is
drawn from the server's CSPRNG and proven winnable like a ``deals: winnable``
room's (server/rooms/proofs.py); its commitment is the one every room publishes
before a deal (protocol/deal.py ``commitment``), so the same ``klondike-race
verify`` checks both. A day is *published* once its deal is in the store
(:data:`DAYS_AHEAD` days ahead of time at least) and *revealed* once it is over:
from the first millisecond of the next UTC day its seed and its proof are shown
to anyone, never before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from types import MappingProxyType
from typing import Any

from protocol.deal import commitment
from protocol.proof import check_proof, moves_from_solver
from protocol.settings import DealRules, Scoring, Settings, Variant

from ..accounts.history import ladder as ladder_of

__all__ = [
    "DAYS_AHEAD",
    "DAYS_PUBLISHED",
    "LADDERS",
    "PAST_DAYS",
    "DailyDeal",
    "DailyLadder",
    "day_of",
    "day_start",
    "days_between",
    "public_view",
    "wanted",
]

DAYS_AHEAD = 7
"""A day's commitment is public at least this many days before the day starts."""
DAYS_PUBLISHED = DAYS_AHEAD + 1
"""Days kept published from today on (today and the next :data:`DAYS_AHEAD`)."""
PAST_DAYS = 30
"""Revealed days the ``daily`` reply lists, the newest first among them."""


@dataclass(frozen=True, slots=True)
class DailyLadder:
    """A daily ladder: its name (the history's ladder name, server/accounts/history.py,
    so a daily counts in the same totals) and the settings it is played under."""

    name: str
    settings: Settings

    @property
    def rules(self) -> DealRules:
        return self.settings.deal_rules()


def _ladder(draw: int) -> DailyLadder:
    settings = Settings(
        scoring=Scoring.STANDARD,
        draw=draw,
        deals_per_round=1,
        variant=Variant.CLASSIC,
        undo=False,
    )
    return DailyLadder(ladder_of(settings.deal_rules()), settings)


LADDERS: MappingProxyType[str, DailyLadder] = MappingProxyType(
    {lad.name: lad for lad in (_ladder(1), _ladder(3))}
)
"""The daily ladders by name: ``classic-draw1`` and ``classic-draw3``."""


@dataclass(frozen=True, slots=True)
class DailyDeal:
    """One day's deal on one ladder, as published: kept for ever, never changed.

    ``seed`` is secret until the day is over; ``line`` is the solver's winning
    line, which the engine replayed to a win before the deal was published
    (the same check reveals it as the proof); ``published`` is when the store
    first kept it (unix seconds)."""

    day: date
    ladder: str
    seed: str
    line: str
    commitment: str
    published: float

    @classmethod
    def made(cls, day: date, ladder: str, seed: str, line: str, published: float) -> DailyDeal:
        return cls(day, ladder, seed, line, commitment(seed), published)

    @property
    def rules(self) -> DealRules:
        return LADDERS[self.ladder].rules

    def to_json(self) -> dict[str, Any]:
        """What the stores keep (everything: they are the server's)."""
        return {
            "day": self.day.isoformat(),
            "ladder": self.ladder,
            "seed": self.seed,
            "line": self.line,
            "commitment": self.commitment,
            "published": self.published,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DailyDeal:
        return cls(
            date.fromisoformat(data["day"]),
            data["ladder"],
            data["seed"],
            data["line"],
            data["commitment"],
            float(data["published"]),
        )


def day_of(now_ms: int) -> date:
    """The UTC day ``now_ms`` (the server's clock) falls in."""
    return datetime.fromtimestamp(now_ms / 1000, UTC).date()


def day_start(day: date) -> int:
    """The first millisecond of ``day`` (UTC), on the server's clock."""
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()) * 1000


def days_between(first: date, last: date) -> list[date]:
    """Every day from ``first`` to ``last``, both included."""
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


def wanted(today: date) -> list[tuple[date, str]]:
    """The (day, ladder) pairs that must be published on ``today``, soonest first."""
    return [
        (d, name) for d in days_between(today, today + timedelta(DAYS_AHEAD)) for name in LADDERS
    ]


def public_view(deal: DailyDeal, today: date) -> dict[str, Any]:
    """A published day as anyone may see it on ``today``: its commitment, and
    once the day is over its seed and its proof (the map a revealed winnable
    deal carries, protocol/proof.py ``Proof.to_wire``)."""
    view: dict[str, Any] = {
        "date": deal.day.isoformat(),
        "ladder": deal.ladder,
        "rules": deal.rules.to_wire(),
        "commitment": deal.commitment,
    }
    if deal.day < today:
        view["seed"] = deal.seed
        view["proof"] = check_proof(deal.seed, deal.rules, moves_from_solver(deal.line)).to_wire()
    return view


def in_order(deals: Iterable[DailyDeal]) -> list[DailyDeal]:
    """Days in calendar order, the ladders of a day by name."""
    return sorted(deals, key=lambda d: (d.day, d.ladder))
