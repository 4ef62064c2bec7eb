"""The bots' shared strategy (protocol/strategy.py), played through the engine.

Bots seeded apart must not play a deal alike, or scheduling alone would decide
which bot wins; bots with one seed must play it alike (a bot's choices come
from its random source and its view, nothing else). Pinned here, with fixed
seeds, because the live bots' seeds come from a random room code.
"""

from __future__ import annotations

import random

from protocol.board import Board
from protocol.moves import Move, Status
from protocol.settings import DealRules
from protocol.strategy import Bot
from protocol.views import player_view

RULES = DealRules(draw=3, pass_limit=1)


def play(seed: str, chance: str) -> list[Move]:
    bot = Bot(chance=random.Random(chance))
    board = Board.deal(seed, RULES)
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
