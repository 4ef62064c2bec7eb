"""Proven deals: the translation to and from the solver, and the engine's proof.

The solver (pyksolve, ShootMe's Klondike-Solver) is run for real on layouts the
engine deals; its lines are turned into engine moves and replayed to a win under
the deal's rules, and written back in its notation to the very same text.
"""

from __future__ import annotations

import pytest

from protocol.board import Board
from protocol.cards import Suit, card
from protocol.deal import deal_layout
from protocol.moves import Move, MoveKind, Status
from protocol.proof import (
    ProofError,
    check_proof,
    difficulty,
    layout_pysol,
    moves_from_solver,
    moves_to_solver,
    parse_pysol,
    proof_from_wire,
)
from protocol.scoring import replay_outcomes
from protocol.settings import DealRules, Variant
from protocol.views import outcome_view
from server.rooms.proofs import Verdict, judge, prove_seed, solve_pysol

BUDGET = 60_000
SEEDS = [f"proof-{i}" for i in range(8)]


@pytest.mark.parametrize("draw", [1, 3])
def test_solutions_replay_to_a_win(draw: int) -> None:
    rules = DealRules(draw=draw)
    proven = 0
    for seed in SEEDS:
        verdict, line, proof = prove_seed(seed, rules, BUDGET)
        if verdict is not Verdict.PROVEN:
            assert proof is None
            continue
        proven += 1
        assert proof is not None
        board = Board.deal(seed, rules)
        for move in proof.moves:
            board.apply(move)
        assert board.status is Status.WON
        # Both ways: engine moves written in the solver's notation are its line.
        assert moves_to_solver(Board.deal(seed, rules), proof.moves) == line
        assert moves_from_solver(line) == list(proof.moves)
        assert proof.passes == 1 + sum(m.kind is MoveKind.RECYCLE for m in proof.moves)
        assert proof.difficulty == difficulty(len(proof.moves), proof.passes)
        # The wire form checks again (what `klondike-race verify` reads).
        wire = proof.to_wire()
        assert proof_from_wire(seed, rules, wire) == proof
        # Each move carries the engine's result, as a logged move does (a client
        # follows them to the won board without the rules), ending won.
        outcomes = replay_outcomes(seed, rules, proof.moves)
        assert wire["results"] == [outcome_view(o) for o in outcomes]
        assert len(wire["results"]) == len(wire["moves"]) == wire["length"]
        assert wire["results"][-1]["status"] == "won"
        assert {r["status"] for r in wire["results"][:-1]} == {"playing"}
        assert not any(r["undone"] for r in wire["results"])
        # A solution read back needs no results (they are computed again).
        assert proof_from_wire(seed, rules, {"moves": wire["moves"]}) == proof
        # Thoughtful deals the same cards face up: the classic line wins there too.
        thoughtful = DealRules(variant=Variant.THOUGHTFUL, draw=draw)
        assert check_proof(seed, thoughtful, proof.moves).moves == proof.moves
    assert proven >= len(SEEDS) // 2  # ShootMe: 91.9% / 83.6%; a small budget here


def test_layout_round_trip() -> None:
    for seed in SEEDS:
        piles, stock = deal_layout(seed, Variant.CLASSIC)
        text = layout_pysol(piles, stock)
        assert parse_pysol(text) == (piles, stock)
        lines = text.splitlines()
        assert lines[0].split()[1:] and len(lines) == 8
        assert lines[7].count("<") == 6  # pile 7: six face down, one face up


