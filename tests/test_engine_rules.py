"""The rules of docs/rules.md §4, its event table (docs/rules.md §5.1), house rules
(docs/rules.md §6) and variants (docs/rules.md §1.3), one test (or more) each.

Positions are built by hand. ``make`` takes tableau piles as strings, bottom card
first, with ``|`` between the face-down and the face-up cards ("4D 9C | KS QH": two
down, two up); without a ``|`` the Classic default holds (only the top card up).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from protocol import (
    MAX_MOVES,
    Board,
    DealReplay,
    DealRules,
    Event,
    IllegalMove,
    Move,
    Reason,
    Scoring,
    Settings,
    SettingsError,
    Status,
    TimedMove,
    Variant,
    card_from_str,
    card_str,
    deal_score,
    hidden_cards,
    player_view,
)
from protocol.scoring import event_points
from tests.support.engine_moves import (
    AUTO,
    DRAW,
    F2T,
    RECYCLE,
    RESIGN,
    T2F,
    T2T,
    UNDO,
    W2F,
    W2T,
    K,
    cards,
)


def strs(cs: Any) -> list[str]:
    return [card_str(c) for c in cs]


CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3


def make(
    tableau: list[str],
    stock: str = "QD",
    *,
    waste: str = "",
    foundations: list[int] | None = None,
    rules: DealRules | None = None,
    **rule_kw: Any,
) -> Board:
    """A crafted position. ``stock`` is first-drawn first; ``waste`` bottom first.

    The default stock of one card keeps a position alive (a draw is always left),
    so that the test sees the move it makes and not a dead deal.
    """
    rules = rules or DealRules(**rule_kw)
    piles: list[list[int]] = []
    downs: list[int | None] = []
    for text in tableau:
        if "|" in text:
            below, above = text.split("|")
            piles.append(cards(below) + cards(above))
            downs.append(len(cards(below)))
        else:
            piles.append(cards(text))
            downs.append(None)
    board = Board(rules, piles, cards(stock))
    for p, d in enumerate(downs):
        if d is not None:
            board.down[p] = d
    board.waste = bytes(cards(waste))
    if foundations is not None:
        board.foundations = bytearray(foundations)
        board.home = sum(foundations)
    return board


def state(board: Board) -> tuple[object, ...]:
    """All of a board's state, the undo record included."""
    return (board.fingerprint(), board.home, board._undo, board.can_undo())


def refused(board: Board, move: Move, reason: Reason) -> IllegalMove:
    before = state(board)
    with pytest.raises(IllegalMove) as info:
        board.apply(move)
    assert info.value.reason is reason
    assert info.value.code == reason.value
    assert info.value.message
    assert state(board) == before, "a refused move changed the board"
    return info.value


def pile(board: Board, p: int) -> list[str]:
    return strs(board.tableau[p])


# ======================================================== play (docs/rules.md §4)

# ---- Foundations build up in suit, ace first, up to king.


@pytest.mark.parametrize(("ace", "f"), [("AC", 0), ("AD", 1), ("AH", 2), ("AS", 3)])
def test_an_ace_starts_the_foundation_of_its_suit(ace: str, f: int) -> None:
    b = make([ace, "9C"])
    out = b.apply(T2F(0))
    assert out.events == (Event.TABLEAU_TO_FOUNDATION,)
    assert out.cards == (card_from_str(ace),)
    assert list(b.foundations) == [1 if i == f else 0 for i in range(4)]
    assert b.home == 1
    assert list(b.tableau[0]) == []


def test_foundation_builds_up_in_suit_to_the_king() -> None:
    b = make(["2H", "3H", "KH"], foundations=[0, 0, 1, 0])
    b.apply(T2F(0))
    b.apply(T2F(1))
    assert list(b.foundations) == [0, 0, 3, 0]
    refused(b, T2F(2), Reason.FOUNDATION_WONT_TAKE)  # K on 3: not the next rank
    b.foundations[HEARTS] = 12
    b.apply(T2F(2))
    assert b.foundations[HEARTS] == 13


@pytest.mark.parametrize(
    ("card", "foundations"),
    [
        ("2H", [0, 0, 0, 0]),  # ace first
        ("2H", [1, 1, 0, 1]),  # other suits' aces do not count: in suit
        ("3H", [0, 0, 1, 0]),  # one rank at a time
        ("AH", [0, 0, 1, 0]),  # no second ace of a suit in Classic
        ("5C", [5, 0, 0, 0]),  # same rank
        ("KC", [13, 0, 0, 0]),  # nothing goes on a king
    ],
)
def test_foundation_refuses_anything_but_the_next_card_of_its_suit(
    card: str, foundations: list[int]
) -> None:
    b = make([card], foundations=foundations)
    err = refused(b, T2F(0), Reason.FOUNDATION_WONT_TAKE)
    assert card in err.message
    b = make(["9C"], waste=card, foundations=foundations)
    refused(b, W2F, Reason.FOUNDATION_WONT_TAKE)


def test_waste_to_foundation() -> None:
    b = make(["9C"], waste="3S AD")
    out = b.apply(W2F)
    assert out.events == (Event.WASTE_TO_FOUNDATION,)
    assert out.cards == (card_from_str("AD"),)
    assert list(b.foundations) == [0, 1, 0, 0]
    assert strs(b.waste) == ["3S"]


# ---- Tableau piles build down in alternating colours.


@pytest.mark.parametrize("top", ["9C", "9D", "9H", "9S"])
@pytest.mark.parametrize("moving", ["8C", "8D", "8H", "8S"])
def test_alternating_colours(top: str, moving: str) -> None:
    red = {"D", "H"}
    fits = (top[1] in red) != (moving[1] in red)
    b = make([top, moving])
    w = make([top], waste=moving)
    if fits:
        out = b.apply(T2T(1, 0))
        assert pile(b, 0) == [top, moving]
        assert out.events == ()  # tableau to tableau scores nothing
        w.apply(W2T(0))
        assert pile(w, 0) == [top, moving]
    else:
        err = refused(b, T2T(1, 0), Reason.NOT_ALTERNATING_COLOUR)
        assert "both are" in err.message
        refused(w, W2T(0), Reason.NOT_ALTERNATING_COLOUR)


@pytest.mark.parametrize("rank", list("A23456789TJQK"))
def test_one_rank_lower(rank: str) -> None:
    b = make(["9S", rank + "H"])
    if rank == "8":
        b.apply(T2T(1, 0))
        assert pile(b, 0) == ["9S", "8H"]
    else:
        refused(b, T2T(1, 0), Reason.NOT_ONE_LOWER)


def test_colour_is_checked_before_rank() -> None:
    refused(make(["9S", "3C"]), T2T(1, 0), Reason.NOT_ALTERNATING_COLOUR)


