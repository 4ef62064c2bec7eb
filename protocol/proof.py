"""Proof that a deal can be won: translating to and from a solver, and the check.

A room with ``deals: winnable`` deals only layouts a solver has won *and the engine
has replayed to a win* (docs/rules.md §9): the solver's word is not the proof, the
engine's replay is. This module is the pure half of that — no solver, no I/O:

- :func:`layout_pysol` writes a layout in the PySol text format that ShootMe's
  Klondike-Solver (the ``pyksolve`` package) reads, and :func:`parse_pysol` reads
  it back;
- :func:`moves_from_solver` turns the solver's compact move list (``DR3 W5 72-3
  F7 7S NEW …``) into engine :class:`Move` values, and :func:`moves_to_solver`
  writes engine moves in that notation again;
- :func:`check_proof` replays a line from the dealt board under the deal's rules
  (draw one or three, the pass limit, foundation to tableau) and returns a
  :class:`Proof` only if the board ends ``won``; :func:`difficulty` labels it.

The solver's notation (its MovesMade): ``DRn`` draws n times (each draw turns the
deal's draw count of cards, fewer at the end of the stock); ``NEW`` turns the waste
over into a new stock; ``XY`` moves the top card of X onto Y, ``XY-n`` n cards; X
is ``W`` (waste), ``1``–``7`` (tableau piles, from the left) or a foundation suit
``C D S H``, Y a pile or a foundation suit; ``Fn`` flips the card now on top of pile
n, which the engine does by itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .board import Board
from .cards import SUITS, card_from_str, card_str, suit_of
from .moves import IllegalMove, Move, MoveKind, Outcome, Status
from .settings import DealRules, Variant
from .views import outcome_view

__all__ = [
    "DIFFICULTIES",
    "Proof",
    "ProofError",
    "check_proof",
    "difficulty",
    "layout_pysol",
    "moves_from_solver",
    "moves_to_solver",
    "parse_pysol",
    "proof_from_wire",
]

DIFFICULTIES = ("easy", "medium", "hard", "expert")
_PILES = 7
_TALON = 24


class ProofError(ValueError):
    """A line that is no proof: unreadable, refused by the engine, or not a win."""


@dataclass(frozen=True, slots=True)
class Proof:
    """A winning line the engine has replayed from the dealt board.

    ``moves`` are engine moves (draws one by one); ``outcomes`` what the engine's
    replay reported for each (as :meth:`Board.apply` does live); ``passes`` the
    passes through the stock it used (1 + recycles); ``difficulty`` the label of
    :func:`difficulty`.
    """

    moves: tuple[Move, ...]
    outcomes: tuple[Outcome, ...]
    passes: int
    difficulty: str

    def to_wire(self) -> dict[str, Any]:
        """The wire map: ``moves`` and, one per move, its ``results`` (the RESULT
        maps of :func:`protocol.views.outcome_view`, as a logged move carries), so a
        client can follow the line to the won board knowing no rules of play."""
        return {
            "moves": [m.to_wire() for m in self.moves],
            "results": [outcome_view(o) for o in self.outcomes],
            "length": len(self.moves),
            "passes": self.passes,
            "difficulty": self.difficulty,
        }


def difficulty(length: int, passes: int) -> str:
    """The label of a winning line (docs/rules.md §9.3).

    ``weight = length + 10 × (passes − 1)``: every further pass through the stock
    is a round of cards to remember. ``easy`` below 115, ``medium`` below 130,
    ``hard`` below 150, ``expert`` from 150.
    """
    weight = length + 10 * (passes - 1)
    if weight < 115:
        return "easy"
    if weight < 130:
        return "medium"
    if weight < 150:
        return "hard"
    return "expert"


# ---------------------------------------------------------------------- layouts


def layout_pysol(piles: Sequence[Sequence[int]], stock: Sequence[int]) -> str:
    """A classic layout (7 piles bottom first, 24 stock cards first drawn first) in
    PySol format: ``Talon:`` and the stock, then one line per pile, face-down cards
    in angle brackets. Thoughtful deals the same cards face up; the solver plays it
    as classic, and a classic win is a win with every card face up as well."""
    if len(piles) != _PILES or [len(p) for p in piles] != list(range(1, 8)):
        raise ProofError("only a 7-pile layout of 1…7 cards has a solver format")
    if len(stock) != _TALON:
        raise ProofError(f"a classic stock holds {_TALON} cards, not {len(stock)}")
    lines = ["Talon: " + " ".join(card_str(c) for c in stock)]
    for pile in piles:
        down = [f"<{card_str(c)}>" for c in pile[:-1]]
        lines.append(" ".join([*down, card_str(pile[-1])]))
    return "\n".join(lines)


def parse_pysol(text: str) -> tuple[list[list[int]], list[int]]:
    """The layout of :func:`layout_pysol`'s text (the round trip)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) != 1 + _PILES or not lines[0].startswith("Talon:"):
        raise ProofError("PySol layout: a 'Talon:' line and 7 pile lines expected")
    try:
        stock = [card_from_str(s) for s in lines[0][len("Talon:") :].split()]
        piles = [[card_from_str(s.strip("<>")) for s in line.split()] for line in lines[1:]]
    except ValueError as exc:
        raise ProofError(f"PySol layout: {exc}") from None
    if sorted(stock + [c for p in piles for c in p]) != list(range(52)):
        raise ProofError("PySol layout: not one pack of 52 cards")
    return piles, stock


# ---------------------------------------------------------------------- moves


def _pile(ch: str, token: str) -> int:
    if ch in "1234567":
        return int(ch) - 1
    raise ProofError(f"solver move {token!r}: no pile {ch!r}")


