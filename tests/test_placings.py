"""Placings (docs/rules.md §7.1): the engine's one function against a brute-force
ordering, and the placings a real race sends.

The property tests spell the rules out as a plain "is placed ahead of" test
between two players and try every order of the players: a player's placing is
the best position any order that never puts a player behind someone they are
ahead of gives them. The race, over real sockets, plays the issue's bad cases:
two winners on equal scores, the later one first in the room (placed by who
finished first), a player resigning at 0 after one move, and two still playing
at 0 when the host moves on (who share a placing, shown "=4th"); the round then
ends on equal totals, a shared win.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from protocol.placings import Finish, deal_places, ordinal, placing_text, round_places
from tests.support.inprocess import FakeClock, Seeds, running_server
from tests.support.raw_client import Client, player
from tests.support.solver import board_from_view, solve
from tests.test_race import WIN_SEED


def ahead(a: Finish, b: Finish) -> bool:
    """The rule as written: a higher score; equal scores, a win before no win; then
    an earlier finish, still playing counting as last."""
    if a.score != b.score:
        return a.score > b.score
    if a.won != b.won:
        return a.won
    if (a.ended_at is None) != (b.ended_at is None):
        return a.ended_at is not None
    return a.ended_at is not None and b.ended_at is not None and a.ended_at < b.ended_at


def brute_force(items: dict[str, Finish]) -> dict[str, int]:
    best: dict[str, int] = {}
    for order in permutations(items):
        fair = all(
            not ahead(items[order[j]], items[order[i]])
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
    ended_at=st.sampled_from([None, 85_000, 87_000]),
)


@given(st.lists(finishes, min_size=1, max_size=6))
def test_deal_places_are_the_brute_force_ordering(given_finishes: list[Finish]) -> None:
    items = {f"p{i}": f for i, f in enumerate(given_finishes)}
    assert deal_places(items) == brute_force(items)


@given(st.lists(st.sampled_from([-100, 0, 30, 245]), min_size=1, max_size=6))
def test_round_places_are_the_brute_force_ordering(totals: list[int]) -> None:
    items = {f"p{i}": t for i, t in enumerate(totals)}
    # A round: by totals alone, which is a deal's rule with nothing else to tell.
    as_deals = {p: Finish(t, False, None) for p, t in items.items()}
    assert round_places(items) == brute_force(as_deals)


def test_the_issues_bad_cases() -> None:
    # Equal scores of 600, both won: who finished at 1:25 is placed above 1:27.
    late, early = Finish(600, True, 87_000), Finish(600, True, 85_000)
    assert deal_places({"late": late, "early": early}) == {"early": 1, "late": 2}
    # A resign at 0 after one move is not placed above a winner, whatever its score.
    assert deal_places({"quit": Finish(0, False, 2_000), "won": Finish(600, True, 90_000)}) == {
        "won": 1,
        "quit": 2,
    }
    # Equal scores with nothing else to tell them apart share a placing.
    same = {p: Finish(0, False, None) for p in ("a", "b", "c")}
    places = deal_places(same)
    assert places == {"a": 1, "b": 1, "c": 1}
    assert [placing_text(places, p) for p in same] == ["=1st"] * 3


def test_placing_text() -> None:
    places = {"a": 1, "b": 2, "c": 2, "d": 4}
    assert [placing_text(places, p) for p in "abcd"] == ["1st", "=2nd", "=2nd", "4th"]
    assert placing_text(places, "nobody") == ""
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "111th",
    ]  # fmt: skip


async def test_a_race_sends_the_engines_placings() -> None:
    clock = FakeClock()
    async with running_server(clock=clock, draw_seed=Seeds(WIN_SEED)) as server:
        ann, bob, cat, dan, eve = [
            await player(server, name) for name in ("Ann", "Bob", "Cat", "Dan", "Eve")
        ]
        settings = {
            "variant": "thoughtful",
            "deals_per_round": 1,
            "race_bonus": 0,
            "break_seconds": 0,
        }
        code = (await ann.ok("create_room", settings=settings))["room"]["code"]
        for c in (bob, cat, dan, eve):
            await c.ok("join_room", code=code, role="player")
        await ann.ok("start")
        start = await ann.event("deal_started")
        solution = solve(board_from_view(start["deal"]["board"]))
        assert solution is not None
        moves = [m.to_wire() for m in solution]

        async def play(client: Client, line: list[dict[str, Any]]) -> dict[str, Any]:
            reply: dict[str, Any] = {}
            for move in line:
                clock.advance(100)
                reply = await client.ok("move", deal=1, move=move)
            return reply

        # Eve draws once (0 points) and resigns; Bob wins, then Ann wins on the
        # same line, so the same score, later: Bob is placed first though Ann
        # sat down first. Cat and Dan are still playing at 0 when Ann moves on.
        await play(eve, [{"kind": "draw"}, {"kind": "resign"}])
        bob_won = await play(bob, moves)
        ann_won = await play(ann, moves)
        assert (bob_won["outcome"], bob_won["digest"]) == (ann_won["outcome"], ann_won["digest"])
        await ann.ok("next_deal")
        over = (await cat.event("deal_over"))["deal"]
        summary = over["summary"]
        assert summary[ann.player]["score"] == summary[bob.player]["score"] > 0
        assert summary[ann.player]["finished_t"] > summary[bob.player]["finished_t"]
        assert summary[eve.player]["score"] == 0 and summary[eve.player]["status"] == "resigned"
        assert (
            summary[cat.player]["finished_t"] is None and summary[dan.player]["finished_t"] is None
        )
        places = {p: s["place"] for p, s in summary.items()}
        assert places == {bob.player: 1, ann.player: 2, eve.player: 3, cat.player: 4, dan.player: 4}
        assert [placing_text(places, c.player) for c in (bob, ann, eve, cat, dan)] == [
            "1st", "2nd", "3rd", "=4th", "=4th",
        ]  # fmt: skip

        # The round (one deal) is over: Ann and Bob on equal totals share the win.
        over_round = await cat.event("round_over")
        sheet = over_round["sheet"]
        assert sheet["places"] == {
            bob.player: 1, ann.player: 1, eve.player: 3, cat.player: 3, dan.player: 3,
        }  # fmt: skip
        assert sorted(over_round["winners"]) == sorted([ann.player, bob.player])
        series = over_round["series"]
        assert series["rounds"][0]["places"] == sheet["places"]
        assert series["wins"] == {
            ann.player: 1, bob.player: 1, cat.player: 0, dan.player: 0, eve.player: 0,
        }  # fmt: skip
        # A snapshot says the same as the event did.
        snap = (await dan.ok("snapshot"))["room"]
        assert snap["history"][0]["summary"] == summary
        assert snap["sheet"]["places"] == sheet["places"]
