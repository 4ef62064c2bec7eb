"""Rating a round (server/ratings/model.py) against openskill's own figures, and
the rules built on it: a last place never gains, the shown number,
provisional, time away, ladders, and a ladder recomputed from its rated
rounds."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openskill.models import PlackettLuce

from protocol.placings import round_places
from protocol.settings import Scoring, Settings, Variant
from server.accounts.history import ladder
from server.core.series import RoundResult
from server.ratings.keeping import rated_round
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
    placed_last,
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
    # Placed last, b keeps their sigma; their mu is openskill's, and falls.
    assert after["b"].mu == pytest.approx(wb) and wb < 25
    assert after["b"].sigma == SIGMA > sb
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
        assert after[p].sigma == pytest.approx(sigma if p != "d" else SIGMA)  # d placed last
    assert after["a"].rounds == 13 and after["c"].rounds == 1


def test_a_last_place_never_raises_the_shown_rating() -> None:
    before = {"a": Rating(25.0, 2.0, 50, 0.0), "b": Rating(25.0, 8.0, 0, 0.0)}
    after = rate_round(before, {"a": 2, "b": 1}, 0.0)
    assert after["a"].sigma == 2.0
    assert shown(after["a"]) < shown(before["a"])


# The reported case's shape: a provisional player's 9th rated round, tied for
# last (places 1, 2, 2), where openskill's sigma falls by more than a third of
# its mu's fall and the shown rating went 967 -> 968. The ratings before it are
# what today's server stored for a ladder of eight rounds among the three.
STORED = {
    "ann": Rating(19.735140385629254, 6.852966672430733, 8, 8000.0),
    "bob": Rating(24.655676403732496, 7.391757410233294, 5, 8000.0),
    "cyd": Rating(30.296054600779105, 7.0089593793756615, 7, 8000.0),
}


def test_the_reported_last_place_no_longer_gains() -> None:
    places = {"ann": 2, "bob": 2, "cyd": 1}
    assert placed_last(places) == {"ann", "bob"}
    assert shown(STORED["ann"]) == 967
    start = [away(r, 9000.0) for r in STORED.values()]  # 1,000 s later
    (mu, sigma), _, cyd = openskill_figures([2, 2, 1], [(r.mu, r.sigma) for r in start])
    ann = start[0]
    assert mu < ann.mu and ann.mu - mu < 3 * (ann.sigma - sigma)
    assert shown(Rating(mu, sigma)) == 968  # openskill's own figures
    after = rate_round(STORED, places, 9000.0)
    assert changes(STORED, after)["ann"].to_wire()["change"] < 0
    assert after["ann"] == Rating(mu, ann.sigma, 9, 9000.0) and after["ann"].provisional
    assert (after["cyd"].mu, after["cyd"].sigma) == cyd  # not last: openskill's


def test_tied_for_last_with_a_stronger_player_gains_nothing() -> None:
    """openskill rates a tie as a draw between the tied, so the weaker of two
    tied for last would gain mu; placed last, their rating stays."""
    before = {
        "a": Rating(25.0, 3.0, 20, 0.0),
        "b": Rating(15.0, 3.0, 20, 0.0),
        "c": Rating(35.0, 3.0, 20, 0.0),
    }
    after = rate_round(before, {"a": 1, "b": 2, "c": 2}, 0.0)
    start = [(r.mu, r.sigma) for r in before.values()]
    (ma, sa), (mb, _), (mc, _) = openskill_figures([1, 2, 2], start)
    assert mb > 15.0 and shown(Rating(mb, 3.0)) > shown(before["b"])  # openskill's
    assert after["b"] == Rating(15.0, 3.0, 21, 0.0)
    assert after["c"] == Rating(mc, 3.0, 21, 0.0) and mc < 35.0
    assert (after["a"].mu, after["a"].sigma) == (ma, sa)


def test_a_draw_places_nobody_last() -> None:
    before = {"a": Rating(30.0, 2.0, 20, 0.0), "b": Rating(20.0, 5.0, 4, 0.0)}
    assert placed_last({"a": 1, "b": 1}) == set()
    after = rate_round(before, {"a": 1, "b": 1}, 0.0)
    want = openskill_figures([1, 1], [(30.0, 2.0), (20.0, 5.0)])
    assert [(after[p].mu, after[p].sigma) for p in "ab"] == want


stored = st.builds(
    Rating,
    mu=st.floats(0.0, 50.0),
    sigma=st.floats(0.5, SIGMA),
    rounds=st.integers(0, 60),
    last_played=st.floats(0.0, 1e7),
)
Round = tuple[dict[str, Rating], dict[str, int], float]


@st.composite
def rounds(draw: st.DrawFn) -> Round:
    """A rated round of 2 to 5 players: the ratings stored before it (a newcomer
    has none; time away up to 400 days) and placings from random totals, so
    ties and draws come often."""
    racers = draw(
        st.lists(st.tuples(st.none() | stored, st.integers(0, 3)), min_size=2, max_size=5)
    )
    names = [f"p{i}" for i in range(len(racers))]
    before = {p: r for p, (r, _) in zip(names, racers, strict=True) if r is not None}
    places = round_places({p: total for p, (_, total) in zip(names, racers, strict=True)})
    return before, places, 1e7 + draw(st.floats(0.0, 400.0)) * DAY_S


@settings(max_examples=500, deadline=None)
@given(rounds())
def test_a_player_placed_last_never_sees_a_positive_change(rnd: Round) -> None:
    """The change as the podium shows it: from the stored shown rating."""
    before, places, t = rnd
    after = rate_round(before, places, t)
    for p in placed_last(places):
        assert shown(after[p]) <= shown(before.get(p, Rating()))


@settings(max_examples=500, deadline=None)
@given(rounds())
def test_the_figures_are_openskills_but_for_last_place(rnd: Round) -> None:
    before, places, t = rnd
    after = rate_round(before, places, t)
    names = sorted(places)
    start = [away(before.get(p, Rating()), t) for p in names]
    want = openskill_figures([float(places[p]) for p in names], [(r.mu, r.sigma) for r in start])
    last = placed_last(places)
    assert len(last) < len(names)
    for p, r, (mu, sigma) in zip(names, start, want, strict=True):
        if p in last:
            assert after[p] == Rating(min(mu, r.mu), r.sigma, r.rounds + 1, t)
            if len(last) == 1:  # openskill's own: a sole last place never raises mu
                assert mu <= r.mu
        else:
            assert after[p] == Rating(mu, sigma, r.rounds + 1, t)


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


def test_a_round_everyone_left_is_not_rated() -> None:
    """Everyone quitting is no draw: nobody's shown rating may rise by it."""
    quit_all = RoundResult(
        number=1, ended_at=60_000, scoring=Scoring.STANDARD, race_bonus=0, players=(),
        totals={}, winners=(), deals=(), ladder="classic-1", left=("ann", "bob"),
    )  # fmt: skip
    assert rated_round("ROOM", 0, quit_all) is None
    one_left = replace(quit_all, players=("ann",), totals={"ann": 10}, left=("bob",))
    rated = rated_round("ROOM", 0, one_left)
    assert rated is not None and rated.places == {"ann": 1, "bob": 2}
