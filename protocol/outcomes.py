"""A move told as what it changed, and a digest to check a view kept by outcomes.

The ``moved`` reply and a spectator's ``progress`` event carry an OUTCOME map
(:func:`move_outcome`) instead of the whole board view: what the engine did and
the parts of the view the move changed that a client could not work out without
the rules (the card shown under a waste card that left, the foundations' tops,
the flags). A client applies it to the view it holds (:func:`apply_outcome`,
docs/protocol.md "Applying an outcome" states the same steps for any language)
and checks the result against the reply's ``digest`` (:func:`view_digest`); a
mismatch means it lost track, and it asks for a snapshot.

Why not the whole view: building, encoding and decoding it per move, for the
mover and again for every spectator, was most of a move's cost on both ends.

The digest is CRC-32 (zlib's) of a canonical text of the view: one C call on the
server (FNV-1a, a loop per byte, costs some 100 times more in Python) and ten lines
of plain JavaScript in a browser, where WebCrypto is unavailable outside secure
contexts. :func:`board_digest` computes the same digest from a board without
building its view (the server's hot path); tests hold the two equal.

An outcome names only cards the view after the move shows, or showed before it
(the cards moved, the card turned up, the waste cards on show): no hidden card.
"""

from __future__ import annotations

import zlib
from typing import Any

from .board import Board
from .cards import CARD_STRS
from .moves import MoveKind, Outcome
from .settings import Variant
from .views import EVENT_NAMES

__all__ = [
    "OutcomeMismatch",
    "apply_outcome",
    "board_digest",
    "canonical_text",
    "move_outcome",
    "view_digest",
]

_EVENTS = {int(e): name for e, name in EVENT_NAMES.items()}

# The moves that change the waste, the foundations, the stock (an undo by the
# move it takes back): which of the optional fields an outcome carries.
_WASTE = frozenset(
    {MoveKind.DRAW, MoveKind.RECYCLE, MoveKind.WASTE_TO_TABLEAU, MoveKind.WASTE_TO_FOUNDATION}
)
_FOUNDATIONS = frozenset(
    {
        MoveKind.WASTE_TO_FOUNDATION,
        MoveKind.TABLEAU_TO_FOUNDATION,
        MoveKind.FOUNDATION_TO_TABLEAU,
        MoveKind.AUTO_COMPLETE,
    }
)
_STOCK = frozenset({MoveKind.DRAW, MoveKind.RECYCLE})


