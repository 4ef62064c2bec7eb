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

A log loaded from the store is folded from its last checkpoint (``snapshot``) record on
(server/core/records.py): the records before it are covered by it, and may have been
dropped by the store already (a crash between the checkpoint's append and the
compaction leaves them; they are skipped all the same). Folding the checkpoint
replaces the whole state, so the base is then an empty room that only knows how
many records came before it, and the tail starts with the checkpoint: no copy of a
big room is taken. :attr:`DurableLog.head` is the index, in the room's whole log,
of the first record the store holds, which is what a compaction is counted from.
"""

from __future__ import annotations

import copy
from collections.abc import Generator, Iterable, Sequence

from . import records as R
from .records import Record, decode_record
from .room import Room

__all__ = ["DurableLog"]


def _copy(room: Room) -> Room:
    """An independent copy: cheap at a round's start or in the lobby (no deals)."""
    return copy.deepcopy(room)


class DurableLog:
    """The durable state of one room: ``base`` plus ``tail``; see the module docstring."""

    def __init__(self, base: Room, tail: Iterable[bytes] = (), head: int = 0) -> None:
        self._base = base  # never handed out: restore() folds into a copy
        self._tail = list(tail)
        self._rounds: list[Room] = []  # copies at round starts not yet durable
        # The index in the room's whole log of the store's first record; None once
        # a compaction failed and nobody knows whether it took place.
        self.head: int | None = head

    @classmethod
    def empty(cls, code: str) -> DurableLog:
        """A new room's: nothing is durable yet."""
        return cls(Room(code))

    @classmethod
    def folding(
        cls, code: str, data: Sequence[bytes]
    ) -> Generator[None, None, tuple[Room, DurableLog]]:
        """Rebuild a room from its log as the store holds it (it is all durable),
        and its durable log with it, in steps (a record decoded, a record or a board
        folded in), for a caller that must not hold its event loop for the whole
        log (server/service/adoption.py ``fold_room``): returns (room, durable log)."""
        decoded: list[Record] = []
        start = 0
        for i in range(len(data) - 1, -1, -1):  # back to the last checkpoint
            record = decode_record(data[i])
            decoded.append(record)
            yield
            if isinstance(record, R.Checkpoint):
                start = i
                break
        decoded.reverse()
        room = Room(code)
        base, base_start, head = Room(code), start, 0
        first = decoded[0] if decoded else None
        if isinstance(first, R.Checkpoint):
            base.n_records = first.index  # the records before it: folded into it
            head = base.n_records - start
        for i, record in enumerate(decoded, start):
            yield from room.applying(record)
            yield
            if isinstance(record, R.RoundStarted):
                base, base_start = _copy(room), i + 1
        return room, cls(base, data[base_start:], head)

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
            room.fold(decode_record(raw))
        self._rounds = []
        for raw in pending:
            record = decode_record(raw)
            room.fold(record)
            if isinstance(record, R.RoundStarted):
                self.round_started(room)
        return room
