"""The bot, offline: it sees what the engine sees, plays legal moves only, ends deals."""

from __future__ import annotations

import random

import pytest

from client.bot import RESIGN, Bot, board_from_view
from protocol import Board, DealRules, MoveKind, Status, Variant, player_view, revealed_view
from protocol.solver import solve

RULES = [
    DealRules(),
    DealRules(draw=3),
    DealRules(draw=3, pass_limit=3),
    DealRules(variant=Variant.THOUGHTFUL),
    DealRules(variant=Variant.DOUBLE),
]


def _key(moves: list[object]) -> list[str]:
    return sorted(repr(m) for m in moves)


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r.variant.value}-d{r.draw}")
def test_view_board_lists_the_engines_legal_moves(rules: DealRules) -> None:
    """Rebuilt from the view alone, the board offers exactly the real board's moves:
    the bot never needs a card it cannot see, and never proposes an illegal move."""
    rng = random.Random(7)
    for d in range(8):
        board = Board.deal(f"view-{d}", rules)
        for _ in range(120):
            if board.status is not Status.PLAYING:
                break
            shadow = board_from_view(player_view(board), rules)
            assert _key(shadow.legal_moves()) == _key(board.legal_moves())
            assert shadow.can_auto_complete() == board.can_auto_complete()
            board.apply(rng.choice(board.legal_moves()))


def test_revealed_views_rebuild_too() -> None:
    board = Board.deal("revealed", DealRules())
    again = board_from_view(revealed_view(board), DealRules())
    assert again.fingerprint() == board.fingerprint()


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r.variant.value}-d{r.draw}")
def test_bot_finishes_every_deal_with_legal_moves(rules: DealRules) -> None:
    """Every decision is accepted by the engine, and every deal ends (won, resigned
    or dead) well inside the move guard: no loops."""
    statuses = []
    for d in range(25):
        board = Board.deal(f"finish-{d}", rules)
        bot = Bot()
        while board.status is Status.PLAYING:
            move = bot.decide(player_view(board))
            assert move is RESIGN or move in board.legal_moves()
            board.apply(move)  # raises IllegalMove if the bot was wrong
            assert board.moves < 1500
        statuses.append(board.status)
    if rules.draw == 1 and rules.variant is not Variant.DOUBLE:
        assert Status.WON in statuses  # a third of draw-one deals; 25 without one is a bug


def test_bot_does_not_peek() -> None:
    """Two deals that look the same to the player get the same first decisions,
    whatever lies face down: the bot is a function of the view."""
    board = Board.deal("peek", DealRules())
    other = Board.deal("peek", DealRules())
    other.stock = other.stock[::-1]  # a different hidden stock, the same view
    for p, pile in enumerate(other.tableau):
        other.tableau[p] = pile[-2::-1] + pile[-1:]
    assert player_view(board) == player_view(other)
    assert Bot().decide(player_view(board)) == Bot().decide(player_view(other))


def test_bot_resigns_after_a_pass_without_progress() -> None:
    """A deal with free passes that the bot cannot crack ends by resignation."""
    rules = DealRules(draw=3)
    for d in range(40):
        board = Board.deal(f"stuck-{d}", rules)
        bot = Bot()
        kinds = []
        while board.status is Status.PLAYING:
            move = bot.decide(player_view(board))
            kinds.append(move.kind)
            board.apply(move)
        if board.status is Status.RESIGNED:
            assert kinds[-1] is MoveKind.RESIGN
            assert kinds.count(MoveKind.RECYCLE) >= 1
            return
    pytest.fail("no stuck deal in 40 draw-three deals")


def test_thoughtful_bots_plan_a_win_and_follow_it() -> None:
    """With every card on show the bot searches for a winning line, and the line it
    plays is the one the engine accepts to the end."""
    rules = DealRules(variant=Variant.THOUGHTFUL)
    wins = 0
    for d in range(6):
        board = Board.deal(f"plan-{d}", rules)
        line = solve(board_from_view(player_view(board), rules), Bot()._score, 6000)
        bot = Bot()
        while board.status is Status.PLAYING:
            board.apply(bot.decide(player_view(board)))
        if line is not None:
            assert board.status is Status.WON and board.moves == len(line)
            wins += 1
    assert wins >= 2


def test_a_plan_is_dropped_when_the_board_is_not_where_it_expects() -> None:
    rules = DealRules(variant=Variant.THOUGHTFUL)
    for d in range(10):
        board = Board.deal(f"plan-{d}", rules)
        bot = Bot()
        first = bot.decide(player_view(board))
        if not bot._plan:
            continue
        board.apply(first)
        board.apply(bot.decide(player_view(board)))  # on plan
        assert bot._plan
        view = player_view(board) | {"moves": board.moves + 5}  # as if moves went unseen
        bot.decide(view)
        assert not bot._plan
        return
    pytest.fail("no deal with a plan")
