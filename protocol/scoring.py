"""Scores as a pure function of (seed, rules, timed move log, scoring system).

A deal's score is what its log leads to, never a number stored beside it: a change
of scoring system or race bonus by the host rescores every deal exactly
(docs/rules.md §5.7), and any room can be rebuilt from its logs.

Two ways to the same number. :func:`deal_score` is the reference: it walks the
whole scoring trace and counts every event, the rules of docs/rules.md §5 as
plainly as they can be written. The server cannot pay that on every move (a move
at 10,000 would cost a thousand times the first: the round's work quadratic in its
length), so :meth:`DealReplay.record` also keeps, for each step of the trace, the
running totals after it, for every system at once, and :meth:`DealReplay.score`
reads the last one: the same cost at move 10 and move 10,000. Standard's clip at 0
makes a total depend on the path, not only on the events (a −15 clipped at 0 is
not refunded), so an undo cannot subtract its points back; it pops its step, and
the totals of the step before are exactly where the reference replay would be.
The property tests (tests/test_scoring.py) hold the two equal on random logs.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .board import Board
from .frozen import quick_init
from .moves import Event, Move, Outcome, Status
from .settings import DealRules, Scoring

__all__ = [
    "TICK_MS",
    "DealReplay",
    "Step",
    "TimedMove",
    "deal_score",
    "due_ticks",
    "event_points",
    "replay",
    "replay_outcomes",
    "replay_through",
]

TICK_MS = 10_000  # Timed: 2 points off every full 10 seconds
TICK_POINTS = -2
BONUS_MIN_SECONDS = 30


@quick_init
@dataclass(frozen=True, slots=True)
class TimedMove:
    """One accepted move: ``t`` ms after the deal started, ``seq`` the room-wide
    order in which the server accepted it (it breaks ties for the race bonus)."""

    t: int
    seq: int
    move: Move


@dataclass(frozen=True, slots=True)
class Step:
    """The scoring trace of one move that still stands (undone moves are dropped).

    ``standard``, ``timed`` and ``ticks`` are the running values right after this
    move, for :meth:`DealReplay.score`: the Standard total, the Timed total (ticks
    interleaved, without the time bonus) and how many ticks that one counts. The
    reference :func:`deal_score` reads only ``t``, ``events`` and ``pass_started``.
    """

    t: int
    events: tuple[Event, ...]
    pass_started: int
    standard: int = 0
    timed: int = 0
    ticks: int = 0


# A step's fields in DealReplay's flat trace, in order.
_T, _STARTED, _STANDARD, _TIMED, _TICKS = range(5)
_STRIDE = 5


@dataclass(slots=True)
class DealReplay:
    """A board rebuilt from its log, and what its score is computed from.

    The scoring trace is kept flat, in arrays of machine integers rather than a
    :class:`Step` object per move: a busy server holds a step for every standing
    move of every deal of a round, and the garbage collector walks every object it
    tracks on each full pass (arrays hold no references, so it skips them).
    :attr:`steps` rebuilds the objects for whoever reads the trace move by move.
    """

    board: Board
    ended_at: int | None = None  # t of the move that ended the deal
    won_seq: int | None = None  # seq of the winning move
    # The t of the last move that changed the Standard total, the Timed total
    # (at the move's own time, its ticks counted before it) and the cards home
    # (the Vegas score): 0 while none has. See :meth:`scored_at`.
    standard_at: int = 0
    timed_at: int = 0
    home_at: int = 0
    # Step i is trace[_STRIDE * i :][:_STRIDE] (see _T ...), its events are
    # events[ends[i - 1] : ends[i]].
    trace: array[int] = field(default_factory=lambda: array("q"))
    events: array[int] = field(default_factory=lambda: array("b"))
    ends: array[int] = field(default_factory=lambda: array("l"))

    @property
    def steps(self) -> list[Step]:
        """The trace of the moves that still stand, one :class:`Step` each."""
        trace, events, out = self.trace, self.events, []
        start = 0
        for i, end in enumerate(self.ends):
            row = trace[_STRIDE * i : _STRIDE * i + _STRIDE]
            told = tuple(Event(e) for e in events[start:end])
            out.append(Step(row[_T], told, row[_STARTED], row[_STANDARD], row[_TIMED], row[_TICKS]))
            start = end
        return out

    def record(self, timed: TimedMove, outcome: Outcome) -> None:
        """Fold one accepted move into the trace (the server calls this live).

        Constant work per move: the running totals come from the step before
        (an auto-complete's events aside, one per card it plays home)."""
        trace, ends = self.trace, self.ends
        t = timed.t
        standard_before, timed_before = self._totals(t)
        if outcome.undone:
            start = ends[-2] if len(ends) > 1 else 0
            homed = -_homed(self.events[start:])
            del trace[-_STRIDE:]
            ends.pop()
            del self.events[start:]
        else:
            if ends:
                standard, total, ticks = trace[-3], trace[-2], trace[-1]
            else:
                standard = total = ticks = 0
            # Ticks come before a move stamped at or after them (docs/rules.md §5.4).
            due = due_ticks(t)
            if due > ticks:
                total = max(0, total + TICK_POINTS * (due - ticks))
                ticks = due
            draw = self.board.rules.draw
            started = outcome.pass_started
            for event in outcome.events:
                points = event_points(event, started, draw)
                standard = max(0, standard + points)
                total = max(0, total + points)
            trace.extend((t, started, standard, total, ticks))
            self.events.extend(outcome.events)
            ends.append(len(self.events))
            homed = _homed(outcome.events)
        standard_after, timed_after = self._totals(t)
        if standard_after != standard_before:
            self.standard_at = t
        if timed_after != timed_before:
            self.timed_at = t
        if homed:
            self.home_at = t
        if outcome.status is not Status.PLAYING:
            self.ended_at = timed.t
            if outcome.status is Status.WON:
                self.won_seq = timed.seq

    def _totals(self, t: int) -> tuple[int, int]:
        """The Standard and the Timed total (no time bonus) at ``t``, the ticks
        due by then counted: what a move at ``t`` starts from, or left."""
        trace = self.trace
        if not trace:
            return 0, 0
        total, ticks = trace[-2], trace[-1]
        due = due_ticks(t)
        if due > ticks:
            total = max(0, total + TICK_POINTS * (due - ticks))
        return trace[-3], total

    def scored_at(self, scoring: Scoring) -> int:
        """When the player reached the score they have under ``scoring``: the
        t of the last move that changed it (a winning move always does), 0 if
        none did. A tick of Timed is no move, nor is a resignation a move that
        scores: neither changes it (docs/rules.md §7.1). A pure function of the
        log, as the score is."""
        if scoring.is_vegas:
            return self.home_at
        return self.standard_at if scoring is Scoring.STANDARD else self.timed_at

    def score(self, scoring: Scoring, end_t: int) -> int:
        """What :func:`deal_score` says, read off the running totals in O(1).

        Every tick is clipped at 0 on its own, but ticks in a row clip like one
        penalty of their sum (a running total is never below 0), so the ticks
        between the last move and ``end_t`` are counted at once, however many."""
        board = self.board
        if scoring.is_vegas:
            return -board.total + 5 * board.home
        trace = self.trace
        if scoring is Scoring.STANDARD:
            return trace[-_STRIDE + _STANDARD] if trace else 0
        total, ticks = (trace[-_STRIDE + _TIMED], trace[-1]) if trace else (0, 0)
        stop = self.ended_at if self.ended_at is not None else end_t
        due = due_ticks(stop)
        if due > ticks:
            total = max(0, total + TICK_POINTS * (due - ticks))
        return total + self._time_bonus()

    def _time_bonus(self) -> int:
        board = self.board
        if board.status is Status.WON and self.ended_at is not None:
            seconds = self.ended_at // 1000
            if seconds >= BONUS_MIN_SECONDS:
                return (700_000 * board.packs) // seconds
        return 0


_HOMED: dict[int, int] = {
    Event.WASTE_TO_FOUNDATION: 1,
    Event.TABLEAU_TO_FOUNDATION: 1,
    Event.FOUNDATION_TO_TABLEAU: -1,
}


def _homed(events: Iterable[int]) -> int:
    """How many cards some events put home, less those they took back (an
    event kept as its number finds its entry: an IntEnum hashes as one)."""
    return sum(_HOMED.get(e, 0) for e in events)


def due_ticks(t: int) -> int:
    """How many Timed ticks have come by ``t`` ms into a deal (one per full 10 s)."""
    return t // TICK_MS if t > 0 else 0


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
    """A player's score for one deal, without the race bonus: the reference.

    It counts the whole trace again, in time linear in the log; the server reads
    :meth:`DealReplay.score` instead, which tests hold equal to this.

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
