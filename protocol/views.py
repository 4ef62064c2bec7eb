"""What a client may see of a board: the engine's only output meant for the wire.

The server never sends a :class:`~protocol.board.Board`; it sends these maps. A
:func:`player_view` names face-up cards only, and counts the rest, so no frame built
from it can carry a face-down card or the stock order (in Thoughtful every card is
face up, so it shows them all). :func:`progress` is what rivals see mid-deal.
:func:`revealed_view` shows everything and is sent only once a deal is over for
everyone, when its seed is revealed too. :func:`outcome_view` is what an accepted
move did, in the same terms: the mover gets it in the ``moved`` reply, and everyone
gets it for every logged move of a revealed deal, so a client tells past moves from
the engine's own account instead of re-implementing the rules to work them out.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, TypeAlias

from .board import Board
from .cards import CARD_STRS, card_str
from .moves import Event, Outcome
from .settings import Variant

__all__ = [
    "EVENT_NAMES",
    "RESULT_FIELDS",
    "LoggedResult",
    "hidden_cards",
    "logged_result",
    "outcome_view",
    "player_view",
    "progress",
    "revealed_view",
]

# The wire names of scoring events (docs/protocol.md, the ``moved`` reply).
EVENT_NAMES = {
    Event.WASTE_TO_TABLEAU: "waste_tableau",
    Event.WASTE_TO_FOUNDATION: "waste_foundation",
    Event.TABLEAU_TO_FOUNDATION: "tableau_foundation",
    Event.TURN_OVER: "turn_over",
    Event.FOUNDATION_TO_TABLEAU: "foundation_tableau",
    Event.RECYCLE: "recycle",
}
_EVENT_NAMES = {int(e): name for e, name in EVENT_NAMES.items()}


# bytes(): mypyc 2.4 fails on a loop over a bytearray (bench/compiled.py)
def _foundations(board: Board) -> list[str | None]:
    return [
        card_str((f // board.packs) * 13 + top - 1) if top else None
        for f, top in enumerate(bytes(board.foundations))
    ]


def _header(board: Board) -> dict[str, Any]:
    rules = board.rules
    return {
        "variant": rules.variant.value,
        "draw": rules.draw,
        "pass_limit": rules.pass_limit,
        "passes": board.passes,
        "moves": board.moves,
        "home": board.home,
        "status": board.status.value,
        "foundations": _foundations(board),
        "can_undo": board.can_undo(),
        "can_auto_complete": board.can_auto_complete(),
    }


def player_view(board: Board) -> dict[str, Any]:
    """The board as its player (and a spectator) may see it.

    The waste shows its top ``draw`` cards, bottom to top, as a fanned waste does;
    the cards under them were seen but are not on show. In Thoughtful the stock is
    listed in draw order (first to be drawn first) and the whole waste shows.
    """
    view = _header(board)
    view["tableau"] = [
        {"down": d, "up": [CARD_STRS[c] for c in pile[d:]]}
        for pile, d in zip(board.tableau, bytes(board.down), strict=True)
    ]
    view["stock"] = len(board.stock)
    view["waste"] = len(board.waste)
    if board.rules.variant is Variant.THOUGHTFUL:
        view["stock_cards"] = [card_str(c) for c in reversed(board.stock)]
        view["waste_cards"] = [card_str(c) for c in board.waste]
    else:
        shown = board.waste[-board.rules.draw :] if board.waste else []
        view["waste_cards"] = [CARD_STRS[c] for c in shown]
    return view


def revealed_view(board: Board) -> dict[str, Any]:
    """Every card, face down or not: only for a deal that is over for everyone."""
    view = _header(board)
    view["tableau"] = [
        {"down": d, "cards": [card_str(c) for c in pile]}
        for pile, d in zip(board.tableau, bytes(board.down), strict=True)
    ]
    view["stock"] = len(board.stock)
    view["waste"] = len(board.waste)
    view["stock_cards"] = [card_str(c) for c in reversed(board.stock)]
    view["waste_cards"] = [card_str(c) for c in board.waste]
    return view


LoggedResult: TypeAlias = tuple[bytes, int | None, bytes, int, str, bool]
"""An :class:`Outcome` as a room keeps it beside each logged move: (cards,
turned, events, pass started, status, undone), the cards and events as bytes.
Atoms only: a room keeps one per move of its round, flattened into one list per
player (:data:`RESULT_FIELDS` atoms a move), so keeping one allocates nothing the
collector tracks. :func:`outcome_view` turns it into the wire map, so a past
move is told from it without replaying the deal."""

RESULT_FIELDS = 6


def logged_result(outcome: Outcome) -> LoggedResult:
    """What ``outcome`` says, as a room keeps it (see :data:`LoggedResult`)."""
    return (
        bytes(outcome.cards),
        outcome.turned,
        bytes(outcome.events),
        outcome.pass_started,
        outcome.status._value_,  # not the ``value`` property: a Python call a read
        outcome.undone,
    )


def outcome_view(outcome: Outcome | LoggedResult) -> dict[str, Any]:
    """What an accepted move did, as the wire carries it (the ``result`` of ``moved``
    and of each logged move of a revealed deal).

    One function for both, so a past move is told exactly as it was reported live.
    It names only cards the move showed: the ones it moved and the one it turned up.
    """
    if isinstance(outcome, Outcome):
        outcome = logged_result(outcome)
    return _outcome_map(outcome)


@lru_cache(maxsize=4096)
def _outcome_map(outcome: LoggedResult) -> dict[str, Any]:
    """:func:`outcome_view`, one map per distinct result, shared by every message
    that carries it (none is changed once built: messages are encoded as they are).

    A deal's end lists every move of every log with its result, some thousands
    in an 8-player room, in one pass of the event loop that every other room on
    the core waits through; most of those results repeat (a draw turns over one of
    52 cards, most moves score the same events), so they are built once."""
    cards, turned, events, pass_started, status, undone = outcome
    return {
        "cards": [card_str(c) for c in cards],
        "turned": card_str(turned) if turned is not None else None,
        "events": [_EVENT_NAMES[e] for e in events],
        "pass_started": pass_started,
        "status": status,
        "undone": undone,
    }


def progress(board: Board, score: int) -> dict[str, Any]:
    """What rivals see of a player mid-deal: no card at all."""
    status: str = board.status._value_  # not the ``value`` property: a Python call a read
    return {
        "score": score,
        "home": board.home,
        "moves": board.moves,
        "status": status,
        "finished": status != "playing",
    }


def hidden_cards(board: Board) -> set[str]:
    """The cards nobody but the server may know now (tests check frames against it)."""
    if board.rules.variant is Variant.THOUGHTFUL:
        return set()
    hidden = {card_str(c) for c in board.stock}
    for pile, d in zip(board.tableau, bytes(board.down), strict=True):
        hidden.update(card_str(c) for c in pile[:d])
    return hidden
