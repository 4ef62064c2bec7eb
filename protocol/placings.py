"""Placings: who came where in a deal, in a round and on a daily's board
(docs/rules.md §7.1). Pure.

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
    "moment_text",
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

    ``scored_at`` is when the player reached their final score: the time (ms
    from the deal's start, on the server's clock) of the last move that changed
    their score, 0 if none did. Not when their deal ended: resigning, going
    idle or playing on without scoring changes nothing here, so quitting early
    is never what places anyone ahead (protocol/scoring.py ``scored_at``).
    """

    score: int  # the deal's score, race bonus included
    won: bool
    scored_at: int


def _deal_key(f: Finish) -> tuple[int, int, int]:
    """Smaller is better: a higher score, then a win, then the final score reached earlier."""
    return (-f.score, 0 if f.won else 1, f.scored_at)


def _places(keys: Mapping[K, tuple[int, ...]]) -> dict[K, int]:
    ordered = sorted(keys.values())
    first: dict[tuple[int, ...], int] = {}
    for i, key in enumerate(ordered):
        first.setdefault(key, i + 1)
    return {p: first[key] for p, key in keys.items()}


def deal_places(finishes: Mapping[K, Finish]) -> dict[K, int]:
    """Each player's placing in one deal: by score; equal scores, a winner before a
    player who did not win, then who reached their score earlier; still equal,
    a shared placing."""
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


def moment_text(ms: int) -> str:
    """A moment that broke a tie, as every screen writes it: 85_130 -> "1:25.13"
    (to the hundredth, where a clock's seconds would show two moments alike)."""
    seconds, rest = divmod(max(0, ms), 1000)
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes}:{seconds:02d}.{rest // 10:02d}"


@dataclass(frozen=True, slots=True)
class RunFinish:
    """One player's run of a daily deal (or of a challenge) as its board ranks it.

    Everyone plays the same deal alone, each on their own clock from their own
    first move. A won run is ranked by the time to its win, then its moves; a
    run not won by how far it got: its cards home, its score, then the moment
    its last card went home (``home_ms``: when its count of cards home last
    changed). How soon it ended says nothing, so resigning at once never ranks
    above a run that got more cards home."""

    won: bool
    ms: int  # the run's time: its first move to the move (or step) that ended it
    moves: int
    home: int  # cards on the foundations at its end
    score: int
    home_ms: int  # its last card home, ms from its first move (0: none went home)


def run_key(f: RunFinish) -> tuple[int, ...]:
    """Smaller is better: a win before no win; won runs by the shorter time,
    then the fewer moves; the others by more cards home, then the higher
    score, then the earlier last card home."""
    if f.won:
        return (0, f.ms, f.moves)
    return (1, -f.home, -f.score, f.home_ms)


def run_places(finishes: Mapping[K, RunFinish]) -> dict[K, int]:
    """Each player's placing on a daily's leaderboard: by :func:`run_key`,
    equal keys sharing a placing ("one plus the number strictly ahead")."""
    return _places({p: run_key(f) for p, f in finishes.items()})


_MS_BITS = 27  # 37 hours: a run is closed long before (an idle room closes in 30 min)
_MOVES_BITS = 20
_HOME_BITS = 7  # 104 cards, double klondike's
_SCORE_BITS = 18  # scores from -2**17: Standard's is never below 0, nor above a few thousand
_LOST = 1 << (_HOME_BITS + _SCORE_BITS + _MS_BITS)  # 2**52


def _capped(n: int, bits: int) -> int:
    return min(max(n, 0), (1 << bits) - 1)


def board_score(finish: RunFinish) -> int:
    """:func:`run_key` as one integer below 2**53 (smaller is better), exact
    as a double: a Redis sorted set's score and an SQLite index's column.

    A won run is its time above its moves, below 2**47 (the same integer as
    before runs not won were ranked by how far they got: a store upgraded
    rewrites only those). A run not won is 2**52 above the cards it did not get
    home, how far its score is below 2**17 and the ms of its last card home.
    Each field is capped, far beyond any run: equal keys give equal integers,
    and within the caps the other way round."""
    if finish.won:
        ms, moves = _capped(finish.ms, _MS_BITS), _capped(finish.moves, _MOVES_BITS)
        return (ms << _MOVES_BITS) | moves
    short = (1 << _HOME_BITS) - 1 - _capped(finish.home, _HOME_BITS)
    top = 1 << (_SCORE_BITS - 1)
    below = (1 << _SCORE_BITS) - 1 - _capped(finish.score + top, _SCORE_BITS)
    at = _capped(finish.home_ms, _MS_BITS)
    return _LOST | (short << (_SCORE_BITS + _MS_BITS)) | (below << _MS_BITS) | at