def moves_from_solver(text: str) -> list[Move]:
    """Engine moves for the solver's move list; foundations are named by suit, the
    engine picks the foundation itself, so only foundation-to-tableau needs the
    index (the suit's, classic has one foundation per suit)."""
    out: list[Move] = []
    for token in text.split():
        if token.startswith("DR"):
            try:
                n = int(token[2:])
            except ValueError:
                raise ProofError(f"solver move {token!r}: not a draw count") from None
            out.extend(Move(MoveKind.DRAW) for _ in range(n))
            continue
        if token == "NEW":
            out.append(Move(MoveKind.RECYCLE))
            continue
        if len(token) == 2 and token[0] == "F" and token[1] in "1234567":
            continue  # the engine turns the card over itself
        pair, _, count_text = token.partition("-")
        if len(pair) != 2:
            raise ProofError(f"solver move {token!r}: not a move")
        src, dst = pair[0], pair[1]
        count = 1
        if count_text:
            if not count_text.isdigit():
                raise ProofError(f"solver move {token!r}: not a card count")
            count = int(count_text)
        to_foundation = dst in SUITS
        if src == "W":
            if to_foundation:
                out.append(Move(MoveKind.WASTE_TO_FOUNDATION))
            else:
                out.append(Move(MoveKind.WASTE_TO_TABLEAU, dst=_pile(dst, token)))
        elif src in SUITS:
            out.append(
                Move(MoveKind.FOUNDATION_TO_TABLEAU, src=SUITS.index(src), dst=_pile(dst, token))
            )
        elif to_foundation:
            out.append(Move(MoveKind.TABLEAU_TO_FOUNDATION, src=_pile(src, token)))
        else:
            out.append(
                Move(
                    MoveKind.TABLEAU_TO_TABLEAU,
                    src=_pile(src, token),
                    dst=_pile(dst, token),
                    count=count,
                )
            )
    return out


def moves_to_solver(board: Board, moves: Iterable[Move]) -> str:
    """The solver's notation for ``moves`` played from ``board`` (a copy is played:
    the foundations are named by the suit of the card that moves, and a move that
    turns a card over is followed by ``F`` and its pile). Raises :class:`ProofError`
    on a move the engine refuses."""
    b = board.copy()
    tokens: list[str] = []
    draws = 0
    for move in moves:
        kind = move.kind
        if kind is MoveKind.DRAW:
            draws += 1
        elif draws:
            tokens.append(f"DR{draws}")
            draws = 0
        try:
            outcome = b.apply(move)
        except IllegalMove as exc:
            raise ProofError(f"move {len(tokens) + 1}: {exc.message}") from None
        if kind is MoveKind.DRAW:
            continue
        if kind is MoveKind.RECYCLE:
            tokens.append("NEW")
            continue
        if kind is MoveKind.WASTE_TO_FOUNDATION:
            tokens.append("W" + SUITS[suit_of(outcome.cards[0])])
        elif kind is MoveKind.WASTE_TO_TABLEAU:
            tokens.append(f"W{move.dst + 1}")
        elif kind is MoveKind.TABLEAU_TO_FOUNDATION:
            tokens.append(f"{move.src + 1}{SUITS[suit_of(outcome.cards[0])]}")
        elif kind is MoveKind.FOUNDATION_TO_TABLEAU:
            tokens.append(f"{SUITS[suit_of(outcome.cards[0])]}{move.dst + 1}")
        elif kind is MoveKind.TABLEAU_TO_TABLEAU:
            more = f"-{move.count}" if move.count > 1 else ""
            tokens.append(f"{move.src + 1}{move.dst + 1}{more}")
        else:
            raise ProofError(f"the solver has no notation for {kind.value!r}")
        if outcome.turned is not None:
            tokens.append(f"F{move.src + 1}")
    if draws:
        tokens.append(f"DR{draws}")
    return " ".join(tokens)


# ---------------------------------------------------------------------- the proof


def check_proof(seed: str, rules: DealRules, moves: Iterable[Move]) -> Proof:
    """Replay ``moves`` from the board ``seed`` deals under ``rules``; the
    :class:`Proof` if the board ends won, else :class:`ProofError` saying why.

    Double has no solver here (two packs): its deals are never proven.
    """
    if rules.variant is Variant.DOUBLE:
        raise ProofError("double klondike deals cannot be proven (two packs)")
    board = Board.deal(seed, rules)
    line = tuple(moves)
    outcomes: list[Outcome] = []
    for i, move in enumerate(line, 1):
        if move.kind in (MoveKind.UNDO, MoveKind.RESIGN):
            raise ProofError(f"move {i}: a winning line never takes {move.kind.value!r}")
        try:
            outcomes.append(board.apply(move))
        except IllegalMove as exc:
            raise ProofError(f"move {i} ({move.kind.value}) refused: {exc.message}") from None
        if board.status is not Status.PLAYING and i < len(line):
            raise ProofError(f"move {i}: the deal is over ({board.status.value}) before the end")
    if board.status is not Status.WON:
        raise ProofError(f"the line ends with {board.home} of {board.total} cards home, not a win")
    return Proof(line, tuple(outcomes), board.passes, difficulty(len(line), board.passes))


def proof_from_wire(seed: str, rules: DealRules, data: Any) -> Proof:
    """Check a revealed solution (``{"moves": [...], ...}`` or the list itself).

    Only the moves are read: the ``results`` are the engine's to compute, and
    :func:`check_proof` computes them again from the replay.
    """
    raw = data.get("moves") if isinstance(data, dict) else data
    if not isinstance(raw, list):
        raise ProofError("a solution is a list of moves")
    try:
        moves = [Move.from_wire(m) for m in raw]
    except IllegalMove as exc:
        raise ProofError(exc.message) from None
    return check_proof(seed, rules, moves)
