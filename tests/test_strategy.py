"""The bots' shared strategy (protocol/strategy.py), played through the engine.

Bots seeded apart must not play a deal alike, or scheduling alone would decide
which bot wins; bots with one seed must play it alike (a bot's choices come
from its random source and its view, nothing else). Pinned here, with fixed
seeds, because the live bots' seeds come from a random room code.
"""

from __future__ import annotations

import random
from typing import Any

from protocol.board import Board
from protocol.moves import Move, Status
from protocol.settings import DealRules
from protocol.strategy import Bot, Style
from protocol.views import player_view

RULES = DealRules(draw=3, pass_limit=1)


def play(
    seed: str, chance: str, style: Style = Style.METHODICAL, rules: DealRules = RULES
) -> list[Move]:
    bot = Bot(chance=random.Random(chance), style=style)
    board = Board.deal(seed, rules)
    line: list[Move] = []
    while board.status is Status.PLAYING:
        move = bot.decide({**player_view(board), "logged": len(line)})
        board.apply(move)
        line.append(move)
    return line


def test_bots_seeded_apart_play_a_deal_differently() -> None:
    """On a deal with choices to make (a deal can leave none: then every bot,
    and every person, plays it alike) three bots make three different lines."""
    for deal in ("bots-8", "bots-9", "bots-10", "bots-11"):
        lines = [play(deal, f"ROOM42/p{i}") for i in range(3)]
        assert len({tuple(line) for line in lines}) == 3, deal


def test_a_bot_with_one_seed_plays_a_deal_alike() -> None:
    assert play("bots-10", "ROOM42/p1") == play("bots-10", "ROOM42/p1")


def test_styles_play_a_deal_in_lines_of_their_own() -> None:
    """With one random source, the styles alone make three lines, not all of one
    length (with unlimited passes, the cautious bot looks once more and the
    greedy one gives up sooner)."""
    rules = DealRules(draw=3)
    for deal in (f"apart-{i}" for i in range(10)):
        lines = [play(deal, "ROOM42/p1", style, rules) for style in Style]
        assert len({tuple(line) for line in lines}) == 3, deal
        assert len({len(line) for line in lines}) > 1, deal


def view_of(piles: list[tuple[int, list[str]]], waste: str, foundations: list[str]) -> Any:
    """A board view with these piles (face-down count, face-up cards), waste top
    and foundations; three cards in the stock."""
    return {
        "variant": "classic", "draw": 1, "pass_limit": 0, "status": "playing",
        "tableau": [{"down": d, "up": up} for d, up in piles],
        "stock": 3, "waste": 1, "waste_cards": [waste], "foundations": foundations,
        "home": sum(13 - "KQJT98765432A".index(f[0]) for f in foundations),
        "passes": 0, "moves": 40,
    }  # fmt: skip


def test_a_cautious_bot_keeps_an_unsafe_card_on_the_table() -> None:
    """A five of hearts that could go home while the black fours are still out
    (one might want it): methodical and greedy send it, cautious draws first."""
    kings = [(0, [k]) for k in ("KC", "KS", "KH", "KD", "7D", "7H")]
    view = view_of([(0, ["5H"]), *kings], "JD", ["3C", "2D", "4H", "3S"])
    home = Move.from_wire({"kind": "tableau_foundation", "from": 0})
    assert Bot(style=Style.METHODICAL).decide(view) == home
    assert Bot(style=Style.GREEDY).decide(view) == home
    assert Bot(style=Style.CAUTIOUS).decide(view) == Move.from_wire({"kind": "draw"})


def test_a_greedy_bot_plays_the_waste_before_turning_a_card_over() -> None:
    """The eight of hearts over two face-down cards and the waste's eight of
    diamonds both fit the nine of clubs: greedy plays the waste's."""
    rest = [(0, [c]) for c in ("KS", "KH", "KD", "4D", "4S")]
    view = view_of([(2, ["8H"]), (0, ["9C"]), *rest], "8D", ["AC", "AD", "AH", "AS"])
    turn = Move.from_wire({"kind": "tableau_tableau", "from": 0, "to": 1, "count": 1})
    assert Bot(style=Style.METHODICAL).decide(view) == turn
    assert Bot(style=Style.CAUTIOUS).decide(view) == turn
    waste = Move.from_wire({"kind": "waste_tableau", "to": 1})
    assert Bot(style=Style.GREEDY).decide(view) == waste
