"""The embedded server's accounts database as a test reads it behind the
server's back, and the kill -9 that the records kept there must survive: a
two-player deal ended by both resigning, the server killed the moment the
first player is told of it (so whether the write after the room's record had
happened is anybody's guess)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from server.accounts.sqlite import ACCOUNTS_DB
from tests.support.raw_client import Client, Frame


def rows(data_dir: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(data_dir / ACCOUNTS_DB)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def forget(data_dir: Path, *tables: str) -> None:
    """The tables emptied, as if the process had died between the room's record
    and their write."""
    conn = sqlite3.connect(data_dir / ACCOUNTS_DB)
    try:
        with conn:
            for table in tables:
                conn.execute(f"DELETE FROM {table}")
    finally:
        conn.close()


async def killed_as_told(
    kill: Callable[[], object], ann: Client, bob: Client, event: str, settings: dict[str, Any]
) -> str:
    """A room of ``ann`` and ``bob`` with ``settings`` plays one deal that both
    resign; ``kill`` kills their server (process or node) the moment ``ann``
    receives ``event`` (only once it is stored does it reach her). The room's
    code."""
    code: str = (await ann.ok("create_room", settings=settings))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    await ann.ok("start")
    await ann.event("deal_started")

    def kill_when_told(_client: Client, frame: Frame) -> None:
        if frame.msg.get("type") == event:
            kill()

    ann.on_frame = kill_when_told
    await ann.ok("move", deal=1, move={"kind": "draw"})
    await ann.ok("move", deal=1, move={"kind": "resign"})
    # Bob's resign ends it; the process dies as it tells Ann (Bob's reply may or
    # may not get out).
    await bob.send({"type": "move", "id": 1, "deal": 1, "move": {"kind": "resign"}, "n": 0})
    assert await ann.closed() == 1006
    return code