def _dead_layout() -> tuple[list[list[int]], list[int]]:
    """Every face-up card black and low, every card that would fit one (the red
    aces to fours) and every ace face down: nothing but drawing is ever legal."""
    b, r = (Suit.CLUBS, Suit.SPADES), (Suit.DIAMONDS, Suit.HEARTS)
    tops = [card(2, b[0]), card(2, b[1]), card(3, b[0]), card(3, b[1])]
    tops += [card(4, b[0]), card(4, b[1]), card(5, b[0])]
    hidden = [card(1, s) for s in Suit] + [card(k, s) for k in (2, 3, 4) for s in r]
    rest = [c for c in range(52) if c not in tops and c not in hidden]
    hidden += rest[:11]
    stock = rest[11:]
    piles: list[list[int]] = []
    for p in range(7):
        piles.append([hidden.pop() for _ in range(p)] + [tops[p]])
    return piles, stock


@pytest.mark.parametrize("draw", [1, 3])
def test_an_impossible_layout_is_reported_and_never_accepted(draw: int) -> None:
    piles, stock = _dead_layout()
    outcome, line = solve_pysol(layout_pysol(piles, stock), draw, BUDGET)
    assert (outcome, line) == ("impossible", "")
    # The engine agrees: from this layout no line wins, whatever the solver says.
    board = Board(DealRules(draw=draw), [p[:] for p in piles], stock[:])
    assert [m.kind for m in board.legal_moves()] == [MoveKind.DRAW]
    assert judge("any", DealRules(draw=draw), outcome, line)[0] is Verdict.IMPOSSIBLE


def test_a_false_line_is_no_proof() -> None:
    rules = DealRules(draw=1)
    verdict, line, proof = prove_seed(SEEDS[0], rules, BUDGET)
    assert verdict is Verdict.PROVEN and proof is not None
    with pytest.raises(ProofError, match="not a win"):
        check_proof(SEEDS[0], rules, proof.moves[:-1])  # one card short
    with pytest.raises(ProofError, match="refused"):
        check_proof(SEEDS[1], rules, proof.moves)  # another deal's line
    with pytest.raises(ProofError, match="never takes"):
        check_proof(SEEDS[0], rules, [Move(MoveKind.RESIGN)])
    # A line the solver won with is judged again under the deal's rules.
    assert judge(SEEDS[1], rules, "won", line)[0] is Verdict.REFUSED
    with pytest.raises(ProofError):
        check_proof(SEEDS[0], DealRules(variant=Variant.DOUBLE), proof.moves)


def test_a_pass_limit_the_line_exceeds_refuses_it() -> None:
    for seed in SEEDS:
        _, line, proof = prove_seed(seed, DealRules(draw=3), BUDGET)
        if proof is not None and proof.passes > 1:
            limited = DealRules(draw=3, pass_limit=proof.passes - 1)
            assert judge(seed, limited, "won", line)[0] is Verdict.REFUSED
            return
    pytest.fail("no draw-three line used a second pass")


def test_solver_notation_parses() -> None:
    moves = moves_from_solver("DR2 W5 72-3 F7 7S WC S3 NEW DR1 W1")
    assert moves == [
        Move(MoveKind.DRAW),
        Move(MoveKind.DRAW),
        Move(MoveKind.WASTE_TO_TABLEAU, dst=4),
        Move(MoveKind.TABLEAU_TO_TABLEAU, src=6, dst=1, count=3),
        Move(MoveKind.TABLEAU_TO_FOUNDATION, src=6),
        Move(MoveKind.WASTE_TO_FOUNDATION),
        Move(MoveKind.FOUNDATION_TO_TABLEAU, src=Suit.SPADES, dst=2),
        Move(MoveKind.RECYCLE),
        Move(MoveKind.DRAW),
        Move(MoveKind.WASTE_TO_TABLEAU, dst=0),
    ]
    for bad in ("DRx", "W9", "XY", "72-a", "ABC"):
        with pytest.raises(ProofError):
            moves_from_solver(bad)


def test_a_dealt_layout_proven_impossible_is_skipped() -> None:
    # Found by a seed search: the solver exhausts this draw-three deal.
    verdict, line, proof = prove_seed("impossible-48", DealRules(draw=3), BUDGET)
    assert (verdict, line, proof) == (Verdict.IMPOSSIBLE, "", None)
