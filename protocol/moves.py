"""The one move type, what applying it reports, and why a move is refused.

Events are small typed values in the manner of h11: a :class:`Move` is what a player
asks for, an :class:`Outcome` is what happened, an :class:`IllegalMove` is a refusal
with a stable ``code`` that clients may switch on and a message people may read. A
move map that is not a move at all is an :class:`UnreadableMove` (see
:func:`read_move`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Any

from .frozen import quick_init

__all__ = [
    "Event",
    "IllegalMove",
    "Move",
    "MoveKind",
    "Outcome",
    "Reason",
    "Status",
    "UnreadableMove",
    "read_move",
]


class MoveKind(StrEnum):
    """Every kind of move. ``from``/``to`` index piles or foundations as noted."""

    DRAW = "draw"
    RECYCLE = "recycle"
    WASTE_TO_TABLEAU = "waste_tableau"  # to = tableau pile
    WASTE_TO_FOUNDATION = "waste_foundation"
    TABLEAU_TO_FOUNDATION = "tableau_foundation"  # from = tableau pile
    TABLEAU_TO_TABLEAU = "tableau_tableau"  # from, to = piles; count = cards moved
    FOUNDATION_TO_TABLEAU = "foundation_tableau"  # from = foundation, to = pile
    UNDO = "undo"
    RESIGN = "resign"
    AUTO_COMPLETE = "auto_complete"


_USES_FROM = {
    MoveKind.TABLEAU_TO_FOUNDATION,
    MoveKind.TABLEAU_TO_TABLEAU,
    MoveKind.FOUNDATION_TO_TABLEAU,
}
_USES_TO = {
    MoveKind.WASTE_TO_TABLEAU,
    MoveKind.TABLEAU_TO_TABLEAU,
    MoveKind.FOUNDATION_TO_TABLEAU,
}


class Reason(StrEnum):
    """Stable codes for a refused move (docs/protocol.md lists them)."""

    BAD_MOVE = "bad_move"
    DEAL_OVER = "deal_over"
    NO_SUCH_PILE = "no_such_pile"
    SAME_PILE = "same_pile"
    STOCK_EMPTY = "stock_empty"
    STOCK_NOT_EMPTY = "stock_not_empty"
    WASTE_EMPTY = "waste_empty"
    PASS_LIMIT_REACHED = "pass_limit_reached"
    PILE_EMPTY = "pile_empty"
    BAD_COUNT = "bad_count"
    NOT_ALTERNATING_COLOUR = "not_alternating_colour"
    NOT_ONE_LOWER = "not_one_lower"
    ONLY_KING_ON_EMPTY = "only_king_on_empty"
    FOUNDATION_WONT_TAKE = "foundation_wont_take"
    FOUNDATION_EMPTY = "foundation_empty"
    FOUNDATION_TO_TABLEAU_OFF = "foundation_to_tableau_off"
    UNDO_OFF = "undo_off"
    UNDO_NOT_ALLOWED = "undo_not_allowed"
    AUTO_COMPLETE_UNAVAILABLE = "auto_complete_unavailable"


class IllegalMove(Exception):
    """A refused move. The board is unchanged.

    ``broken`` is every rule of play the move breaks, ``reason`` first: a queen of
    spades on an eight of clubs is the wrong colour *and* the wrong rank, and a
    player told only the first would try the next black-on-red queen and be
    refused again. ``reason`` stays the one stable code a refusal is known by."""

    def __init__(self, reason: Reason, message: str, also: tuple[Reason, ...] = ()) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.broken: tuple[Reason, ...] = (reason, *also)

    @property
    def code(self) -> str:
        return self.reason.value


class Status(StrEnum):
    PLAYING = "playing"
    WON = "won"
    RESIGNED = "resigned"
    DEAD = "dead"


class Event(IntEnum):
    """What a move did that a scoring system may count (docs/rules.md §5)."""

    WASTE_TO_TABLEAU = 1
    WASTE_TO_FOUNDATION = 2
    TABLEAU_TO_FOUNDATION = 3
    TURN_OVER = 4
    FOUNDATION_TO_TABLEAU = 5
    RECYCLE = 6


@quick_init
@dataclass(frozen=True, slots=True)
class Move:
    kind: MoveKind
    src: int = 0
    dst: int = 0
    count: int = 1

    def to_wire(self) -> dict[str, Any]:
        # ``_value_``, not ``value``: an enum's ``value`` is a property, a Python
        # call a read in 3.11, and a move is told on the wire several times.
        d: dict[str, Any] = {"kind": self.kind._value_}
        if self.kind in _USES_FROM:
            d["from"] = self.src
        if self.kind in _USES_TO:
            d["to"] = self.dst
        if self.kind is MoveKind.TABLEAU_TO_TABLEAU:
            d["count"] = self.count
        return d

    @classmethod
    def from_wire(cls, data: Any) -> Move:
        """Parse a move map; a malformed one is refused as ``bad_move``."""
        if not isinstance(data, Mapping):
            raise IllegalMove(Reason.BAD_MOVE, "a move must be a map with a 'kind'")
        wired = data.get("kind")
        kind = _KINDS.get(wired) if isinstance(wired, str) else None
        if kind is None:
            kinds = ", ".join(k.value for k in MoveKind)
            raise IllegalMove(Reason.BAD_MOVE, f"unknown move kind {wired!r}; one of {kinds}")
        # Every accepted move is parsed twice (decided, then folded in): read only
        # the fields the kind uses, checked in this order, as plain lookups.
        src = _int_field(data, kind, "from", None) if kind in _USES_FROM else 0
        dst = _int_field(data, kind, "to", None) if kind in _USES_TO else 0
        count = 1
        if kind is MoveKind.TABLEAU_TO_TABLEAU:
            count = _int_field(data, kind, "count", 1)
        return cls(kind, src, dst, count)


def _int_field(data: Mapping[str, Any], kind: MoveKind, key: str, default: int | None) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise IllegalMove(Reason.BAD_MOVE, f"move {kind.value!r} needs an integer {key!r}")
    return value


_KINDS = {k.value: k for k in MoveKind}


@dataclass(frozen=True, slots=True)
class UnreadableMove:
    """A move map :meth:`Move.from_wire` refused (``bad_move``), as it came.

    A request's move is read once, where the request is parsed
    (protocol/requests.py), so that past the codec a move is typed. It is not refused
    there: ``bad_move`` is one of the engine's reasons, which a move gets only
    after the room's own refusals (docs/protocol.md, ``move``: ``not_in_room``,
    ``wrong_state``, ``wrong_deal`` … come first). ``data`` is the map the client
    sent, which is what a relayed request carries on (:meth:`to_wire`)."""

    data: dict[str, Any]
    message: str

    def to_wire(self) -> dict[str, Any]:
        return self.data

    def refusal(self) -> IllegalMove:
        return IllegalMove(Reason.BAD_MOVE, self.message)


def read_move(data: dict[str, Any]) -> Move | UnreadableMove:
    """A move map read as the engine reads it: the move, or why it is none."""
    try:
        return Move.from_wire(data)
    except IllegalMove as exc:
        return UnreadableMove(data, exc.message)


@quick_init
@dataclass(frozen=True, slots=True)
class Outcome:
    """What an accepted move did.

    ``cards`` are the cards that moved, in order; ``turned`` the card turned face up
    (the mover may see it), ``pass_started`` the number of the pass a recycle began
    (0 otherwise), ``undone`` whether the move took back the one before it, and
    ``undid`` that move (an undo's only: a client told the outcome puts its cards
    back without having to remember the move before).
    """

    move: Move
    events: tuple[Event, ...]
    cards: tuple[int, ...]
    turned: int | None
    pass_started: int
    status: Status
    undone: bool = False
    undid: Move | None = None
