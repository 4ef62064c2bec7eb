"""Placings (docs/rules.md §7.1): the engine's functions against a brute-force
ordering, and the placings a real race sends.

The property tests spell the rules out as a plain "is placed ahead of" test
between two players and try every order of the players: a player's placing is
the best position any order that never puts a player behind someone they are
ahead of gives them. The same for runs of a daily, whose board score (one
integer: a Redis sorted set's, an SQLite index's) orders them as their key
does. The race, over real sockets, plays the issue's bad cases: two winners on
equal scores, the later one first in the room (placed by who won first); two on
equal scores not won, the one who got there first still playing and the other
resigning the moment they got there (placed by who got there first: quitting
early places nobody ahead); and two who never scored, one resigning at once
and one idle (who share a placing); the round then ends on equal totals, a
shared win.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from protocol.board import Board
from protocol.moves import Move, MoveKind, Status
from protocol.placings import (
    Finish,
    RunFinish,
    board_score,
    deal_places,
    ordinal,
    placing_text,
    round_places,
    run_key,
    run_places,
)
from protocol.scoring import DealReplay, TimedMove, event_points, replay
from protocol.settings import DealRules, Scoring
from tests.support.inprocess import FakeClock, Seeds, running_server
from tests.support.raw_client import Client, player
from tests.support.solver import board_from_view, solve
from tests.test_race import WIN_SEED


def ahead(a: Finish, b: Finish) -> bool:
    """The rule as written: a higher score; equal scores, a win before no win;
    then who reached their score earlier."""
    if a.score != b.score:
        return a.score > b.score
    if a.won != b.won:
        return a.won
    return a.scored_at < b.scored_at


def run_ahead(a: RunFinish, b: RunFinish) -> bool:
    """The rule of runs as written: a win before none; won runs by the time to
    the win, then fewer moves; the others by more cards home, then the higher
    score, then the earlier last card home."""
    if a.won != b.won:
        return a.won
    if a.won:
        return (a.ms, a.moves) < (b.ms, b.moves)
    if a.home != b.home:
        return a.home > b.home
    if a.score != b.score:
        return a.score > b.score
    return a.home_ms < b.home_ms


def brute_force(items: dict[str, Any], before: Any = ahead) -> dict[str, int]:
    best: dict[str, int] = {}
    for order in permutations(items):
        fair = all(
            not before(items[order[j]], items[order[i]])
            for i in range(len(order))
            for j in range(i + 1, len(order))
        )
        if fair:
            for i, p in enumerate(order):
                best[p] = min(best.get(p, i + 1), i + 1)
    return best


# Few distinct values, so that ties of every kind come up often.
finishes = st.builds(
    Finish,
    score=st.sampled_from([-52, 0, 600, 640]),
    won=st.booleans(),
    scored_at=st.sampled_from([0, 85_000, 87_000]),
)
runs = st.builds(
    RunFinish,
    won=st.booleans(),
    ms=st.sampled_from([0, 49_000, 60_000, (1 << 27) - 1]),
    moves=st.sampled_from([0, 90, 91]),
    home=st.sampled_from([0, 7, 15, 52, 104]),
    score=st.sampled_from([0, 70, 150, 655, 131_071]),
    home_ms=st.sampled_from([0, 1_000, 49_000, (1 << 27) - 1]),
)


@given(st.lists(finishes, min_size=1, max_size=6))
def test_deal_places_are_the_brute_force_ordering(given_finishes: list[Finish]) -> None:
    items = {f"p{i}": f for i, f in enumerate(given_finishes)}
    assert deal_places(items) == brute_force(items)


@given(st.lists(runs, min_size=1, max_size=6))
def test_run_places_are_the_brute_force_ordering(given_runs: list[RunFinish]) -> None:
    items = {f"p{i}": f for i, f in enumerate(given_runs)}
    assert run_places(items) == brute_force(items, run_ahead)


@given(runs, runs)
def test_a_board_score_orders_runs_as_their_key_does(a: RunFinish, b: RunFinish) -> None:
    """The leaderboard's stores sort by the packed integer: it must say what the
    key says, equal when equal, and stay exact as a double (below 2**53)."""
    sa, sb = board_score(a), board_score(b)
    assert 0 <= sa < 2**53 and float(sa) == sa
    assert (sa < sb) == (run_key(a) < run_key(b))
    assert (sa == sb) == (run_key(a) == run_key(b))


@given(st.lists(st.sampled_from([-100, 0, 30, 245]), min_size=1, max_size=6))
def test_round_places_are_the_brute_force_ordering(totals: list[int]) -> None:
    items = {f"p{i}": t for i, t in enumerate(totals)}
    # A round: by totals alone, which is a deal's rule with nothing else to tell.
    as_deals = {p: Finish(t, False, 0) for p, t in items.items()}
    assert round_places(items) == brute_force(as_deals)


def test_the_issues_bad_cases() -> None:
    # Equal scores of 600, both won: who won at 1:25 is placed above 1:27.
    late, early = Finish(600, True, 87_000), Finish(600, True, 85_000)
    assert deal_places({"late": late, "early": early}) == {"early": 1, "late": 2}
    # A resign at 0 after one move is not placed above a winner, whatever its score.
    assert deal_places({"quit": Finish(0, False, 0), "won": Finish(600, True, 90_000)}) == {
        "won": 1,
        "quit": 2,
    }
    # Equal scores with nothing else to tell them apart share a placing.
    same = {p: Finish(0, False, 0) for p in ("a", "b", "c")}
    places = deal_places(same)
    assert places == {"a": 1, "b": 1, "c": 1}
    assert [placing_text(places, p) for p in same] == ["=1st"] * 3


def test_resigning_or_idling_moves_nobody_in_a_deal() -> None:
    """From the logs, as the server places a deal: Cat and Eve make the same
    scoring moves, Cat by 0:30 and Eve by 0:40. Cat plays on without scoring
    (draws) and is still playing when the deal ends; Eve resigns at once. Cat
    got there first and stays ahead, in every scoring system. Dan never moves,
    Fay draws and resigns: neither scored, so they share a placing."""
    rules = DealRules()
    line = scoring_line(Board.deal(WIN_SEED, rules))

    def played(moves: list[tuple[int, Move]]) -> DealReplay:
        return replay(WIN_SEED, rules, [TimedMove(t, i, m) for i, (t, m) in enumerate(moves)])

    def timed(start: int, moves: list[Move]) -> list[tuple[int, Move]]:
        return [(start + 100 * i, m) for i, m in enumerate(moves)]

    draw, resign = Move(MoveKind.DRAW), Move(MoveKind.RESIGN)
    cat = played(timed(30_000 - 100 * len(line), [*line, draw, draw]))
    eve = played(timed(40_000 - 100 * len(line), [*line, resign]))
    dan, fay = played([]), played([(2_000, draw), (2_100, resign)])
    assert eve.ended_at is not None and cat.ended_at is None  # Eve's deal ended, Cat's never
    replays = {"cat": cat, "eve": eve, "dan": dan, "fay": fay}

    def places(scoring: Scoring) -> dict[str, int]:
        return deal_places(
            {
                p: Finish(
                    r.score(scoring, 90_000), r.board.status is Status.WON, r.scored_at(scoring)
                )
                for p, r in replays.items()
            }
        )

    assert cat.score(Scoring.STANDARD, 90_000) == eve.score(Scoring.STANDARD, 90_000) > 0
    assert places(Scoring.STANDARD) == {"cat": 1, "eve": 2, "dan": 3, "fay": 3}
    # Under Vegas only a card home scores: nobody did, so all four share first.
    assert places(Scoring.VEGAS) == {"cat": 1, "eve": 1, "dan": 1, "fay": 1}


def test_a_run_resigned_at_once_ranks_below_one_that_got_further() -> None:
    """The issue's case: a run that resigned at once with 7 cards home (its
    time a few seconds) against one that got 15 home in 49 s and then ran on:
    the second is ahead. Among runs not won, equal cards home go by score, then
    by the earlier last card home; a won run is ahead of them all, and won runs
    go by time, then moves."""
    quit_early = RunFinish(won=False, ms=3_000, moves=9, home=7, score=85, home_ms=2_500)
    further = RunFinish(won=False, ms=600_000, moves=200, home=15, score=160, home_ms=49_000)
    assert run_places({"quit": quit_early, "further": further}) == {"further": 1, "quit": 2}
    assert board_score(further) < board_score(quit_early)
    same_later = RunFinish(won=False, ms=9_000, moves=20, home=15, score=160, home_ms=52_000)
    less = RunFinish(won=False, ms=1_000, moves=5, home=15, score=150, home_ms=10_000)
    won = RunFinish(won=True, ms=900_000, moves=400, home=52, score=600, home_ms=900_000)
    faster = RunFinish(won=True, ms=800_000, moves=500, home=52, score=500, home_ms=800_000)
    places = run_places(
        {"further": further, "later": same_later, "less": less, "won": won, "faster": faster}
    )
    assert places == {"faster": 1, "won": 2, "further": 3, "later": 4, "less": 5}
    # Equal on everything the rule reads: a shared rank, however the runs ended.
    twin = RunFinish(won=False, ms=1, moves=1, home=15, score=160, home_ms=49_000)
    assert run_places({"further": further, "twin": twin}) == {"further": 1, "twin": 1}
    assert board_score(further) == board_score(twin)


def test_placing_text() -> None:
    places = {"a": 1, "b": 2, "c": 2, "d": 4}
    assert [placing_text(places, p) for p in "abcd"] == ["1st", "=2nd", "=2nd", "4th"]
    assert placing_text(places, "nobody") == ""
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "111th",
    ]  # fmt: skip


def scoring_line(board: Board) -> list[Move]:
    """Moves from ``board`` up to one that scores under Standard: drawing until
    some legal move does, then that move."""
    line: list[Move] = []
    while True:
        for move in board.legal_moves():
            outcome = board.copy().apply(move)
            if any(event_points(e, outcome.pass_started, 1) for e in outcome.events):
                board.apply(move)
                return [*line, move]
        line.append(Move(MoveKind.DRAW))
        board.apply(line[-1])


async def test_a_race_sends_the_engines_placings() -> None:
    clock = FakeClock()
    async with running_server(clock=clock, draw_seed=Seeds(WIN_SEED)) as server:
        names = ("Ann", "Bob", "Cat", "Dan", "Eve", "Fay")
        ann, bob, cat, dan, eve, fay = [await player(server, name) for name in names]
        settings = {
            "variant": "thoughtful",
            "deals_per_round": 1,
            "race_bonus": 0,
            "break_seconds": 0,
        }
        code = (await ann.ok("create_room", settings=settings))["room"]["code"]
        for c in (bob, cat, dan, eve, fay):
            await c.ok("join_room", code=code, role="player")
        await ann.ok("start")
        start = await ann.event("deal_started")
        solution = solve(board_from_view(start["deal"]["board"]))
        assert solution is not None
        moves = [m.to_wire() for m in solution]
        board = board_from_view(start["deal"]["board"])
        prefix = scoring_line(board)
        assert len(board.stock) >= 2  # room to draw on without scoring

        async def play(client: Client, line: list[dict[str, Any]]) -> dict[str, Any]:
            reply: dict[str, Any] = {}
            for move in line:
                clock.advance(100)
                reply = await client.ok("move", deal=1, move=move)
            return reply

        # Cat scores first and plays on (two draws: no points); Eve reaches the
        # same score later and resigns at once, so her deal ends long before
        # Cat's, which never does: Cat got there first, and is placed ahead.
        await play(cat, [m.to_wire() for m in prefix])
        # Bob wins, then Ann wins on the same line, so the same score, later:
        # Bob is placed first though Ann sat down first.
        bob_won = await play(bob, moves)
        ann_won = await play(ann, moves)
        assert (bob_won["outcome"], bob_won["digest"]) == (ann_won["outcome"], ann_won["digest"])
        await play(eve, [*(m.to_wire() for m in prefix), {"kind": "resign"}])
        await play(cat, [{"kind": "draw"}, {"kind": "draw"}])
        # Fay draws once (no points) and resigns; Dan never moves: neither
        # scored, so they share a placing, resigned or not.
        await play(fay, [{"kind": "draw"}, {"kind": "resign"}])
        await ann.ok("next_deal")
        over = (await dan.event("deal_over"))["deal"]
        summary = over["summary"]
        assert summary[ann.player]["score"] == summary[bob.player]["score"] > 0
        assert summary[ann.player]["scored_t"] > summary[bob.player]["scored_t"]
        assert summary[cat.player]["score"] == summary[eve.player]["score"] > 0
        assert summary[cat.player]["finished_t"] is None
        assert summary[eve.player]["status"] == "resigned"
        assert summary[cat.player]["scored_t"] < summary[eve.player]["scored_t"]
        # Each reached their score with their last scoring move, not their last move.
        assert summary[eve.player]["scored_t"] < summary[eve.player]["finished_t"]
        assert summary[bob.player]["scored_t"] == summary[bob.player]["finished_t"]
        for never in (dan, fay):
            assert (summary[never.player]["score"], summary[never.player]["scored_t"]) == (0, 0)
        assert summary[fay.player]["status"] == "resigned"
        assert summary[dan.player]["finished_t"] is None
        places = {p: s["place"] for p, s in summary.items()}
        want = [(bob, 1), (ann, 2), (cat, 3), (eve, 4), (dan, 5), (fay, 5)]
        assert places == {c.player: n for c, n in want}
        assert [placing_text(places, c.player) for c in (bob, ann, cat, eve, dan, fay)] == [
            "1st", "2nd", "3rd", "4th", "=5th", "=5th",
        ]  # fmt: skip

        # The round (one deal) is over: Ann and Bob on equal totals share the win.
        over_round = await dan.event("round_over")
        sheet = over_round["sheet"]
        assert sheet["places"] == {
            bob.player: 1, ann.player: 1, cat.player: 3, eve.player: 3, dan.player: 5,
            fay.player: 5,
        }  # fmt: skip
        assert sorted(over_round["winners"]) == sorted([ann.player, bob.player])
        series = over_round["series"]
        assert series["rounds"][0]["places"] == sheet["places"]
        assert series["wins"] == {c.player: int(c in (ann, bob)) for c, _ in want}
        # A snapshot says the same as the event did.
        snap = (await fay.ok("snapshot"))["room"]
        assert snap["history"][0]["summary"] == summary
        assert snap["sheet"]["places"] == sheet["places"]
