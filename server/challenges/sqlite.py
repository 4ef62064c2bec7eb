"""Challenges on local disk: ``DIR/challenges.sqlite3`` beside the other
stores' files (``serve --data-dir``), built as the daily results' store is
(server/daily/sqlite_results.py): WAL with ``synchronous=FULL``, each operation
one transaction. A take is claimed with ``INSERT OR IGNORE`` on (challenge,
player) and its result set only where it is still null and its room is the
take's: a run counted once. A challenge withdrawn leaves its row for its id
in ``withdrawn``, in the same transaction.
"""

from __future__ import annotations

import json
import sqlite3

from ..daily.results import RunResult
from ..store.sqlite_file import SqliteFile
from .model import Challenge, Take

__all__ = ["CHALLENGES_DB", "SqliteChallenges"]

CHALLENGES_DB = "challenges.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS challenges (
    id TEXT PRIMARY KEY,
    challenger TEXT NOT NULL,
    source TEXT NOT NULL,
    data TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS made_by ON challenges (challenger);
CREATE INDEX IF NOT EXISTS made_from ON challenges (source);
CREATE TABLE IF NOT EXISTS takes (
    challenge TEXT NOT NULL,
    player TEXT NOT NULL,
    code TEXT NOT NULL,
    created REAL NOT NULL,
    result TEXT,
    PRIMARY KEY (challenge, player)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS taken_by ON takes (player);
CREATE TABLE IF NOT EXISTS withdrawn (id TEXT PRIMARY KEY) WITHOUT ROWID;
"""

_TAKE = "SELECT challenge, player, code, created, result FROM takes"


def _challenge(data: str) -> Challenge:
    return Challenge.from_json(json.loads(data))


def _take(row: tuple[str, str, str, float, str | None]) -> Take:
    challenge, player, code, created, result = row
    run = None if result is None else RunResult.from_json(json.loads(result))
    return Take(challenge, player, code, created, run)


class SqliteChallenges(SqliteFile):
    """:class:`~server.challenges.store.ChallengeStore` on SQLite; see the
    module docstring. Not usable until :meth:`open` (or use :meth:`at`)."""

    FILE = CHALLENGES_DB
    SCHEMA = _SCHEMA
    WHAT = "challenges"

    async def add(self, challenge: Challenge) -> None:
        c = challenge
        data = json.dumps(c.to_json())
        await self._changes(
            "INSERT OR IGNORE INTO challenges VALUES (?, ?, ?, ?)",
            (c.id, c.challenger, c.source, data),
        )

    async def get(self, challenge: str) -> Challenge | None:
        row = await self._one("SELECT data FROM challenges WHERE id = ?", (challenge,))
        return None if row is None else _challenge(row[0])

    async def take(self, challenge: str, player: str, code: str, now: float) -> Take:
        def run(c: sqlite3.Connection) -> Take:
            c.execute(
                "INSERT OR IGNORE INTO takes VALUES (?, ?, ?, ?, NULL)",
                (challenge, player, code, now),
            )
            row = c.execute(
                f"{_TAKE} WHERE challenge = ? AND player = ?", (challenge, player)
            ).fetchone()
            return _take(row)

        return await self._tx(run)

    async def add_result(self, challenge: str, result: RunResult) -> bool:
        n = await self._changes(
            "UPDATE takes SET result = ?"
            " WHERE challenge = ? AND player = ? AND code = ? AND result IS NULL",
            (json.dumps(result.to_json()), challenge, result.player, result.code),
        )
        return n == 1

    async def made_by(self, player: str) -> list[Challenge]:
        rows = await self._all("SELECT data FROM challenges WHERE challenger = ?", (player,))
        return [_challenge(data) for (data,) in rows]

    async def made_from(self, source: str) -> list[Challenge]:
        rows = await self._all("SELECT data FROM challenges WHERE source = ?", (source,))
        return [_challenge(data) for (data,) in rows]

    async def takes_of(self, challenge: str) -> list[Take]:
        rows = await self._all(f"{_TAKE} WHERE challenge = ?", (challenge,))
        return [_take(row) for row in rows]

    async def taken_by(self, player: str) -> list[Take]:
        rows = await self._all(f"{_TAKE} WHERE player = ?", (player,))
        return [_take(row) for row in rows]

    async def withdraw(self, challenger: str) -> None:
        def run(c: sqlite3.Connection) -> None:
            c.execute(
                "INSERT OR IGNORE INTO withdrawn SELECT id FROM challenges WHERE challenger = ?",
                (challenger,),
            )
            c.execute("DELETE FROM challenges WHERE challenger = ?", (challenger,))

        await self._tx(run)

    async def withdrawn(self, challenge: str) -> bool:
        return await self._one("SELECT 1 FROM withdrawn WHERE id = ?", (challenge,)) is not None