@pytest.mark.parametrize(
    ("top", "moving", "broken"),
    [
        ("8C", "QS", (Reason.NOT_ALTERNATING_COLOUR, Reason.NOT_ONE_LOWER)),
        ("9C", "8S", (Reason.NOT_ALTERNATING_COLOUR,)),
        ("9C", "QH", (Reason.NOT_ONE_LOWER,)),
    ],
)
def test_a_refusal_names_every_rule_the_move_breaks(
    top: str, moving: str, broken: tuple[Reason, ...]
) -> None:
    """The code is the first broken rule; ``broken`` lists them all, and the
    message says each: a queen of spades on an eight of clubs is wrong twice."""
    err = refused(make([top, moving]), T2T(1, 0), broken[0])
    assert err.broken == broken
    assert ("both are" in err.message) == (Reason.NOT_ALTERNATING_COLOUR in broken)
    assert ("one rank lower" in err.message) == (Reason.NOT_ONE_LOWER in broken)
    assert refused(make([top], waste=moving), W2T(0), broken[0]).broken == broken


def test_a_refusal_of_one_rule_names_that_rule() -> None:
    err = refused(make(["9S", "3C"]), T2T(0, 0), Reason.SAME_PILE)
    assert err.broken == (Reason.SAME_PILE,)


# ---- A face-up run moves as one unit; a run may be split.


def run_position(**kw: Any) -> Board:
    # pile 0: KC face down under the run 9H 8S 7D 6C; targets on piles 1..3
    return make(["KC | 9H 8S 7D 6C", "TS", "9D", "8C"], **kw)


def test_a_whole_run_moves_as_one_unit() -> None:
    b = run_position()
    out = b.apply(T2T(0, 1, 4))
    assert pile(b, 1) == ["TS", "9H", "8S", "7D", "6C"]
    assert strs(out.cards) == ["9H", "8S", "7D", "6C"]
    assert pile(b, 0) == ["KC"]
    assert b.down[0] == 0  # the exposed KC turned over
    assert out.turned == card_from_str("KC")


@pytest.mark.parametrize(
    ("count", "dst", "moved"), [(3, 2, ["8S", "7D", "6C"]), (2, 3, ["7D", "6C"])]
)
def test_a_run_may_be_split(count: int, dst: int, moved: list[str]) -> None:
    b = run_position()
    out = b.apply(T2T(0, dst, count))
    assert strs(out.cards) == moved
    assert pile(b, dst)[1:] == moved
    assert b.down[0] == 1 and out.turned is None  # nothing exposed
    assert out.events == ()


def test_the_split_part_must_fit_by_its_top_card() -> None:
    b = run_position()
    refused(b, T2T(0, 1, 2), Reason.NOT_ONE_LOWER)  # 7D on TS
    refused(b, T2T(0, 2, 1), Reason.NOT_ONE_LOWER)  # 6C on 9D
    refused(b, T2T(0, 3, 3), Reason.NOT_ALTERNATING_COLOUR)  # 8S on 8C: colour first
    refused(b, T2T(0, 2, 4), Reason.NOT_ALTERNATING_COLOUR)  # 9H on 9D


@pytest.mark.parametrize("count", [0, -1, 5, 99])
def test_count_must_be_within_the_face_up_run(count: int) -> None:
    err = refused(run_position(), T2T(0, 1, count), Reason.BAD_COUNT)
    assert "4 face-up" in err.message


def test_only_a_run_in_sequence_moves_together_thoughtful() -> None:
    # Thoughtful deals every card face up in no order: 9C 5H is face up but no run.
    b = make(["9C 5H", "TD", "6S"], variant=Variant.THOUGHTFUL)
    assert list(b.down) == [0, 0, 0]
    err = refused(b, T2T(0, 1, 2), Reason.BAD_COUNT)
    assert "run" in err.message
    assert T2T(0, 1, 2) not in b.legal_moves()
    b.apply(T2T(0, 2, 1))  # 5H alone onto 6S
    b.apply(T2T(0, 1, 1))  # then 9C onto TD
    assert pile(b, 1) == ["TD", "9C"]


def test_a_run_in_sequence_within_a_thoughtful_pile_moves() -> None:
    b = make(["4D 9C 8H 7S", "TH", "9D"], variant=Variant.THOUGHTFUL)
    refused(b, T2T(0, 1, 4), Reason.BAD_COUNT)
    assert T2T(0, 1, 3) in b.legal_moves()
    assert T2T(0, 1, 4) not in b.legal_moves()
    b.apply(T2T(0, 1, 3))
    assert pile(b, 1) == ["TH", "9C", "8H", "7S"]


# ---- An empty pile takes only a king, or a run headed by a king.


def empty_position(**kw: Any) -> Board:
    return make(["", "4D | KH QS JD", "QC", "4S | QH JC"], **kw)


def test_a_run_headed_by_a_king_goes_to_an_empty_pile() -> None:
    b = empty_position()
    out = b.apply(T2T(1, 0, 3))
    assert pile(b, 0) == ["KH", "QS", "JD"]
    assert out.turned == card_from_str("4D")


@pytest.mark.parametrize(("src", "count"), [(1, 2), (1, 1), (2, 1), (3, 2), (3, 1)])
def test_an_empty_pile_refuses_all_but_a_king(src: int, count: int) -> None:
    err = refused(empty_position(), T2T(src, 0, count), Reason.ONLY_KING_ON_EMPTY)
    assert "only a king" in err.message


def test_a_king_from_the_waste_goes_to_an_empty_pile_and_a_queen_does_not() -> None:
    b = make(["", "9C"], waste="QD KS")
    b.apply(W2T(0))
    assert pile(b, 0) == ["KS"]
    b = make(["", "9C"], waste="KS QD")
    refused(b, W2T(0), Reason.ONLY_KING_ON_EMPTY)


def test_a_king_from_a_foundation_goes_to_an_empty_pile() -> None:
    b = make(["", "9C"], foundations=[0, 0, 0, 13])
    assert F2T(SPADES, 0) in b.legal_moves()
    out = b.apply(F2T(SPADES, 0))
    assert pile(b, 0) == ["KS"]
    assert out.events == (Event.FOUNDATION_TO_TABLEAU,)
    b = make(["", "9C"], foundations=[0, 0, 12, 0])
    assert F2T(HEARTS, 0) not in b.legal_moves()
    refused(b, F2T(HEARTS, 0), Reason.ONLY_KING_ON_EMPTY)


# ---- An exposed face-down card turns face up at once, and scores.


def test_turn_over_when_a_tableau_move_exposes_a_card() -> None:
    b = make(["3D 5C | 4H", "5S"])
    out = b.apply(T2T(0, 1))
    assert out.turned == card_from_str("5C")
    assert out.events == (Event.TURN_OVER,)
    assert b.down[0] == 1
    assert player_view(b)["tableau"][0] == {"down": 1, "up": ["5C"]}


def test_turn_over_when_a_foundation_move_exposes_a_card() -> None:
    b = make(["9D | AS"])
    out = b.apply(T2F(0))
    assert out.events == (Event.TABLEAU_TO_FOUNDATION, Event.TURN_OVER)
    assert out.turned == card_from_str("9D")
    assert b.down[0] == 0


def test_no_turn_over_when_nothing_face_down_is_exposed() -> None:
    b = make(["3D | 6S 5H", "| 4C", "6C"])
    out = b.apply(T2T(1, 0))  # pile 1 had no face-down card: it just empties
    assert out.turned is None and out.events == ()
    assert list(b.tableau[1]) == [] and b.down[1] == 0
    out = b.apply(T2T(0, 2, 2))  # 5H 4C leave 6S on top: still face up
    assert out.turned is None and out.events == ()
    assert b.down[0] == 1


