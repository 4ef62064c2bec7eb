"""A small depth-first solver for Thoughtful deals, for tests that must win.

Thoughtful deals show every card, so a client can rebuild the whole board from its
view and search it with the engine itself. Foundation moves are tried first and
positions already seen are skipped; that solves most deals within a few thousand
positions. Only tests use it: the server never plays.
"""

from __future__ import annotations

from typing import Any

from protocol.board import Board
from protocol.cards import card_from_str
from protocol.moves import Move, MoveKind
from protocol.settings import DealRules, Variant

_ORDER = {
    MoveKind.AUTO_COMPLETE: 0,
    MoveKind.TABLEAU_TO_FOUNDATION: 1,
    MoveKind.WASTE_TO_FOUNDATION: 1,
    MoveKind.TABLEAU_TO_TABLEAU: 2,
    MoveKind.WASTE_TO_TABLEAU: 3,
    MoveKind.DRAW: 4,
    MoveKind.RECYCLE: 5,
    MoveKind.FOUNDATION_TO_TABLEAU: 9,
}


def board_from_view(view: dict[str, Any]) -> Board:
    """A fresh Thoughtful board from its first view (nothing moved yet)."""
    rules = DealRules(
        variant=Variant(view["variant"]),
        draw=view["draw"],
        pass_limit=view["pass_limit"],
    )
    assert rules.variant is Variant.THOUGHTFUL and view["moves"] == 0
    piles = [[card_from_str(c) for c in pile["up"]] for pile in view["tableau"]]
    stock = [card_from_str(c) for c in view["stock_cards"]]
    return Board(rules, piles, stock)


def _key(b: Board) -> tuple[Any, ...]:
    return (tuple(map(tuple, b.tableau)), tuple(b.stock), tuple(b.waste), b.passes)


def _useful(b: Board, m: Move) -> bool:
    """Skip moves that only shuffle: a run onto another pile that exposes nothing
    new (its card below would stay a card in sequence), and king piles to empty."""
    if m.kind is MoveKind.FOUNDATION_TO_TABLEAU:
        return False
    if m.kind is MoveKind.TABLEAU_TO_TABLEAU:
        pile = b.tableau[m.src]
        start = len(pile) - m.count
        if start == 0:
            return bool(b.tableau[m.dst])  # a whole pile onto an empty one is pointless
        return True
    return True


def solve(board: Board, budget: int = 60_000) -> list[Move] | None:
    """Moves that win ``board`` (not changed), or None within ``budget`` positions."""
    seen: set[tuple[Any, ...]] = set()
    path: list[Move] = []
    stack: list[tuple[Board, list[Move]]] = []

    def options(b: Board) -> list[Move]:
        moves = [m for m in b.legal_moves() if _useful(b, m)]
        moves.sort(key=lambda m: _ORDER[m.kind])
        return moves[::-1]  # popped from the end

    root = board.copy()
    seen.add(_key(root))
    stack.append((root, options(root)))
    while stack:
        b, todo = stack[-1]
        if not todo:
            stack.pop()
            if path:
                path.pop()
            continue
        move = todo.pop()
        nb = b.copy()
        nb.apply(move)
        if nb.home == nb.total:
            return [*path, move]
        if move.kind is MoveKind.AUTO_COMPLETE:
            continue
        key = _key(nb)
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > budget:
            return None
        path.append(move)
        stack.append((nb, options(nb)))
    return None
