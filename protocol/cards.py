"""Cards as small integers.

The engine must validate hundreds of thousands of moves a second on one core, so a
card is an ``int`` rather than an object: ``card = suit * 13 + (rank - 1)``, 0..51.
Double Klondike holds two identical packs; the two copies of a card are the same
integer because no rule tells them apart.

On the wire a card is a two-character string, rank then suit: ``"AS"``, ``"TD"``,
``"QH"``, ``"KC"`` (``T`` is the ten). Only face-up cards are ever written.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "CARD_STRS",
    "RANKS",
    "SUITS",
    "Suit",
    "card",
    "card_from_str",
    "card_str",
    "is_red",
    "rank_of",
    "suit_of",
]

RANKS = "A23456789TJQK"
SUITS = "CDHS"


class Suit(IntEnum):
    """Suits in the order that numbers the cards and the foundations."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3


def card(rank: int, suit: Suit | int) -> int:
    """The card of ``rank`` (1 = ace … 13 = king) and ``suit``."""
    return int(suit) * 13 + rank - 1


def rank_of(c: int) -> int:
    """1 for an ace up to 13 for a king."""
    return c % 13 + 1


def suit_of(c: int) -> int:
    """The card's suit as an int (see :class:`Suit`)."""
    return c // 13


def is_red(c: int) -> bool:
    """Hearts and diamonds are red; the tableau alternates colours."""
    return 13 <= c < 39


CARD_STRS: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
"""The wire form of every card by its number: a board view names ~30 cards a
move, and a lookup is a quarter of the cost of building the string."""


def card_str(c: int) -> str:
    """The wire form of a face-up card, e.g. ``"QH"``."""
    return CARD_STRS[c]


def card_from_str(s: str) -> int:
    """Parse the wire form; raises ``ValueError`` on anything else."""
    if len(s) != 2 or s[0] not in RANKS or s[1] not in SUITS:
        raise ValueError(f"not a card: {s!r}")
    return SUITS.index(s[1]) * 13 + RANKS.index(s[0])