# ---- The top waste card is playable.


def test_the_top_waste_card_goes_to_a_tableau_pile() -> None:
    b = make(["9C"], waste="2S 8H")
    out = b.apply(W2T(0))
    assert out.events == (Event.WASTE_TO_TABLEAU,)
    assert pile(b, 0) == ["9C", "8H"]
    assert strs(b.waste) == ["2S"]


def test_an_empty_waste_has_nothing_to_play() -> None:
    b = make(["9C"])
    refused(b, W2T(0), Reason.WASTE_EMPTY)
    refused(b, W2F, Reason.WASTE_EMPTY)


# ---- Draw 1 or 3; with draw three only the top is playable; fewer when fewer remain.


def test_draw_one() -> None:
    b = make(["9C"], stock="AC 2D 3H")
    out = b.apply(DRAW)
    assert strs(out.cards) == ["AC"]
    assert out.events == ()
    assert strs(b.waste) == ["AC"]
    b.apply(DRAW)
    assert strs(b.waste) == ["AC", "2D"]
    assert strs(b.stock[::-1]) == ["3H"]


def test_draw_three_and_fewer_when_fewer_remain() -> None:
    b = make(["9C"], stock="AC 2D 3H 4S 5C", draw=3)
    out = b.apply(DRAW)
    assert strs(out.cards) == ["AC", "2D", "3H"]
    assert strs(b.waste) == ["AC", "2D", "3H"]  # 3H drawn last, on top
    assert player_view(b)["waste_cards"] == ["AC", "2D", "3H"]
    out = b.apply(DRAW)
    assert strs(out.cards) == ["4S", "5C"]
    assert list(b.stock) == []
    assert player_view(b)["waste_cards"] == ["3H", "4S", "5C"]  # a fanned waste: top three
    refused(b, DRAW, Reason.STOCK_EMPTY)


def test_draw_three_only_the_top_waste_card_is_playable() -> None:
    # AH and 8H lie in the waste under the top 5C: neither may be played.
    b = make(["9C", "TD"], stock="AH 8H 5C", draw=3)
    b.apply(DRAW)
    assert strs(b.waste) == ["AH", "8H", "5C"]
    refused(b, W2F, Reason.FOUNDATION_WONT_TAKE)
    refused(b, W2T(0), Reason.NOT_ALTERNATING_COLOUR)  # 5C on 9C (8H would fit)
    refused(b, W2T(1), Reason.NOT_ONE_LOWER)  # 5C on TD
    kinds = {m.kind for m in b.legal_moves()}
    assert K.WASTE_TO_FOUNDATION not in kinds and K.WASTE_TO_TABLEAU not in kinds


def test_draw_one_view_shows_the_top_waste_card_only() -> None:
    b = make(["9C"], stock="AC 2D 3H")
    b.apply(DRAW)
    b.apply(DRAW)
    assert player_view(b)["waste_cards"] == ["2D"]
    assert player_view(b)["waste"] == 2


# ---- Recycle: the whole waste turns over, no shuffle; each recycle starts a pass.

ALIVE = ["9C", "8H"]  # 8H onto 9C stays possible, so these positions never go dead


@pytest.mark.parametrize("draw", [1, 3])
def test_recycle_turns_the_waste_over_without_shuffling(draw: int) -> None:
    order = "AC 2D 3H 4S 5C 6D 7H"
    b = make(ALIVE, stock=order, draw=draw)
    seen: list[list[str]] = []
    for _ in range(2):
        drawn: list[str] = []
        while b.stock:
            drawn += strs(b.apply(DRAW).cards)
        seen.append(drawn)
        assert strs(b.waste) == order.split()
        if len(seen) == 1:
            out = b.apply(RECYCLE)
            assert out.events == (Event.RECYCLE,)
            assert out.pass_started == 2
            assert b.passes == 2
            assert list(b.waste) == []
            assert strs(b.stock[::-1]) == order.split()
    assert seen[0] == seen[1] == order.split()


def test_each_recycle_starts_a_new_pass() -> None:
    b = make(ALIVE, stock="AC 2D")
    assert b.passes == 1  # the first pass is the initial run through the stock
    for n in range(2, 7):
        b.apply(DRAW)
        b.apply(DRAW)
        assert b.apply(RECYCLE).pass_started == n
        assert b.passes == n
        assert player_view(b)["passes"] == n


def test_recycle_needs_an_empty_stock_and_a_waste() -> None:
    b = make(ALIVE, stock="AC 2D")
    refused(b, RECYCLE, Reason.STOCK_NOT_EMPTY)
    b.apply(DRAW)
    refused(b, RECYCLE, Reason.STOCK_NOT_EMPTY)
    b = make(ALIVE, stock="")
    refused(b, RECYCLE, Reason.WASTE_EMPTY)


# ---- Pass limit: the house rule, and Vegas's own limit.


def run_through(b: Board) -> None:
    while b.stock:
        b.apply(DRAW)


def passes_allowed(rules: DealRules, tries: int = 25) -> int:
    """Play draws and recycles until a recycle is refused; how many passes were had."""
    b = make(ALIVE, stock="AC 2D 3H 4S", rules=rules)
    for _ in range(tries):
        run_through(b)
        try:
            b.apply(RECYCLE)
        except IllegalMove as err:
            assert err.reason is Reason.PASS_LIMIT_REACHED
            assert b.waste and not b.stock
            return b.passes
    return 0  # no limit met


@pytest.mark.parametrize("limit", [1, 2, 3, 10])
def test_pass_limit(limit: int) -> None:
    assert passes_allowed(DealRules(pass_limit=limit)) == limit
    assert passes_allowed(DealRules(pass_limit=limit, draw=3)) == limit


def test_pass_limit_refusal_changes_nothing() -> None:
    b = make(ALIVE, stock="AC", pass_limit=1)
    b.apply(DRAW)
    err = refused(b, RECYCLE, Reason.PASS_LIMIT_REACHED)
    assert "1 pass" in err.message


@pytest.mark.parametrize(
    ("changes", "limit"),
    [
        ({"scoring": "standard"}, 0),
        ({"scoring": "timed"}, 0),
        ({"scoring": "standard", "draw": 3}, 0),
        ({"scoring": "vegas"}, 1),
        ({"scoring": "vegas", "draw": 3}, 3),
        ({"scoring": "cumulative_vegas"}, 1),
        ({"scoring": "cumulative_vegas", "draw": 3}, 3),
        ({"scoring": "standard", "stock_passes": 2}, 2),
        ({"scoring": "timed", "stock_passes": 10}, 10),
        ({"scoring": "vegas", "stock_passes": 5}, 5),
        ({"scoring": "vegas", "draw": 3, "stock_passes": 1}, 1),
    ],
)
def test_pass_limit_from_settings(changes: dict[str, Any], limit: int) -> None:
    rules = Settings().updated(changes).deal_rules()
    assert rules.pass_limit == limit
    assert passes_allowed(rules) == limit  # 0: 25 passes and never refused


