"""What a revealed deal tells of its moves: every logged move's outcome, replayed by
the engine from the seed (protocol.scoring.replay_outcomes), and the wire map of an
outcome (protocol.views.outcome_view), which the live ``moved`` reply carries too.

The replayed outcomes must be the very ones :meth:`Board.apply` returned while the
deal was played, undos and the moves they took back included.
"""

from __future__ import annotations

import random

import pytest

from protocol import Board, DealRules, Event, IllegalMove, MoveKind, Outcome, Variant
from protocol.cards import card_str
from protocol.scoring import replay_outcomes
from protocol.views import EVENT_NAMES, logged_result, outcome_view
from tests.support.engine_moves import DRAW, RECYCLE, RESIGN, T2T, UNDO, W2F, cards
from tests.support.solver import solve


def play(seed: str, rules: DealRules, moves: int, rng: random.Random) -> list[Outcome]:
    """Up to ``moves`` random legal moves, an undo after every other move that may
    be taken back; returns what :meth:`Board.apply` said of each."""
    board = Board.deal(seed, rules)
    live: list[Outcome] = []
    while len(live) < moves and board.status.value == "playing":
        if board.can_undo() and rng.random() < 0.5:
            live.append(board.apply(UNDO))
            continue
        options = board.legal_moves()
        if not options:
            live.append(board.apply(RESIGN))
            break
        live.append(board.apply(rng.choice(options)))
    return live


@pytest.mark.parametrize(
    "rules",
    [
        DealRules(undo=True),
        DealRules(draw=3, pass_limit=3, undo=True),
        DealRules(variant=Variant.DOUBLE, undo=True),
        DealRules(variant=Variant.THOUGHTFUL, undo=True),
    ],
    ids=["classic", "draw-three", "double", "thoughtful"],
)
@pytest.mark.parametrize("seed", ["0", "replay-7", "héllo"])
def test_replayed_outcomes_are_the_live_ones(rules: DealRules, seed: str) -> None:
    live = play(seed, rules, 400, random.Random(seed))
    assert any(o.undone for o in live)
    assert replay_outcomes(seed, rules, [o.move for o in live]) == live


def test_a_won_deal_with_an_undo_and_auto_complete() -> None:
    rules = DealRules(variant=Variant.THOUGHTFUL, undo=True)
    board = Board.deal("race-27", rules)
    line = solve(board)
    assert line is not None and line[-1].kind is MoveKind.AUTO_COMPLETE
    live: list[Outcome] = []
    undone = False
    for move in line:
        live.append(board.apply(move))
        if not undone and board.can_undo():
            live.append(board.apply(UNDO))
            live.append(board.apply(move))
            undone = True
    assert undone and live[-1].status.value == "won"
    got = replay_outcomes("race-27", rules, [o.move for o in live])
    assert got == live
    taken_back = next(i for i, o in enumerate(got) if o.undone)
    assert got[taken_back].cards == got[taken_back - 1].cards


def test_a_log_that_is_not_legal_is_refused() -> None:
    with pytest.raises(IllegalMove) as exc:
        replay_outcomes("0", DealRules(), [UNDO])
    assert exc.value.code == "undo_off"


def test_outcome_view_names_cards_and_events() -> None:
    rules = DealRules(undo=True)
    # Pile 0: 5S face down under 7H; pile 1: 8C. The stock holds AD (drawn first), 2D.
    board = Board(rules, [cards("5S 7H"), cards("8C")], cards("AD 2D"))
    board.down = [1, 0]
    assert outcome_view(board.apply(T2T(0, 1))) == {
        "cards": ["7H"],
        "turned": "5S",
        "events": ["turn_over"],
        "pass_started": 0,
        "status": "playing",
        "undone": False,
    }
    assert outcome_view(board.apply(DRAW))["cards"] == ["AD"]
    assert outcome_view(board.apply(W2F))["events"] == ["waste_foundation"]
    assert outcome_view(board.apply(UNDO)) == {
        "cards": ["AD"],
        "turned": None,
        "events": [],
        "pass_started": 0,
        "status": "playing",
        "undone": True,
    }
    board.apply(DRAW)
    assert outcome_view(board.apply(RECYCLE)) == {
        "cards": [],
        "turned": None,
        "events": ["recycle"],
        "pass_started": 2,
        "status": "playing",
        "undone": False,
    }


def test_equal_results_share_one_map_and_unequal_ones_never_do() -> None:
    """A deal's end lists thousands of results, built once per distinct result
    (protocol/views.py): a shared map must still say exactly what its move did."""
    live = play("shared-maps", DealRules(undo=True), 300, random.Random(5))
    seen: dict[tuple[object, ...], dict[str, object]] = {}
    for outcome in live:
        kept = logged_result(outcome)
        view = outcome_view(outcome)
        assert outcome_view(kept) is view  # the kept form and the live one: one map
        assert view["cards"] == [card_str(c) for c in outcome.cards]
        assert view["status"] == outcome.status.value and view["undone"] == outcome.undone
        other = seen.setdefault(kept, view)
        assert other is view
    maps = {id(v): k for k, v in seen.items()}
    assert len(maps) == len(seen)  # no map stands for two different results


def test_every_scoring_event_has_its_documented_wire_name() -> None:
    assert EVENT_NAMES == {
        Event.WASTE_TO_TABLEAU: "waste_tableau",
        Event.WASTE_TO_FOUNDATION: "waste_foundation",
        Event.TABLEAU_TO_FOUNDATION: "tableau_foundation",
        Event.TURN_OVER: "turn_over",
        Event.FOUNDATION_TO_TABLEAU: "foundation_tableau",
        Event.RECYCLE: "recycle",
    }
