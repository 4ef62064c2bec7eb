"""One player's board in one deal: the rules engine.

A :class:`Board` is a small mutable state machine. :meth:`Board.apply` validates a
move and either changes the board and returns an :class:`Outcome`, or raises
:class:`IllegalMove` and changes nothing. It reads no clock and does no I/O: the
server, the bots and the replayer all drive the very same code.

Layout of the state, chosen for speed (the server validates every move of every
player) and for size (a room holds a board per player, thousands of rooms a
server): cards are ints below 52 (see :mod:`protocol.cards`), so a pile is a
``bytes`` of them, one byte a card. ``tableau[p]`` is pile ``p`` bottom first, its
first ``down[p]`` cards face down; ``stock`` and ``waste`` keep their top card
last; ``foundations[f]`` is the rank on top of foundation ``f`` (0 when empty).
Foundation ``f`` holds suit ``f // packs``: classic has one foundation per suit,
Double two.

The piles, the stock and the waste are immutable: a move puts new ``bytes`` in
their place. So a copy shares them (:meth:`Board.copy` copies a list of pile
references and the two small byte arrays ``down`` and ``foundations``), and
none of them is an object the collector tracks: a board is the ``Board``, its
``tableau`` list and untracked atoms (the undo record is a tuple of small ints).
Indexing, slicing and iterating a pile give ints, as a list of them did.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .cards import card_str, is_red
from .deal import deal_layout
from .moves import Event, IllegalMove, Move, MoveKind, Outcome, Reason, Status
from .settings import DealRules, Variant

__all__ = ["MAX_MOVES", "Board"]

MAX_MOVES = 5_000
"""The most moves a player's log of one deal holds (docs/rules.md §4.11): every
accepted move counts, undos too. The move that fills it leaves the deal dead
unless it ended the deal otherwise. A real game takes a few hundred; a deal that
never ends would make its log, its replays and every frame that carries it grow
without bound."""

_DRAW = MoveKind.DRAW
_RECYCLE = MoveKind.RECYCLE
_W2T = MoveKind.WASTE_TO_TABLEAU
_W2F = MoveKind.WASTE_TO_FOUNDATION
_T2F = MoveKind.TABLEAU_TO_FOUNDATION
_T2T = MoveKind.TABLEAU_TO_TABLEAU
_F2T = MoveKind.FOUNDATION_TO_TABLEAU
_UNDO = MoveKind.UNDO
_RESIGN = MoveKind.RESIGN
_AUTO = MoveKind.AUTO_COMPLETE
_PLAYING = Status.PLAYING


def _undone_move(undo: tuple[int, ...]) -> Move:
    """The move an undo record takes back, as the engine reads it (the fields
    its kind does not use at their defaults): what an undo's outcome names."""
    kind = undo[0]
    if kind == _U_T2T:
        return Move(_T2T, undo[1], undo[2], undo[3])
    if kind == _U_W2T:
        return Move(_W2T, 0, undo[1])
    if kind == _U_W2F:
        return Move(_W2F)
    if kind == _U_T2F:
        return Move(_T2F, undo[1])
    return Move(_F2T, undo[2], undo[1])  # _U_F2T: (dst, foundation)


_ONE = tuple(bytes((c,)) for c in range(256))
"""A pile of the one card ``c`` (CPython keeps these as shared singletons)."""


def _goes_on(c: int) -> tuple[int, ...]:
    """The two cards (one rank higher, the other colour) card ``c`` may go on in the
    tableau: none for a king, which only an empty pile takes, and ``(-1,)`` (no card,
    and no empty pile either) for a byte that is no card."""
    if c >= 52:
        return (-1,)
    rank = c % 13
    if rank == 12:
        return ()
    if 13 <= c < 39:  # red: on a black card, clubs or spades
        return (rank + 1, 39 + rank + 1)
    return (13 + rank + 1, 26 + rank + 1)


_GOES_ON = tuple(_goes_on(c) for c in range(256))
"""Per card, what :func:`_goes_on` says: finding the piles a card fits is the inner
loop of listing moves, and a pile's top read from ``bytes`` costs more than a
list's, so the fit is two comparisons."""

