"""Ghosts of a daily run, pure: a recorded run turned into what a live rival's
chips show, move by move, and two runs set side by side once one's own is over.

A ghost is a run kept on the daily's board, with its line (its timed moves,
kept apart from its result: server/daily/results.py). The engine replays them on
the day's deal and keeps, for each, only what a live rival's ``progress``
carries (protocol/views.py ``progress``): score, cards home, moves, status,
finished. No board and no card is kept, so none can be sent. Each frame has
the time it happened at, from the run's first move: a ghost races at the pace
it was played, on the racing player's clock from their own first move.

A run stopped mid-deal (its player left, or it went idle) ends with one more
frame at the time it stopped: still ``playing`` but ``finished``, as a live
rival still playing when a deal ends shows as unfinished.

Once the day is over (its seed revealed), the leader's run is given whole, as a
past deal's replay shows one (:func:`line_replay`): every move with what the
engine says it did, from the seed's layout to the final board.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from protocol.board import Board
from protocol.moves import Move, MoveKind, Status
from protocol.scoring import DealReplay, TimedMove
from protocol.settings import DealRules, Scoring
from protocol.views import outcome_view, progress, revealed_view

from .results import RunResult, TimedEntry
from .schedule import DailyDeal

__all__ = ["GhostFrame", "comparison", "frames", "line_replay", "start_progress"]


@dataclass(frozen=True, slots=True)
class GhostFrame:
    """A ghost's progress right after one of its moves, ``t`` ms after its first."""

    t: int
    progress: dict[str, Any]


def start_progress() -> dict[str, Any]:
    """A ghost before its first move (the racing player's first move)."""
    return {"score": 0, "home": 0, "moves": 0, "status": "playing", "finished": False}


def frames(
    seed: str, rules: DealRules, run: RunResult, line: Sequence[TimedEntry]
) -> list[GhostFrame]:
    """The run's progress after each of its moves, replayed by the engine."""
    replay = DealReplay(Board.deal(seed, rules))
    out: list[GhostFrame] = []
    for i, (t, kind, src, dst, count) in enumerate(line):
        move = Move(MoveKind(kind), src, dst, count)
        replay.record(TimedMove(t, i, move), replay.board.apply(move))
        seen = progress(replay.board, replay.score(Scoring.STANDARD, t))
        out.append(GhostFrame(t, seen))
    if out and not out[-1].progress["finished"]:
        last = out[-1]
        out.append(GhostFrame(max(last.t, run.ms), {**last.progress, "finished": True}))
    return out


def _home_times(line: Sequence[GhostFrame]) -> list[int]:
    """When each card came home: the ms of the k-th card home, k = 1, 2, …"""
    out: list[int] = []
    for frame in line:
        while len(out) < frame.progress["home"]:
            out.append(frame.t)
    return out


def _side(run: RunResult, line: Sequence[GhostFrame]) -> dict[str, Any]:
    homes = _home_times(line)
    return {
        "name": run.name,
        "result": run.result,
        "seconds": round(run.ms / 1000, 3),
        "moves": run.moves,
        "score": run.score,
        "home_at": [round(t / 1000, 3) for t in homes],
        "line": [
            [round(f.t / 1000, 3), f.progress["moves"], f.progress["home"], f.progress["score"]]
            for f in line
        ],
    }


def comparison(
    mine: RunResult,
    my_line: Sequence[GhostFrame],
    leader: RunResult,
    leader_line: Sequence[GhostFrame],
) -> dict[str, Any]:
    """One's run against the leader's, by the time each card came home, and
    where the gap opened: the card at which one fell furthest further behind
    (the leader's lead grew most from the card before it), else the first
    card one never got home. Timings only: no move and no card of the
    leader's run."""
    you, them = _side(mine, my_line), _side(leader, leader_line)
    gap = None
    behind_before = 0.0
    for k, (a, b) in enumerate(zip(you["home_at"], them["home_at"], strict=False), start=1):
        behind = a - b
        grew = behind - behind_before
        if grew > 0 and (gap is None or grew > gap["grew"]):
            gap = {"card": k, "you": a, "leader": b, "grew": round(grew, 3)}
        behind_before = behind
    short = len(you["home_at"])
    if gap is None and short < len(them["home_at"]):
        # Never behind on the cards both had home: the gap is the first card
        # one never got home.
        gap = {"card": short + 1, "you": None, "leader": them["home_at"][short], "grew": None}
    return {"you": you, "leader": them, "gap": gap}


def line_replay(
    deal: DailyDeal, run: RunResult, line: Sequence[TimedEntry], name: str
) -> dict[str, Any]:
    """A run of a day over, as ``past_deal`` gives a room's past deal (the one
    player's log with each move's result, the final board with every card, the
    seed and its commitment), replayed by the engine from its line: only for a
    day whose seed is revealed (the caller's to check), since every move's
    result names the cards it moved and turned."""
    rules = deal.rules
    replay = DealReplay(Board.deal(deal.seed, rules))
    log: list[dict[str, Any]] = []
    for i, (t, kind, src, dst, count) in enumerate(line):
        move = Move(MoveKind(kind), src, dst, count)
        outcome = replay.board.apply(move)
        replay.record(TimedMove(t, i, move), outcome)
        log.append({"t": t, "move": move.to_wire(), "result": outcome_view(outcome)})
    board = replay.board
    player = run.player
    return {
        "key": f"daily/{deal.day.isoformat()}/{deal.ladder}",
        "room": run.code,
        "round": 1,
        "number": 1,
        "t": run.ended,
        "rules": rules.to_wire(),
        "scoring": Scoring.STANDARD.value,
        "names": {player: name},
        "seed": deal.seed,
        "commitment": deal.commitment,
        "boards": {player: revealed_view(board)},
        "summary": {
            player: {
                "logged": len(log),
                "moves": board.moves,
                "status": board.status.value,
                "finished_t": log[-1]["t"] if log and board.status is not Status.PLAYING else None,
                "score": run.score,
                "scored_t": replay.scored_at(Scoring.STANDARD),
                "place": 1,
            }
        },
        "logs": {player: log},
    }
