"""Daily results on local disk: ``DIR/daily_results.sqlite3`` beside the room
and account stores' files (``serve --data-dir``).

Built as the account store is (server/accounts/sqlite.py): WAL with
``synchronous=FULL``, so a write has been fsynced when its coroutine returns;
one connection in one thread, each operation one transaction, which is what
makes a claim and a result happen once (``INSERT OR IGNORE`` on the run's key,
and the streak folded in the same transaction only when the result is new).
The board is an index on (date, ladder, board score, player): a rank is a count
of the index entries before the run's score, a page a range of it read from the
index alone (then its 50 results by key), and each daily's count of results is
kept beside it, counted in the transaction that keeps a result.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from ..store.base import StoreUnavailable
from .results import RankedRun, RunClaim, RunResult, Streaks, ranked, streaks_after

__all__ = ["RESULTS_DB", "SqliteResults"]

log = logging.getLogger(__name__)

RESULTS_DB = "daily_results.sqlite3"
T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    date TEXT NOT NULL,
    ladder TEXT NOT NULL,
    player TEXT NOT NULL,
    code TEXT NOT NULL,
    PRIMARY KEY (date, ladder, player)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS results (
    date TEXT NOT NULL,
    ladder TEXT NOT NULL,
    player TEXT NOT NULL,
    score INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (date, ladder, player)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS board ON results (date, ladder, score, player);
CREATE INDEX IF NOT EXISTS runs_of ON results (player);
CREATE TABLE IF NOT EXISTS counts (
    date TEXT NOT NULL,
    ladder TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (date, ladder)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS streaks (
    player TEXT PRIMARY KEY,
    played INTEGER NOT NULL,
    played_day INTEGER NOT NULL,
    won INTEGER NOT NULL,
    won_day INTEGER NOT NULL,
    best_played INTEGER NOT NULL,
    best_won INTEGER NOT NULL
) WITHOUT ROWID;
"""


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=5.0, check_same_thread=True)
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.close()
        raise StoreUnavailable(f"{path}: SQLite refused WAL mode ({mode})")
    conn.execute("PRAGMA synchronous = FULL")
    conn.executescript(_SCHEMA)
    return conn


def _run(data: str) -> RunResult:
    return RunResult.from_json(json.loads(data))


def _ahead(c: sqlite3.Connection, date: str, ladder: str, score: int) -> int:
    sql = (
        "SELECT COUNT(*) FROM results INDEXED BY board WHERE date = ? AND ladder = ? AND score < ?"
    )
    n: int = c.execute(sql, (date, ladder, score)).fetchone()[0]
    return n


