"""``klondike-race verify`` offline: a seed and its commitment, a tampered seed."""

from __future__ import annotations

import pytest

from client.verify import format_layout, verify
from protocol import Variant, commitment, deal_layout
from protocol.cards import RANKS, SUITS, card_str
from server.cli import klondike_race as main


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
