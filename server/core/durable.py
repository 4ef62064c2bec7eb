"""A room's last durable state, kept so that a failed append can roll back to it.

The shell commits a room's commands ahead of the store (server/rooms/runner.py), so
the live :class:`~server.core.room.Room` may hold records the store has not
acknowledged yet. When an append fails, the room must return to exactly the state
its acknowledged records give — the state a restart would rebuild from the store —
and at once, because the store may be the very thing that is down.

Refolding the whole log would do, but keeping the whole log in memory grows with
the room's life. So the durable state is kept as a **base**, a copy of the room
taken just after the ``round`` record that started its current round, and the
**tail**, the durable records since then, as the bytes the store was given. A
round's start is the cheap moment to copy a room: the ``round`` record has just
dropped the last round's deals, so only members, settings and banks are left.
Memory is bounded by what the current round holds, as the live room's is.

The copy is taken when the ``round`` record is folded into the live room (see
:meth:`DurableLog.round_started`), and becomes the base once that record is
durable; until then it waits with the other speculative state.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence

from . import records as R
from .records import decode_record
from .room import Room

__all__ = ["DurableLog"]


def _copy(room: Room) -> Room:
    """An independent copy: cheap at a round's start or in the lobby (no deals)."""
    return copy.deepcopy(room)


class DurableLog:
    """The durable state of one room: ``base`` plus ``tail``; see the module docstring."""

    def __init__(self, base: Room, tail: Iterable[bytes] = ()) -> None:
        self._base = base  # never handed out: restore() folds into a copy
        self._tail = list(tail)
        self._rounds: list[Room] = []  # copies at round starts not yet durable

    @classmethod
    def empty(cls, code: str) -> DurableLog:
        """A new room's: nothing is durable yet."""
        return cls(Room(code))

    @classmethod
    def fold(cls, code: str, data: Sequence[bytes]) -> tuple[Room, DurableLog]:
        """Rebuild a room from its whole log (it is all durable), and its durable
        log with it."""
        room = Room(code)
        base, start = Room(code), 0
        for i, raw in enumerate(data):
            record = decode_record(raw)
            room.apply(record, emit=False)
            if record["k"] == R.ROUND:
                base, start = _copy(room), i + 1
        return room, cls(base, data[start:])

    @property
    def length(self) -> int:
        """How many of the room's records are durable."""
        return self._base.n_records + len(self._tail)

    def round_started(self, room: Room) -> None:
        """The live room has just folded a ``round`` record (not durable yet)."""
        self._rounds.append(_copy(room))

    def extend(self, data: Sequence[bytes]) -> None:
        """The store acknowledged the next ``data`` records."""
        self._tail.extend(data)
        length = self.length
        while self._rounds and self._rounds[0].n_records <= length:
            base = self._rounds.pop(0)
            del self._tail[: base.n_records - self._base.n_records]
            self._base = base

    def restore(self, pending: Iterable[bytes] = ()) -> Room:
        """A new live room in the durable state, with the ``pending`` records (not
        durable yet, still to be appended) folded on top when there are any."""
        room = _copy(self._base)
        for raw in self._tail:
            room.apply(decode_record(raw), emit=False)
        self._rounds = []
        for raw in pending:
            record = decode_record(raw)
            room.apply(record, emit=False)
            if record["k"] == R.ROUND:
                self.round_started(room)
        return room
