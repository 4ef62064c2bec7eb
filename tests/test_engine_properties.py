"""Property tests: random legal play from random deals under random house rules.

A game is a seed, the deal's rules and a list of integers that pick each move
(among ``legal_moves()``, with undo and resign thrown in now and then), so that
Hypothesis can shrink a failing game to a short one.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import (
    Board,
    DealReplay,
    DealRules,
    IllegalMove,
    Move,
    MoveKind,
    Outcome,
    Scoring,
    Status,
    TimedMove,
    Variant,
    card_str,
    deal_layout,
    deal_score,
    hidden_cards,
    player_view,
    progress,
    replay,
)

K = MoveKind
UNDO = Move(K.UNDO)
RESIGN = Move(K.RESIGN)

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

seeds = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-é", max_size=10)


def picks_of(max_moves: int) -> st.SearchStrategy[list[int]]:
    """Move picks: a few drawn one by one (they shrink well), then a long random tail
    (Hypothesis keeps lists short, and interesting positions come late)."""
    head = st.lists(st.integers(min_value=0, max_value=1_000_000), max_size=20)
    tail = st.tuples(st.integers(min_value=0, max_value=2**32), st.integers(0, max_moves))
    return st.builds(
        lambda h, t: h + [random.Random(t[0]).randrange(1_000_000) for _ in range(t[1])],
        head,
        tail,
    )


choices = picks_of(300)


def rules_for(variants: list[Variant]) -> st.SearchStrategy[DealRules]:
    return st.builds(
        DealRules,
        variant=st.sampled_from(variants),
        draw=st.sampled_from([1, 3]),
        pass_limit=st.integers(min_value=0, max_value=4),
        undo=st.booleans(),
        foundation_to_tableau=st.booleans(),
    )


any_rules = rules_for(list(Variant))


@dataclass
class Game:
    seed: str
    rules: DealRules
    board: Board
    live: DealReplay
    log: list[TimedMove] = field(default_factory=list)
    t: int = 0


_HOME = (K.TABLEAU_TO_FOUNDATION, K.WASTE_TO_FOUNDATION, K.AUTO_COMPLETE)
_STOCK = (K.DRAW, K.RECYCLE)


def _uncovers(board: Board, m: Move) -> bool:
    """A tableau move that takes a pile's whole run off a card beneath it."""
    if m.kind is not K.TABLEAU_TO_TABLEAU:
        return False
    start = board.run_start(m.src)
    return start > 0 and m.count == len(board.tableau[m.src]) - start


