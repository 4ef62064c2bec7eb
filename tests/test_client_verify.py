"""``klondike-race verify`` offline: a seed and its commitment, a tampered seed, and
a winnable deal's revealed solution replayed by the engine (or refused)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client.verify import format_layout, verify
from protocol import Variant, commitment, deal_layout
from protocol.cards import RANKS, SUITS, card_str
from protocol.proof import Proof
from protocol.settings import DealRules
from server.cli import klondike_race as main
from server.rooms.proofs import Verdict, prove_seed


def test_verify_accepts_a_matching_seed_and_prints_its_layout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    seed = "7a1f0c55e2d94b3f8c0e6a2b9d4f1e07"
    assert main(["verify", "--seed", seed, "--commitment", commitment(seed).upper()]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK")
    piles, stock = deal_layout(seed, Variant.CLASSIC)
    assert f"pile 7: [{card_str(piles[6][0])}]" in out
    assert " ".join(card_str(c) for c in stock[:12]) in out


def test_verify_rejects_a_tampered_seed(capsys: pytest.CaptureFixture[str]) -> None:
    seed = "7a1f0c55e2d94b3f8c0e6a2b9d4f1e07"
    assert main(["verify", "--seed", seed + "x", "--commitment", commitment(seed)]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_layout_shows_every_card_once() -> None:
    for variant in Variant:
        text = format_layout("golden", variant)
        words = [w.strip("[]") for line in text.splitlines()[3:] for w in line.split()]
        cards = [w for w in words if len(w) == 2 and w[0] in RANKS and w[1] in SUITS]
        assert len(cards) == variant.cards
    assert "[" not in format_layout("golden", Variant.THOUGHTFUL).split("\n", 3)[3]
    assert verify("s", commitment("s"), Variant.DOUBLE)[0]


# ---------------------------------------------------------------------- --solution


@pytest.fixture(scope="module")
def proven() -> tuple[str, Proof]:
    """A seed the solver wins at draw three and the engine's proof of it."""
    for i in range(20):
        seed = f"verify-{i}"
        verdict, _, proof = prove_seed(seed, DealRules(draw=3), max_states=60_000)
        if verdict is Verdict.PROVEN and proof is not None:
            return seed, proof
    raise AssertionError("no proven seed among 20 layouts")


def _args(seed: str, *more: str) -> list[str]:
    return ["verify", "--seed", seed, "--commitment", commitment(seed), *more]


def test_verify_replays_a_revealed_solution_to_a_win(
    proven: tuple[str, Proof], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed, proof = proven
    wire = proof.to_wire()
    # the proof map inline, as JSON
    assert main(_args(seed, "--draw", "3", "--solution", json.dumps(wire))) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK") and "WIN:" in out and f"{len(proof.moves)} moves" in out
    assert proof.difficulty in out
    # the whole revealed deal, from a file
    deal = tmp_path / "deal.json"
    deal.write_text(json.dumps({"seed": seed, "commitment": commitment(seed), "proof": wire}))
    assert main(_args(seed, "--draw", "3", "--solution", str(deal))) == 0
    assert "WIN:" in capsys.readouterr().out
    # a bare list of moves
    assert main(_args(seed, "--draw", "3", "--solution", json.dumps(wire["moves"]))) == 0


def test_verify_says_plainly_when_a_solution_does_not_win(
    proven: tuple[str, Proof], capsys: pytest.CaptureFixture[str]
) -> None:
    seed, proof = proven
    wire = proof.to_wire()
    # the same line under the wrong draw count does not win this deal
    assert main(_args(seed, "--draw", "1", "--solution", json.dumps(wire))) == 1
    out = capsys.readouterr().out
    assert "NOT A WIN" in out and "draw 1" in out
    # a line cut short
    short = dict(wire, moves=wire["moves"][:-1], length=len(wire["moves"]) - 1)
    assert main(_args(seed, "--draw", "3", "--solution", json.dumps(short))) == 1
    assert "NOT A WIN" in capsys.readouterr().out
    # the line of another deal
    assert main(_args("another-seed", "--draw", "3", "--solution", json.dumps(wire))) == 1
    assert "NOT A WIN" in capsys.readouterr().out
    # a claimed length the line does not hold
    assert main(_args(seed, "--draw", "3", "--solution", json.dumps(dict(wire, length=3)))) == 1
    assert "MISMATCH" in capsys.readouterr().out
    # a revealed deal of another seed, a tampered seed
    other = json.dumps({"seed": "x", "proof": wire})
    assert main(_args(seed, "--draw", "3", "--solution", other)) == 1
    assert "MISMATCH" in capsys.readouterr().out
    bad = ["verify", "--seed", seed + "x", "--commitment", commitment(seed)]
    assert main([*bad, "--draw", "3", "--solution", json.dumps(wire)]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_verify_refuses_an_unreadable_solution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_args("s", "--solution", str(tmp_path / "missing.json"))) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(_args("s", "--solution", "[1, 2")) == 2
    assert "not JSON" in capsys.readouterr().err
    assert main(_args("s", "--solution", '{"moves": 3}')) == 1
    assert "a solution is a list of moves" in capsys.readouterr().out
    assert main(_args("s", "--solution", '[{"kind": "fly"}]')) == 1
    assert "NOT A WIN" in capsys.readouterr().out
