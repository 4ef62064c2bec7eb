"""The matchmaker: who races whom, from a ladder's queue as it stands.

A pure function of the queue (each entry's shown rating and seconds waited), so
that fairness is a property of one function that tests can drive through any
churn of joins and leaves, and so that one node, or one Lua step, can run it
over a queue shared by the cluster with the same result.

The rule (docs/protocol.md, "Quick match"):

- A player's *window* is how far from their shown rating they accept a rival:
  :data:`WINDOW_BASE` points at once, widening by :data:`WINDOW_PER_S` points a
  second waited, and unbounded from :data:`WINDOW_OPEN_AFTER_S` seconds on.
- The longest waiter is served first (ties: the lower player id, so the result
  never depends on the queue's order). Their room takes the up to
  :data:`MOST - 1` other waiters nearest in rating within the longest waiter's
  window; a room needs at least :data:`LEAST` players, else the longest waiter
  stays queued and the next is served.

So no one who could be matched is left: when the matchmaker is done, no waiter
has another waiter within their window (:func:`unmatched_could_match` is the
check the tests hold it to), and two players who both waited
:data:`WINDOW_OPEN_AFTER_S` seconds are always matched.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "BOTS_AFTER_S",
    "LEAST",
    "MOST",
    "WINDOW_BASE",
    "WINDOW_OPEN_AFTER_S",
    "WINDOW_PER_S",
    "Waiter",
    "bots_offered",
    "form_rooms",
    "unmatched_could_match",
    "window",
]

LEAST = 2  # a quick-match room races at least two players
MOST = 4  # and at most four: a short round among close ratings
WINDOW_BASE = 50.0  # shown-rating points accepted at once
WINDOW_PER_S = 10.0  # widening per second waited
WINDOW_OPEN_AFTER_S = 60.0  # from then on anyone on the ladder will do
BOTS_AFTER_S = 30.0  # a player alone this long may race bots instead (unrated)


@dataclass(frozen=True, slots=True)
class Waiter:
    """One entry of a ladder's queue, as the matchmaker sees it."""

    player: str
    rating: int  # the shown rating on the queue's ladder
    waited: float  # seconds since the player queued


def window(waited: float) -> float:
    """How far from their own rating a player who waited ``waited`` seconds
    accepts a rival: narrow at first for a fair race, wider with each second so
    that waiting always ends."""
    if waited >= WINDOW_OPEN_AFTER_S:
        return math.inf
    return WINDOW_BASE + WINDOW_PER_S * max(0.0, waited)


def bots_offered(waited: float) -> bool:
    """Whether a player has waited long enough to be offered bots instead."""
    return waited >= BOTS_AFTER_S


def _served_first(w: Waiter) -> tuple[float, str]:
    return (-w.waited, w.player)


def form_rooms(queue: Iterable[Waiter]) -> list[list[Waiter]]:
    """The rooms to start from ``queue``: each a list of 2 to 4 waiters, the
    longest waiter first; a player is in at most one. Waiters in no room stay
    queued. A queue holds a player once (the shell's to keep)."""
    unique = {w.player: w for w in queue}
    # Waiting players by rating; a taken one is removed, so each pick looks only
    # at its nearest neighbours: O(n log n) plus the list's removals.
    by_rating = sorted(unique.values(), key=lambda w: (w.rating, w.player))
    keys = [(w.rating, w.player) for w in by_rating]
    taken: set[str] = set()
    rooms: list[list[Waiter]] = []
    for anchor in sorted(unique.values(), key=_served_first):
        if anchor.player in taken:
            continue
        rivals = _nearest(by_rating, keys, anchor, window(anchor.waited))
        if len(rivals) + 1 < LEAST:
            continue
        room = [anchor, *sorted(rivals, key=_served_first)]
        rooms.append(room)
        for w in room:
            taken.add(w.player)
            at = bisect.bisect_left(keys, (w.rating, w.player))
            del keys[at]
            del by_rating[at]
    return rooms


def _nearest(
    by_rating: Sequence[Waiter], keys: Sequence[tuple[int, str]], anchor: Waiter, reach: float
) -> list[Waiter]:
    """Up to ``MOST - 1`` waiters nearest ``anchor`` in rating, each within
    ``reach`` of it (on a tie, the one below first)."""
    at = bisect.bisect_left(keys, (anchor.rating, anchor.player))
    below, above = at - 1, at + 1
    picked: list[Waiter] = []
    while len(picked) < MOST - 1:
        down = anchor.rating - by_rating[below].rating if below >= 0 else math.inf
        up = by_rating[above].rating - anchor.rating if above < len(by_rating) else math.inf
        if min(down, up) > reach or min(down, up) == math.inf:
            break
        if down <= up:
            picked.append(by_rating[below])
            below -= 1
        else:
            picked.append(by_rating[above])
            above += 1
    return picked


def unmatched_could_match(queue: Iterable[Waiter], rooms: Sequence[Sequence[Waiter]]) -> bool:
    """Whether two waiters left out of ``rooms`` could have raced: one within
    the other's window. The matchmaker never leaves such a pair."""
    placed = {w.player for room in rooms for w in room}
    left = sorted(
        {w.player: w for w in queue if w.player not in placed}.values(), key=lambda w: w.rating
    )
    for i, a in enumerate(left):
        for b in left[i + 1 :]:
            if b.rating - a.rating <= max(window(a.waited), window(b.waited)):
                return True
    return False
