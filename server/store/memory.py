"""The in-memory store: dictionaries in this process; nothing survives a restart.

Every append is done on return, so a room's commands never wait for it
(server/rooms/runner.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from .base import SessionRecord, StoreUnavailable, token_key

__all__ = ["MemoryStore"]


class MemoryStore:
    """The default store: dictionaries in this process."""

    def __init__(self) -> None:
        self._logs: dict[str, list[bytes]] = {}
        self._sessions: dict[str, SessionRecord] = {}

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
            raise StoreUnavailable(f"room {code}: no such snapshot at record {keep_from}")
        del log[:keep_from]

    async def open_rooms(self) -> list[str]:
        return list(self._logs)

    async def close_room(self, code: str) -> None:
        self._logs.pop(code, None)

    async def put_session(self, token: str, record: SessionRecord) -> None:
        self._sessions[token_key(token)] = record

    async def get_session(self, token: str) -> SessionRecord | None:
        return self._sessions.get(token_key(token))

    async def close(self) -> None:
        return None
