"""Outcomes applied to a view give the engine's view, move after move.

A client keeps its board view by applying each move's OUTCOME
(protocol/outcomes.py, docs/protocol.md "Applying an outcome") and checks it by
the digest. Random games under random house rules (every variant, draw one and
three, pass limits, undos, recycles, auto-complete, resigning) hold, at every
step, the view so kept to be exactly ``player_view`` of the engine's board, and
its digest to be the board's. An outcome names no card the views before and after
the move do not show.
"""

from __future__ import annotations

import zlib
from typing import Any

import pytest
from hypothesis import given

from protocol import Board, DealRules, Move, MoveKind, Status, Variant, player_view
from protocol.outcomes import (
    OutcomeMismatch,
    apply_outcome,
    board_digest,
    canonical_text,
    move_outcome,
    view_digest,
)
from tests.test_engine_properties import SETTINGS, any_rules, choices, pick, seeds

K = MoveKind


def shown(view: dict[str, Any]) -> set[str]:
    """Every card a view shows."""
    cards = {c for p in view["tableau"] for c in p["up"]}
    cards.update(view["waste_cards"], view.get("stock_cards", ()))
    cards.update(c for c in view["foundations"] if c)
    return cards


def named(outcome: dict[str, Any]) -> set[str]:
    cards = set(outcome["cards"])
    if outcome["turned"]:
        cards.add(outcome["turned"])
    cards.update(outcome.get("waste_cards", ()), outcome.get("stock_cards", ()))
    cards.update(c for c in outcome.get("foundations", ()) if c)
    return cards


def follow(board: Board, picks: list[int], kinds: set[MoveKind]) -> None:
    view = {**player_view(board), "logged": 0}
    assert view_digest(view) == board_digest(board)
    for c in picks:
        if board.status is not Status.PLAYING:
            break
        move = pick(board, c)
        outcome = board.apply(move)
        wire = move_outcome(outcome, board)
        before = view
        view = apply_outcome(view, wire)
        truth = player_view(board)
        assert view == {**truth, "logged": board.logged}, (move, wire)
        assert view_digest(view) == board_digest(board) == view_digest(truth)
        assert named(wire) <= shown(before) | shown(view), wire
        kinds.add(move.kind)
        if outcome.undid is not None:
            kinds.add(outcome.undid.kind)


@SETTINGS
@given(seed=seeds, rules=any_rules, picks=choices)
def test_outcomes_applied_give_the_engine_view(
    seed: str, rules: DealRules, picks: list[int]
) -> None:
    follow(Board.deal(seed, rules), picks, set())


def test_every_kind_of_move_is_followed() -> None:
    """The random games above reach every kind of move, an undo of each kind it
    may take back, auto-complete and resigning, in every variant and draw."""
    kinds: set[MoveKind] = set()
    undone: set[tuple[Variant, int]] = set()
    for variant in Variant:
        for draw in (1, 3):
            rules = DealRules(
                variant=variant, draw=draw, pass_limit=0, undo=True, foundation_to_tableau=True
            )
            for i in range(60):
                board = Board.deal(f"seed-{variant.value}-{draw}-{i}", rules)
                seen: set[MoveKind] = set()
                follow(board, [(i * 7919 + j * 104729) % 1_000_000 for j in range(400)], seen)
                kinds |= seen
                if K.UNDO in seen:
                    undone.add((variant, draw))
    assert kinds == set(MoveKind)
    assert len(undone) == len(Variant) * 2


def test_the_digest_is_crc32_of_the_documented_text() -> None:
    """The canonical text of a fresh Classic deal, field by field as
    docs/protocol.md defines it, and its digest as 8 lower-case hex digits."""
    rules = DealRules(variant=Variant.CLASSIC, draw=3, pass_limit=2)
    board = Board.deal("docs", rules)
    view = player_view(board)
    text = canonical_text(view)
    fields = text.split("|")
    assert fields[:9] == ["classic", "3", "2", "1", "0", "0", "playing", "0", "0"]
    assert fields[9] == "-,-,-,-"
    piles = fields[10].split("/")
    assert [p.split(":")[0] for p in piles] == [str(i) for i in range(7)]
    assert [p.split(":")[1] for p in piles] == [p["up"][0] for p in view["tableau"]]
    assert fields[11:] == ["24", "0", "", ""]
    assert view_digest(view) == f"{zlib.crc32(text.encode()):08x}"
    assert len(view_digest(view)) == 8


def test_a_mismatched_outcome_is_refused() -> None:
    """An outcome that takes more face-up cards than a pile shows, names a pile
    the view has not, or turns up a card on a pile with cards still face up, is
    refused rather than applied to a view it does not fit."""
    board = Board.deal("mismatch", DealRules(variant=Variant.CLASSIC, draw=1))
    view = {**player_view(board), "logged": 0}
    wire = move_outcome(board.apply(Move(K.DRAW)), board)
    apply_outcome(view, wire)  # this one fits
    two = {"kind": "tableau_tableau", "from": 1, "to": 2, "count": 2}
    too_many = {**wire, "move": two, "cards": ["KS", "QH"]}
    nowhere = {**wire, "move": {"kind": "waste_tableau", "to": 7}, "cards": ["KS"]}
    one = {"kind": "tableau_tableau", "from": 1, "to": 2, "count": 1}
    early_turn = {**wire, "move": one, "cards": ["KS"], "turned": "QH"}
    for bad in (too_many, nowhere):
        with pytest.raises(OutcomeMismatch):
            apply_outcome(view, bad)
    # pile 1 shows one card, face down under it one: taking it leaves the pile
    # face down, so a turn fits there; but not after a draw took nothing from it
    apply_outcome(view, early_turn)
    with pytest.raises(OutcomeMismatch):
        apply_outcome(view, {**wire, "turned": "QH", "move": {**one, "count": 0}, "cards": []})