# ---- Foundation to tableau: on by default.


def test_foundation_to_tableau() -> None:
    b = make(["6H"], foundations=[0, 0, 0, 5])
    assert F2T(SPADES, 0) in b.legal_moves()
    out = b.apply(F2T(SPADES, 0))
    assert out.events == (Event.FOUNDATION_TO_TABLEAU,)
    assert pile(b, 0) == ["6H", "5S"]
    assert list(b.foundations) == [0, 0, 0, 4]
    assert b.home == 4


def test_foundation_to_tableau_follows_the_tableau_rules() -> None:
    b = make(["6S", "7H", "6D"], foundations=[0, 0, 0, 5])
    refused(b, F2T(SPADES, 0), Reason.NOT_ALTERNATING_COLOUR)
    refused(b, F2T(SPADES, 1), Reason.NOT_ONE_LOWER)
    b.apply(F2T(SPADES, 2))


def test_foundation_to_tableau_off() -> None:
    assert Settings().foundation_to_tableau is True
    rules = Settings().updated({"foundation_to_tableau": False}).deal_rules()
    b = make(["6H"], foundations=[0, 0, 0, 5], rules=rules)
    refused(b, F2T(SPADES, 0), Reason.FOUNDATION_TO_TABLEAU_OFF)
    assert all(m.kind is not K.FOUNDATION_TO_TABLEAU for m in b.legal_moves())


@pytest.mark.parametrize("src", [-1, 4, 8])
def test_foundation_to_tableau_from_no_such_foundation(src: int) -> None:
    refused(make(["6H"], foundations=[0, 0, 0, 5]), F2T(src, 0), Reason.NO_SUCH_PILE)


def test_foundation_to_tableau_from_an_empty_foundation() -> None:
    refused(make(["6H"], foundations=[0, 0, 0, 5]), F2T(CLUBS, 0), Reason.FOUNDATION_EMPTY)


# ---- Undo: off by default; only the last move, only if it exposed nothing new.

UNDO_ON = DealRules(undo=True)


def test_undo_is_off_by_default() -> None:
    assert Settings().undo is False
    b = make(ALIVE)
    b.apply(T2T(1, 0))
    assert not b.can_undo()
    refused(b, UNDO, Reason.UNDO_OFF)


@pytest.mark.parametrize(
    ("build", "move"),
    [
        (lambda: make(["9C", "| 8H"], rules=UNDO_ON), T2T(1, 0)),
        (lambda: make(["9C", "3D | 6S 5H 4C", "6C"], rules=UNDO_ON), T2T(1, 2, 2)),
        (lambda: make(["9C"], waste="8H", rules=UNDO_ON), W2T(0)),
        (lambda: make(["9C"], waste="2S", foundations=[0, 0, 0, 1], rules=UNDO_ON), W2F),
        (lambda: make(["| 2S", "9C"], foundations=[0, 0, 0, 1], rules=UNDO_ON), T2F(0)),
        (lambda: make(["9C"], foundations=[0, 0, 8, 0], rules=UNDO_ON), F2T(HEARTS, 0)),
    ],
    ids=[
        "tableau_tableau",
        "run",
        "waste_tableau",
        "waste_foundation",
        "tableau_foundation",
        "foundation_tableau",
    ],
)
def test_undo_takes_back_the_last_move(build: Callable[[], Board], move: Move) -> None:
    b = build()
    before = b.fingerprint()
    home = b.home
    out = b.apply(move)
    assert b.can_undo()
    assert player_view(b)["can_undo"] is True
    back = b.apply(UNDO)
    assert back.undone
    assert back.events == ()
    assert back.cards == out.cards
    assert b.fingerprint() == before  # the move count too: as if it never happened
    assert b.home == home
    assert not b.can_undo()
    refused(b, UNDO, Reason.UNDO_NOT_ALLOWED)  # not twice in a row


def test_undo_only_the_last_move() -> None:
    b = make(["9C", "8H", "7S"], rules=UNDO_ON)
    b.apply(T2T(1, 0))
    after_first = b.fingerprint()
    b.apply(T2T(2, 0))
    b.apply(UNDO)
    assert b.fingerprint() == after_first
    refused(b, UNDO, Reason.UNDO_NOT_ALLOWED)
    # a new move may be taken back again
    b.apply(T2T(2, 0))
    b.apply(UNDO)
    assert b.fingerprint() == after_first


def test_nothing_to_undo_at_the_start() -> None:
    refused(make(ALIVE, rules=UNDO_ON), UNDO, Reason.UNDO_NOT_ALLOWED)


@pytest.mark.parametrize(
    ("build", "moves"),
    [
        (lambda: make(["3D | 4H", "5S"], rules=UNDO_ON), [T2T(0, 1)]),  # turn-over
        (lambda: make(["9D | AS"], rules=UNDO_ON), [T2F(0)]),  # turn-over
        (lambda: make(ALIVE, stock="AC 2D", rules=UNDO_ON), [DRAW]),
        (lambda: make(ALIVE, stock="AC", rules=UNDO_ON), [DRAW, RECYCLE]),
    ],
    ids=["turn_over", "foundation_turn_over", "draw", "recycle"],
)
def test_no_undo_of_a_move_that_exposed_something(
    build: Callable[[], Board], moves: list[Move]
) -> None:
    b = build()
    for m in moves:
        b.apply(m)
    assert not b.can_undo()
    refused(b, UNDO, Reason.UNDO_NOT_ALLOWED)


def test_undo_leaves_the_score_as_if_the_move_never_happened() -> None:
    b = make(["9C"], waste="2S", foundations=[0, 0, 0, 1], rules=UNDO_ON)
    result = DealReplay(b)
    for i, m in enumerate([W2F, UNDO]):
        result.record(TimedMove(i, i, m), b.apply(m))
    assert result.steps == []
    assert deal_score(result, Scoring.STANDARD, 0) == 0
    assert deal_score(result, Scoring.VEGAS, 0) == -52 + 5 * 1  # the ace stays home
    assert b.moves == 0


# ---- Auto-complete.


def finished_position(**kw: Any) -> Board:
    # All but six cards home; the six sit face up in two runs.
    return make(["| KH QS JH", "| KS QH JS", ""], stock="", foundations=[13, 13, 10, 10], **kw)


def test_auto_complete_plays_everything_home() -> None:
    b = finished_position()
    assert b.can_auto_complete()
    assert AUTO in b.legal_moves()
    assert player_view(b)["can_auto_complete"] is True
    out = b.apply(AUTO)
    assert sorted(strs(out.cards)) == sorted(["JH", "QH", "KH", "JS", "QS", "KS"])
    assert out.events == (Event.TABLEAU_TO_FOUNDATION,) * 6
    assert out.status is Status.WON and b.status is Status.WON
    assert list(b.foundations) == [13, 13, 13, 13]
    assert b.home == 52
    assert b.moves == 1  # it counts as one move
    assert all(list(p) == [] for p in b.tableau)


