"""The in-memory store: dictionaries in this process; nothing survives a restart.

Every append is done on return, so a room's commands never wait for it
(server/rooms/runner.py)."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Sequence

from .base import SessionRecord, StoreUnavailable, token_key

__all__ = ["LocalSeeds", "MemoryStore"]


SESSION_TTL = 24 * 3600.0  # seconds a session unused is kept


class LocalSeeds:
    """Proven-seed pools in this process (:class:`server.store.base.SeedPool`):
    the in-memory and SQLite stores' (one node: nobody to share them with, and a
    restart proves afresh rather than keep seeds on disk)."""

    def __init__(self) -> None:
        self._seed_pools: dict[str, deque[tuple[str, str]]] = {}

    async def take_seed(self, key: str) -> tuple[str, str] | None:
        pool = self._seed_pools.get(key)
        return pool.popleft() if pool else None

    async def put_seed(self, key: str, seed: str, line: str) -> int:
        pool = self._seed_pools.setdefault(key, deque())
        pool.append((seed, line))
        return len(pool)

    async def seeds_ready(self, key: str) -> int:
        return len(self._seed_pools.get(key, ()))


class MemoryStore(LocalSeeds):
    """Dictionaries in this process. Sessions unused for :data:`SESSION_TTL` are
    dropped (oldest use first: the dict is kept in order of last use), so memory
    is bounded by the sessions an address may create in that time."""

    def __init__(self, session_ttl: float = SESSION_TTL) -> None:
        super().__init__()
        self._logs: dict[str, list[bytes]] = {}
        self._sessions: dict[str, tuple[float, SessionRecord]] = {}
        self._session_ttl = session_ttl

    async def reserve_room(self, code: str) -> bool:
        if code in self._logs:
            return False
        self._logs[code] = []
        return True

    def append(self, code: str, records: Sequence[bytes]) -> asyncio.Future[int]:
        log = self._logs.setdefault(code, [])
        log.extend(records)
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        done.set_result(len(log))
        return done

    def joinable(self, code: str) -> bool:
        return False  # every append is done on return

    async def load(self, code: str) -> list[bytes]:
        return list(self._logs.get(code, ()))

    async def compact(self, code: str, keep_from: int, first: bytes) -> None:
        log = self._logs.get(code, [])
        if not 0 <= keep_from < len(log) or log[keep_from] != first:
            raise StoreUnavailable(f"room {code}: no such checkpoint at record {keep_from}")
        del log[:keep_from]

    async def open_rooms(self) -> list[str]:
        return list(self._logs)

    async def close_room(self, code: str) -> None:
        self._logs.pop(code, None)

    async def put_session(self, token: str, record: SessionRecord) -> None:
        self._used(token_key(token), record)

    async def get_session(self, token: str) -> SessionRecord | None:
        key = token_key(token)
        found = self._sessions.get(key)
        if found is None:
            return None
        self._used(key, found[1])
        return found[1]

    async def delete_session(self, token: str) -> None:
        self._sessions.pop(token_key(token), None)

    def _used(self, key: str, record: SessionRecord) -> None:
        now = time.monotonic()
        self._sessions.pop(key, None)
        self._sessions[key] = (now, record)  # last in order: most recently used
        while True:
            oldest = next(iter(self._sessions))
            if now - self._sessions[oldest][0] <= self._session_ttl:
                return
            del self._sessions[oldest]

    async def close(self) -> None:
        return None
