"""One SQLite database in the data directory, written from one thread.

The account store, the daily deals and the daily results each keep a database
file of their own beside the room store's (server/store/sqlite.py keeps its own
writer: it batches a room's appends into group commits, which these need not).
They share this: the file opened in WAL mode with ``synchronous=FULL``, so a
transaction is on disk when it returns; a lock file held for the process's life,
so a second server on the same directory stops at once instead of writing
beside the first; and every statement run in one thread, in a transaction that
commits or rolls back whole, a failure raising
:class:`~server.store.base.StoreUnavailable` with nothing written.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, ClassVar, Self, TypeVar

from .base import StoreUnavailable

__all__ = ["SqliteFile"]

log = logging.getLogger("klondike_race.store")
T = TypeVar("T")


def _connect(path: Path, schema: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=5.0, check_same_thread=True)
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.close()
        raise StoreUnavailable(f"{path}: SQLite refused WAL mode ({mode})")
    conn.execute("PRAGMA synchronous = FULL")
    conn.executescript(schema)
    return conn


class SqliteFile:
    """A database file of the data directory; a store names it with the class
    attributes and adds its own methods over :meth:`_tx`. Not usable until
    :meth:`open` (or use :meth:`at`)."""

    FILE: ClassVar[str]  # the database's file name in the data directory
    SCHEMA: ClassVar[str]  # run at each open: CREATE … IF NOT EXISTS
    WHAT: ClassVar[str]  # what it keeps, for messages: "accounts", "daily deals"

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / self.FILE
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=f"sqlite-{self.FILE}")
        self._conn: sqlite3.Connection | None = None
        self._lock: IO[bytes] | None = None

    @classmethod
    async def at(cls, data_dir: Path | str) -> Self:
        store = cls(Path(data_dir))
        await store.open()
        return store

    async def open(self) -> None:
        """Take the file's lock and open the database in the store's thread;
        StoreUnavailable when either fails (the server exits)."""
        lock_path = self.path.with_suffix(".lock")
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            lock = open(lock_path, "ab")  # noqa: SIM115 - held until close()
        except OSError as exc:
            raise StoreUnavailable(f"cannot use the data directory {self.data_dir}: {exc}") from exc
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            raise StoreUnavailable(
                f"{self.data_dir} is in use by another process ({lock_path.name} is held)"
            ) from None
        self._lock = lock
        try:
            self._conn = await asyncio.get_running_loop().run_in_executor(
                self._pool, lambda: _connect(self.path, self.SCHEMA)
            )
        except (sqlite3.Error, OSError) as exc:
            await self.close()
            raise StoreUnavailable(f"cannot open {self.path}: {exc}") from exc
        log.info("%s at %s (WAL, synchronous=FULL)", self.WHAT, self.path)

    async def _tx(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn`` as one transaction in the store's thread: committed (durable)
        when this returns, or rolled back and StoreUnavailable."""
        conn = self._conn
        if conn is None:
            raise StoreUnavailable(f"the {self.WHAT} store is closed")

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
            raise StoreUnavailable(f"the {self.WHAT} store failed: {exc}") from exc
        except RuntimeError as exc:  # the pool was shut down
            raise StoreUnavailable(str(exc)) from exc

    async def _one(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        return await self._tx(lambda c: c.execute(sql, args).fetchone())

    async def _all(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        return await self._tx(lambda c: c.execute(sql, args).fetchall())

    async def _changes(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        return await self._tx(lambda c: c.execute(sql, args).rowcount)

    async def close(self) -> None:
        """Close the connection in its thread (SQLite checkpoints the WAL then)
        and release the lock."""
        conn, self._conn = self._conn, None
        if conn is not None:
            await asyncio.get_running_loop().run_in_executor(self._pool, conn.close)
        self._pool.shutdown(wait=False)
        if self._lock is not None:
            self._lock.close()
            self._lock = None
