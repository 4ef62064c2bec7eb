"""Where the quick-match queues are kept: the *book*.

One node keeps them in memory (:class:`LocalBook`); several nodes on one Redis
share one book there (server/cluster/queue.py), so that players connected to
different nodes wait in one queue per ladder and race in one room. Either way
the book is the one place that says who waits: a player is in it once (joining
again is ``already_queued``), taking a group out of it for a room is one atomic
step that fails if any of them left meanwhile, and a player taken out stays
*matched* (neither queued nor free) until the node holding their connection has
told them their room.

The matchmaker itself (server/matchmaking/match.py) stays pure: a pass reads the
book's entries, runs :func:`~server.matchmaking.match.form_rooms` over them, and
takes each group it formed out of the book.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from protocol import messages as M
from protocol.messages import ErrorCode

from ..core.values import RoomError
from ..peer import Peer

__all__ = ["Entry", "LocalBook", "QueueBook", "Removal", "position_of"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One player's place in a ladder's queue, as every node sees it."""

    player: str
    name: str  # the name they are seated under
    ladder: str
    rating: int  # the shown rating on ``ladder`` when they queued
    since: int  # server ms when they queued
    node: str  # the node holding their connection ("" alone): it tells them
    ticket: str  # this queuing's id: a late drop or unqueue removes only its own


class Removal(enum.Enum):
    REMOVED = "removed"  # out of the queue now
    MATCHED = "matched"  # taken for a room already: ``matched`` follows
    ABSENT = "absent"  # not in the queue (never, or their entry lapsed)


def position_of(entries: Sequence[Entry], mine: Entry) -> int:
    """``mine``'s place in its ladder's queue of ``entries``, from 1: the longest
    waiter first (ties: the lower player id), the order the matchmaker serves.
    (``mine`` may be taken for a room already, by another node's pass.)"""
    ahead = [
        e
        for e in entries
        if e.ladder == mine.ladder and (e.since, e.player) < (mine.since, mine.player)
    ]
    return 1 + len(ahead)


class QueueBook(Protocol):
    """The queues' keeping; see the module docstring."""

    node: str  # this node ("" alone)

    async def put(self, entry: Entry) -> list[Entry]:
        """Queue ``entry`` (``already_queued`` if its player waits or is being
        matched anywhere); the queue as it stands then."""

    async def remove(self, player: str, ticket: str) -> Removal:
        """Take ``player``'s entry of ``ticket`` out, unless they are matched."""

    async def lead(self) -> bool:
        """Whether this node may run a pass now: one node at a time forms rooms."""

    async def done_leading(self) -> None: ...

    async def entries(self) -> list[Entry]:
        """Everyone queued now (entries that lapsed are dropped)."""

    async def take(self, group: Sequence[Entry]) -> bool:
        """Take ``group`` out of the queue for one room, all or none: False when
        any of them left (or was taken) since the pass read the book."""

    async def put_back(self, group: Sequence[Entry]) -> None:
        """The room of ``group`` could not be made: they wait on, where they were."""

    async def told(self, player: str, ticket: str) -> None:
        """``player`` (matched from the queuing ``ticket``) knows their room now:
        no longer matched."""

    async def refresh(self, entries: Sequence[Entry]) -> list[str]:
        """This node's entries are still wanted (they lapse otherwise); the
        players among them neither queued nor matched any more (their entry
        lapsed while this node could not refresh it)."""

    def tell(self, entry: Entry, code: str, message: M.Message) -> None:
        """Send ``matched`` to a player whose connection is on another node
        (:meth:`QuickMatch.arrived` there)."""

    def follow(self, peer: Peer, node: str) -> None:
        """``peer``'s requests go to ``node`` from now on: their room runs there."""


class LocalBook:
    """The single node's book: queues in memory, so leaving is instant and a
    player's queue dies with their connection (server/service/service.py)."""

    node = ""

    def __init__(self) -> None:
        self.queued: dict[str, Entry] = {}
        self.matched: set[str] = set()

    async def put(self, entry: Entry) -> list[Entry]:
        if entry.player in self.queued or entry.player in self.matched:
            raise RoomError(ErrorCode.ALREADY_QUEUED, "you wait in a queue already")
        self.queued[entry.player] = entry
        return list(self.queued.values())

    async def remove(self, player: str, ticket: str) -> Removal:
        if player in self.matched:
            return Removal.MATCHED
        entry = self.queued.get(player)
        if entry is None or entry.ticket != ticket:
            return Removal.ABSENT
        del self.queued[player]
        return Removal.REMOVED

    async def lead(self) -> bool:
        return True

    async def done_leading(self) -> None:
        pass

    async def entries(self) -> list[Entry]:
        return list(self.queued.values())

    async def take(self, group: Sequence[Entry]) -> bool:
        if any(self.queued.get(e.player) != e for e in group):
            return False
        for e in group:
            del self.queued[e.player]
            self.matched.add(e.player)
        return True

    async def put_back(self, group: Sequence[Entry]) -> None:
        for e in group:
            self.matched.discard(e.player)
            self.queued[e.player] = e

    async def told(self, player: str, ticket: str) -> None:
        self.matched.discard(player)

    async def refresh(self, entries: Sequence[Entry]) -> list[str]:
        return [
            e.player
            for e in entries
            if e.player not in self.queued and e.player not in self.matched
        ]

    def tell(self, entry: Entry, code: str, message: M.Message) -> None:
        raise AssertionError("one node holds every connection")

    def follow(self, peer: Peer, node: str) -> None:
        raise AssertionError("one node runs every room")
