"""Published days on local disk: ``DIR/daily.sqlite3`` beside the other stores.

Built like server/accounts/sqlite.py, for the same reasons: WAL with
``synchronous=FULL`` (a day is durable when :meth:`SqliteDaily.publish`
returns, so a ``kill -9`` right after cannot lose a commitment that was
shown), one thread and one connection off the event loop, and
``DIR/daily.lock`` held while open so a second process cannot write the same
days. ``publish`` is ``INSERT OR IGNORE`` and a read of the row in one
transaction: the first deal kept for a day is the one answered ever after.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path
from typing import IO, Any, TypeVar

from ..store.base import StoreUnavailable
from .schedule import DailyDeal

__all__ = ["DAILY_DB", "SqliteDaily"]

log = logging.getLogger(__name__)

DAILY_DB = "daily.sqlite3"
T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS daily (
    day TEXT NOT NULL,
    ladder TEXT NOT NULL,
    seed TEXT NOT NULL,
    line TEXT NOT NULL,
    commitment TEXT NOT NULL,
    published REAL NOT NULL,
    PRIMARY KEY (day, ladder)
) WITHOUT ROWID;
PRAGMA user_version = 1;
"""
_COLUMNS = "day, ladder, seed, line, commitment, published"


def _deal(row: Any) -> DailyDeal:
    day, ladder, seed, line, digest, published = row
    return DailyDeal(date.fromisoformat(day), ladder, seed, line, digest, published)


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=5.0, check_same_thread=True)
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.close()
        raise StoreUnavailable(f"{path}: SQLite refused WAL mode ({mode})")
    conn.execute("PRAGMA synchronous = FULL")
    conn.executescript(_SCHEMA)
    return conn


class SqliteDaily:
    """:class:`~server.daily.store.DailyStore` on SQLite; not usable until
    :meth:`open` (or use :meth:`at`)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / DAILY_DB
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="sqlite-daily")
        self._conn: sqlite3.Connection | None = None
        self._lock: IO[bytes] | None = None

    @classmethod
    async def at(cls, data_dir: Path | str) -> SqliteDaily:
        store = cls(Path(data_dir))
        await store.open()
        return store

    async def open(self) -> None:
        """Take the directory's daily lock and open the database in the store's
        thread; StoreUnavailable when either fails (the server exits)."""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            lock = open(self.data_dir / "daily.lock", "ab")  # noqa: SIM115 - held until close()
        except OSError as exc:
            raise StoreUnavailable(f"cannot use the data directory {self.data_dir}: {exc}") from exc
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            raise StoreUnavailable(
                f"{self.data_dir} is in use by another process (its daily lock is held)"
            ) from None
        self._lock = lock
        try:
            self._conn = await asyncio.get_running_loop().run_in_executor(
                self._pool, lambda: _connect(self.path)
            )
        except (sqlite3.Error, OSError) as exc:
            await self.close()
            raise StoreUnavailable(f"cannot open {self.path}: {exc}") from exc
        log.info("daily deals at %s (WAL, synchronous=FULL)", self.path)

    async def _tx(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn`` as one transaction in the store's thread: committed (durable)
        when this returns, or rolled back and StoreUnavailable."""
        conn = self._conn
        if conn is None:
            raise StoreUnavailable("the daily store is closed")

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
            raise StoreUnavailable(f"the daily store failed: {exc}") from exc
        except RuntimeError as exc:  # the pool was shut down
            raise StoreUnavailable(str(exc)) from exc

    async def publish(self, deal: DailyDeal) -> DailyDeal:
        day = deal.day.isoformat()

        def run(c: sqlite3.Connection) -> Any:
            c.execute(
                f"INSERT OR IGNORE INTO daily ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                (day, deal.ladder, deal.seed, deal.line, deal.commitment, deal.published),
            )
            return c.execute(
                f"SELECT {_COLUMNS} FROM daily WHERE day = ? AND ladder = ?", (day, deal.ladder)
            ).fetchone()

        return _deal(await self._tx(run))

    async def days(self, first: date, last: date) -> list[DailyDeal]:
        rows = await self._tx(
            lambda c: c.execute(
                f"SELECT {_COLUMNS} FROM daily WHERE day BETWEEN ? AND ? ORDER BY day, ladder",
                (first.isoformat(), last.isoformat()),
            ).fetchall()
        )
        return [_deal(r) for r in rows]

    async def close(self) -> None:
        """Close the connection in its thread and release the lock."""
        conn, self._conn = self._conn, None
        if conn is not None:
            await asyncio.get_running_loop().run_in_executor(self._pool, conn.close)
        self._pool.shutdown(wait=False)
        if self._lock is not None:
            self._lock.close()
            self._lock = None