@pytest.mark.parametrize(
    "build",
    [
        lambda: make(["| KH QS JH", "| KS QH JS"], stock="9C", foundations=[13, 12, 10, 10]),
        lambda: make(
            ["| KH QS JH", "| KS QH JS"], stock="", waste="KD", foundations=[13, 12, 10, 10]
        ),
        lambda: make(["KD | KH QS JH", "| KS QH JS"], stock="", foundations=[13, 12, 10, 10]),
        lambda: make(
            ["KD JH", "| KS QH JS", "| KH QS"],
            stock="",
            foundations=[13, 12, 10, 10],
            variant=Variant.THOUGHTFUL,
        ),
    ],
    ids=["stock", "waste", "face_down", "thoughtful_out_of_order"],
)
def test_auto_complete_unavailable(build: Callable[[], Board]) -> None:
    b = build()
    assert not b.can_auto_complete()
    assert AUTO not in b.legal_moves()
    refused(b, AUTO, Reason.AUTO_COMPLETE_UNAVAILABLE)


def test_thoughtful_auto_complete_once_in_order() -> None:
    b = make(
        ["KD JH", "KS QH JS", "KH QS"],
        stock="",
        foundations=[13, 12, 10, 10],
        variant=Variant.THOUGHTFUL,
    )
    assert not b.can_auto_complete()
    b.apply(T2T(0, 2))  # JH onto QS: every pile is now one run
    assert b.can_auto_complete()
    assert b.apply(AUTO).status is Status.WON


def test_auto_complete_double() -> None:
    b = make(
        ["| KH QS", "| KS QH"],
        stock="",
        foundations=[13, 13, 13, 13, 11, 13, 11, 13],
        variant=Variant.DOUBLE,
    )
    assert b.home == 100
    out = b.apply(AUTO)
    assert b.home == 104 and out.status is Status.WON


# ---- Won, resigned, dead.


def test_won_when_every_card_is_home() -> None:
    b = make(["KS", "9C"], stock="", foundations=[13, 13, 13, 12])
    out = b.apply(T2F(0))
    assert out.status is Status.WON and b.status is Status.WON
    for m in (DRAW, RESIGN, UNDO, AUTO, T2T(1, 0)):
        refused(b, m, Reason.DEAL_OVER)
    assert b.legal_moves() == []


def test_won_from_the_waste() -> None:
    b = make(["9C"], stock="", waste="KH", foundations=[13, 13, 12, 13])
    assert b.apply(W2F).status is Status.WON


def test_resign_at_any_time() -> None:
    b = Board.deal("resign", DealRules())
    out = b.apply(RESIGN)
    assert out.status is Status.RESIGNED and b.status is Status.RESIGNED
    assert b.moves == 1
    err = refused(b, DRAW, Reason.DEAL_OVER)
    assert "resigned" in err.message
    refused(b, RESIGN, Reason.DEAL_OVER)
    assert b.legal_moves() == []


def test_dead_when_the_pass_limit_is_reached_and_nothing_moves() -> None:
    b = make(["KS", "4D"], stock="5H", pass_limit=1)
    out = b.apply(DRAW)
    assert out.status is Status.DEAD and b.status is Status.DEAD
    refused(b, RECYCLE, Reason.DEAL_OVER)
    assert b.legal_moves() == []


def test_not_dead_while_passes_are_left() -> None:
    b = make(["KS", "4D"], stock="5H", pass_limit=2)
    assert b.apply(DRAW).status is Status.PLAYING
    b.apply(RECYCLE)
    assert b.apply(DRAW).status is Status.DEAD


def test_free_passes_never_go_dead_while_the_waste_has_cards() -> None:
    b = make(["KS", "4D"], stock="5H")
    for _ in range(30):
        assert b.apply(DRAW).status is Status.PLAYING
        b.apply(RECYCLE)


def test_a_whole_king_pile_to_an_empty_pile_does_not_keep_a_deal_alive() -> None:
    b = make(["| KS QH", ""], stock="", waste="5H", pass_limit=1)
    assert b.legal_moves() == [T2T(0, 1, 2)]  # legal, but it changes nothing
    assert not b.has_progress_move()
    b = make(["| KS QH", "", "9C"], stock="5H", pass_limit=1)
    assert b.apply(DRAW).status is Status.DEAD


@pytest.mark.parametrize(
    "build",
    [
        lambda: make(["4D | KS", ""], stock="", waste="5H", pass_limit=1),  # exposes 4D
        lambda: make(
            ["| 9C KS", ""], stock="", waste="5H", pass_limit=1, variant=Variant.THOUGHTFUL
        ),  # frees 9C
        lambda: make(["KS", "6C"], stock="", waste="5H", pass_limit=1),  # 5H onto 6C
        lambda: make(
            ["KS", "4D"], stock="", waste="5H", pass_limit=1, foundations=[0, 0, 4, 0]
        ),  # 5H home
        lambda: make(
            ["KS", "4D"], stock="", waste="5H", pass_limit=1, foundations=[3, 0, 0, 0]
        ),  # 3C back onto 4D
        lambda: make(
            ["QH", ""], stock="", waste="5H", pass_limit=1, foundations=[0, 0, 0, 13]
        ),  # KS back onto the empty pile
    ],
    ids=[
        "king_run_exposes",
        "thoughtful_king_run_frees",
        "waste_tableau",
        "waste_foundation",
        "foundation_tableau",
        "foundation_king_to_empty",
    ],
)
def test_any_real_move_keeps_a_deal_alive(build: Callable[[], Board]) -> None:
    assert build().has_progress_move()


def test_the_move_that_leaves_no_move_makes_the_deal_dead() -> None:
    # 8H onto 9C is the last move: then nothing can move and no pass is left.
    b = make(["9C", "8H"], stock="", waste="2D", pass_limit=1)
    assert b.status is Status.PLAYING
    assert b.apply(T2T(1, 0)).status is Status.DEAD


