"""A bot that plays from its board view alone, as a real client must.

It sees what docs/protocol.md's board view shows — face-up cards and counts — and
picks a plausible move: home first, then moves that turn a card over, then the
waste, then the stock. It is not good at Klondike; it is a steady, honest source
of legal moves for load tests and the server's tests. ``None`` means stuck
(resign).
"""

from __future__ import annotations

import random
from typing import Any

__all__ = ["choose_move"]

_RANKS = "A23456789TJQK"
_SUITS = "CDHS"


def _rank(card: str) -> int:
    return _RANKS.index(card[0]) + 1


def _red(card: str) -> bool:
    return card[1] in "DH"


def _fits_tableau(card: str, pile: dict[str, Any]) -> bool:
    up = pile["up"]
    if not up:
        return pile["down"] == 0 and card[0] == "K"
    top = up[-1]
    return _red(top) != _red(card) and _rank(top) == _rank(card) + 1


def _fits_foundation(card: str, foundations: list[str | None]) -> bool:
    packs = len(foundations) // 4
    suit = _SUITS.index(card[1])
    for f in range(suit * packs, suit * packs + packs):
        top = foundations[f]
        if (top is None and card[0] == "A") or (top is not None and _rank(top) == _rank(card) - 1):
            return True
    return False


def _run_length(pile: dict[str, Any]) -> int:
    """How many top face-up cards are one run in sequence."""
    up = pile["up"]
    n = 1 if up else 0
    while n < len(up):
        above, below = up[-n], up[-n - 1]
        if _red(above) == _red(below) or _rank(below) != _rank(above) + 1:
            break
        n += 1
    return n


def choose_move(view: dict[str, Any], rng: random.Random | None = None) -> dict[str, Any] | None:
    """A move map for this board view, or None when the bot sees nothing to do."""
    rng = rng or random.Random()
    if view.get("can_auto_complete"):
        return {"kind": "auto_complete"}
    tableau = view["tableau"]
    foundations = view["foundations"]
    waste = view["waste_cards"][-1] if view["waste_cards"] else None
    if waste and _fits_foundation(waste, foundations):
        return {"kind": "waste_foundation"}
    for p, pile in enumerate(tableau):
        if pile["up"] and _fits_foundation(pile["up"][-1], foundations):
            return {"kind": "tableau_foundation", "from": p}
    moves: list[dict[str, Any]] = []
    for p, pile in enumerate(tableau):
        run = _run_length(pile)
        if not run:
            continue
        whole = run == len(pile["up"])
        head = pile["up"][-run]
        for q, target in enumerate(tableau):
            if q == p or not _fits_tableau(head, target):
                continue
            if whole and pile["down"] == 0 and not target["up"]:
                continue  # a whole pile onto an empty one changes nothing
            if whole:  # frees a face-down card or empties a pile
                moves.append({"kind": "tableau_tableau", "from": p, "to": q, "count": run})
    if moves:
        return rng.choice(moves)
    if waste:
        targets = [q for q, t in enumerate(tableau) if _fits_tableau(waste, t)]
        if targets:
            return {"kind": "waste_tableau", "to": rng.choice(targets)}
    if view["stock"]:
        return {"kind": "draw"}
    limit = view["pass_limit"]
    if view["waste"] and (limit == 0 or view["passes"] < limit):
        return {"kind": "recycle"}
    return None
