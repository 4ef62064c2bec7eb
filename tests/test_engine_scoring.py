"""Scoring (docs/rules.md §5): the four systems, the race bonus, the score sheet and
rescoring after a change of setting, from crafted positions and from whole scripted deals.

Every expected number is worked out by hand in a comment from the events of the
moves, not copied from the engine's output.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import (
    Board,
    DealEntry,
    DealReplay,
    DealRules,
    Event,
    Move,
    Outcome,
    Scoring,
    Settings,
    Status,
    TimedMove,
    Variant,
    build_sheet,
    deal_score,
    replay,
)
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
    cards,
)

STANDARD, VEGAS, CUMULATIVE, TIMED = (
    Scoring.STANDARD,
    Scoring.VEGAS,
    Scoring.CUMULATIVE_VEGAS,
    Scoring.TIMED,
)


def make(
    tableau: list[str],
    stock: str = "QD",
    *,
    waste: str = "",
    foundations: list[int] | None = None,
    **rule_kw: Any,
) -> Board:
    """A crafted Classic position: piles bottom first, ``|`` after the face-down cards."""
    rules = DealRules(**rule_kw)
    piles, downs = [], []
    for text in tableau:
        below, _, above = text.rpartition("|")
        piles.append(cards(below) + cards(above))
        downs.append(len(cards(below)) if "|" in text else max(len(cards(text)) - 1, 0))
    board = Board(rules, piles, cards(stock))
    board.down = downs
    board.waste = bytes(cards(waste))
    if foundations is not None:
        board.foundations = bytearray(foundations)
        board.home = sum(foundations)
    return board


def play(board: Board, moves: list[Move], times: list[int] | None = None) -> DealReplay:
    """Apply ``moves`` at ``times`` (ms; default 0, 1, 2, …) and keep the trace."""
    result = DealReplay(board)
    for i, move in enumerate(moves):
        t = times[i] if times is not None else i
        result.record(TimedMove(t, i, move), board.apply(move))
    return result


def std(board: Board, moves: list[Move]) -> int:
    return deal_score(play(board, moves), STANDARD, 0)


# A position whose waste holds the clubs ace to king (king on the bottom), so that
# n waste-to-foundation moves bank 10 n points; 8H onto 9C keeps it alive.
def clubs_in_waste(**kw: Any) -> Board:
    return make(["9C", "8H"], stock="", waste="KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C AC", **kw)


# ======================================================================= Standard table


def test_standard_starts_at_zero() -> None:
    assert deal_score(DealReplay(Board.deal("zero", DealRules())), STANDARD, 999_999) == 0


def test_waste_to_tableau_scores_5() -> None:
    assert std(make(["9C"], waste="8H"), [W2T(0)]) == 5


def test_waste_to_foundation_scores_10() -> None:
    assert std(make(["9C"], waste="AH"), [W2F]) == 10


def test_tableau_to_foundation_scores_10() -> None:
    assert std(make(["| AH", "9C"]), [T2F(0)]) == 10


def test_turn_over_scores_5() -> None:
    assert std(make(["2D | 8H", "9C"]), [T2T(0, 1)]) == 5  # the move itself scores 0


def test_tableau_to_foundation_with_a_turn_over_scores_15() -> None:
    assert std(make(["2D | AH", "9C"]), [T2F(0)]) == 10 + 5


def test_foundation_to_tableau_costs_15() -> None:
    # Two cards home (+20), the 2H back onto 3S (-15): 5.
    b = make(["3S"], waste="2H AH")
    assert std(b, [W2F, W2F, F2T(2, 0)]) == 10 + 10 - 15


def test_tableau_to_tableau_and_draw_score_nothing() -> None:
    assert std(make(["9C", "| 8H"], stock="AC 2C"), [T2T(1, 0), DRAW, DRAW]) == 0


def test_recycle_penalties_by_pass_draw_one() -> None:
    # pass 2 is already a penalty: from 130 the 2nd pass leaves 30, the 3rd 0 (clip).
    b = clubs_in_waste()
    r = play(b, [W2F] * 13)
    assert deal_score(r, STANDARD, 0) == 130
    b.waste = bytes(cards("5H"))
    for move in (RECYCLE, DRAW):
        r.record(TimedMove(0, 0, move), b.apply(move))
    assert b.passes == 2 and deal_score(r, STANDARD, 0) == 30
    for move in (RECYCLE, DRAW):
        r.record(TimedMove(0, 0, move), b.apply(move))
    assert b.passes == 3 and deal_score(r, STANDARD, 0) == 0


def test_recycle_penalties_by_pass_draw_three() -> None:
    # Draw three: passes 2 and 3 are free, the 4th and later cost 20 each.
    b = clubs_in_waste(draw=3)
    r = play(b, [W2F] * 13)  # 130
    b.waste = bytes(cards("5H"))
    expected = {2: 130, 3: 130, 4: 110, 5: 90, 6: 70}
    for n in range(2, 7):
        for move in (RECYCLE, DRAW):
            r.record(TimedMove(0, 0, move), b.apply(move))
        assert b.passes == n
        assert deal_score(r, STANDARD, 0) == expected[n]


def test_recycle_on_the_first_passes_is_free_at_zero_too() -> None:
    b = make(["9C", "8H"], stock="", waste="5D", draw=3)
    r = play(b, [RECYCLE, DRAW, RECYCLE, DRAW])
    assert b.passes == 3
    assert deal_score(r, STANDARD, 0) == 0


# ---- The clip at 0 after every event.


def test_a_penalty_never_takes_a_deal_below_zero() -> None:
    b = make(["9C"], foundations=[0, 0, 8, 0])
    assert std(b, [F2T(2, 0)]) == 0  # -15 from 0: clipped


def test_after_the_clip_gains_count_from_zero() -> None:
    # -15 at 0 stays 0, then +10 +5: 15 (not -15 + 15 = 0).
    b = make(["9C", "AS", "6H"], waste="5S", foundations=[0, 0, 8, 0])
    assert std(b, [F2T(2, 0), T2F(1), W2T(2)]) == 15


def test_the_clip_acts_at_once_not_on_the_final_sum() -> None:
    # AS home: 10. 8H back onto 9C: -15 -> 0 (not -5). 2S home turning 4D over:
    # +10 +5 = 15. Summed without the clip it would be 10 - 15 + 15 = 10.
    b = make(["9C", "4D | 2S"], waste="AS", foundations=[0, 0, 8, 0])
    r = play(b, [W2F, F2T(2, 0), T2F(1)])
    assert [s.events for s in r.steps] == [
        (Event.WASTE_TO_FOUNDATION,),
        (Event.FOUNDATION_TO_TABLEAU,),
        (Event.TABLEAU_TO_FOUNDATION, Event.TURN_OVER),
    ]
    assert deal_score(r, STANDARD, 0) == 15


def test_the_recycle_penalty_clips_at_zero_and_gains_count_after() -> None:
    b = make(["9C", "8H"], stock="", waste="AC 5D")
    # pass 2 at 0: -100 clipped to 0; then AC home (+10)
    r = play(b, [RECYCLE, DRAW, W2F])
    assert deal_score(r, STANDARD, 0) == 0 + 10


# ---- Undo: as if the move never happened.


def test_undo_takes_the_points_back() -> None:
    b = make(["9C"], waste="AH 8H", undo=True)
    r = play(b, [W2T(0), UNDO])
    assert deal_score(r, STANDARD, 0) == 0
    r = play(make(["9C"], waste="AH 8H", undo=True), [W2T(0), UNDO, W2T(0)])
    assert deal_score(r, STANDARD, 0) == 5
    assert r.board.moves == 1


def test_undo_of_a_foundation_to_tableau_gives_the_15_back_exactly() -> None:
    # +10 +10 = 20, F2T -15 = 5, undone: 20 as if it never happened.
    b = make(["3S"], waste="2H AH", undo=True)
    r = play(b, [W2F, W2F, F2T(2, 0), UNDO])
    assert deal_score(r, STANDARD, 0) == 20
    # Even where the F2T had been clipped: 10, -15 -> 0, undone -> 10 (not 0 + 15).
    b = make(["2S"], waste="AH", undo=True)
    r = play(b, [W2F, F2T(2, 0), UNDO])
    assert deal_score(r, STANDARD, 0) == 10


# ======================================================================= Vegas


def test_vegas_is_minus_52_plus_5_per_card_home() -> None:
    b = Board.deal("vegas", DealRules())
    assert deal_score(DealReplay(b), VEGAS, 0) == -52
    r = play(clubs_in_waste(), [W2F] * 5)
    assert deal_score(r, VEGAS, 0) == -52 + 25


def test_vegas_counts_nothing_else() -> None:
    # a turn-over (+5), a waste-to-tableau (+5) and a recycle (-100, clipped to 0):
    # Vegas counts none of them: -52, nothing home.
    b = make(["2D | 8H", "9C", "8D"], stock="", waste="5D 7C")
    r = play(b, [T2T(0, 1), W2T(1), RECYCLE])
    assert [s.events for s in r.steps] == [
        (Event.TURN_OVER,),
        (Event.WASTE_TO_TABLEAU,),
        (Event.RECYCLE,),
    ]
    assert deal_score(r, STANDARD, 0) == 0
    assert deal_score(r, VEGAS, 0) == -52


def test_vegas_a_card_taken_back_takes_its_5_back() -> None:
    b = make(["3S"], waste="2H AH")
    r = play(b, [W2F, W2F, F2T(2, 0)])
    assert deal_score(r, VEGAS, 0) == -52 + 5 * 1
    assert deal_score(r, CUMULATIVE, 0) == -52 + 5 * 1


def test_vegas_perfect_deal_banks_260() -> None:
    b = make(["KS", "9D"], stock="", foundations=[13, 13, 13, 12])
    r = play(b, [T2F(0)])
    assert deal_score(r, VEGAS, 0) == -52 + 260 == 208


def test_vegas_ignores_time() -> None:
    r = play(clubs_in_waste(), [W2F] * 2, [50_000, 90_000])
    assert deal_score(r, VEGAS, 500_000) == -52 + 10


# ======================================================================= Cumulative Vegas


def _resigned_at_start(seed: str = "r") -> DealReplay:
    return replay(seed, DealRules(), [TimedMove(1_000, 0, RESIGN)])


def _two_home() -> DealReplay:
    return play(clubs_in_waste(), [W2F, W2F])


def test_cumulative_vegas_carries_the_bank() -> None:
    deals = [
        DealEntry({"ann": _two_home(), "bob": _resigned_at_start()}, {}),
        DealEntry({"ann": _resigned_at_start(), "bob": _two_home()}, {}),
    ]
    sheet = build_sheet(["ann", "bob"], deals, CUMULATIVE, 0, carry={"ann": 300, "bob": -40})
    # ann: 300 + (-52 + 10) + (-52) = 206; bob: -40 + (-52) + (-42) = -134
    assert sheet.carry == {"ann": 300, "bob": -40}
    assert [row.cells["ann"].total for row in sheet.rows] == [258, 206]
    assert [row.cells["bob"].total for row in sheet.rows] == [-92, -134]
    assert sheet.totals == {"ann": 206, "bob": -134}
    assert sheet.winners == ["ann"]


def test_carry_counts_only_under_cumulative_vegas() -> None:
    deals = [DealEntry({"ann": _two_home()}, {})]
    for scoring in (STANDARD, VEGAS, TIMED):
        sheet = build_sheet(["ann"], deals, scoring, 0, carry={"ann": 300})
        assert sheet.carry == {"ann": 0}
        assert sheet.totals["ann"] == deal_score(_two_home(), scoring, 0)
    assert build_sheet(["ann"], deals, VEGAS, 0, carry={"ann": 300}).totals == {"ann": -42}


def test_cumulative_vegas_without_carry_starts_at_zero() -> None:
    sheet = build_sheet(
        ["ann", "cy"], [DealEntry({"ann": _two_home()}, {})], CUMULATIVE, 0, carry={"ann": 7}
    )
    assert sheet.carry == {"ann": 7, "cy": 0}
    assert sheet.totals == {"ann": 7 - 42, "cy": 0}


# ======================================================================= Timed


def test_timed_ticks_every_full_ten_seconds() -> None:
    r = play(clubs_in_waste(), [W2F, W2F, W2F])  # 30 points in the first 3 ms
    for end_t, expected in [
        (0, 30),
        (9_999, 30),
        (10_000, 28),
        (19_999, 28),
        (20_000, 26),
        (65_000, 30 - 6 * 2),
        (149_999, 30 - 14 * 2),
        (150_000, 0),
        (10_000_000, 0),
    ]:
        assert deal_score(r, TIMED, end_t) == expected, end_t
    assert deal_score(r, STANDARD, 10_000_000) == 30  # Standard has no clock


def test_timed_ticks_interleave_with_moves_and_clip() -> None:
    # 10 at 1 s; ticks at 10, 20, 30, 40 s: 8, 6, 4, 2; at 50 s 0, at 60 s still 0
    # (clipped); +5 at 65 s: 5; tick at 70 s: 3. Without the clip: 10 - 12 + 5 - 2 = 1.
    b = make(["9C", "AH"], waste="8H")
    r = play(b, [T2F(1), W2T(0)], [1_000, 65_000])
    assert deal_score(r, TIMED, 70_000) == 3
    assert deal_score(r, TIMED, 69_999) == 5
    assert deal_score(r, STANDARD, 70_000) == 15


def test_a_tick_at_the_same_ms_as_a_move_comes_first() -> None:
    # At 10 s the score is 0: the tick first (0, clipped), then +10 = 10.
    # Were the move first it would be 10 - 2 = 8.
    r = play(make(["9C"], waste="AH"), [W2F], [10_000])
    assert deal_score(r, TIMED, 10_000) == 10
    r = play(make(["9C"], waste="AH"), [W2F], [9_999])
    assert deal_score(r, TIMED, 10_000) == 8


def _win_at(t: int, **kw: Any) -> DealReplay:
    # One card from home: the king of spades on pile 0.
    b = make(["KS", "9D"], stock="", foundations=[13, 13, 13, 12], **kw)
    return play(b, [T2F(0)], [t])


@pytest.mark.parametrize(
    ("t", "bonus"),
    [
        (1_000, 0),
        (29_999, 0),  # 29 whole seconds: under 30, no bonus
        (30_000, 700_000 // 30),  # 23 333
        (30_999, 700_000 // 30),
        (45_678, 700_000 // 45),  # 15 555
        (100_000, 7_000),
        (700_000, 1_000),
    ],
)
def test_timed_bonus_for_a_win(t: int, bonus: int) -> None:
    # The only move scores +10 at t; every tick before it met a score of 0.
    r = _win_at(t)
    assert deal_score(r, TIMED, t + 123_456) == 10 + bonus
    assert deal_score(r, STANDARD, t) == 10


def test_timed_bonus_literals() -> None:
    assert deal_score(_win_at(30_000), TIMED, 0) == 10 + 23_333
    assert deal_score(_win_at(45_678), TIMED, 0) == 10 + 15_555


def test_timed_no_bonus_unless_won_and_the_clock_stops_at_the_end() -> None:
    # 30 points at once, resign at 25 s: two ticks (26); later ticks never come.
    b = clubs_in_waste()
    r = play(b, [W2F, W2F, W2F, RESIGN], [0, 1, 2, 25_000])
    assert b.status is Status.RESIGNED
    assert deal_score(r, TIMED, 500_000) == 26
    # dead, likewise
    b = make(["KS", "4D"], stock="5H", waste="", pass_limit=1)
    r = play(b, [DRAW], [41_000])
    assert b.status is Status.DEAD
    assert deal_score(r, TIMED, 900_000) == 0


def test_timed_in_play_uses_the_end_time_given() -> None:
    r = play(clubs_in_waste(), [W2F] * 5)  # 50 points, still playing
    assert r.ended_at is None
    assert deal_score(r, TIMED, 35_000) == 50 - 6


def test_timed_double_bonus() -> None:
    b = make(["KS", "9D"], stock="", foundations=[13] * 7 + [12], variant=Variant.DOUBLE)
    r = play(b, [T2F(0)], [70_000])
    assert deal_score(r, TIMED, 0) == 10 + 1_400_000 // 70 == 20_010


# ======================================================================= the race bonus


def _won_replays(seqs: dict[str, int]) -> dict[str, DealReplay]:
    out = {}
    for p, seq in seqs.items():
        b = make(["KS", "9D"], stock="", foundations=[13, 13, 13, 12])
        r = DealReplay(b)
        r.record(TimedMove(5_000, seq, T2F(0)), b.apply(T2F(0)))
        out[p] = r
    return out


def test_the_first_winner_by_seq_takes_the_race_bonus() -> None:
    # bob's winning move was accepted first (seq 7 < 9), though listed second.
    results = _won_replays({"ann": 9, "bob": 7})
    sheet = build_sheet(["ann", "bob"], [DealEntry(results, {})], STANDARD, 100)
    row = sheet.rows[0]
    assert row.first == "bob"
    assert row.cells["bob"].bonus == 100 and row.cells["bob"].score == 10 + 100
    assert row.cells["ann"].bonus == 0 and row.cells["ann"].score == 10
    assert sheet.winners == ["bob"]


def test_no_winner_no_race_bonus() -> None:
    results = {"ann": _two_home(), "bob": _resigned_at_start()}
    sheet = build_sheet(["ann", "bob"], [DealEntry(results, {})], STANDARD, 100)
    assert sheet.rows[0].first is None
    assert sheet.totals == {"ann": 20, "bob": 0}


def test_race_bonus_goes_to_the_winner_not_the_best_score() -> None:
    results = {"ann": play(clubs_in_waste(), [W2F] * 13), **_won_replays({"bob": 3})}
    sheet = build_sheet(["ann", "bob"], [DealEntry(results, {})], STANDARD, 100)
    assert sheet.rows[0].first == "bob"
    assert sheet.totals == {"ann": 130, "bob": 110}


def test_race_bonus_zero() -> None:
    sheet = build_sheet(["ann"], [DealEntry(_won_replays({"ann": 1}), {})], STANDARD, 0)
    assert sheet.rows[0].first == "ann"
    assert sheet.rows[0].cells["ann"].bonus == 0
    assert sheet.totals == {"ann": 10}


# ======================================================================= the sheet


def test_sheet_rows_totals_and_shared_winners() -> None:
    deals = [
        DealEntry(
            {"ann": _two_home(), "bob": play(clubs_in_waste(), [W2F]), "cy": _resigned_at_start()},
            {},
        ),
        DealEntry(
            {
                "ann": _resigned_at_start(),
                "bob": _two_home(),
                "cy": play(clubs_in_waste(), [W2F] * 3),
            },
            {},
        ),
    ]
    sheet = build_sheet(["ann", "bob", "cy"], deals, STANDARD, 100)
    # ann 20 + 0 = 20; bob 10 + 20 = 30; cy 0 + 30 = 30 (no one won: no race bonus)
    assert [r.cells["ann"].score for r in sheet.rows] == [20, 0]
    assert [r.cells["bob"].total for r in sheet.rows] == [10, 30]
    assert sheet.totals == {"ann": 20, "bob": 30, "cy": 30}
    assert sheet.winners == ["bob", "cy"]  # equal totals share the win
    cell = sheet.rows[1].cells["cy"]
    assert (cell.status, cell.moves, cell.home) == (Status.PLAYING, 3, 3)
    assert sheet.rows[0].cells["cy"].status is Status.RESIGNED
    wire = sheet.to_wire()
    assert wire["winners"] == ["bob", "cy"]
    assert wire["rows"][1]["cells"]["cy"] == {
        "score": 30,
        "bonus": 0,
        "total": 30,
        "status": "playing",
        "moves": 3,
        "home": 3,
    }


def test_sheet_negative_totals_and_absent_players() -> None:
    deals = [DealEntry({"ann": _resigned_at_start()}, {})]
    sheet = build_sheet(["ann", "bob"], deals, VEGAS, 100)
    assert sheet.rows[0].cells.keys() == {"ann"}  # bob was not in that deal
    assert sheet.totals == {"ann": -52, "bob": 0}
    assert sheet.winners == ["bob"]


def test_empty_sheet_has_no_winner() -> None:
    sheet = build_sheet(["ann", "bob"], [], STANDARD, 100)
    assert sheet.rows == [] and sheet.winners == [] and sheet.totals == {"ann": 0, "bob": 0}


def test_sheet_timed_uses_each_players_end_time() -> None:
    results = {"ann": _two_home(), "bob": _two_home()}
    sheet = build_sheet(["ann", "bob"], [DealEntry(results, {"ann": 30_000})], TIMED, 100)
    assert sheet.totals == {"ann": 20 - 6, "bob": 20}  # bob's end defaults to 0


# ---- A setting change recalculates: the same logs, different scoring and bonus.


def _round() -> list[DealEntry]:
    """Two deals for ann and bob, kept as replays (the logs, rebuilt)."""
    d1 = {
        # ann: 3 clubs home at 1..3 ms (+30, 3 cards home), resigns at 20 s.
        "ann": play(clubs_in_waste(), [W2F, W2F, W2F, RESIGN], [1, 2, 3, 20_000]),
        # bob: wins at 5 s with his one move (+10), seq 5: the only winner.
        **_won_replays({"bob": 5}),
    }
    d2 = {
        "ann": _won_replays({"ann": 2})["ann"],  # wins at 5 s (+10), the only winner
        # bob: AH, 2H home at 1 and 2 ms (+20), 2H back onto 3S at 12 s (-15): 5,
        # one card home; still playing when the host moved on at 25 s.
        "bob": play(make(["3S"], waste="2H AH"), [W2F, W2F, F2T(2, 0)], [1, 2, 12_000]),
    }
    return [DealEntry(d1, {}), DealEntry(d2, {"bob": 25_000})]


@pytest.mark.parametrize(
    ("scoring", "bonus", "ann", "bob"),
    [
        # Standard: ann 30 + (10 + bonus); bob (10 + bonus) + (20 - 15 = 5)
        (STANDARD, 100, 30 + 110, 110 + 5),
        (STANDARD, 0, 30 + 10, 10 + 5),
        (STANDARD, 250, 30 + 260, 260 + 5),
        # Vegas: ann (-52 + 15) + (-52 + 260 + bonus); bob (-52 + 260 + bonus) + (-52 + 5)
        (VEGAS, 100, -37 + 308, 308 - 47),
        (VEGAS, 5, -37 + 213, 213 - 47),
        (CUMULATIVE, 100, -37 + 308, 308 - 47),
        # Timed: deal 1 ann 30, ticks at 10 and 20 s (resigned at 20 s): 26.
        #        deal 1 bob wins at 5 s: 10, no time bonus (under 30 s), + race bonus.
        #        deal 2 ann wins at 5 s: 10 + race bonus.
        #        deal 2 bob 10, 20, tick at 10 s: 18, F2T at 12 s: 3, tick at 20 s: 1,
        #        still playing until 25 s: no more ticks: 1.
        (TIMED, 100, 26 + 110, 110 + 1),
    ],
)
def test_a_setting_change_recalculates(scoring: Scoring, bonus: int, ann: int, bob: int) -> None:
    sheet = build_sheet(["ann", "bob"], _round(), scoring, bonus)
    assert sheet.totals == {"ann": ann, "bob": bob}
    assert [row.first for row in sheet.rows] == ["bob", "ann"]


def test_rescoring_does_not_touch_the_logs() -> None:
    deals = _round()
    first = build_sheet(["ann", "bob"], deals, VEGAS, 100).to_wire()
    build_sheet(["ann", "bob"], deals, TIMED, 5)
    assert build_sheet(["ann", "bob"], deals, VEGAS, 100).to_wire() == first


# ======================================================================= whole deals

_TOKEN = re.compile(r"^(D|R|A|WF|W(\d)|F(\d)|(\d)>(\d)(?:x(\d+))?)$")


def parse(script: str) -> list[Move]:
    """D draw, R recycle, A auto-complete, WF waste to foundation, W3 waste to pile 3,
    F3 pile 3 to foundation, 2>5 pile 2 to pile 5 (one card), 2>5x3 three cards."""
    out = []
    for tok in script.split():
        m = _TOKEN.match(tok)
        assert m, tok
        if tok == "D":
            out.append(DRAW)
        elif tok == "R":
            out.append(RECYCLE)
        elif tok == "A":
            out.append(AUTO)
        elif tok == "WF":
            out.append(W2F)
        elif m.group(2):
            out.append(W2T(int(m.group(2))))
        elif m.group(3):
            out.append(T2F(int(m.group(3))))
        else:
            out.append(T2T(int(m.group(4)), int(m.group(5)), int(m.group(6) or 1)))
    return out


def count(script: str, pattern: str) -> int:
    return sum(1 for tok in script.split() if re.fullmatch(pattern, tok))


# Classic, draw one, seed "scenario-237": won in one pass, 87 moves, by a greedy
# player (foundation moves first, then moves that turn a card over, then waste to
# tableau, then draw).
CLASSIC_237 = (
    "F1 3>0 5>3 6>2 D WF F1 4>1 4>5 4>5 D W4 5>4x3 2>5x2 F2 D WF D D W0 3>0x2 D D W4 "
    "5>4x3 D W4 6>4 6>3 6>5 W5 D D W1 5>1x3 F5 D WF F2 4>2x11 D W4 D WF WF F2 F4 W5 D "
    "W3 D W1 D WF F2 F4 D W3 6>3 3>6x5 D W4 6>4x6 D D WF F3 W3 D W3 D W5 D WF F0 F0 F2 "
    "F0 F2 F0 F2 F0 F2 F5 D WF A"
)


def test_classic_scenario_script_counts() -> None:
    # Counted from the script text, not from the engine:
    assert count(CLASSIC_237, r"W\d") == 15  # waste to tableau
    assert count(CLASSIC_237, r"WF|F\d") == 29  # cards sent home one by one
    assert count(CLASSIC_237, r"R") == 0  # one pass: no recycle
    assert count(CLASSIC_237, r"A") == 1  # then auto-complete: 52 - 29 = 23 cards
    assert len(CLASSIC_237.split()) == 87


def _classic_237(times: list[int] | None = None) -> DealReplay:
    moves = parse(CLASSIC_237)
    times = times or list(range(len(moves)))
    return replay(
        "scenario-237",
        Settings().deal_rules(),
        [TimedMove(t, i, m) for i, (t, m) in enumerate(zip(times, moves, strict=True))],
    )


def test_classic_scenario_is_won() -> None:
    r = _classic_237()
    assert r.board.status is Status.WON
    assert r.board.home == 52 and r.board.moves == 87
    auto = r.steps[-1]
    assert auto.events == (Event.TABLEAU_TO_FOUNDATION,) * 23
    assert sum(s.events.count(Event.TURN_OVER) for s in r.steps) == 21


def test_classic_scenario_standard() -> None:
    # All 52 cards reached a foundation exactly once (no foundation-to-tableau):
    # 52 x 10 = 520. All 21 face-down cards turned over: 21 x 5 = 105. 15 waste to
    # tableau: 75. No recycle, no penalty, so the running total only grows and the
    # clip never acts: 520 + 105 + 75 = 700.
    assert deal_score(_classic_237(), STANDARD, 0) == 700


def test_classic_scenario_vegas() -> None:
    # -52 + 5 x 52 = 208, whatever the moves were.
    assert deal_score(_classic_237(), VEGAS, 0) == 208
    assert deal_score(_classic_237(), CUMULATIVE, 0) == 208


def test_classic_scenario_cumulative_vegas_carries() -> None:
    # A round of this deal then a resigned deal, carrying 1000 from earlier rounds:
    # 1000 + 208 = 1208, then 1208 - 52 = 1156.
    deals = [DealEntry({"ann": _classic_237()}, {}), DealEntry({"ann": _resigned_at_start()}, {})]
    sheet = build_sheet(["ann"], deals, CUMULATIVE, 0, carry={"ann": 1000})
    assert [row.cells["ann"].total for row in sheet.rows] == [1208, 1156]


def test_classic_scenario_timed() -> None:
    # The first 86 moves at 0.1 s, 0.2 s … 8.6 s, all before the first tick; the
    # auto-complete at 95 s. Before it the score is 700 - 23 x 10 = 470; nine ticks
    # (10 … 90 s) take 18: 452, never near 0; auto-complete +230: 682. Won at 95
    # whole seconds: bonus 700 000 // 95 = 7368. 682 + 7368 = 8050.
    times = [100 * (i + 1) for i in range(86)] + [95_000]
    r = _classic_237(times)
    assert deal_score(r, TIMED, 95_000) == 8050
    assert deal_score(r, STANDARD, 95_000) == 700


def test_classic_scenario_race() -> None:
    # ann and bob play the same script on the same seed, moves interleaved by the
    # server: ann's are accepted at even seqs, bob's at odd ones, so ann's winning
    # move (seq 172) came before bob's (173): ann takes the bonus.
    moves = parse(CLASSIC_237)
    rules = Settings().deal_rules()
    ann = replay("scenario-237", rules, [TimedMove(i, 2 * i, m) for i, m in enumerate(moves)])
    bob = replay("scenario-237", rules, [TimedMove(i, 2 * i + 1, m) for i, m in enumerate(moves)])
    assert (ann.won_seq, bob.won_seq) == (172, 173)
    sheet = build_sheet(["bob", "ann"], [DealEntry({"bob": bob, "ann": ann}, {})], STANDARD, 100)
    assert sheet.totals == {"ann": 800, "bob": 700}
    assert sheet.winners == ["ann"]


# Classic, draw one, seed "scenario-352": won in two passes (one recycle), 92 moves.
CLASSIC_352 = (
    "3>1 4>6 4>5 5>6x2 6>1x4 2>6 2>6 D D W4 D D D W3 6>3x3 D WF F0 WF D WF F4 F5 D D D WF "
    "F1 D D D D D W0 D W6 D WF D WF D D D D D D R D W6 3>6x5 3>0 F3 F2 F4 D W1 D W0 1>0x6 "
    "4>1 F4 F6 D D WF D D W0 D W1 W1 D D W6 D W2 6>2x8 W6 5>6 F5 5>1 D W3 D D W3 W3 6>3x3 "
    "6>3 F6 WF A"
)


def test_classic_recycle_scenario() -> None:
    script = CLASSIC_352
    assert count(script, r"W\d") == 16
    assert count(script, r"R") == 1
    before_recycle = script.split(" R ")[0]
    assert count(before_recycle, r"WF|F\d") == 10
    assert count(before_recycle, r"W\d") == 4
    r = replay(
        "scenario-352",
        Settings().deal_rules(),
        [TimedMove(i, i, m) for i, m in enumerate(parse(script))],
    )
    assert r.board.status is Status.WON and r.board.passes == 2
    # 520 (52 home) + 105 (21 turn-overs) + 80 (16 waste to tableau) - 100 (pass 2,
    # draw one) = 605. At the recycle 10 cards are home and 4 waste-to-tableau
    # moves were made: at least 120 points, so the -100 does not clip.
    assert deal_score(r, STANDARD, 0) == 605
    # Vegas ignores the recycle: the deal was dealt with free passes (Standard), and
    # a later switch to Vegas rescores the log, it does not make it illegal.
    assert deal_score(r, VEGAS, 0) == 208


# Thoughtful, draw three, seed "scenario-104": won in four passes (three recycles).
THOUGHTFUL_104 = (
    "F2 1>5 2>0 3>5 3>5 D D D D D W4 D D W4 WF WF F2 D W3 R D D D W2 4>2x3 5>4x4 D WF W2 "
    "6>2 F6 F4 F6 F0 F0 F4 F4 D WF D W5 D W5 3>5x2 W3 R D WF D WF F4 D D R D WF F4 F1 F4 "
    "F3 W4 W0 4>0x2 D WF WF F3 D W4 6>4 6>1 F6 W1 WF 5>1x5 5>3 5>3 5>0 F5 F4 WF F4 F4 D "
    "WF A"
)
THOUGHTFUL_RULES = Settings().updated({"variant": "thoughtful", "draw": 3}).deal_rules()


def _thoughtful_104() -> DealReplay:
    # move i at (i + 1) x 0.5 s: the auto-complete, move 85, at 43 s
    moves = parse(THOUGHTFUL_104)
    return replay(
        "scenario-104",
        THOUGHTFUL_RULES,
        [TimedMove(500 * (i + 1), i, m) for i, m in enumerate(moves)],
    )


def test_thoughtful_scenario_script_counts() -> None:
    s = THOUGHTFUL_104
    assert len(s.split()) == 86
    assert count(s, r"W\d") == 12
    assert count(s, r"R") == 3
    third = s.split(" R ")
    assert len(third) == 4
    assert count(" ".join(third[:3]), r"WF|F\d") == 16  # home before the 3rd recycle
    assert count(" ".join(third[:1]), r"WF|F\d|W\d") == 7  # scoring moves before 10 s


def test_thoughtful_scenario() -> None:
    r = _thoughtful_104()
    b = r.board
    assert b.status is Status.WON and b.passes == 4
    assert b.moves == 86
    assert all(Event.TURN_OVER not in s.events for s in r.steps)
    # Standard: 520 (52 home) + 60 (12 waste to tableau) - 20 (the 4th pass, draw
    # three; the 2nd and 3rd are free) = 560. No turn-overs in Thoughtful. At the
    # third recycle 16 cards are home (>= 160): the -20 does not clip.
    assert deal_score(r, STANDARD, 0) == 560
    # Vegas: 208 as ever for a won deal.
    assert deal_score(r, VEGAS, 0) == 208
    assert deal_score(r, CUMULATIVE, 0) == 208
    # Timed: ticks at 10, 20, 30, 40 s. The first meets 55 (moves 0-18: F2, W4, W4,
    # WF, WF, F2, W3 = 10+5+5+10+10+10+5), every later one more: none clips.
    # 560 - 4 x 2 = 552, won at 43 s: + 700 000 // 43 = 16 279. 552 + 16 279 = 16 831.
    assert deal_score(r, TIMED, 43_000) == 16_831


def test_thoughtful_sheet_shows_the_move_count() -> None:
    sheet = build_sheet(["ann"], [DealEntry({"ann": _thoughtful_104()}, {})], STANDARD, 100)
    cell = sheet.rows[0].cells["ann"]
    assert (cell.moves, cell.home, cell.status) == (86, 52, Status.WON)
    assert cell.score == 660 and cell.bonus == 100


# ------------------------------------------------------------------ running totals

_STEP = st.one_of(
    st.just("undo"),
    st.tuples(  # a move dt ms after the last, with its events and pass_started
        st.integers(0, 25_000),
        st.lists(st.sampled_from(list(Event)), max_size=4),
        st.integers(0, 6),
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    draw=st.sampled_from([1, 3]),
    steps=st.lists(_STEP, max_size=60),
    won=st.booleans(),
    tail=st.integers(-5_000, 400_000),
)
def test_running_totals_follow_the_reference_on_any_event_stream(
    draw: int, steps: list[Any], won: bool, tail: int
) -> None:
    """Crafted event streams, which legal play rarely makes: foundation-to-tableau
    and recycle penalties at 0, undos of clipped moves, long gaps full of ticks.
    After every step, and at any end of the clock, the running totals
    (``DealReplay.score``) say what the reference replay of the trace
    (``deal_score``) says, in all four systems; with the time bonus too."""
    result = DealReplay(Board.deal("stream", DealRules(draw=draw)))
    t = 0
    for seq, step in enumerate(steps):
        if step == "undo":
            if not result.steps:
                continue  # the engine refuses it: nothing is recorded
            outcome = Outcome(UNDO, (), (), None, 0, Status.PLAYING, undone=True)
        else:
            dt, events, started = step
            t += dt
            outcome = Outcome(DRAW, tuple(events), (), None, started, Status.PLAYING)
        result.record(TimedMove(t, seq, outcome.move), outcome)
        for scoring in Scoring:
            for end_t in (t, t + tail):
                assert result.score(scoring, end_t) == deal_score(result, scoring, end_t)
    if won:
        result.board.status = Status.WON
        result.ended_at = t
    for scoring in Scoring:
        assert result.score(scoring, t + tail) == deal_score(result, scoring, t + tail)