def pick(board: Board, c: int) -> Move:
    """The move that choice ``c`` makes; the board must be in play.

    Uniform choice among the legal moves mostly shuffles cards between piles and
    foundations; a mostly greedy choice reaches later positions: more cards home,
    later passes, pass limits, dead and won deals.
    """
    if board.can_undo() and c % 13 == 0:
        return UNDO
    if c % 401 == 7:
        return RESIGN
    moves = board.legal_moves()
    assert moves, "a deal in play always has a legal move"
    if c % 8 == 7:
        pool = moves  # now and then anything at all
    else:  # else greedily: home, then uncover a card or play the waste, then the stock
        pool = (
            [m for m in moves if m.kind in _HOME]
            or [m for m in moves if m.kind is K.WASTE_TO_TABLEAU or _uncovers(board, m)]
            or [m for m in moves if m.kind in _STOCK]
            or moves
        )
    return pool[(c // 8) % len(pool)]


def play(seed: str, rules: DealRules, picks: list[int]) -> Iterator[tuple[Game, Outcome]]:
    """Play the game, yielding after every accepted move."""
    board = Board.deal(seed, rules)
    game = Game(seed, rules, board, DealReplay(board))
    for seq, c in enumerate(picks):
        if board.status is not Status.PLAYING:
            return
        move = pick(board, c)
        before = board.fingerprint()
        outcome = board.apply(move)
        game.t += (c // 16) % 4_000
        timed = TimedMove(game.t, seq, move)
        game.log.append(timed)
        game.live.record(timed, outcome)
        if outcome.undone:
            assert move is UNDO
        yield game, outcome
        if board.can_undo() and c % 3 == 1:
            # take it back right away: the board is as it was before the move
            out = board.apply(UNDO)
            assert out.undone
            assert board.fingerprint() == before
            game.log.append(TimedMove(game.t, seq, UNDO))
            game.live.record(game.log[-1], out)


def foundation_cards(board: Board) -> list[int]:
    out = []
    for f, top in enumerate(board.foundations):
        suit = f // board.packs
        out.extend(suit * 13 + r for r in range(top))
    return out


def all_cards(board: Board) -> Counter[int]:
    everything = [c for pile in board.tableau for c in pile]
    everything += [*board.stock, *board.waste, *foundation_cards(board)]
    return Counter(everything)


def is_run(cards: list[int]) -> bool:
    return all(
        ((13 <= a < 39) != (13 <= b < 39)) and a % 13 == b % 13 + 1
        for a, b in itertools.pairwise(cards)
    )


def check_invariants(board: Board, dealt: list[list[int]]) -> None:
    """``dealt`` is the layout the deal started from (piles bottom first)."""
    packs = board.packs
    assert all_cards(board) == Counter({c: packs for c in range(52)})
    assert len(board.tableau) == board.rules.variant.piles
    assert len(board.foundations) == 4 * packs
    assert all(0 <= top <= 13 for top in board.foundations)
    assert board.home == sum(board.foundations)
    for pile, d, start in zip(board.tableau, board.down, dealt, strict=True):
        if board.rules.variant is Variant.THOUGHTFUL:
            assert d == 0
        elif pile:
            assert 0 <= d < len(pile)  # the top card is always face up
            assert is_run(pile[d:])  # the face-up part is one descending alternating run
        else:
            assert d == 0
        # Cards only leave a pile from the top and arrive on top, so a pile is a
        # part of what was dealt to it with a run placed on it: the run's first card
        # fitted the dealt card under it (or was a king on an empty pile).
        kept = 0
        while kept < min(len(pile), len(start)) and pile[kept] == start[kept]:
            kept += 1
        if kept < len(pile):
            assert is_run(pile[max(kept - 1, 0) :]), (pile, start)
            if kept == 0:
                assert pile[0] % 13 == 12
        assert d <= kept  # only dealt cards are face down
    assert board.passes >= 1
    if board.rules.pass_limit:
        assert board.passes <= board.rules.pass_limit
    assert (board.status is Status.WON) == (board.home == board.total)
    if board.status is Status.PLAYING:
        assert board.has_progress_move()


def state(board: Board) -> tuple[object, ...]:
    return (board.fingerprint(), board.home, board._undo, board.can_undo())


# --------------------------------------------------------------------------- properties


@SETTINGS
@given(seed=seeds, rules=any_rules, picks=choices)
def test_random_play_conserves_every_card_and_keeps_the_piles_valid(
    seed: str, rules: DealRules, picks: list[int]
) -> None:
    dealt, _ = deal_layout(seed, rules.variant)
    check_invariants(Board.deal(seed, rules), dealt)
    for game, outcome in play(seed, rules, picks):
        check_invariants(game.board, dealt)
        assert outcome.status is game.board.status
        if rules.variant is Variant.THOUGHTFUL:
            assert outcome.turned is None


@SETTINGS
@given(seed=seeds, rules=any_rules, picks=choices, extra=st.integers(0, 100_000))
def test_replaying_the_log_reproduces_the_board_and_every_score(
    seed: str, rules: DealRules, picks: list[int], extra: int
) -> None:
    games = [g for g, _ in play(seed, rules, picks)]
    if not games:
        return
    game = games[-1]
    again = replay(seed, rules, game.log)
    assert again.board.fingerprint() == game.board.fingerprint()
    assert again.board.home == game.board.home
    assert again.steps == game.live.steps
    assert (again.ended_at, again.won_seq) == (game.live.ended_at, game.live.won_seq)
    end_t = game.t + extra
    for scoring in Scoring:
        assert deal_score(again, scoring, end_t) == deal_score(game.live, scoring, end_t)
    # Vegas is a function of the position alone
    assert deal_score(again, Scoring.VEGAS, 0) == -game.board.total + 5 * game.board.home
    assert deal_score(again, Scoring.STANDARD, end_t) >= 0
    assert deal_score(again, Scoring.TIMED, end_t) >= 0


@SETTINGS
@given(
    seed=seeds,
    rules=rules_for([Variant.CLASSIC]),
    picks=picks_of(150),
)
def test_no_view_ever_shows_a_hidden_card(seed: str, rules: DealRules, picks: list[int]) -> None:
    def check(board: Board, score: int) -> None:
        hidden = hidden_cards(board)
        assert len(hidden) == len(board.stock) + sum(board.down)
        for view in (player_view(board), progress(board, score)):
            text = json.dumps(view)
            for card in hidden:
                assert f'"{card}"' not in text, (card, view)
                assert not re.search(rf"\b{card}\b", text), (card, view)

    check(Board.deal(seed, rules), 0)
    for game, _ in play(seed, rules, picks):
        check(game.board, deal_score(game.live, Scoring.STANDARD, game.t))


def candidate_moves(board: Board) -> list[Move]:
    """Every move worth trying, legal or not (and a few out-of-range ones)."""
    n = len(board.tableau)
    out = [Move(K.DRAW), Move(K.RECYCLE), Move(K.AUTO_COMPLETE), Move(K.WASTE_TO_FOUNDATION)]
    out += [Move(K.WASTE_TO_TABLEAU, dst=q) for q in range(-1, n + 1)]
    out += [Move(K.TABLEAU_TO_FOUNDATION, src=p) for p in range(-1, n + 1)]
    for p in range(n):
        for q in range(-1, n + 1):
            for count in range(0, len(board.tableau[p]) + 2):
                out.append(Move(K.TABLEAU_TO_TABLEAU, src=p, dst=q, count=count))
    for f in range(-1, len(board.foundations) + 1):
        for q in range(-1, n + 1):
            out.append(Move(K.FOUNDATION_TO_TABLEAU, src=f, dst=q))
    return out


def copy_of(game: Game) -> Board:
    board = replay(game.seed, game.rules, game.log).board
    assert state(board) == state(game.board)
    return board


@SETTINGS
@given(
    seed=seeds,
    rules=any_rules,
    picks=picks_of(200),
    every=st.integers(min_value=15, max_value=40),
)
def test_apply_accepts_exactly_the_legal_moves(
    seed: str, rules: DealRules, picks: list[int], every: int
) -> None:
    """Every listed move is accepted (on a copy), every other move is refused and
    leaves the board exactly as it was (undo record included)."""

    for i, (game, _) in enumerate(play(seed, rules, picks)):
        if i % every:
            continue

        legal = game.board.legal_moves()
        assert len(set(legal)) == len(legal)
        if game.board.status is not Status.PLAYING:
            assert legal == []
        trial = copy_of(game)
        accepted = []
        for move in candidate_moves(trial):
            before = state(trial)
            try:
                out = trial.apply(move)
            except IllegalMove:
                assert state(trial) == before, move
                continue
            accepted.append(move)
            assert move in legal, move
            assert out.move == move
            if move.kind is K.AUTO_COMPLETE:
                assert out.status is Status.WON
            trial = copy_of(game)
        assert sorted(accepted, key=repr) == sorted(legal, key=repr)


@SETTINGS
@given(seed=seeds, rules=any_rules, picks=choices)
def test_undo_and_resign_and_refusals_in_play(
    seed: str, rules: DealRules, picks: list[int]
) -> None:
    """Undo is refused exactly when the last move may not be taken back, and any
    move to a finished deal is refused as deal_over."""
    game = None
    for game, outcome in play(seed, rules, picks):
        b = game.board
        if b.status is Status.PLAYING:
            undoable = (
                rules.undo
                and outcome.turned is None
                and not outcome.undone
                and (outcome.move.kind not in (K.DRAW, K.RECYCLE, K.RESIGN, K.AUTO_COMPLETE))
            )
            assert b.can_undo() == undoable, outcome
    if game is None or game.board.status is Status.PLAYING:
        return
    b = game.board
    for move in (Move(K.DRAW), UNDO, RESIGN, Move(K.AUTO_COMPLETE)):
        before = state(b)
        try:
            b.apply(move)
        except IllegalMove as err:
            assert err.code == "deal_over"
        else:  # pragma: no cover - a finished deal takes no move
            raise AssertionError(move)
        assert state(b) == before


def test_hidden_card_check_would_catch_a_leak() -> None:
    """The leak check above is not vacuous: a revealed stock card is caught."""
    board = Board.deal("leak", DealRules())
    view = player_view(board)
    secret = card_str(board.stock[-1])
    view["oops"] = [secret]
    text = json.dumps(view)
    assert secret in hidden_cards(board)
    assert f'"{secret}"' in text


@SETTINGS
@given(seed=seeds, rules=any_rules, picks=choices, extra=st.integers(0, 200_000))
def test_running_scores_equal_the_reference_replay_after_every_move(
    seed: str, rules: DealRules, picks: list[int], extra: int
) -> None:
    """The server's O(1) score (``DealReplay.score``) and the reference replay
    (``deal_score``) agree after every accepted move of random play (undos taken
    right away included), for every system, now and later on the Timed clock."""
    for game, _ in play(seed, rules, picks):
        for scoring in Scoring:
            for end_t in (game.t, game.t + extra, max(0, game.t - extra)):
                want = deal_score(game.live, scoring, end_t)
                assert game.live.score(scoring, end_t) == want, (scoring, end_t)


@SETTINGS
@given(seed=seeds, rules=any_rules, picks=choices)
def test_scored_at_is_the_last_move_that_changed_the_score(
    seed: str, rules: DealRules, picks: list[int]
) -> None:
    """When a player reached their score (what a deal's placing reads, docs/rules.md
    §7.1) is the time of the last move after which the reference replay's score
    differs from before it, both read at that move's time, in every system: a
    resignation, a draw, a Timed tick never count, an undo taking points back
    does. Replaying the log gives it again (a rebuilt room places alike)."""
    board = Board.deal(seed, rules)
    live = DealReplay(board)
    log: list[TimedMove] = []
    want = dict.fromkeys(Scoring, 0)
    t = 0
    for seq, c in enumerate(picks):
        if board.status is not Status.PLAYING:
            break
        move = pick(board, c)
        t += (c // 16) % 4_000
        before = {s: deal_score(live, s, t) for s in Scoring}
        log.append(TimedMove(t, seq, move))
        live.record(log[-1], board.apply(move))
        for s in Scoring:
            if deal_score(live, s, t) != before[s]:
                want[s] = t
            assert live.scored_at(s) == want[s], (s, move)
    again = replay(seed, rules, log)
    assert {s: again.scored_at(s) for s in Scoring} == want
