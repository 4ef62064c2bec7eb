"""Scores as a pure function of (seed, rules, timed move log, scoring system).

Nothing here keeps a running score. A deal's score is recomputed by replaying its
log through the engine and counting the events, so that a change of scoring system
or race bonus by the host rescores every deal exactly (docs/rules.md §5.7), and any room
can be rebuilt from its logs. Replay is fast (the engine validates about 200,000
moves a second), so recomputing a deal of a few hundred moves costs a millisecond.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .board import Board
from .moves import Event, Move, Outcome, Status
from .settings import DealRules, Scoring

__all__ = [
    "TICK_MS",
    "DealReplay",
    "Step",
    "TimedMove",
    "deal_score",
    "event_points",
    "replay",
    "replay_outcomes",
    "replay_through",
]

TICK_MS = 10_000  # Timed: 2 points off every full 10 seconds
TICK_POINTS = -2
BONUS_MIN_SECONDS = 30


@dataclass(frozen=True, slots=True)
class TimedMove:
    """One accepted move: ``t`` ms after the deal started, ``seq`` the room-wide
    order in which the server accepted it (it breaks ties for the race bonus)."""

    t: int
    seq: int
    move: Move


@dataclass(frozen=True, slots=True)
class Step:
    """The scoring trace of one move that still stands (undone moves are dropped)."""

    t: int
    events: tuple[Event, ...]
    pass_started: int


@dataclass(slots=True)
class DealReplay:
    """A board rebuilt from its log, and what its score is computed from."""

    board: Board
    steps: list[Step] = field(default_factory=list)
    ended_at: int | None = None  # t of the move that ended the deal
    won_seq: int | None = None  # seq of the winning move

    def record(self, timed: TimedMove, outcome: Outcome) -> None:
        """Fold one accepted move into the trace (the server calls this live)."""
        if outcome.undone:
            self.steps.pop()
        else:
            self.steps.append(Step(timed.t, outcome.events, outcome.pass_started))
        if outcome.status is not Status.PLAYING:
            self.ended_at = timed.t
            if outcome.status is Status.WON:
                self.won_seq = timed.seq


def replay(seed: str, rules: DealRules, moves: Iterable[TimedMove]) -> DealReplay:
    """Rebuild a board and its trace. Raises ``IllegalMove`` if the log is not legal."""
    result = DealReplay(Board.deal(seed, rules))
    for timed in moves:
        result.record(timed, result.board.apply(timed.move))
    return result


def replay_through(
    seed: str, rules: DealRules, moves: Sequence[TimedMove]
) -> tuple[DealReplay, Outcome]:
    """The board and scoring trace right after the last of ``moves``, and what that
    move did, as :meth:`Board.apply` reported it live.

    A retried move (docs/protocol.md, ``move``) is answered with its original reply,
    which the room does not keep: the logs hold moves, not replies, so the reply is
    rebuilt from a replay of the log up to it. ``moves`` must not be empty; raises
    ``IllegalMove`` if the log is not legal.
    """
    if not moves:
        raise ValueError("replay_through needs at least one move")
    result = DealReplay(Board.deal(seed, rules))
    outcome: Outcome | None = None
    for timed in moves:
        outcome = result.board.apply(timed.move)
        result.record(timed, outcome)
    assert outcome is not None
    return result, outcome


def replay_outcomes(seed: str, rules: DealRules, moves: Iterable[Move]) -> list[Outcome]:
    """What each move of a log did, in order, as :meth:`Board.apply` reported it live.

    The same replay as :func:`replay`, keeping every move's :class:`Outcome` (undos
    and the moves they took back included) rather than the scoring trace, which drops
    undone moves. A revealed deal carries these, so that no client needs the rules to
    tell its moves. Raises ``IllegalMove`` if the log is not legal.
    """
    board = Board.deal(seed, rules)
    return [board.apply(move) for move in moves]


def event_points(event: Event, pass_started: int, draw: int) -> int:
    """Standard points for one event (docs/rules.md §5.1, the table)."""
    if event is Event.WASTE_TO_TABLEAU:
        return 5
    if event is Event.WASTE_TO_FOUNDATION or event is Event.TABLEAU_TO_FOUNDATION:
        return 10
    if event is Event.TURN_OVER:
        return 5
    if event is Event.FOUNDATION_TO_TABLEAU:
        return -15
    # Event.RECYCLE: draw one pays from the 2nd pass on, draw three from the 4th.
    if draw == 1:
        return -100 if pass_started >= 2 else 0
    return -20 if pass_started >= 4 else 0


def _standard(steps: Sequence[Step], draw: int, end_t: int | None) -> int:
    """Standard, or Timed when ``end_t`` is given: ticks interleave with the moves."""
    total = 0
    next_tick = TICK_MS
    for step in steps:
        if end_t is not None:
            # A tick at a full 10 s comes before a move stamped the same instant.
            while next_tick <= step.t:
                total = max(0, total + TICK_POINTS)
                next_tick += TICK_MS
        for event in step.events:
            total = max(0, total + event_points(event, step.pass_started, draw))
    if end_t is not None:
        while next_tick <= end_t:
            total = max(0, total + TICK_POINTS)
            next_tick += TICK_MS
    return total


def deal_score(result: DealReplay, scoring: Scoring, end_t: int) -> int:
    """A player's score for one deal, without the race bonus.

    ``end_t`` is when the deal stopped counting for this player, in ms from its
    start: the time of the move that ended it, or when the round's time ran out, or
    when the host moved the room on, or "now" for a deal still in play. Only Timed
    reads it.
    """
    board = result.board
    rules = board.rules
    if scoring.is_vegas:
        return -board.total + 5 * board.home
    if scoring is Scoring.STANDARD:
        return _standard(result.steps, rules.draw, None)
    stop = result.ended_at if result.ended_at is not None else end_t
    total = _standard(result.steps, rules.draw, stop)
    if board.status is Status.WON and result.ended_at is not None:
        seconds = result.ended_at // 1000
        if seconds >= BONUS_MIN_SECONDS:
            total += (700_000 * board.packs) // seconds
    return total