def loop_moves() -> list[Move]:
    """Draws and recycles forever: free passes keep the deal alive (docs/rules.md §4.7)."""
    return [DRAW, RECYCLE] * (MAX_MOVES // 2 + 1)


def test_the_move_limit_makes_a_deal_dead() -> None:
    """docs/rules.md §4.11: the move that fills the log (5 000 accepted moves) kills the deal."""
    assert MAX_MOVES == 5_000
    b = make(["KS", "4D"], stock="5H")
    moves = loop_moves()
    for i in range(MAX_MOVES - 1):
        assert b.apply(moves[i]).status is Status.PLAYING
    assert b.has_progress_move()  # alive by the rules of play …
    out = b.apply(moves[MAX_MOVES - 1])
    assert out.status is Status.DEAD and b.status is Status.DEAD  # … dead by the limit
    assert b.logged == MAX_MOVES
    refused(b, moves[MAX_MOVES], Reason.DEAL_OVER)
    assert b.legal_moves() == [] and not b.can_undo()


def test_undos_count_toward_the_move_limit() -> None:
    b = make(["KS", "8D"], stock="QD", waste="7C", undo=True)
    for _ in range(MAX_MOVES // 2 - 1):
        b.apply(W2T(1))
        assert b.apply(UNDO).undone
    assert (b.moves, b.logged) == (0, MAX_MOVES - 2)
    b.apply(W2T(1))
    out = b.apply(UNDO)  # the 5 000th: taken back, and the deal is over
    assert out.undone and out.status is Status.DEAD and b.moves == 0


def test_a_win_or_a_resign_at_the_move_limit_stands() -> None:
    b = make(["9C"], stock="", waste="KH", foundations=[13, 13, 12, 13])
    b.logged = MAX_MOVES - 1
    assert b.apply(W2F).status is Status.WON
    b = Board.deal("limit", DealRules())
    b.logged = MAX_MOVES - 1
    assert b.apply(RESIGN).status is Status.RESIGNED


def test_a_copy_keeps_the_count_toward_the_move_limit() -> None:
    b = make(["KS", "4D"], stock="5H")
    b.apply(DRAW)
    assert b.copy().logged == b.logged == 1


# ---- Wire form of a move.


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        "draw",
        {},
        {"kind": "fly"},
        {"kind": "tableau_tableau", "from": 0},
        {"kind": "tableau_tableau", "from": "0", "to": 1},
        {"kind": "waste_tableau", "to": True},
        {"kind": "foundation_tableau", "from": 1.0, "to": 2},
        {"kind": "tableau_tableau", "from": 0, "to": 1, "count": None},
    ],
)
def test_malformed_moves_are_refused_as_bad_move(data: Any) -> None:
    b = Board.deal("wire", DealRules())
    before = state(b)
    with pytest.raises(IllegalMove) as info:
        b.apply(Move.from_wire(data))
    assert info.value.reason is Reason.BAD_MOVE
    assert info.value.code == "bad_move"
    assert state(b) == before


def test_an_unknown_move_kind_reaching_apply_is_a_bad_move() -> None:
    b = Board.deal("wire", DealRules())
    refused(b, Move("fly"), Reason.BAD_MOVE)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "move",
    [DRAW, RECYCLE, UNDO, RESIGN, AUTO, W2F, W2T(3), T2F(6), T2T(1, 2, 3), F2T(5, 0)],
)
def test_move_wire_round_trip(move: Move) -> None:
    assert Move.from_wire(move.to_wire()) == move


def test_move_wire_count_defaults_to_one() -> None:
    assert Move.from_wire({"kind": "tableau_tableau", "from": 2, "to": 5}) == T2T(2, 5, 1)


# ---- Piles by number; same pile; empty pile.


@pytest.mark.parametrize(
    "move", [T2T(7, 0), T2T(0, 7), T2T(-1, 0), T2F(7), T2F(-1), W2T(7), W2T(-1), F2T(3, 9)]
)
def test_no_such_pile(move: Move) -> None:
    b = make(["9C", "8H", "7S", "6D", "5C", "4H", "KS"], waste="QD", foundations=[0, 0, 0, 1])
    refused(b, move, Reason.NO_SUCH_PILE)


def test_same_pile() -> None:
    refused(make(ALIVE), T2T(0, 0), Reason.SAME_PILE)


def test_empty_source_pile() -> None:
    b = make(["", "9C"])
    refused(b, T2T(0, 1), Reason.PILE_EMPTY)
    refused(b, T2F(0), Reason.PILE_EMPTY)


# ---- Every refusal code is covered above, and refusals leave the board as it was.

REFUSALS: list[tuple[Reason, Callable[[], Board], Move]] = [
    (Reason.BAD_MOVE, lambda: make(ALIVE), Move("fly")),  # type: ignore[arg-type]
    (Reason.DEAL_OVER, lambda: _resigned(make(ALIVE)), DRAW),
    (Reason.NO_SUCH_PILE, lambda: make(ALIVE), T2T(0, 2)),
    (Reason.SAME_PILE, lambda: make(ALIVE), T2T(1, 1)),
    (Reason.STOCK_EMPTY, lambda: make(ALIVE, stock=""), DRAW),
    (Reason.STOCK_NOT_EMPTY, lambda: make(ALIVE, waste="2C"), RECYCLE),
    (Reason.WASTE_EMPTY, lambda: make(ALIVE), W2F),
    (Reason.PASS_LIMIT_REACHED, lambda: _at_limit(), RECYCLE),
    (Reason.PILE_EMPTY, lambda: make(["", "9C"]), T2T(0, 1)),
    (Reason.BAD_COUNT, lambda: make(ALIVE), T2T(1, 0, 2)),
    (Reason.NOT_ALTERNATING_COLOUR, lambda: make(["9C", "8S"]), T2T(1, 0)),
    (Reason.NOT_ONE_LOWER, lambda: make(["9C", "7H"]), T2T(1, 0)),
    (Reason.ONLY_KING_ON_EMPTY, lambda: make(["", "QH"]), T2T(1, 0)),
    (Reason.FOUNDATION_WONT_TAKE, lambda: make(["2C"]), T2F(0)),
    (Reason.FOUNDATION_EMPTY, lambda: make(ALIVE), F2T(0, 0)),
    (
        Reason.FOUNDATION_TO_TABLEAU_OFF,
        lambda: make(["9H"], foundations=[8, 0, 0, 0], foundation_to_tableau=False),
        F2T(0, 0),
    ),
    (Reason.UNDO_OFF, lambda: _moved(make(ALIVE)), UNDO),
    (Reason.UNDO_NOT_ALLOWED, lambda: make(ALIVE, rules=UNDO_ON), UNDO),
    (Reason.AUTO_COMPLETE_UNAVAILABLE, lambda: make(ALIVE), AUTO),
]


def _resigned(b: Board) -> Board:
    b.apply(RESIGN)
    return b


def _moved(b: Board) -> Board:
    b.apply(T2T(1, 0))
    return b


def _at_limit() -> Board:
    b = make(ALIVE, stock="2C", pass_limit=1)
    b.apply(DRAW)
    return b


def test_every_refusal_code_is_covered() -> None:
    assert {reason for reason, _, _ in REFUSALS} == set(Reason)


@pytest.mark.parametrize(
    ("reason", "build", "move"), REFUSALS, ids=[r.value for r, _, _ in REFUSALS]
)
def test_a_refusal_changes_nothing(reason: Reason, build: Callable[[], Board], move: Move) -> None:
    b = build()
    refused(b, move, reason)
    # and the board still plays on as before
    if b.status is Status.PLAYING and b.legal_moves():
        b.apply(b.legal_moves()[0])


def test_a_refusal_keeps_the_undo_record() -> None:
    b = make(["9C", "8H", "KD"], rules=UNDO_ON)
    b.apply(T2T(1, 0))
    refused(b, T2T(2, 0), Reason.NOT_ALTERNATING_COLOUR)
    assert b.can_undo()
    b.apply(UNDO)
    assert pile(b, 1) == ["8H"]


# ====================================================== events (docs/rules.md §5.1)

