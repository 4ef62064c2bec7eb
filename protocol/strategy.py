"""The bots' strategy: a Klondike player that plays from its own board view only.

Shared by the Python client's bots (client/bot.py, client/players.py) and the
server's bots (server/rooms/bots.py), so both decide with the same code. Pure,
like the rest of protocol/: it draws nothing at random itself. A caller that wants
its bots to differ passes a random source (:class:`Chance`, e.g. a seeded
``random.Random``): the bot then picks among equally good moves with it, and
:meth:`Pace.pause` draws its thinking time from it. Without one it is
deterministic (the load driver relies on that: client/load.py).

The bot sees exactly what its player sees (docs/protocol.md "Values", board view): face-up
cards, counts of the rest. It rebuilds an engine :class:`~protocol.board.Board` from
that view, with placeholders for the cards it cannot see, and asks the engine for
the legal moves, so the bot and the server can never disagree about the rules. The
placeholders are never read: the engine looks only at face-up cards and the waste
top when it lists moves.

Choosing among the legal moves is a fixed order of preferences, the ones good human
players use:

1. every card that is *safe* to send home (nothing could still need to go on it);
2. moves that turn a face-down card over, from the pile with the most of them;
3. splitting a run to free a card for the foundation;
4. emptying a column when a king is waiting for it, and waste cards onto the table;
   then the other foundation moves (sending home a card that could still carry
   another often blocks the game, most of all with draw three);
5. otherwise draw, or recycle the waste.

When several moves are equally good (two aces to send home, two piles with as many
face-down cards), a bot with a random source picks one at random: bots seeded
differently play the same deal differently.

That order is one player's way, the :class:`Style` ``methodical``. Players differ
in more than their ties, so two other styles bend it where people do: a
``cautious`` player keeps a card on the table until nothing could need it there
(an unsafe card goes home only when the stock has nothing more to show) and
gives the stock one more pass before giving up; a ``greedy`` one sends every card
home the moment it can, plays the waste before turning a face-down card, and gives
up after a pass through the stock that sent no card home. They win within a few
points of each other (bench/bot_winrate.py ``--style``; the greedy player, quick to
give up, least at draw three), and play a deal in different lines, of different
lengths.

Moves that only shuffle face-up cards about are never made, so the bot cannot loop
on the table; the stock is the only way round. To stop it cycling the stock for
ever, it remembers what it had achieved at each recycle and resigns after a whole
pass without progress (the pass limit ends the deal by itself when there is one).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from functools import lru_cache
from typing import Any, Protocol

from protocol.board import Board
from protocol.cards import card_from_str, card_str
from protocol.moves import Move, MoveKind, Status
from protocol.settings import DealRules, Variant

from .solver import solve

__all__ = ["HIDDEN", "PACES", "RESIGN", "Bot", "Chance", "Pace", "Style", "board_from_view"]

HIDDEN = 0xFF  # a card the view does not show: a byte no card is; the engine never reads one

_T2T = MoveKind.TABLEAU_TO_TABLEAU
_T2F = MoveKind.TABLEAU_TO_FOUNDATION
_W2F = MoveKind.WASTE_TO_FOUNDATION
_W2T = MoveKind.WASTE_TO_TABLEAU
_DRAW = MoveKind.DRAW
_RECYCLE = MoveKind.RECYCLE
_AUTO = MoveKind.AUTO_COMPLETE
RESIGN = Move(MoveKind.RESIGN)


class Chance(Protocol):
    """A random source the caller owns (``random.Random`` is one): protocol/ draws
    nothing itself, so that the engine stays a pure function of its inputs."""

    def random(self) -> float:
        """A float in [0, 1)."""


class Pace(StrEnum):
    """How fast a bot plays: the pause before each move, drawn from a range."""

    RELAXED = "relaxed"
    STEADY = "steady"
    FAST = "fast"

    def pause(self, chance: Chance) -> float:
        """Seconds to think before the next move: uniform in the pace's range, so
        that a room of bots does not move in step."""
        low, high = PACES[self]
        return low + (high - low) * chance.random()


class Style(StrEnum):
    """How a bot chooses among its legal moves (see the module docstring); any
    pace plays any style. ``methodical`` is the order as it always was: the style
    of a bot seated before bots had styles."""

    METHODICAL = "methodical"
    CAUTIOUS = "cautious"
    GREEDY = "greedy"


PACES: dict[Pace, tuple[float, float]] = {
    Pace.RELAXED: (2.5, 5.0),
    Pace.STEADY: (1.2, 2.5),
    Pace.FAST: (0.4, 1.0),
}
"""Seconds between a bot's moves, per pace: a person's speeds, from unhurried to
quick (docs/protocol.md, ``add_bot``)."""


# The wire's card names, parsed once: a bot reads some 30 cards a move, and a load
# test runs hundreds of bots in one process.
_CARD = {card_str(c): c for c in range(52)}


def _cards(names: Any) -> list[int]:
    if not names:
        return []
    try:
        return [_CARD[c] for c in names]
    except (KeyError, TypeError):
        return [card_from_str(str(c)) for c in names]  # raises ValueError for a non-card


def _rank(name: Any) -> int:
    c = _CARD.get(name) if isinstance(name, str) else None
    return (card_from_str(str(name)) if c is None else c) % 13 + 1


@lru_cache(maxsize=64)
def _view_rules(variant: str, draw: int, pass_limit: int) -> DealRules:
    return DealRules(
        variant=Variant(variant),
        draw=draw,
        pass_limit=pass_limit,
        undo=False,
        foundation_to_tableau=False,
    )


def board_from_view(view: Mapping[str, Any], rules: DealRules | None = None) -> Board:
    """An engine board holding what ``view`` shows, unseen cards as :data:`HIDDEN`.

    Accepts a player's board view and a revealed board (piles with ``cards``). The
    view does not say whether foundation-to-tableau or undo are allowed; pass the
    deal's ``rules`` to have those moves listed (the bot never needs them).
    """
    if rules is None:
        rules = _view_rules(str(view["variant"]), int(view["draw"]), int(view["pass_limit"]))
    piles = view["tableau"]
    tableau = [
        _cards(p["cards"]) if "cards" in p else [HIDDEN] * int(p["down"]) + _cards(p["up"])
        for p in piles
    ]
    stock_count = int(view["stock"])
    stock = _cards(view["stock_cards"]) if "stock_cards" in view else [HIDDEN] * stock_count
    board = Board(rules, tableau, stock)
    board.down = bytearray(int(p["down"]) for p in piles)
    shown = _cards(view.get("waste_cards"))
    board.waste = bytes([HIDDEN] * (int(view["waste"]) - len(shown)) + shown)
    board.foundations = bytearray(_rank(c) if c else 0 for c in view["foundations"])
    board.home = int(view["home"])
    board.passes = int(view["passes"])
    board.moves = int(view["moves"])
    board.status = Status(view["status"])
    return board


class Bot:
    """One player's decisions for one deal at a time (call :meth:`new_deal` between).

    ``max_moves`` is a last guard against any loop the rules above missed;
    ``search_budget`` bounds the search for a winning line when every card is on
    show (0 turns it off); ``chance`` breaks ties between equally good moves (None:
    the first of them, always the same); ``style`` is how it weighs the moves.
    """

    def __init__(
        self,
        max_moves: int = 1500,
        search_budget: int = 6000,
        chance: Chance | None = None,
        style: Style = Style.METHODICAL,
    ) -> None:
        self.max_moves = max_moves
        self.search_budget = search_budget
        self.chance = chance
        self.style = style
        # Passes through the stock in a row without progress it sits out before
        # it resigns: a cautious player gives the stock one more look.
        self._patience = 2 if style is Style.CAUTIOUS else 1
        self.new_deal()

    def new_deal(self) -> None:
        self._last_recycle: tuple[int, int, int] | None = None
        self._idle_passes = 0
        self._seen: dict[tuple[object, ...], int] = {}
        self._plan: list[Move] = []  # a winning line found by search, next move first
        self._plan_at = 0  # the board's move count when the plan's next move is due
        self._searched = False

    def decide(self, view: Mapping[str, Any]) -> Move:
        """The next move for this view; :data:`RESIGN` when nothing useful is left."""
        board = board_from_view(view)
        if board.status is not Status.PLAYING:
            raise ValueError(f"the deal is over ({board.status.value})")
        if board.moves >= self.max_moves:
            return RESIGN
        planned = self._planned(board)
        if planned is not None:
            return planned
        best: list[Move] = []
        top = 0
        for move in board.legal_moves():
            score = self._rank(board, move)
            if score is None or (best and score < top):
                continue
            if not best or score > top:
                best, top = [], score
            best.append(move)
        if not best:
            return RESIGN
        move = best[0] if self.chance is None else best[int(self.chance.random() * len(best))]
        if move.kind is _RECYCLE and self._stuck(board):
            return RESIGN
        if move.kind not in (_DRAW, _RECYCLE):
            key = board.fingerprint()[:5]
            self._seen[key] = self._seen.get(key, 0) + 1
            if self._seen[key] > 3:
                return RESIGN
        return move

    def _rank(self, board: Board, move: Move) -> int | None:
        """The move's class of preference: :meth:`_score` exactly for a bot without
        chance; for one with chance, scores within the same hundred count as
        equally good (which face-down card to free first, which safe card to send
        home first), which is where players differ."""
        score = self._score(board, move)
        if score is None:
            return None
        return int(score) if self.chance is None else int(score) // 100

    def _planned(self, board: Board) -> Move | None:
        """The next move of a winning line, when every card is on show (Thoughtful).

        The line is searched for once per deal; it is dropped if the board is not
        where the line expects it (a refused or repeated move, a resync).
        """
        if not self._searched and self.search_budget > 0 and _all_visible(board):
            self._searched = True
            self._plan = solve(board, self._score, self.search_budget) or []
            self._plan.reverse()
            self._plan_at = board.moves
        if self._plan and board.moves == self._plan_at:
            self._plan_at += 1
            return self._plan.pop()
        self._plan = []
        return None

    def _stuck(self, board: Board) -> bool:
        """Whether as many whole passes as its patience went by without progress
        (for a greedy player, without a card sent home)."""
        if self.style is Style.GREEDY:  # only cards sent home count as progress
            mark = (board.home, 0, 0)
        else:
            blocked = sum(_blocked(board, p) for p in range(len(board.tableau)))
            mark = (board.home, blocked, len(board.stock) + len(board.waste))
        self._idle_passes = self._idle_passes + 1 if mark == self._last_recycle else 0
        self._last_recycle = mark
        return self._idle_passes >= self._patience

    # ------------------------------------------------------------------ scoring

    def _score(self, board: Board, move: Move) -> float | None:
        """How much this bot's style wants ``move``: higher is better, None means
        never."""
        score = _score(board, move)
        if score is None or self.style is Style.METHODICAL:
            return score
        kind = move.kind
        home = kind is _W2F or kind is _T2F
        if self.style is Style.CAUTIOUS:
            if home and score < 500:  # an unsafe card that frees nothing
                return 45  # after the stock has shown its cards, before a recycle
            return score
        if home:  # greedy: home at once, safe or not
            return max(score, 1000)
        if kind is _W2T and board.tableau[move.dst]:
            return 700  # the waste's card before any face-down one
        return score


def _score(board: Board, move: Move) -> float | None:
    """How much the ``methodical`` order wants ``move``: higher is better, None
    means never."""
    kind = move.kind
    tab = board.tableau
    if kind is _AUTO:
        return 10_000
    if kind is _W2F:
        return 1000 if _safe_home(board, board.waste[-1]) else 150
    if kind is _T2F:
        pile = tab[move.src]
        under = _blocked(board, move.src)
        exposes = under > 0 and len(pile) - under == 1
        if _safe_home(board, pile[-1]):
            return 1000 + (under if exposes else 0)
        return 600 + under if exposes else 150
    if kind is _T2T:
        return _score_tableau(board, move)
    if kind is _W2T:
        if not tab[move.dst]:
            return 150 if not _king_waiting(board) else 100
        return 200
    if kind is _DRAW:
        return 50
    if kind is _RECYCLE:
        return 40
    return None  # foundation to tableau, undo: never needed by this bot


def _blocked(board: Board, p: int) -> int:
    """How many cards lie under the movable run of pile ``p``.

    In Classic these are the face-down cards. In Thoughtful every card is face up,
    but the cards under the run are just as stuck until the run moves, so the same
    preferences apply to them.
    """
    return max(board.run_start(p), 0)  # -1 for an empty pile


def _score_tableau(board: Board, move: Move) -> float | None:
    src = board.tableau[move.src]
    down = _blocked(board, move.src)
    up = len(src) - down
    dst_empty = not board.tableau[move.dst]
    if move.count == up:  # the whole face-up part leaves
        if down:
            return 500 + down  # turns a card over; the deeper pile first
        if dst_empty:
            return None  # a king-headed pile to another empty column: pointless
        return 250 if _king_waiting(board) else None  # empties a column
    beneath = src[-move.count - 1]
    if board.fits_foundation(beneath) >= 0:
        return 350  # splitting the run frees a card for the foundation
    return None


def _safe_home(board: Board, c: int) -> bool:
    """No card still in play could need ``c`` to build on: the two (four) cards of
    the other colour one rank lower are home already. Aces and twos are always safe."""
    rank = c % 13 + 1
    if rank <= 2:
        return True
    f, k = board.foundations, board.packs  # suits in order: clubs, diamonds, hearts, spades
    other = f[:k] + f[3 * k :] if 13 <= c < 39 else f[k : 3 * k]
    return min(other) >= rank - 1


def _all_visible(board: Board) -> bool:
    """Every card of the deal is known: the stock, the waste and the piles."""
    return not any(board.down) and HIDDEN not in board.stock and HIDDEN not in board.waste


def _king_waiting(board: Board) -> bool:
    """A king that an empty column would help: heading face-up cards over face-down
    ones, or on top of the waste."""
    if board.waste and board.waste[-1] % 13 == 12 and board.waste[-1] != HIDDEN:
        return True
    for p, pile in enumerate(board.tableau):
        d = _blocked(board, p)
        if d and len(pile) > d and pile[d] % 13 == 12:
            return True
    return False
