"""A bounded search for a winning line, for deals where every card is on show.

In Thoughtful every card is dealt face up, so the view *is* the whole position and
planning ahead is not peeking: it is what a human does with a puzzle. The search is
a depth-first walk over the engine's own moves, pruned to the moves the heuristic
bot would consider at all (see :mod:`protocol.strategy`), best first, never visiting a
position twice, and it gives up after ``budget`` positions so a bot always
answers in well under a second. Without a line found, the bot plays by heuristic.
"""

from __future__ import annotations

from collections.abc import Callable

from protocol.board import Board
from protocol.moves import IllegalMove, Move, Status

__all__ = ["solve"]

Scorer = Callable[[Board, Move], float | None]


def _key(board: Board) -> int:
    limited = board.rules.pass_limit != 0
    return hash(
        (
            tuple(tuple(p) for p in board.tableau),
            tuple(board.stock),
            tuple(board.waste),
            tuple(board.foundations),
            board.passes if limited else 0,
        )
    )


def solve(board: Board, score: Scorer, budget: int = 6000) -> list[Move] | None:
    """Moves from ``board`` to a won deal, or None when none was found in budget."""
    seen = {_key(board)}
    # Each frame: a position and its remaining candidate moves, worst first.
    stack: list[tuple[Board, list[Move]]] = [(board, _candidates(board, score))]
    line: list[Move] = []
    while stack and budget > 0:
        position, moves = stack[-1]
        if not moves:
            stack.pop()
            if line:
                line.pop()
            continue
        move = moves.pop()
        child = position.copy()
        try:
            outcome = child.apply(move)
        except IllegalMove:  # pragma: no cover - candidates come from legal_moves
            continue
        budget -= 1
        if outcome.status is Status.WON:
            return [*line, move]
        if outcome.status is not Status.PLAYING:
            continue
        key = _key(child)
        if key in seen:
            continue
        seen.add(key)
        line.append(move)
        stack.append((child, _candidates(child, score)))
    return None


def _candidates(board: Board, score: Scorer) -> list[Move]:
    scored = [
        (s, i, m) for i, m in enumerate(board.legal_moves()) if (s := score(board, m)) is not None
    ]
    scored.sort(key=lambda t: (t[0], -t[1]))
    return [m for _, _, m in scored]