EVENT_ROWS: list[tuple[str, Callable[[], Board], Move, tuple[Event, ...]]] = [
    ("waste_to_tableau", lambda: make(["9C"], waste="8H"), W2T(0), (Event.WASTE_TO_TABLEAU,)),
    ("waste_to_foundation", lambda: make(["9C"], waste="AH"), W2F, (Event.WASTE_TO_FOUNDATION,)),
    ("tableau_to_foundation", lambda: make(["| AH", "9C"]), T2F(0), (Event.TABLEAU_TO_FOUNDATION,)),
    ("turn_over", lambda: make(["2D | 8H", "9C"]), T2T(0, 1), (Event.TURN_OVER,)),
    (
        "foundation_to_tableau",
        lambda: make(["9C"], foundations=[0, 0, 8, 0]),
        F2T(2, 0),
        (Event.FOUNDATION_TO_TABLEAU,),
    ),
    ("recycle", lambda: make(ALIVE, stock="", waste="2D"), RECYCLE, (Event.RECYCLE,)),
    ("tableau_to_tableau", lambda: make(["9C", "| 8H"]), T2T(1, 0), ()),
    ("draw", lambda: make(ALIVE), DRAW, ()),
]


@pytest.mark.parametrize(
    ("name", "build", "move", "events"), EVENT_ROWS, ids=[r[0] for r in EVENT_ROWS]
)
def test_each_move_reports_its_scoring_events(
    name: str, build: Callable[[], Board], move: Move, events: tuple[Event, ...]
) -> None:
    assert build().apply(move).events == events


@pytest.mark.parametrize(
    ("event", "pass_started", "draw", "points"),
    [
        (Event.WASTE_TO_TABLEAU, 0, 1, 5),
        (Event.WASTE_TO_FOUNDATION, 0, 1, 10),
        (Event.TABLEAU_TO_FOUNDATION, 0, 1, 10),
        (Event.TURN_OVER, 0, 1, 5),
        (Event.FOUNDATION_TO_TABLEAU, 0, 1, -15),
        (Event.RECYCLE, 2, 1, -100),  # draw one: the 2nd pass pays
        (Event.RECYCLE, 3, 1, -100),
        (Event.RECYCLE, 9, 1, -100),
        (Event.RECYCLE, 2, 3, 0),  # draw three: 2nd and 3rd passes free
        (Event.RECYCLE, 3, 3, 0),
        (Event.RECYCLE, 4, 3, -20),  # from the 4th on
        (Event.RECYCLE, 5, 3, -20),
        (Event.RECYCLE, 11, 3, -20),
        (Event.WASTE_TO_TABLEAU, 0, 3, 5),  # the draw does not change the other rows
        (Event.TURN_OVER, 0, 3, 5),
        (Event.FOUNDATION_TO_TABLEAU, 0, 3, -15),
    ],
)
def test_standard_table(event: Event, pass_started: int, draw: int, points: int) -> None:
    assert event_points(event, pass_started, draw) == points


# ================================================= house rules (docs/rules.md §6)


def test_defaults() -> None:
    s = Settings()
    assert s.to_wire() == {
        "scoring": "standard",
        "draw": 1,
        "deals_per_round": 3,
        "stock_passes": 0,
        "time_limit_minutes": 0,
        "race_bonus": 100,
        "variant": "classic",
        "undo": False,
        "foundation_to_tableau": True,
        "spectators": "live",
        "deals": "random",
        "break_seconds": 10,
        "rated": False,
    }
    assert s.deal_rules() == DealRules(
        variant=Variant.CLASSIC, draw=1, pass_limit=0, undo=False, foundation_to_tableau=True
    )


def test_winnable_deals_are_refused_for_double_whichever_changes() -> None:
    winnable = Settings().updated({"deals": "winnable"})
    assert winnable.to_wire()["deals"] == "winnable"
    assert winnable.updated({"variant": "thoughtful"}).variant is Variant.THOUGHTFUL
    with pytest.raises(SettingsError, match="double") as exc:
        winnable.updated({"variant": "double"})
    assert exc.value.field == "variant"
    double = Settings().updated({"variant": "double"})
    with pytest.raises(SettingsError, match="no solver proves") as exc:
        double.updated({"deals": "winnable"})
    assert exc.value.field == "deals"
    with pytest.raises(SettingsError):
        Settings().updated({"deals": "winnable", "variant": "double"})
    assert double.updated({"deals": "winnable", "variant": "classic"}).deals.value == "winnable"
    with pytest.raises(SettingsError, match="random, winnable"):
        Settings().updated({"deals": "proven"})


GOOD: dict[str, list[Any]] = {
    "scoring": ["standard", "vegas", "cumulative_vegas", "timed"],
    "draw": [1, 3],
    "deals_per_round": list(range(1, 21)),
    "stock_passes": list(range(0, 11)),
    "time_limit_minutes": list(range(0, 121, 5)),
    "race_bonus": list(range(0, 1001, 5)),
    "variant": ["classic", "thoughtful", "double"],
    "undo": [True, False],
    "foundation_to_tableau": [True, False],
}

BAD: dict[str, list[Any]] = {
    "scoring": ["Standard", "poker", "", 1, None, ["vegas"]],
    "draw": [0, 2, 4, -1, True, "1", 1.0, None],
    "deals_per_round": [0, 21, -1, 100, True, "3", 3.0],
    "stock_passes": [-1, 11, 1.5, False, "0"],
    "time_limit_minutes": [-5, 1, 3, 7, 119, 121, 125, 5.0, "5"],
    "race_bonus": [-5, 1, 4, 6, 999, 1001, 1005, 100.0, "100"],
    "variant": ["Classic", "spider", 0, None],
    "undo": [1, 0, "on", "true", None],
    "foundation_to_tableau": [1, 0, "off", None],
}


@pytest.mark.parametrize("field", sorted(GOOD))
def test_every_allowed_value_is_accepted(field: str) -> None:
    for value in GOOD[field]:
        s = Settings().updated({field: value})
        assert s.to_wire()[field] == value


@pytest.mark.parametrize(("field", "value"), [(f, v) for f in sorted(BAD) for v in BAD[f]])
def test_a_bad_value_names_its_field(field: str, value: Any) -> None:
    with pytest.raises(SettingsError) as info:
        Settings().updated({field: value})
    assert info.value.field == field
    assert field in info.value.message
    assert isinstance(info.value, ValueError)


def test_unknown_setting() -> None:
    with pytest.raises(SettingsError) as info:
        Settings().updated({"jokers": True})
    assert info.value.field == "jokers"


def test_settings_must_be_a_map() -> None:
    with pytest.raises(SettingsError) as info:
        Settings().updated([("draw", 3)])  # type: ignore[arg-type]
    assert info.value.field == "settings"


def test_a_bad_update_changes_nothing_and_names_the_first_bad_field() -> None:
    s = Settings()
    with pytest.raises(SettingsError) as info:
        s.updated({"draw": 3, "race_bonus": 7, "deals_per_round": 0})
    assert info.value.field == "race_bonus"
    assert s == Settings()


def test_settings_wire_round_trip() -> None:
    s = Settings().updated(
        {"scoring": "timed", "draw": 3, "variant": "double", "undo": True, "race_bonus": 250}
    )
    assert Settings.from_wire(s.to_wire()) == s
    rules = s.deal_rules()
    assert DealRules.from_wire(rules.to_wire()) == rules


