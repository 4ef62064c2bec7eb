"""Rating a round (server/ratings/model.py) against openskill's own figures, and
the rules built on it: the shown number, provisional, time away, ladders, and a
ladder recomputed from its rated rounds."""

from __future__ import annotations

import math

import pytest
from openskill.models import PlackettLuce

from protocol.settings import Scoring, Settings, Variant
from server.accounts.history import ladder
from server.ratings.model import (
    DAY_S,
    DRIFT_PER_DAY,
    PROVISIONAL_ROUNDS,
    SIGMA,
    RatedRound,
    Rating,
    away,
    changes,
    ladder_of,
    predicted_places,
    rate_round,
    replay,
    shown,
)


def openskill_figures(
    ranks: list[float], start: list[tuple[float, float]]
) -> list[tuple[float, float]]:
    model = PlackettLuce(limit_sigma=True)
    teams = [[model.rating(mu=m, sigma=s)] for m, s in start]
    return [(t[0].mu, t[0].sigma) for t in model.rate(teams, ranks=ranks)]


def test_two_newcomers_match_openskill() -> None:
    after = rate_round({}, {"a": 1, "b": 2}, 10.0)
    (wa, sa), (wb, sb) = openskill_figures([1, 2], [(25, 25 / 3)] * 2)
    assert after["a"].mu == pytest.approx(wa) and after["a"].sigma == pytest.approx(sa)
    assert after["b"].mu == pytest.approx(wb) and after["b"].sigma == pytest.approx(sb)
    # openskill 6's figure for a one-on-one between newcomers, winner's mu
    assert after["a"].mu == pytest.approx(27.635389493140497)
    assert after["a"].rounds == 1 and after["a"].last_played == 10.0


def test_ties_and_four_players_match_openskill() -> None:
    before = {"a": Rating(30.0, 5.0, 12, 0.0), "b": Rating(22.0, 6.0, 3, 0.0)}
    places = {"a": 2, "b": 1, "c": 2, "d": 4}  # a and c tied for 2nd
    after = rate_round(before, places, 0.0)
    want = openskill_figures([2, 1, 2, 4], [(30.0, 5.0), (22.0, 6.0), (25, 25 / 3), (25, 25 / 3)])
    for p, (mu, sigma) in zip("abcd", want, strict=True):
        assert after[p].mu == pytest.approx(mu)
        assert after[p].sigma == pytest.approx(sigma)
    assert after["a"].rounds == 13 and after["c"].rounds == 1


def test_a_loss_never_raises_the_shown_rating() -> None:
    before = {"a": Rating(25.0, 2.0, 50, 0.0), "b": Rating(25.0, 8.0, 0, 0.0)}
    after = rate_round(before, {"a": 2, "b": 1}, 0.0)
    assert after["a"].sigma <= 2.0
    assert shown(after["a"]) < shown(before["a"])


def test_shown_and_provisional() -> None:
    assert shown(Rating()) == 1000
    assert shown(Rating(mu=30.0, sigma=2.0)) == 1000 + 40 * 24
    assert Rating(rounds=PROVISIONAL_ROUNDS - 1).provisional
    assert not Rating(rounds=PROVISIONAL_ROUNDS).provisional


def test_sigma_grows_with_time_away() -> None:
    r = Rating(30.0, 2.0, 40, 1000.0)
    assert away(r, 1000.0) == r
    thirty = away(r, 1000.0 + 30 * DAY_S)
    assert thirty.sigma == pytest.approx(math.sqrt(4 + 30 * DRIFT_PER_DAY**2))
    assert thirty.mu == r.mu
    assert away(r, 1000.0 + 10_000 * DAY_S).sigma == SIGMA
    # The round rates from the grown sigma
    after = rate_round(
        {"a": r, "b": Rating(30.0, 2.0, 40, 1000.0 + 30 * DAY_S)},
        {"a": 1, "b": 2},
        1000.0 + 30 * DAY_S,
    )
    assert after["a"].mu - r.mu > 30.0 - after["b"].mu - 1e-9


def test_ladders_split_by_game_not_points() -> None:
    base = Settings()
    assert ladder_of(base) == ladder(base.deal_rules()) == "classic-draw1"
    assert (
        ladder_of(base.updated({"scoring": Scoring.VEGAS.value, "race_bonus": 0}))
        == "classic-draw1"
    )
    assert ladder_of(base.updated({"stock_passes": 3, "undo": True})) == "classic-draw1"
    assert ladder_of(base.updated({"draw": 3})) == "classic-draw3"
    assert ladder_of(base.updated({"variant": Variant.THOUGHTFUL.value})) == "thoughtful-draw1"
    assert ladder_of(base.updated({"variant": Variant.DOUBLE.value})) == "double-draw1"


def test_predicted_places() -> None:
    ratings = {"a": Rating(35.0, 2.0), "b": Rating(20.0, 2.0), "c": Rating(27.0, 2.0)}
    assert predicted_places(ratings, ["a", "b", "c"]) == {"a": 1, "c": 2, "b": 3}
    assert predicted_places({}, ["x"]) == {"x": 1}


def test_changes_for_the_podium() -> None:
    after = rate_round({}, {"a": 1, "b": 2}, 0.0)
    ch = changes({}, after)
    assert ch["a"].before == ch["b"].before == 1000
    assert ch["a"].to_wire()["change"] > 0 > ch["b"].to_wire()["change"]
    assert ch["a"].provisional


def test_a_ladder_is_its_rounds_replayed() -> None:
    rounds = [
        RatedRound(f"R-1/{i}", "classic-draw1", 100.0 * i, places)
        for i, places in enumerate(
            [{"a": 1, "b": 2}, {"a": 2, "b": 1, "c": 3}, {"c": 1, "a": 1, "b": 3}, {"b": 1, "c": 2}]
        )
    ]
    folded: dict[str, Rating] = {}
    for rnd in rounds:
        folded.update(rate_round(folded, rnd.places, rnd.t))
    assert replay(rounds) == folded
    without = replay([r for r in rounds if r.key != "R-1/1"])
    assert without != folded and without["c"].rounds == 2
    assert RatedRound.from_wire(rounds[1].to_wire()) == rounds[1]
