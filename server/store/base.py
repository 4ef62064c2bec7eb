"""Where rooms live between moves: the store interface.

A room is event-sourced. Its state is a pure function of its **log**: an append-only
list of records (opaque bytes to the store; the room core defines them: settings
changes, joins, seeds drawn, timed moves, …). The server appends a record and waits
for :meth:`Store.append` to return before it sends any effect of it — the reply to a
move included — so an acknowledged move is never lost: after a crash, replaying the
log through the same room core rebuilds the room exactly.

Sessions (token → identity) are kept apart from room logs because a session outlives
its rooms. Tokens are stored hashed, so a dump of the store cannot take over a seat.

Three stores implement it: the embedded SQLite store (server/store/sqlite.py), the
default of ``serve``, durable on one machine; the in-memory store (``--memory``):
one process, nothing survives a restart; the Redis store (server/store/redis.py),
durable and shared by several nodes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Protocol

from protocol.messages import ErrorCode

from ..core.values import RoomError

__all__ = [
    "SeedPool",
    "SessionRecord",
    "Store",
    "StoreUnavailable",
    "StoreUncertain",
    "token_key",
    "unavailable",
    "uncertain",
]


class StoreUnavailable(Exception):
    """The store cannot be reached now, and nothing was (or ever will be) written.
    Clients see ``storage_unavailable`` and may retry. A store raises it only when
    it knows: an append whose outcome is unknown is resolved first (the Redis
    store), or fails with :class:`StoreUncertain`."""


class StoreUncertain(StoreUnavailable):
    """An append may or may not have been written, and the store stopped (it was
    closed) before it could find out. Never raised for a write known not to be
    there: the client hears ``storage_uncertain`` and re-syncs, and since a move
    carries its number, retrying the same ``n`` is then exact."""


def uncertain(why: str = "the store stopped before it could tell") -> RoomError:
    """The answer for :class:`StoreUncertain`: the request may have been applied."""
    return RoomError(
        ErrorCode.STORAGE_UNCERTAIN,
        f"{why}; the request may or may not have been applied: re-sync (snapshot); "
        "a move may be sent again with the same n",
    )


def unavailable(why: str = "the store is unreachable") -> RoomError:
    """The refusal a client gets for :class:`StoreUnavailable`: nothing was done."""
    return RoomError(ErrorCode.STORAGE_UNAVAILABLE, f"{why}; nothing was done: try again")


@dataclass(frozen=True, slots=True)
class SessionRecord:
    player: str  # the public id
    name: str
    room_code: str | None  # the join code of the room the session sits in


def token_key(token: str) -> str:
    """The form a token is stored under."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class SeedPool(Protocol):
    """Proven seeds waiting to be dealt (``deals: winnable``; server/rooms/proofs.py
    proves them): a first-in first-out list of ``(seed, line)`` per rule set ``key``.

    As secret as the room logs: a pooled seed never leaves the server before its
    deal is over. ``take_seed`` hands each entry out once, atomically, whoever
    asks: with the Redis store the nodes share one pool, and a seed taken by one
    is never dealt by another (one whose reply is lost is simply never dealt).
    The in-memory and SQLite stores keep the pools in this process (a restart
    proves afresh); Redis keeps them across restarts."""

    async def take_seed(self, key: str) -> tuple[str, str] | None:
        """The oldest proven seed and its line, gone from the pool; None when dry."""

    async def put_seed(self, key: str, seed: str, line: str) -> int:
        """Add a proven seed; the pool's size after it."""

    async def seeds_ready(self, key: str) -> int:
        """How many proven seeds the pool holds."""


class Store(SeedPool, Protocol):
    async def reserve_room(self, code: str) -> bool:
        """Claim a new room code; False when the code is taken."""

    def append(self, code: str, records: Sequence[bytes]) -> Awaitable[int]:
        """Append records to a room's log, durably, in order; the awaitable gives
        the log length, or raises :class:`StoreUnavailable`.

        A future rather than a coroutine, so that the room's host
        (server/rooms/runner.py) can see at once whether the records are already
        durable (the in-memory store: done on return) and otherwise chain on it
        with a callback, without a task of its own that could be cancelled with
        the outcome unknown. A coroutine is accepted too (it is run as a task)."""

    def joinable(self, code: str) -> bool:
        """True while the room's last append waits, unsent, for the store's next
        group commit: a further append then joins it, and both succeed or fail
        together. The room's host uses it to batch more (server/rooms/runner.py)."""

    async def load(self, code: str) -> list[bytes]:
        """A room's log as the store holds it, oldest first (empty for an unknown
        room): the whole log, or, once compacted, from a checkpoint on."""

    def compact(self, code: str, keep_from: int, first: bytes) -> Awaitable[None]:
        """Drop the first ``keep_from`` records of the room's log as :meth:`load`
        would return it now, provided the record at ``keep_from`` is ``first``: a
        checkpoint (server/core/records.py ``Checkpoint``), which covers every record before it,
        so the log keeps meaning the same room while staying short.

        The check is what makes compaction safe whoever miscounts: unless the
        checkpoint is durable exactly there, nothing is dropped and
        :class:`StoreUnavailable` says why. Appends after it are untouched, and
        ordered with it (an append issued meanwhile lands after the kept records)."""

    async def open_rooms(self) -> list[str]:
        """Codes of rooms not yet closed, for recovery after a restart."""

    async def close_room(self, code: str) -> None:
        """Forget a closed room (the Redis store lets its keys expire)."""

    async def put_session(self, token: str, record: SessionRecord) -> None: ...

    async def get_session(self, token: str) -> SessionRecord | None: ...

    async def delete_session(self, token: str) -> None:
        """Forget a session: its token resumes nothing from now on (a guest who
        took a handle signs in with a device token instead)."""

    async def close(self) -> None:
        """Flush and release connections at shutdown."""