def test_settings_that_change_what_is_legal_go_into_the_deal_rules() -> None:
    s = Settings().updated(
        {
            "draw": 3,
            "stock_passes": 4,
            "variant": "thoughtful",
            "undo": True,
            "foundation_to_tableau": False,
        }
    )
    assert s.deal_rules() == DealRules(Variant.THOUGHTFUL, 3, 4, True, False)
    # Points-only settings leave the rules of a deal alone.
    assert Settings().updated({"scoring": "timed", "race_bonus": 0}).deal_rules() == DealRules()


def test_a_dealt_board_keeps_its_rules_when_the_settings_change() -> None:
    s = Settings()
    b = Board.deal("keep", s.deal_rules())
    s = s.updated({"draw": 3, "undo": True, "variant": "double"})
    assert s.deal_rules() != DealRules()
    assert b.rules == DealRules()
    assert len(b.apply(DRAW).cards) == 1
    assert len(b.tableau) == 7


# ==================================================== variants (docs/rules.md §1.3)

# ---- Classic


def test_classic_hides_the_stock_and_face_down_cards() -> None:
    b = Board.deal("classic view", DealRules())
    view = player_view(b)
    assert "stock_cards" not in view
    assert view["stock"] == 24
    assert [t["down"] for t in view["tableau"]] == list(range(7))
    assert all(len(t["up"]) == 1 for t in view["tableau"])
    assert len(hidden_cards(b)) == 24 + 21


# ---- Thoughtful


def test_thoughtful_deals_everything_face_up() -> None:
    b = Board.deal("thoughtful", DealRules(variant=Variant.THOUGHTFUL))
    assert list(b.down) == [0] * 7
    view = player_view(b)
    assert [t["up"] for t in view["tableau"]] == [strs(p) for p in b.tableau]
    assert view["stock_cards"] == strs(b.stock[::-1])  # draw order, first drawn first
    assert len(view["stock_cards"]) == 24
    assert hidden_cards(b) == set()


def test_thoughtful_shows_the_whole_waste() -> None:
    b = Board.deal("thoughtful", DealRules(variant=Variant.THOUGHTFUL))
    for _ in range(5):
        b.apply(DRAW)
    assert player_view(b)["waste_cards"] == strs(b.waste)
    assert len(b.waste) == 5


def test_thoughtful_never_turns_over() -> None:
    b = make(["9C 5H", "6S", "TD"], variant=Variant.THOUGHTFUL)
    out = b.apply(T2T(0, 1))  # 5H leaves 9C on top, face up all along
    assert out.events == () and out.turned is None
    out = b.apply(T2T(0, 2))  # 9C leaves an empty pile
    assert out.events == () and out.turned is None
    assert list(b.down) == [0, 0, 0]


def test_thoughtful_random_play_scores_no_turn_over() -> None:
    import random

    rng = random.Random(5)
    for i in range(20):
        b = Board.deal(f"t{i}", DealRules(variant=Variant.THOUGHTFUL))
        for _ in range(300):
            moves = b.legal_moves()
            if not moves:
                break
            out = b.apply(rng.choice(moves))
            assert Event.TURN_OVER not in out.events
            assert out.turned is None


# ---- Double


def test_double_has_nine_piles_and_eight_foundations() -> None:
    b = Board.deal("double", DealRules(variant=Variant.DOUBLE))
    assert len(b.tableau) == 9
    assert [len(p) for p in b.tableau] == list(range(1, 10))
    assert len(b.stock) == 59
    assert list(b.foundations) == [0] * 8
    assert b.total == 104
    view = player_view(b)
    assert len(view["foundations"]) == 8


def test_double_a_card_goes_to_either_foundation_of_its_suit() -> None:
    b = make(["AS", "AS", "2S", "3S", "9D"], variant=Variant.DOUBLE)
    b.apply(T2F(0))
    b.apply(T2F(1))  # the second ace of spades takes the second spade foundation
    assert list(b.foundations) == [0, 0, 0, 0, 0, 0, 1, 1]
    b.apply(T2F(2))
    b.apply(T2F(3))
    # both fitted either ace: each went to the first spade foundation that fits
    assert list(b.foundations) == [0, 0, 0, 0, 0, 0, 3, 1]


def test_double_the_second_foundation_takes_what_the_first_does_not() -> None:
    b = make(["2S", "4S", "9D"], foundations=[0, 0, 0, 0, 0, 0, 3, 1], variant=Variant.DOUBLE)
    b.apply(T2F(0))  # 2S fits only the second spade foundation (on AS)
    assert list(b.foundations[6:]) == [3, 2]
    b.apply(T2F(1))  # 4S fits only the first (on 3S)
    assert list(b.foundations[6:]) == [4, 2]
    refused(
        make(["5S"], foundations=[0] * 6 + [3, 1], variant=Variant.DOUBLE),
        T2F(0),
        Reason.FOUNDATION_WONT_TAKE,
    )


def test_double_foundations_are_fixed_per_suit() -> None:
    # foundation f holds suit f // 2: clubs 0-1, diamonds 2-3, hearts 4-5, spades 6-7
    for suit, ace in enumerate(["AC", "AD", "AH", "AS"]):
        b = make([ace, ace, "9D"], variant=Variant.DOUBLE)
        b.apply(T2F(0))
        b.apply(T2F(1))
        assert [i for i, top in enumerate(b.foundations) if top] == [2 * suit, 2 * suit + 1]
        view = player_view(b)
        assert view["foundations"][2 * suit] == ace == view["foundations"][2 * suit + 1]


def test_double_foundation_to_tableau_from_either() -> None:
    b = make(["6H", "6D"], foundations=[0] * 6 + [5, 5], variant=Variant.DOUBLE)
    b.apply(F2T(7, 0))
    b.apply(F2T(6, 1))
    assert list(b.foundations[6:]) == [4, 4]
    assert pile(b, 0) == ["6H", "5S"]


def _won_double() -> DealReplay:
    b = make(["KS", "9D"], stock="", foundations=[13] * 7 + [12], variant=Variant.DOUBLE)
    result = DealReplay(b)
    result.record(TimedMove(95_400, 1, T2F(0)), b.apply(T2F(0)))
    assert b.status is Status.WON
    return result


def test_double_targets_vegas() -> None:
    b = Board.deal("double", DealRules(variant=Variant.DOUBLE))
    assert deal_score(DealReplay(b), Scoring.VEGAS, 0) == -104
    assert deal_score(DealReplay(b), Scoring.CUMULATIVE_VEGAS, 0) == -104
    won = _won_double()
    assert won.board.home == 104
    assert deal_score(won, Scoring.VEGAS, 0) == -104 + 520 == 416


def test_double_targets_timed_bonus() -> None:
    won = _won_double()
    # standard part: one tableau-to-foundation (+10); nine ticks came before it at
    # 10..90 s, all clipped at 0; bonus 1 400 000 // 95 = 14 736.
    assert deal_score(won, Scoring.TIMED, 95_400) == 10 + 1_400_000 // 95 == 10 + 14_736
    assert deal_score(won, Scoring.STANDARD, 95_400) == 10
