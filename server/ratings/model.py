"""Rating a round from its final placings. Pure: time is an argument.

A race of 2 to 8 players on one deal is a free-for-all with a full order of
finish (ties shared, as protocol/placings.py gives them), which Plackett-Luce
takes as it is: each racer is a team of one, ranked by their placing. The
model is openskill's with ``limit_sigma`` on, so a round never makes the
model less sure of anyone; and a player placed last never gains
(:func:`placed_last`, :func:`rate_round`), the one place the figures are not
openskill's.

What is shown is conservative — ``mu - 3 sigma``, a figure the player is all
but sure to be above — scaled so a new player starts at 1000
(:func:`shown`); docs/rules.md §11 tells players how it works.

Ratings are a pure function of a ladder's rated rounds in order
(:func:`replay`): the store's ratings are a cache of that fold, so removing a
result is replaying its ladder without it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from openskill.models import PlackettLuce

from protocol.settings import DealRules, Settings, Variant

__all__ = [
    "DAY_S",
    "DRIFT_PER_DAY",
    "MU",
    "PROVISIONAL_ROUNDS",
    "SIGMA",
    "Applied",
    "Change",
    "ChartPoint",
    "RatedRound",
    "Rating",
    "Standing",
    "away",
    "changes",
    "chart_points",
    "every_ladder",
    "ladder_of",
    "placed_last",
    "predicted_places",
    "rate_round",
    "replay",
    "replay_with_chart",
    "shown",
    "table_order",
]

MU = 25.0
SIGMA = MU / 3
PROVISIONAL_ROUNDS = 10
"""A rating is marked provisional over its first rated rounds: sigma is still
large, so the shown figure moves a lot and says little."""

DRIFT_PER_DAY = 0.25
"""How fast uncertainty returns with time away: sigma² grows by DRIFT² per day
since the last rated round (sigma 2 becomes 2.42 after 30 days, 3.2 after a
hundred), never beyond a newcomer's sigma."""

DAY_S = 86_400.0
SCALE = 40.0
BASE = 1000.0

_MODEL = PlackettLuce(mu=MU, sigma=SIGMA, limit_sigma=True)


def every_ladder() -> list[str]:
    """Every ladder there is: each variant with draw one and draw three."""
    return [DealRules(variant=v, draw=d).ladder for v in Variant for d in (1, 3)]


def ladder_of(rules: DealRules | Settings) -> str:
    """The ladder a room's rules count toward: what changes the game itself
    (variant, draw one or three), as history names it
    (server/accounts/history.py ``ladder``); scoring and house rules that only
    change points do not split ladders."""
    return (rules.deal_rules() if isinstance(rules, Settings) else rules).ladder


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's skill estimate on one ladder."""

    mu: float = MU
    sigma: float = SIGMA
    rounds: int = 0  # rated rounds played on the ladder
    last_played: float | None = None  # unix seconds of the last rated round

    @property
    def provisional(self) -> bool:
        return self.rounds < PROVISIONAL_ROUNDS

    def to_wire(self) -> dict[str, Any]:
        return {"rating": shown(self), "rounds": self.rounds, "provisional": self.provisional}


def shown(rating: Rating) -> int:
    """The number players see: ``1000 + 40 (mu - 3 sigma)``, rounded. A newcomer
    (mu 25, sigma 25/3) shows 1000; the conservative estimate rises as the model
    grows surer, so playing well and playing often both count."""
    return round(BASE + SCALE * (rating.mu - 3 * rating.sigma))


def away(rating: Rating, t: float) -> Rating:
    """The rating at time ``t``, its sigma grown with the days since the last
    rated round (:data:`DRIFT_PER_DAY`), never beyond a newcomer's."""
    if rating.last_played is None or t <= rating.last_played:
        return rating
    days = (t - rating.last_played) / DAY_S
    sigma = min(SIGMA, math.sqrt(rating.sigma**2 + days * DRIFT_PER_DAY**2))
    return replace(rating, sigma=sigma)


@dataclass(frozen=True, slots=True)
class RatedRound:
    """One rated round as its ladder's log keeps it: the round's key (history's
    ``round_key``), when it ended, and each player's final placing (a player who
    left mid-way placed last). Everything a replay needs, nothing more."""

    key: str
    ladder: str
    t: float
    places: dict[str, int] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        return {"key": self.key, "ladder": self.ladder, "t": self.t, "places": dict(self.places)}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> RatedRound:
        return cls(
            str(data["key"]),
            str(data["ladder"]),
            float(data["t"]),
            {str(p): int(n) for p, n in data["places"].items()},
        )