# bytes(): mypyc 2.4 fails on a loop over a bytearray (bench/compiled.py)
def _foundation_tops(board: Board) -> list[str | None]:
    packs = board.packs
    return [
        CARD_STRS[(f // packs) * 13 + top - 1] if top else None
        for f, top in enumerate(bytes(board.foundations))
    ]


def _waste_shown(board: Board) -> list[str]:
    waste = board.waste
    if board.rules.variant is Variant.THOUGHTFUL:
        return [CARD_STRS[c] for c in waste]
    return [CARD_STRS[c] for c in waste[-board.rules.draw :]] if waste else []


def move_outcome(outcome: Outcome, board: Board) -> dict[str, Any]:
    """The OUTCOME map of an accepted move; ``board`` is the board after it.

    The same map for the mover and the spectators, and for a retry of the move
    (rebuilt from a replay of the log, which leaves the same board)."""
    move = outcome.move
    kind = undone_kind = move.kind
    out: dict[str, Any] = {
        "move": move.to_wire(),
        "cards": [CARD_STRS[c] for c in outcome.cards],
        "turned": CARD_STRS[outcome.turned] if outcome.turned is not None else None,
        "events": [_EVENTS[e] for e in outcome.events],
        "pass_started": outcome.pass_started,
        "undone": outcome.undone,
        "status": board.status._value_,  # not the ``value`` property: a Python call
        "passes": board.passes,
        "moves": board.moves,
        "home": board.home,
        "can_undo": board.can_undo(),
        "can_auto_complete": board.can_auto_complete(),
        "stock": len(board.stock),
        "waste": len(board.waste),
    }
    if outcome.undid is not None:
        out["undid"] = outcome.undid.to_wire()
        undone_kind = outcome.undid.kind
    if undone_kind in _FOUNDATIONS:
        out["foundations"] = _foundation_tops(board)
    if undone_kind in _WASTE:
        out["waste_cards"] = _waste_shown(board)
    if kind in _STOCK and board.rules.variant is Variant.THOUGHTFUL:
        out["stock_cards"] = [CARD_STRS[c] for c in reversed(board.stock)]
    return out


# ---------------------------------------------------------------- applying


_SCALARS = (
    "status",
    "passes",
    "moves",
    "home",
    "can_undo",
    "can_auto_complete",
    "stock",
    "waste",
)
_REPLACED = ("foundations", "waste_cards", "stock_cards")
# Move kinds as the wire names them, looked up once.
_UNDO = MoveKind.UNDO.value
_T2F = MoveKind.TABLEAU_TO_FOUNDATION.value
_T2T = MoveKind.TABLEAU_TO_TABLEAU.value
_AUTO = MoveKind.AUTO_COMPLETE.value
_ONTO_PILE = (MoveKind.WASTE_TO_TABLEAU.value, MoveKind.FOUNDATION_TO_TABLEAU.value)


class OutcomeMismatch(ValueError):
    """An outcome that does not fit the view it is applied to (a pile it names
    does not exist, or holds fewer face-up cards than it takes): the view is not
    the one the server told it against. A client takes a snapshot."""


def _pile(view: dict[str, Any], p: Any) -> dict[str, Any]:
    """Pile ``p`` of ``view`` (whose ``tableau`` list is the new view's own),
    copied first: the view applied to keeps its piles."""
    tableau = view["tableau"]
    if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < len(tableau):
        raise OutcomeMismatch(f"the outcome names pile {p!r}, which the view has not")
    old = tableau[p]
    pile = tableau[p] = {"down": old["down"], "up": list(old["up"])}
    return pile


def _take(pile: dict[str, Any], n: int) -> list[str]:
    up: list[str] = pile["up"]
    if n > len(up):
        raise OutcomeMismatch(f"the outcome takes {n} card(s) from a pile showing {len(up)}")
    taken = up[len(up) - n :]
    del up[len(up) - n :]
    return taken


def apply_outcome(view: dict[str, Any], outcome: dict[str, Any]) -> dict[str, Any]:
    """The board view after the move ``outcome`` tells (docs/protocol.md,
    "Applying an outcome", step by step). ``view`` is left as it was.

    No rule of play here: only where the move kind says the cards go. ``logged``
    (when the view has it) counts the move. Raises :class:`OutcomeMismatch` for
    an outcome that cannot apply to ``view``."""
    new = dict(view)
    new["tableau"] = tableau = list(view["tableau"])
    move = outcome["move"]
    cards: list[str] = outcome["cards"]
    kind = move["kind"]
    undid = outcome.get("undid")
    if kind == _UNDO:
        if undid is None:
            raise OutcomeMismatch("an undo's outcome names no move it took back")
        back = undid["kind"]
        if back in _ONTO_PILE:
            _take(_pile(new, undid["to"]), 1)
        elif back == _T2F:
            _pile(new, undid["from"])["up"].append(cards[0])
        elif back == _T2T:
            moved = _take(_pile(new, undid["to"]), len(cards))
            _pile(new, undid["from"])["up"].extend(moved)
    elif kind in _ONTO_PILE:
        _pile(new, move["to"])["up"].append(cards[0])
    elif kind == _T2F:
        _take(_pile(new, move["from"]), 1)
    elif kind == _T2T:
        moved = _take(_pile(new, move["from"]), len(cards))
        _pile(new, move["to"])["up"].extend(moved)
    elif kind == _AUTO:
        new["tableau"] = [{"down": 0, "up": []} for _ in tableau]
    turned = outcome["turned"]
    if turned is not None:
        pile = _pile(new, move.get("from"))
        if pile["up"] or not pile["down"]:
            raise OutcomeMismatch(f"{turned} turned up on a pile that was not left face down")
        pile["down"] -= 1
        pile["up"] = [turned]
    for key in _SCALARS:
        new[key] = outcome[key]
    for key in _REPLACED:
        if key in outcome:
            new[key] = list(outcome[key])
    if "logged" in view:
        new["logged"] = view["logged"] + 1
    return new


# ---------------------------------------------------------------- the digest


def _flag(value: bool) -> str:
    return "1" if value else "0"


def canonical_text(view: dict[str, Any]) -> str:
    """The text a view's digest is taken of (docs/protocol.md, "The digest"):
    its fields in a fixed order, ``|`` between them; ``logged`` is not in it."""
    return "|".join(
        (
            view["variant"],
            str(view["draw"]),
            str(view["pass_limit"]),
            str(view["passes"]),
            str(view["moves"]),
            str(view["home"]),
            view["status"],
            _flag(view["can_undo"]),
            _flag(view["can_auto_complete"]),
            ",".join([c or "-" for c in view["foundations"]]),
            "/".join([f"{p['down']}:{','.join(p['up'])}" for p in view["tableau"]]),
            str(view["stock"]),
            str(view["waste"]),
            ",".join(view["waste_cards"]),
            ",".join(view.get("stock_cards", ())),
        )
    )


def _digest(text: str) -> str:
    return f"{zlib.crc32(text.encode('ascii')):08x}"


def view_digest(view: dict[str, Any]) -> str:
    """The digest of a board view: 8 hex digits, CRC-32 of its canonical text."""
    return _digest(canonical_text(view))


# "0:" … "n:": a pile's face-down count as the canonical text starts it.
_DOWN = tuple(f"{d}:" for d in range(128))


def board_digest(board: Board) -> str:
    """:func:`view_digest` of ``player_view(board)``, without building the view:
    the server takes one per accepted move, so the text is made in as few
    Python steps as it can be (tests hold it equal to :func:`canonical_text`)."""
    rules = board.rules
    strs = CARD_STRS
    down = board.down
    join = ",".join
    packs = board.packs
    waste = board.waste
    if rules.variant is Variant.THOUGHTFUL:
        shown = join([strs[c] for c in waste])
        stock = join([strs[c] for c in reversed(board.stock)])
    else:
        shown = join([strs[c] for c in waste[-rules.draw :]]) if waste else ""
        stock = ""
    text = "|".join(
        (
            rules.variant._value_,  # not the ``value`` property: a Python call
            str(rules.draw),
            str(rules.pass_limit),
            str(board.passes),
            str(board.moves),
            str(board.home),
            board.status._value_,
            "1" if board.can_undo() else "0",
            "1" if board.can_auto_complete() else "0",
            join([strs[(f // packs) * 13 + top - 1] if top else "-"
                  for f, top in enumerate(bytes(board.foundations))]),
            "/".join([_DOWN[down[p]] + join([strs[c] for c in pile[down[p]:]])
                      for p, pile in enumerate(board.tableau)]),
            str(len(board.stock)),
            str(len(waste)),
            shown,
            stock,
        )
    )  # fmt: skip
    return f"{zlib.crc32(text.encode('ascii')):08x}"