# The undo record: (what to take back, then the indices it needs), small ints only
# so that the collector never tracks it. See :meth:`Board._take_back`.
_U_T2T = 0  # (_U_T2T, src, dst, count)
_U_W2T = 1  # (_U_W2T, dst)
_U_W2F = 2  # (_U_W2F, foundation)
_U_T2F = 3  # (_U_T2F, src, foundation)
_U_F2T = 4  # (_U_F2T, dst, foundation)


class Board:
    """A deal in play. Build one with :meth:`deal`."""

    __slots__ = (
        "_undo",
        "down",
        "foundations",
        "home",
        "logged",
        "moves",
        "packs",
        "passes",
        "rules",
        "status",
        "stock",
        "tableau",
        "total",
        "waste",
    )

    def __init__(
        self, rules: DealRules, tableau: Sequence[Iterable[int]], stock: Iterable[int]
    ) -> None:
        """``tableau`` piles bottom first, ``stock`` first card drawn first."""
        self.rules = rules
        self.packs = rules.variant.packs
        self.total = 52 * self.packs
        self.tableau = piles = [bytes(p) for p in tableau]
        if rules.variant is Variant.THOUGHTFUL:
            self.down = bytearray(len(piles))
        else:
            self.down = bytearray([len(p) - 1 if p else 0 for p in piles])
        self.stock = bytes(stock)[::-1]  # top last
        self.waste = b""
        self.foundations = bytearray(4 * self.packs)
        self.home = 0
        self.passes = 1
        self.moves = 0
        self.logged = 0  # accepted moves, undos too: the length of the log
        self.status = _PLAYING
        # How to take back the last move, when it may be (the _U_* records above).
        self._undo: tuple[int, ...] | None = None

    @classmethod
    def deal(cls, seed: str, rules: DealRules) -> Board:
        piles, stock = deal_layout(seed, rules.variant)
        return cls(rules, piles, stock)

    # ------------------------------------------------------------------ queries

    def fits_foundation(self, c: int) -> int:
        """The foundation that takes card ``c``, or -1."""
        # 0-based, the rank is how many cards the foundation must show already
        base = (c // 13) * self.packs
        return self.foundations.find(c % 13, base, base + self.packs)

    @staticmethod
    def _fits_tableau(c: int, pile: bytes) -> Reason | None:
        if not pile:
            return None if c % 13 == 12 else Reason.ONLY_KING_ON_EMPTY
        top = pile[-1]
        if (13 <= top < 39) == (13 <= c < 39):
            return Reason.NOT_ALTERNATING_COLOUR
        if top % 13 != c % 13 + 1:
            return Reason.NOT_ONE_LOWER
        return None

    def _targets(self, c: int) -> list[int]:
        """The tableau piles that take card ``c``, in order."""
        on = _GOES_ON[c]
        found: list[int] = []
        for q, pile in enumerate(self.tableau):
            if pile:
                if pile[-1] in on:
                    found.append(q)
            elif not on:  # a king
                found.append(q)
        return found

    def _foundation_card(self, f: int) -> int:
        """The card on top of foundation ``f``, which must not be empty."""
        return (f // self.packs) * 13 + self.foundations[f] - 1

    def _foundation_moves(self) -> list[tuple[int, int]]:
        """``(foundation, pile)`` of every foundation-to-tableau move the cards allow;
        whether the house rule allows them is the caller's to check."""
        found: list[tuple[int, int]] = []
        # bytes(): mypyc 2.4 fails on a loop over a bytearray (bench/compiled.py)
        for f, top in enumerate(bytes(self.foundations)):
            if top:
                for q in self._targets(self._foundation_card(f)):
                    found.append((f, q))
        return found

    def run_start(self, p: int) -> int:
        """Where the run in sequence on top of pile ``p`` starts (-1 when empty).

        Only face-up cards count. In Classic and Double the whole face-up part is
        always one run, but in Thoughtful every card is dealt face up in no order.
        """
        pile = self.tableau[p]
        i = len(pile) - 1
        d = self.down[p]
        if i <= d:
            return i
        above = pile[i]
        while i > d:
            below = pile[i - 1]
            if below not in _GOES_ON[above]:
                break
            above = below
            i -= 1
        return i

    def _run_moves(self, p: int) -> list[tuple[int, int]]:
        """``(count, target pile)`` of every tableau move from non-empty pile ``p``.

        Sorted by count, then target. Ranks in a run fall one by one, so at most one
        card of the run fits a given target: it is found by arithmetic rather than
        by trying every card of the run on every pile.
        """
        tab = self.tableau
        pile = tab[p]
        size = len(pile)
        start = self.run_start(p)
        head_rank = pile[start] % 13
        found: list[tuple[int, int]] = []
        for q, target in enumerate(tab):
            if q == p:
                continue
            if not target:
                if head_rank == 12:  # only a king heads a run onto an empty pile
                    found.append((size - start, q))
                continue
            t = target[-1]
            i = start + head_rank + 1 - t % 13  # where the card one rank below t lies
            if start <= i < size and (13 <= pile[i] < 39) != (13 <= t < 39):
                found.append((size - i, q))
        found.sort()
        return found

    def can_auto_complete(self) -> bool:
        """Stock and waste empty, every card face up and every pile one run.

        The last condition always holds in Classic and Double once every card is
        face up; in Thoughtful, dealt face up in no order, it is what makes every
        remaining card playable to the foundations.
        """
        if self.status is not _PLAYING or self.stock or self.waste or any(self.down):
            return False
        return all(self.run_start(p) <= 0 for p in range(len(self.tableau)))

    def can_undo(self) -> bool:
        return self.rules.undo and self._undo is not None and self.status is _PLAYING

    def _can_recycle(self) -> bool:
        limit = self.rules.pass_limit
        return bool(self.waste) and not self.stock and (limit == 0 or self.passes < limit)

    def legal_moves(self) -> list[Move]:
        """Every move :meth:`apply` would accept now, except undo and resign."""
        if self.status is not _PLAYING:
            return []
        out: list[Move] = []
        tab = self.tableau
        if self.waste:
            w = self.waste[-1]
            if self.fits_foundation(w) >= 0:
                out.append(Move(_W2F))
            for q in self._targets(w):
                out.append(Move(_W2T, dst=q))
        for p in range(len(tab)):
            pile = tab[p]
            if not pile:
                continue
            if self.fits_foundation(pile[-1]) >= 0:
                out.append(Move(_T2F, src=p))
            for count, q in self._run_moves(p):
                out.append(Move(_T2T, src=p, dst=q, count=count))
        if self.rules.foundation_to_tableau:
            for f, q in self._foundation_moves():
                out.append(Move(_F2T, src=f, dst=q))
        if self.stock:
            out.append(Move(_DRAW))
        elif self._can_recycle():
            out.append(Move(_RECYCLE))
        if self.can_auto_complete():
            out.append(Move(_AUTO))
        return out

    def has_progress_move(self) -> bool:
        """Whether any legal move is left but for a pointless one.

        Moving a whole king-headed pile onto an empty pile changes nothing, so it
        does not keep a deal alive; undo and resign do not either. A deal with no
        such move left is dead (docs/rules.md §4.11).
        """
        if self.stock or self._can_recycle():
            return True
        tab = self.tableau
        if self.waste:
            w = self.waste[-1]
            if self.fits_foundation(w) >= 0 or self._targets(w):
                return True
        for p in range(len(tab)):
            pile = tab[p]
            if not pile:
                continue
            if self.fits_foundation(pile[-1]) >= 0:
                return True
            size = len(pile)
            for count, q in self._run_moves(p):
                if count < size or tab[q]:
                    return True
                # else the whole pile to an empty one: pointless
        return self.rules.foundation_to_tableau and bool(self._foundation_moves())

    # ------------------------------------------------------------------ moves

    def apply(self, move: Move) -> Outcome:
        """Validate and play ``move``; raise :class:`IllegalMove` leaving all as it was.

        The move that makes the log :data:`MAX_MOVES` long kills a deal still in
        play, whatever is left to play (docs/rules.md §4.11)."""
        outcome = self._play(move)
        self.logged = logged = self.logged + 1
        if logged >= MAX_MOVES and self.status is _PLAYING:
            self.status = Status.DEAD
            self._undo = None
            o = outcome
            outcome = Outcome(
                o.move, o.events, o.cards, o.turned, o.pass_started, Status.DEAD, o.undone, o.undid
            )
        return outcome

    def _play(self, move: Move) -> Outcome:
        if self.status is not _PLAYING:
            raise IllegalMove(Reason.DEAL_OVER, f"this deal is over ({self.status.value})")
        kind = move.kind
        events: tuple[Event, ...]
        undo: tuple[int, ...] | None = None
        turned: int | None = None
        pass_started = 0
        if kind is _T2T:
            cards, turned = self._tableau_to_tableau(move)
            events = () if turned is None else (Event.TURN_OVER,)
            if turned is None:
                undo = (_U_T2T, move.src, move.dst, move.count)
        elif kind is _DRAW:
            stock = self.stock
            if not stock:
                raise IllegalMove(Reason.STOCK_EMPTY, "the stock is empty: recycle the waste")
            k = self.rules.draw  # fewer when fewer are left: the slices stop at the end
            drawn = stock[-1 : -k - 1 : -1]  # top first
            self.stock = stock[:-k]
            self.waste += drawn
            cards = tuple(drawn)
            events = ()
        elif kind is _W2F:
            c = self._waste_top()
            f = self.fits_foundation(c)
            if f < 0:
                raise IllegalMove(
                    Reason.FOUNDATION_WONT_TAKE, f"no foundation takes {card_str(c)} yet"
                )
            self.waste = self.waste[:-1]
            self.foundations[f] += 1
            self.home += 1
            cards = (c,)
            events = (Event.WASTE_TO_FOUNDATION,)
            undo = (_U_W2F, f)
        elif kind is _T2F:
            pile = self._pile(move.src)
            if not pile:
                raise IllegalMove(Reason.PILE_EMPTY, f"pile {move.src} is empty")
            c = pile[-1]
            f = self.fits_foundation(c)
            if f < 0:
                raise IllegalMove(
                    Reason.FOUNDATION_WONT_TAKE, f"no foundation takes {card_str(c)} yet"
                )
            self.tableau[move.src] = pile[:-1]
            self.foundations[f] += 1
            self.home += 1
            turned = self._turn_over(move.src)
            cards = (c,)
            if turned is None:
                events = (Event.TABLEAU_TO_FOUNDATION,)
                undo = (_U_T2F, move.src, f)
            else:
                events = (Event.TABLEAU_TO_FOUNDATION, Event.TURN_OVER)
        elif kind is _W2T:
            c = self._waste_top()
            target = self._pile(move.dst)
            self._check_tableau(c, target)
            self.waste = self.waste[:-1]
            self.tableau[move.dst] = target + _ONE[c]
            cards = (c,)
            events = (Event.WASTE_TO_TABLEAU,)
            undo = (_U_W2T, move.dst)
        elif kind is _RECYCLE:
            if self.stock:
                raise IllegalMove(Reason.STOCK_NOT_EMPTY, "recycle only when the stock is empty")
            if not self.waste:
                raise IllegalMove(Reason.WASTE_EMPTY, "the waste is empty: nothing to recycle")
            limit = self.rules.pass_limit
            if limit and self.passes >= limit:
                raise IllegalMove(
                    Reason.PASS_LIMIT_REACHED,
                    f"no passes left: this deal allows {limit} pass(es) through the stock",
                )
            self.stock = self.waste[::-1]
            self.waste = b""
            self.passes += 1
            pass_started = self.passes
            cards = ()
            events = (Event.RECYCLE,)
        elif kind is _F2T:
            if not self.rules.foundation_to_tableau:
                raise IllegalMove(
                    Reason.FOUNDATION_TO_TABLEAU_OFF,
                    "the house rule forbids taking cards back from the foundations",
                )
            if not 0 <= move.src < len(self.foundations):
                raise IllegalMove(Reason.NO_SUCH_PILE, f"there is no foundation {move.src}")
            if not self.foundations[move.src]:
                raise IllegalMove(Reason.FOUNDATION_EMPTY, f"foundation {move.src} is empty")
            c = self._foundation_card(move.src)
            target = self._pile(move.dst)
            self._check_tableau(c, target)
            self.foundations[move.src] -= 1
            self.home -= 1
            self.tableau[move.dst] = target + _ONE[c]
            cards = (c,)
            events = (Event.FOUNDATION_TO_TABLEAU,)
            undo = (_U_F2T, move.dst, move.src)
        elif kind is _UNDO:
            return self._take_back(move)
        elif kind is _RESIGN:
            self.status = Status.RESIGNED
            self._undo = None
            self.moves += 1
            return Outcome(move, (), (), None, 0, self.status)
        elif kind is _AUTO:
            return self._auto_complete(move)
        else:  # pragma: no cover - MoveKind is closed
            raise IllegalMove(Reason.BAD_MOVE, f"unknown move {kind!r}")
        self._undo = undo
        self.moves += 1
        if self.home == self.total:
            self.status = Status.WON
        elif not self.has_progress_move():
            self.status = Status.DEAD
        return Outcome(move, events, cards, turned, pass_started, self.status)

    def _pile(self, p: int) -> bytes:
        if not 0 <= p < len(self.tableau):
            raise IllegalMove(Reason.NO_SUCH_PILE, f"there is no tableau pile {p}")
        return self.tableau[p]

    def _waste_top(self) -> int:
        if not self.waste:
            raise IllegalMove(Reason.WASTE_EMPTY, "the waste is empty")
        return self.waste[-1]

    def _check_tableau(self, c: int, target: bytes) -> None:
        on = _GOES_ON[c]
        if target:
            if target[-1] in on:
                return
        elif not on:  # a king onto an empty pile
            return
        reason = self._fits_tableau(c, target)
        if reason is None:  # pragma: no cover - only a byte that is no card fits so
            return
        if reason is Reason.ONLY_KING_ON_EMPTY:
            raise IllegalMove(reason, f"an empty pile takes only a king, not {card_str(c)}")
        # Colour is checked first (it is the code); the rank is told as well when
        # it is wrong too, so the refusal names every rule the move breaks.
        top = target[-1]
        why: list[str] = []
        also: tuple[Reason, ...] = ()
        if reason is Reason.NOT_ALTERNATING_COLOUR:
            why.append(f"both are {'red' if is_red(c) else 'black'}")
            if top % 13 != c % 13 + 1:
                also = (Reason.NOT_ONE_LOWER,)
        if reason is Reason.NOT_ONE_LOWER or also:
            why.append("needs one rank lower")
        text = f"{card_str(c)} cannot go on {card_str(top)}: {' and '.join(why)}"
        raise IllegalMove(reason, text, also)

    def _turn_over(self, p: int) -> int | None:
        pile = self.tableau[p]
        d = self.down[p]
        if d and len(pile) == d:
            self.down[p] = d - 1
            return pile[-1]
        return None

    def _tableau_to_tableau(self, move: Move) -> tuple[tuple[int, ...], int | None]:
        p = move.src
        q = move.dst
        src = self._pile(p)
        dst = self._pile(q)
        if p == q:
            raise IllegalMove(Reason.SAME_PILE, "a pile cannot move onto itself")
        if not src:
            raise IllegalMove(Reason.PILE_EMPTY, f"pile {move.src} is empty")
        up = len(src) - self.down[move.src]
        k = move.count
        if not 1 <= k <= up:
            raise IllegalMove(
                Reason.BAD_COUNT, f"pile {move.src} has {up} face-up card(s); cannot move {k}"
            )
        if k > 1:
            run = len(src) - self.run_start(move.src)
            if k > run:
                raise IllegalMove(
                    Reason.BAD_COUNT,
                    f"only the top {run} card(s) of pile {move.src} are a run in sequence;"
                    f" cannot move {k}",
                )
        self._check_tableau(src[-k], dst)
        moved = src[-k:]
        tab = self.tableau
        tab[p] = src[:-k]
        tab[q] = dst + moved
        return tuple(moved), self._turn_over(p)

    def _take_back(self, move: Move) -> Outcome:
        if not self.rules.undo:
            raise IllegalMove(Reason.UNDO_OFF, "undo is off in this room")
        if self._undo is None:
            raise IllegalMove(
                Reason.UNDO_NOT_ALLOWED,
                "only the last move may be taken back, and only if it turned nothing over"
                " and drew nothing",
            )
        undo = self._undo
        kind = undo[0]
        tab = self.tableau
        cards: tuple[int, ...]
        if kind == _U_T2T:
            _, p, q, k = undo
            dst = tab[q]
            moved = dst[-k:]
            tab[q] = dst[:-k]
            tab[p] += moved
            cards = tuple(moved)
        elif kind in (_U_W2T, _U_F2T):
            q = undo[1]
            pile = tab[q]
            c = pile[-1]
            tab[q] = pile[:-1]
            if kind == _U_W2T:
                self.waste += _ONE[c]
            else:
                f = undo[2]
                self.foundations[f] += 1
                self.home += 1
            cards = (c,)
        else:  # _U_W2F, _U_T2F
            f = undo[-1]
            c = self._foundation_card(f)
            self.foundations[f] -= 1
            self.home -= 1
            if kind == _U_W2F:
                self.waste += _ONE[c]
            else:
                tab[undo[1]] += _ONE[c]
            cards = (c,)
        self._undo = None
        self.moves -= 1
        return Outcome(move, (), cards, None, 0, self.status, undone=True, undid=_undone_move(undo))

    def _auto_complete(self, move: Move) -> Outcome:
        if not self.can_auto_complete():
            raise IllegalMove(
                Reason.AUTO_COMPLETE_UNAVAILABLE,
                "auto-complete needs an empty stock and waste and every card face up,"
                " every pile one run in sequence",
            )
        played: list[int] = []
        tab = self.tableau
        while self.home < self.total:
            for p, pile in enumerate(tab):
                if pile:
                    c = pile[-1]
                    f = self.fits_foundation(c)
                    if f >= 0:
                        played.append(c)
                        tab[p] = pile[:-1]
                        self.foundations[f] += 1
                        self.home += 1
                        break
            else:  # pragma: no cover - impossible when every card is face up
                raise AssertionError("auto-complete stuck")
        self._undo = None
        self.moves += 1
        self.status = Status.WON
        events = (Event.TABLEAU_TO_FOUNDATION,) * len(played)
        return Outcome(move, events, tuple(played), None, 0, self.status)

    # ------------------------------------------------------------------ copies

    def copy(self) -> Board:
        """An independent copy, to try a move on without touching this board.

        The server validates a move by playing it on a copy, and the solver each
        position it tries. Piles, stock, waste, rules and the undo record are
        immutable and shared: only the list of piles and the two byte arrays are
        copied.
        """
        new = Board.__new__(Board)
        new.rules = self.rules
        new.packs = self.packs
        new.total = self.total
        new.tableau = self.tableau[:]
        new.down = self.down[:]
        new.stock = self.stock
        new.waste = self.waste
        new.foundations = self.foundations[:]
        new.home = self.home
        new.passes = self.passes
        new.moves = self.moves
        new.logged = self.logged
        new.status = self.status
        new._undo = self._undo
        return new

    def fingerprint(self) -> tuple[object, ...]:
        """Everything that makes the position, for comparing two boards."""
        return (
            tuple(tuple(p) for p in self.tableau),
            tuple(self.down),
            tuple(self.stock),
            tuple(self.waste),
            tuple(self.foundations),
            self.passes,
            self.moves,
            self.status,
        )
