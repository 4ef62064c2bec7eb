"""Moves and cards written short, for the engine's tests."""

from __future__ import annotations

from protocol import Move, MoveKind, card_from_str

K = MoveKind
DRAW = Move(K.DRAW)
RECYCLE = Move(K.RECYCLE)
UNDO = Move(K.UNDO)
RESIGN = Move(K.RESIGN)
AUTO = Move(K.AUTO_COMPLETE)
W2F = Move(K.WASTE_TO_FOUNDATION)


def W2T(dst: int) -> Move:
    return Move(K.WASTE_TO_TABLEAU, dst=dst)


def T2F(src: int) -> Move:
    return Move(K.TABLEAU_TO_FOUNDATION, src=src)


def T2T(src: int, dst: int, count: int = 1) -> Move:
    return Move(K.TABLEAU_TO_TABLEAU, src=src, dst=dst, count=count)


def F2T(src: int, dst: int) -> Move:
    return Move(K.FOUNDATION_TO_TABLEAU, src=src, dst=dst)


def cards(text: str) -> list[int]:
    return [card_from_str(s) for s in text.split()]