class SqliteResults:
    """:class:`~server.daily.results.ResultStore` on SQLite; see the module
    docstring. Not usable until :meth:`open` (or use :meth:`at`)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / RESULTS_DB
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="sqlite-daily")
        self._conn: sqlite3.Connection | None = None

    @classmethod
    async def at(cls, data_dir: Path | str) -> SqliteResults:
        store = cls(Path(data_dir))
        await store.open()
        return store

    async def open(self) -> None:
        """Open the database in the store's thread (the directory is the room
        store's, whose lock keeps a second server out)."""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._conn = await asyncio.get_running_loop().run_in_executor(
                self._pool, lambda: _connect(self.path)
            )
        except (sqlite3.Error, OSError) as exc:
            await self.close()
            raise StoreUnavailable(f"cannot open {self.path}: {exc}") from exc
        log.info("daily results at %s (WAL, synchronous=FULL)", self.path)

    async def _tx(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn`` as one transaction in the store's thread: committed (durable)
        when this returns, or rolled back and StoreUnavailable."""
        conn = self._conn
        if conn is None:
            raise StoreUnavailable("the daily results store is closed")

        def run() -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result

        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, run)
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"the daily results store failed: {exc}") from exc
        except RuntimeError as exc:  # the pool was shut down
            raise StoreUnavailable(str(exc)) from exc

    async def claim(self, date: str, ladder: str, player: str, code: str) -> RunClaim:
        def run(c: sqlite3.Connection) -> RunClaim:
            key = (date, ladder, player)
            c.execute("INSERT OR IGNORE INTO claims VALUES (?, ?, ?, ?)", (*key, code))
            return _claimed(c, key) or RunClaim(code, False)

        return await self._tx(run)

    async def claimed(self, date: str, ladder: str, player: str) -> RunClaim | None:
        return await self._tx(lambda c: _claimed(c, (date, ladder, player)))

    async def add_result(self, result: RunResult) -> bool:
        r = result

        def run(c: sqlite3.Connection) -> bool:
            key = (r.date, r.ladder, r.player)
            claim = c.execute(
                "SELECT code FROM claims WHERE date = ? AND ladder = ? AND player = ?", key
            ).fetchone()
            if claim is None or claim[0] != r.code:
                return False
            data = json.dumps(r.to_json())
            sql = "INSERT OR IGNORE INTO results VALUES (?, ?, ?, ?, ?)"
            if c.execute(sql, (*key, r.board_score, data)).rowcount != 1:
                return False
            c.execute(
                "INSERT INTO counts VALUES (?, ?, 1)"
                " ON CONFLICT (date, ladder) DO UPDATE SET n = n + 1",
                (r.date, r.ladder),
            )
            row = c.execute(
                "SELECT played, played_day, won, won_day, best_played, best_won"
                " FROM streaks WHERE player = ?",
                (r.player,),
            ).fetchone()
            s = streaks_after(Streaks(*row) if row else Streaks(), r.day, r.won)
            c.execute(
                "INSERT OR REPLACE INTO streaks VALUES (?, ?, ?, ?, ?, ?, ?)",
                (r.player, s.played, s.played_day, s.won, s.won_day, s.best_played, s.best_won),
            )
            return True

        return await self._tx(run)

    async def rank(self, date: str, ladder: str, player: str) -> RankedRun | None:
        def run(c: sqlite3.Connection) -> RankedRun | None:
            sql = "SELECT score, data FROM results WHERE date = ? AND ladder = ? AND player = ?"
            row = c.execute(sql, (date, ladder, player)).fetchone()
            if row is None:
                return None
            return 1 + _ahead(c, date, ladder, row[0]), _run(row[1])

        return await self._tx(run)

    async def board(self, date: str, ladder: str, start: int, limit: int) -> list[RankedRun]:
        def run(c: sqlite3.Connection) -> list[RankedRun]:
            # The page's players from the board index alone (it holds the score
            # and the key: skipping to a deep page reads no result), then theirs.
            sql = (
                "SELECT score, player FROM results INDEXED BY board"
                " WHERE date = ? AND ladder = ? ORDER BY score, player LIMIT ? OFFSET ?"
            )
            rows = c.execute(sql, (date, ladder, limit, start)).fetchall()
            if not rows:
                return []
            marks = ", ".join("?" * len(rows))
            data = dict(
                c.execute(
                    f"SELECT player, data FROM results"
                    f" WHERE date = ? AND ladder = ? AND player IN ({marks})",
                    (date, ladder, *(p for _, p in rows)),
                ).fetchall()
            )
            first = 1 + _ahead(c, date, ladder, rows[0][0])
            return ranked([_run(data[p]) for _, p in rows], first, start)

        return await self._tx(run)

    async def results_of(self, date: str, ladder: str, players: Sequence[str]) -> list[RunResult]:
        if not players:
            return []
        marks = ", ".join("?" * len(players))
        sql = f"SELECT data FROM results WHERE date = ? AND ladder = ? AND player IN ({marks})"
        rows = await self._tx(lambda c: c.execute(sql, (date, ladder, *players)).fetchall())
        return [_run(data) for (data,) in rows]

    async def runs_of(self, player: str) -> list[RunResult]:
        sql = "SELECT data FROM results WHERE player = ?"
        rows = await self._tx(lambda c: c.execute(sql, (player,)).fetchall())
        return [_run(data) for (data,) in rows]

    async def count(self, date: str, ladder: str) -> int:
        sql = "SELECT n FROM counts WHERE date = ? AND ladder = ?"
        row = await self._tx(lambda c: c.execute(sql, (date, ladder)).fetchone())
        return int(row[0]) if row else 0

    async def streaks(self, player: str) -> Streaks:
        sql = (
            "SELECT played, played_day, won, won_day, best_played, best_won"
            " FROM streaks WHERE player = ?"
        )
        row = await self._tx(lambda c: c.execute(sql, (player,)).fetchone())
        return Streaks(*row) if row else Streaks()

    async def close(self) -> None:
        """Close the connection in its thread (SQLite checkpoints the WAL then)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            await asyncio.get_running_loop().run_in_executor(self._pool, conn.close)
        self._pool.shutdown(wait=False)


def _claimed(c: sqlite3.Connection, key: tuple[str, str, str]) -> RunClaim | None:
    row = c.execute(
        "SELECT code, EXISTS (SELECT 1 FROM results WHERE date = ? AND ladder = ? AND player = ?)"
        " FROM claims WHERE date = ? AND ladder = ? AND player = ?",
        (*key, *key),
    ).fetchone()
    return None if row is None else RunClaim(row[0], bool(row[1]))