def placed_last(places: Mapping[str, int]) -> set[str]:
    """Who a round placed last: everyone at its highest placing, alone or tied.
    Nobody when every player shares one placing: that round is a draw, which
    no one lost."""
    worst = max(places.values(), default=1)
    last = {p for p, n in places.items() if n == worst}
    return set() if len(last) == len(places) else last


def rate_round(
    before: Mapping[str, Rating], places: Mapping[str, int], t: float
) -> dict[str, Rating]:
    """Every player's rating after a round ended at ``t`` with ``places`` (1 is
    first; equal placings are ties). ``before`` holds the stored ratings of
    those who have one; the rest start as newcomers.

    Openskill's figures, except for those :func:`placed_last`: they keep the
    sigma the round rates them from, and their mu never rises. The shown
    rating is ``mu - 3 sigma``, and openskill alone can raise it for a last
    place in two ways: sigma falling by more than a third of mu's fall, or mu
    rising for a player tied for last with a stronger one, as from a draw with
    them. Kept so, a last place can only lower the shown rating, or leave it."""
    players = sorted(places)
    start = [away(before.get(p, Rating()), t) for p in players]
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in start]
    rated = _MODEL.rate(teams, ranks=[float(places[p]) for p in players])
    last = placed_last(places)

    def after(p: str, r: Rating, mu: float, sigma: float) -> Rating:
        if p in last:
            mu, sigma = min(mu, r.mu), r.sigma
        return Rating(mu, sigma, r.rounds + 1, t)

    return {
        p: after(p, r, team[0].mu, team[0].sigma)
        for p, r, team in zip(players, start, rated, strict=True)
    }


def predicted_places(ratings: Mapping[str, Rating], players: Iterable[str]) -> dict[str, int]:
    """Where the model expects each player to finish (1 is first)."""
    order = sorted(players)
    if len(order) < 2:
        return dict.fromkeys(order, 1)
    teams = [
        [_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in (ratings.get(p, Rating()) for p in order)
    ]
    ranks = _MODEL.predict_rank(teams)
    return {p: int(rank) for p, (rank, _) in zip(order, ranks, strict=True)}


@dataclass(frozen=True, slots=True)
class Change:
    """One player's rating change in a round, as the podium shows it."""

    before: int
    after: int
    rounds: int
    provisional: bool

    def to_wire(self) -> dict[str, Any]:
        return {
            "before": self.before,
            "after": self.after,
            "change": self.after - self.before,
            "rounds": self.rounds,
            "provisional": self.provisional,
        }


def changes(before: Mapping[str, Rating], after: Mapping[str, Rating]) -> dict[str, Change]:
    return {
        p: Change(shown(before.get(p, Rating())), shown(r), r.rounds, r.provisional)
        for p, r in after.items()
    }


def replay(rounds: Iterable[RatedRound]) -> dict[str, Rating]:
    """A ladder's ratings from its rated rounds in order."""
    return replay_with_chart(rounds)[0]


@dataclass(frozen=True, slots=True)
class ChartPoint:
    """The shown rating after one rated round: a point of the profile's chart."""

    key: str
    t: float
    rating: int

    def to_wire(self) -> dict[str, Any]:
        return {"key": self.key, "t": self.t, "rating": self.rating}


@dataclass(frozen=True, slots=True)
class Standing:
    """A row of a ladder's table."""

    player: str
    rating: int
    rounds: int
    provisional: bool


class Applied(StrEnum):
    """What a store did with a rated round (server/accounts/store.py
    ``apply_rated_round``)."""

    NEW = "new"  # logged, ratings written
    ALREADY = "already"  # its key was logged before: nothing written
    STALE = "stale"  # a player's rating moved since it was read: nothing written


def chart_points(rnd: RatedRound, after: Mapping[str, Rating]) -> dict[str, ChartPoint]:
    return {p: ChartPoint(rnd.key, rnd.t, shown(r)) for p, r in after.items()}


def table_order(player: str, rating: Rating) -> tuple[int, str]:
    """How a ladder's table is ordered: the higher shown rating first, then by
    player id, so every store lists ties alike."""
    return (-shown(rating), player)


def replay_with_chart(
    rounds: Iterable[RatedRound],
) -> tuple[dict[str, Rating], dict[str, list[ChartPoint]]]:
    """A ladder's ratings and every player's chart, from its rated rounds in order."""
    ratings: dict[str, Rating] = {}
    charts: dict[str, list[ChartPoint]] = {}
    for rnd in rounds:
        after = rate_round(ratings, rnd.places, rnd.t)
        ratings.update(after)
        for p, point in chart_points(rnd, after).items():
            charts.setdefault(p, []).append(point)
    return ratings, charts
