"""Placings: who came where in a deal and in a round (docs/rules.md §7.1). Pure.

Every screen that numbers players (a deal's results, the podium, the series, the
sheet, ``watch``, a bot's report) reads its numbers from here, so no two of them
can disagree about a tie. The server computes them and sends them on the wire;
clients only print them (:func:`placing_text`).

A placing is "one plus the number of players strictly ahead": players still equal
share a placing and the placings after them are skipped (two at =1st, then 3rd),
as on a podium. That is also why only the comparison key differs between a deal
and a round.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "Finish",
    "RunFinish",
    "board_score",
    "deal_places",
    "finish_of",
    "ordinal",
    "placing_text",
    "round_places",
    "run_key",
    "run_places",
]

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Finish:
    """One player's deal as its placing reads it.

    ``ended_at`` is the time (ms from the deal's start, on the server's clock) of
    the move that ended the player's deal (won, resigned, dead), or None while it
    was still being played when the deal ended for everyone: that counts as last.
    """

    score: int  # the deal's score, race bonus included
    won: bool
    ended_at: int | None


def _deal_key(f: Finish) -> tuple[int, int, int, int]:
    """Smaller is better: a higher score, then a win, then an earlier finish."""
    unfinished = f.ended_at is None
    return (-f.score, 0 if f.won else 1, 1 if unfinished else 0, f.ended_at or 0)


def _places(keys: Mapping[K, tuple[int, ...]]) -> dict[K, int]:
    ordered = sorted(keys.values())
    first: dict[tuple[int, ...], int] = {}
    for i, key in enumerate(ordered):
        first.setdefault(key, i + 1)
    return {p: first[key] for p, key in keys.items()}


def deal_places(finishes: Mapping[K, Finish]) -> dict[K, int]:
    """Each player's placing in one deal: by score; equal scores, a winner before a
    player who did not win, then the earlier finish; still equal, a shared placing."""
    return _places({p: _deal_key(f) for p, f in finishes.items()})


def round_places(totals: Mapping[K, int]) -> dict[K, int]:
    """Each player's placing in a round: by total; equal totals share a placing
    (for first, the win)."""
    return _places({p: (-t,) for p, t in totals.items()})


def ordinal(n: int) -> str:
    """1 -> "1st", 2 -> "2nd", 11 -> "11th"."""
    tens = n % 100
    suffix = "th" if 11 <= tens <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def placing_text(places: Mapping[K, int], player: K) -> str:
    """``player``'s placing as people write it: "2nd", or "=1st" when shared;
    empty when they are not placed."""
    place = places.get(player)
    if place is None:
        return ""
    shared = sum(1 for p in places.values() if p == place) > 1
    return f"{'=' if shared else ''}{ordinal(place)}"


@dataclass(frozen=True, slots=True)
class RunFinish:
    """One player's run of a daily deal as the leaderboard ranks it.

    Everyone plays the same deal alone, under Standard scoring with no race
    bonus, so the score says little a win does not: the daily ranks by the
    deal placing's own second and third keys, a win and then the earlier finish
    (here the run's time from its first move, since nobody started together),
    and then the fewer moves. Equal on all three, a shared placing, as ever."""

    won: bool
    ms: int  # the run's time: its first move to the move (or step) that ended it
    moves: int


def run_key(f: RunFinish) -> tuple[int, int, int]:
    """Smaller is better: a win, then the shorter time, then the fewer moves."""
    return (0 if f.won else 1, f.ms, f.moves)


def run_places(finishes: Mapping[K, RunFinish]) -> dict[K, int]:
    """Each player's placing on a daily's leaderboard: by :func:`run_key`,
    equal keys sharing a placing ("one plus the number strictly ahead")."""
    return _places({p: run_key(f) for p, f in finishes.items()})


_MS_BITS = 27  # 37 hours: a run is closed long before (an idle room closes in 30 min)
_MOVES_BITS = 20


def board_score(finish: RunFinish) -> int:
    """:func:`run_key` as one integer (smaller is better): the
    win in the top bit, then the time in ms, then the moves; each capped, so the
    whole stays below 2**48 and exact as a double."""
    ms = min(max(finish.ms, 0), (1 << _MS_BITS) - 1)
    moves = min(max(finish.moves, 0), (1 << _MOVES_BITS) - 1)
    lost = 0 if finish.won else 1
    return (lost << (_MS_BITS + _MOVES_BITS)) | (ms << _MOVES_BITS) | moves


def finish_of(score: int) -> RunFinish:
    """The run a :func:`board_score` was packed from (within its caps)."""
    moves = score & ((1 << _MOVES_BITS) - 1)
    ms = (score >> _MOVES_BITS) & ((1 << _MS_BITS) - 1)
    return RunFinish(won=not score >> (_MS_BITS + _MOVES_BITS), ms=ms, moves=moves)
