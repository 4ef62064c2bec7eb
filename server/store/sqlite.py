"""The embedded durable store: room logs and sessions in SQLite on local disk.

``klondike-race serve`` uses it unless told ``--memory`` or ``--redis``: one file,
``DIR/klondike.db`` (``--data-dir DIR``), that keeps every room and session across a
restart and a ``kill -9`` of the process. It does not survive the loss of the
machine's disk, and only one process may use a data directory (a lock file,
``DIR/lock``, refuses a second one).

Tables (``PRAGMA user_version`` 1):

- ``rooms(code, touched_ms, closed_ms)``: a reserved or open room; ``closed_ms`` set
  once closed. A closed code stays taken for ``closed_ttl`` (as with Redis, so a stale
  link cannot land in a new room), an idle one is dropped after ``idle_ttl``.
- ``chunks(code, seq, n, at_ms, data)``: each room's log, one row per append (the
  records of one group commit of the room): ``seq`` is the index of its first record
  (from 0), ``n`` how many it holds, ``data`` a msgpack array of the records' bytes.
  One row per append, not per record, because every row is a step of SQLite during
  which the writer thread gives up the GIL and must win it back from the event loop.
- ``sessions(key, player, name, room, touched_ms)``: keyed by the token's hash
  (:func:`server.store.base.token_key`); expired after ``session_ttl`` unused.

Why it is built the way it is:

- *Durable before acknowledged.* WAL mode with ``synchronous=FULL`` fsyncs the WAL on
  every COMMIT; an append's future resolves only after the COMMIT of the transaction
  holding it returned. A failed transaction (disk full, database locked, I/O error) is
  rolled back, so nothing of it is in the log, and every future in it raises
  :class:`StoreUnavailable`.
- *Off the event loop.* SQLite blocks (an fsync is a disk round trip), so one writer
  thread owns the writing connection and one reader thread its own connection for
  :meth:`load` and :meth:`get_session` (WAL lets them read while the writer writes).
  Each connection is made and used in its thread only. Results come back to the loop
  with ``call_soon_threadsafe``.
- *Group commit,* as the Redis store groups its appends: at most one transaction is
  in flight; everything issued meanwhile (appends of any room, session writes,
  reservations, closes) waits on the loop and goes as the next transaction, one
  COMMIT (one fsync) for all of it. So throughput grows with load instead of paying an
  fsync per move. A room's append waiting unsent is :meth:`joinable`: the room's
  runner (server/rooms/runner.py) adds its next records to it, and they share its fate.
- *Checkpoints off the commit path.* SQLite's automatic checkpoint would copy the WAL
  into the database (and fsync it) inside whichever COMMIT crosses the threshold,
  stalling every move in that transaction; a third connection, in its own thread,
  runs a passive checkpoint every ``CHECKPOINT_EVERY`` transactions instead, which
  never blocks the writer.
- *A short GIL switch interval.* While a transaction runs, its thread and the event
  loop take turns at the GIL; CPython makes a waiting thread wait up to the switch
  interval (5 ms by default) before the running one must yield. A move waits for
  several such turns, so the store lowers the interval to ``SWITCH_INTERVAL``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

import msgpack  # type: ignore[import-untyped]

from .base import SessionRecord, StoreUnavailable, token_key
from .memory import LocalSeeds

__all__ = ["DB_NAME", "SqliteStore"]

log = logging.getLogger(__name__)

DB_NAME = "klondike.db"
DAY_MS = 24 * 3600 * 1000
TOUCH_EVERY_MS = 3600 * 1000  # a session read refreshes its expiry at most this often
CHECKPOINT_EVERY = 256  # transactions between two passive checkpoints
SWITCH_INTERVAL = 0.0005  # seconds; see the module docstring

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms (
    code TEXT PRIMARY KEY,
    touched_ms INTEGER NOT NULL,
    closed_ms INTEGER
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunks (
    code TEXT NOT NULL,
    seq INTEGER NOT NULL,
    n INTEGER NOT NULL,
    at_ms INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (code, seq)
);
CREATE TABLE IF NOT EXISTS sessions (
    key TEXT PRIMARY KEY,
    player TEXT NOT NULL,
    name TEXT NOT NULL,
    room TEXT,
    touched_ms INTEGER NOT NULL
) WITHOUT ROWID;
PRAGMA user_version = 1;
"""


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(eq=False)
class _Op:
    """One write waiting for the next transaction: an append (records of one room,
    coalesced in call order), a reservation, a close, a session write."""

    # "append", "reserve", "close", "session", "forget", "touch", "open_rooms", "compact"
    kind: str
    key: str  # the room code or the session key
    records: list[bytes] = field(default_factory=list)  # compact: the checkpoint expected
    at: int = 0  # compact: how many records to drop
    session: SessionRecord | None = None
    waiters: list[tuple[asyncio.Future[Any], int]] = field(default_factory=list)  # (fut, end)


class _Writer:
    """The writing connection and what only the writer thread touches."""

    def __init__(self, path: Path, busy_timeout_ms: int, ttls: tuple[int, int, int]) -> None:
        self.conn = _connect(path, busy_timeout_ms)
        self.conn.executescript(_SCHEMA)
        self.idle_ttl_ms, self.closed_ttl_ms, self.session_ttl_ms = ttls
        self.tails: dict[str, int] = {}  # committed log length per room, as cached here

    def run(self, ops: list[_Op]) -> list[Any]:
        """One transaction for every op, in order; its results, or raises after a
        rollback (then nothing of it was written).

        The appends' rows go in one ``executemany`` at the end: appends to different
        rooms are independent, and no other op reads what an append writes."""
        conn = self.conn
        now = _now_ms()
        tails: dict[str, int] = {}
        rows: list[tuple[str, int, int, int, bytes]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            results = [self._one(op, now, tails, rows) for op in ops]
            if rows:
                conn.executemany(
                    "INSERT INTO chunks (code, seq, n, at_ms, data) VALUES (?, ?, ?, ?, ?)", rows
                )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    log.exception("sqlite store: ROLLBACK failed")
            raise
        self.tails.update(tails)
        for op in ops:
            if op.kind == "close":
                self.tails.pop(op.key, None)
        return results

    def _tail(self, code: str, tails: dict[str, int]) -> int:
        n = tails.get(code)
        if n is None:
            n = self.tails.get(code)
        if n is None:  # the room's first append since the store opened
            row = self.conn.execute(
                "SELECT COALESCE(MAX(seq + n), 0) FROM chunks WHERE code = ?", (code,)
            ).fetchone()
            n = int(row[0])
            self.conn.execute(  # a room appended to without a reservation is open too
                "INSERT OR IGNORE INTO rooms (code, touched_ms) VALUES (?, ?)", (code, _now_ms())
            )
        return n

    def _one(
        self, op: _Op, now: int, tails: dict[str, int], rows: list[tuple[str, int, int, int, bytes]]
    ) -> Any:
        conn = self.conn
        if op.kind == "append":
            start = self._tail(op.key, tails)
            n = len(op.records)
            rows.append((op.key, start, n, now, msgpack.packb(op.records, use_bin_type=True)))
            tails[op.key] = start + n
            return start + n
        if op.kind == "reserve":
            row = conn.execute(
                "SELECT touched_ms, closed_ms FROM rooms WHERE code = ?", (op.key,)
            ).fetchone()
            if row is not None:
                touched, closed = row
                if closed is None and touched > now - self.idle_ttl_ms:
                    return False
                if closed is not None and closed > now - self.closed_ttl_ms:
                    return False
            conn.execute("DELETE FROM chunks WHERE code = ?", (op.key,))
            conn.execute(
                "INSERT OR REPLACE INTO rooms (code, touched_ms, closed_ms) VALUES (?, ?, NULL)",
                (op.key, now),
            )
            tails[op.key] = 0
            return True
        if op.kind == "close":
            conn.execute("DELETE FROM chunks WHERE code = ?", (op.key,))
            conn.execute("UPDATE rooms SET closed_ms = ? WHERE code = ?", (now, op.key))
            tails[op.key] = 0
            return None
        if op.kind == "compact":
            return self._compact(op.key, op.at, op.records[0])
        if op.kind == "session":
            s = op.session
            assert s is not None
            conn.execute(
                "INSERT OR REPLACE INTO sessions (key, player, name, room, touched_ms)"
                " VALUES (?, ?, ?, ?, ?)",
                (op.key, s.player, s.name, s.room_code, now),
            )
            return None
        if op.kind == "forget":
            conn.execute("DELETE FROM sessions WHERE key = ?", (op.key,))
            return None
        if op.kind == "touch":
            conn.execute("UPDATE sessions SET touched_ms = ? WHERE key = ?", (now, op.key))
            return None
        if op.kind == "open_rooms":
            return self._open_rooms(now)
        raise ValueError(f"unknown op {op.kind!r}")

    def _compact(self, code: str, keep_from: int, first: bytes) -> str | None:
        """Drop the room's first ``keep_from`` records if the next one is
        ``first``; None when done, else why not (a refusal, not an error: the rest
        of the transaction, other rooms' appends, goes on). Chunks wholly before
        it are deleted; the one it falls in is rewritten from it on, under its own
        ``seq``, so that the log keeps its numbering."""
        conn = self.conn
        low = conn.execute("SELECT MIN(seq) FROM chunks WHERE code = ?", (code,)).fetchone()[0]
        if low is None:
            return f"room {code}: no log to compact"
        target = int(low) + keep_from
        row = conn.execute(
            "SELECT seq, n, at_ms, data FROM chunks WHERE code = ? AND seq <= ?"
            " ORDER BY seq DESC LIMIT 1",
            (code, target),
        ).fetchone()
        if row is None or row[0] + row[1] <= target:
            return f"room {code}: no record {keep_from} to compact from"
        seq, n, _at_ms, data = row  # the chunk keeps its time: the room's last activity
        records = msgpack.unpackb(data, raw=False)
        if records[target - seq] != first:
            return f"room {code}: record {keep_from} is not the checkpoint expected"
        conn.execute("DELETE FROM chunks WHERE code = ? AND seq < ?", (code, seq))
        if target > seq:
            rest = msgpack.packb(records[target - seq :], use_bin_type=True)
            conn.execute(
                "UPDATE chunks SET seq = ?, n = ?, data = ? WHERE code = ? AND seq = ?",
                (target, seq + n - target, rest, code, seq),
            )
        return None

    def _open_rooms(self, now: int) -> list[str]:
        """Drop what has expired, then list the open rooms."""
        conn = self.conn
        # A room's last activity: its last chunk, or its reservation.
        last = (
            "COALESCE((SELECT at_ms FROM chunks WHERE chunks.code = rooms.code"
            " ORDER BY seq DESC LIMIT 1), touched_ms)"
        )
        stale = f"(closed_ms IS NOT NULL AND closed_ms <= ?) OR (closed_ms IS NULL AND {last} <= ?)"
        cutoffs = (now - self.closed_ttl_ms, now - self.idle_ttl_ms)
        conn.execute(
            f"DELETE FROM chunks WHERE code IN (SELECT code FROM rooms WHERE {stale})", cutoffs
        )
        conn.execute(f"DELETE FROM rooms WHERE {stale}", cutoffs)
        conn.execute("DELETE FROM sessions WHERE touched_ms <= ?", (now - self.session_ttl_ms,))
        self.tails.clear()
        rows = conn.execute("SELECT code FROM rooms WHERE closed_ms IS NULL ORDER BY code")
        return [str(code) for (code,) in rows]

    def close(self) -> None:
        self.conn.close()


def _connect(path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, full fsync,
    no automatic checkpoints (see the module docstring)."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout_ms / 1000)
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.close()
        raise StoreUnavailable(f"{path}: SQLite refused WAL mode ({mode})")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    return conn


class SqliteStore(LocalSeeds):
    """The :class:`server.store.Store` protocol on SQLite; see the module docstring.
    Proven-seed pools stay in this process (:class:`LocalSeeds`)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        busy_timeout_ms: int = 5000,
        idle_ttl_ms: int = DAY_MS,
        closed_ttl_ms: int = 600_000,
        session_ttl_ms: int = 7 * DAY_MS,
    ) -> None:
        """Not usable until :meth:`open` (or use :meth:`at`)."""
        super().__init__()
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / DB_NAME
        self.busy_timeout_ms = busy_timeout_ms
        self.session_ttl_ms = session_ttl_ms
        self._ttls = (idle_ttl_ms, closed_ttl_ms, session_ttl_ms)
        self.transactions = 0  # COMMITs that returned (the group-commit tests count them)
        self.failed = 0  # transactions rolled back
        self._writer_pool = ThreadPoolExecutor(1, thread_name_prefix="sqlite-writer")
        self._reader_pool = ThreadPoolExecutor(1, thread_name_prefix="sqlite-reader")
        self._checkpoint_pool = ThreadPoolExecutor(1, thread_name_prefix="sqlite-checkpoint")
        self._checkpointer: sqlite3.Connection | None = None
        self._since_checkpoint = 0  # transactions committed since the last checkpoint began
        self._checkpointing = False
        self.checkpoints = 0
        self._writer: _Writer | None = None
        self._reader: sqlite3.Connection | None = None
        self._lock: IO[bytes] | None = None
        self._queue: list[_Op] = []  # writes for the next transaction, in call order
        self._rooms: dict[str, _Op] = {}  # each room's unsent append in _queue
        self._inflight: list[_Op] | None = None
        self._flush_scheduled = False
        self._idle: asyncio.Event | None = None  # set while no transaction is in flight
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    async def at(cls, data_dir: Path | str, **options: Any) -> SqliteStore:
        """Open (creating when needed) the store in ``data_dir``."""
        store = cls(Path(data_dir), **options)
        await store.open()
        return store

    async def open(self) -> None:
        """Create the directory, take its lock, open both connections in their
        threads. StoreUnavailable when any of it fails (the server then exits)."""
        self._loop = asyncio.get_running_loop()
        self._idle = asyncio.Event()
        self._idle.set()
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            lock = open(self.data_dir / "lock", "ab")  # noqa: SIM115 - held until close()
        except OSError as exc:
            raise StoreUnavailable(f"cannot use the data directory {self.data_dir}: {exc}") from exc
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            raise StoreUnavailable(
                f"{self.data_dir} is in use by another process (its lock file is held)"
            ) from None
        self._lock = lock
        busy, ttls = self.busy_timeout_ms, self._ttls
        try:
            self._writer = await self._in(self._writer_pool, lambda: _Writer(self.path, busy, ttls))
            self._reader = await self._in(self._reader_pool, lambda: _connect(self.path, busy))
            self._checkpointer = await self._in(
                self._checkpoint_pool, lambda: _connect(self.path, busy)
            )
        except (sqlite3.Error, OSError) as exc:
            await self._release()
            raise StoreUnavailable(f"cannot open {self.path}: {exc}") from exc
        except BaseException:
            await self._release()
            raise
        if sys.getswitchinterval() > SWITCH_INTERVAL:
            sys.setswitchinterval(SWITCH_INTERVAL)
        log.info("sqlite store at %s (WAL, synchronous=FULL)", self.path)

    async def _in(self, pool: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(pool, fn)

    # -- the write queue -------------------------------------------------------------

    def _enqueue(self, op: _Op) -> None:
        self._queue.append(op)
        if not self._flush_scheduled and self._inflight is None:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _write(
        self, kind: str, key: str, session: SessionRecord | None = None
    ) -> asyncio.Future[Any]:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self._closed or self._writer is None:
            fut.set_exception(StoreUnavailable("the sqlite store is closed"))
            return fut
        op = _Op(kind, key, session=session)
        op.waiters.append((fut, 0))
        self._enqueue(op)
        return fut

    def _flush(self) -> None:
        """Send everything queued as one transaction, unless one is in flight (its
        completion sends the queue then)."""
        self._flush_scheduled = False
        if self._inflight is not None or not self._queue:
            return
        ops, self._queue, self._rooms = self._queue, [], {}
        self._inflight = ops
        assert self._idle is not None and self._writer is not None
        self._idle.clear()
        writer, loop = self._writer, asyncio.get_running_loop()

        def job() -> None:
            try:
                outcome: list[Any] | BaseException = writer.run(ops)
            except BaseException as exc:  # reported on the loop, never lost in the thread
                outcome = exc
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(self._committed, ops, outcome)

        try:
            self._writer_pool.submit(job)
        except RuntimeError as exc:  # the pool was shut down
            self._committed(ops, exc)

    def _committed(self, ops: list[_Op], outcome: list[Any] | BaseException) -> None:
        """On the loop: settle every future of the transaction, then send what queued
        meanwhile (after the futures' callbacks, which may add to it)."""
        self._inflight = None
        assert self._idle is not None
        self._idle.set()
        if isinstance(outcome, BaseException):
            self.failed += 1
            if isinstance(outcome, StoreUnavailable):
                err: BaseException = outcome
            else:
                log.warning("sqlite store: transaction rolled back: %s", outcome)
                err = StoreUnavailable(f"the sqlite store failed to write: {outcome}")
            for op in ops:
                for fut, _ in op.waiters:
                    if not fut.done():
                        fut.set_exception(err)
        else:
            self.transactions += 1
            self._since_checkpoint += 1
            if self._since_checkpoint >= CHECKPOINT_EVERY:
                self._checkpoint()
            for op, result in zip(ops, outcome, strict=True):
                total = len(op.records)
                for fut, end in op.waiters:
                    if fut.done():
                        continue
                    if op.kind == "compact" and result is not None:
                        fut.set_exception(StoreUnavailable(result))  # refused, nothing dropped
                    else:
                        fut.set_result(result - (total - end) if op.kind == "append" else result)
        if self._queue and not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _checkpoint(self) -> None:
        """Copy the WAL into the database in the checkpoint thread, unless a
        checkpoint is running already. Passive: it never blocks the writer; a failure
        only leaves the WAL longer, so it is logged, nothing more."""
        conn = self._checkpointer
        if self._checkpointing or conn is None or self._closed:
            return
        self._checkpointing, self._since_checkpoint = True, 0

        def run() -> None:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()

        def done(fut: asyncio.Future[None]) -> None:
            self._checkpointing = False
            if fut.cancelled():
                return
            if fut.exception() is not None:
                log.warning("sqlite store: checkpoint failed: %s", fut.exception())
            else:
                self.checkpoints += 1

        try:
            asyncio.get_running_loop().run_in_executor(
                self._checkpoint_pool, run
            ).add_done_callback(done)
        except RuntimeError:  # the pool was shut down
            self._checkpointing = False

    # -- rooms -----------------------------------------------------------------------

    async def reserve_room(self, code: str) -> bool:
        return bool(await self._write("reserve", code))

    def append(self, code: str, records: Sequence[bytes]) -> asyncio.Future[int]:
        """Queue the records for the next transaction; the future gives the log's
        length once its COMMIT returned. Joins the room's append already waiting, if
        any (:meth:`joinable`). A future, not a coroutine: see
        :meth:`server.store.Store.append`."""
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        if self._closed or self._writer is None:
            fut.set_exception(StoreUnavailable("the sqlite store is closed"))
            return fut
        op = self._rooms.get(code)
        if op is None:
            op = self._rooms[code] = _Op("append", code)
            self._enqueue(op)
        op.records.extend(records)
        op.waiters.append((fut, len(op.records)))
        return fut

    def joinable(self, code: str) -> bool:
        """An append now would join the room's unsent one: one transaction, one fate."""
        return code in self._rooms

    async def load(self, code: str) -> list[bytes]:
        def read() -> list[bytes]:
            assert self._reader is not None
            rows = self._reader.execute(
                "SELECT data FROM chunks WHERE code = ? ORDER BY seq", (code,)
            )
            out: list[bytes] = []
            for (data,) in rows:
                out.extend(msgpack.unpackb(data, raw=False))
            return out

        return await self._read(read)

    async def compact(self, code: str, keep_from: int, first: bytes) -> None:
        """Drop the room's records before its checkpoint at ``keep_from``, in the
        next transaction (after the room's appends queued before it, before those
        queued after, as any write). See :meth:`server.store.Store.compact`."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._closed or self._writer is None:
            raise StoreUnavailable("the sqlite store is closed")
        op = _Op("compact", code, [first], at=keep_from)
        op.waiters.append((fut, 0))
        self._enqueue(op)
        await fut

    async def open_rooms(self) -> list[str]:
        """Open rooms, after dropping expired rooms and sessions (a write: it goes
        through the writer like any other)."""
        codes: list[str] = await self._write("open_rooms", "")
        return codes

    async def close_room(self, code: str) -> None:
        """Delete the room's log; its code stays taken for ``closed_ttl``."""
        await self._write("close", code)

    # -- sessions --------------------------------------------------------------------

    async def put_session(self, token: str, record: SessionRecord) -> None:
        await self._write("session", token_key(token), record)

    async def delete_session(self, token: str) -> None:
        await self._write("forget", token_key(token))

    async def get_session(self, token: str) -> SessionRecord | None:
        key = token_key(token)
        now = _now_ms()

        def read() -> tuple[str, str, str | None, int] | None:
            assert self._reader is not None
            row: tuple[str, str, str | None, int] | None = self._reader.execute(
                "SELECT player, name, room, touched_ms FROM sessions WHERE key = ?", (key,)
            ).fetchone()
            return row

        row = await self._read(read)
        if row is None or row[3] <= now - self.session_ttl_ms:
            return None
        if row[3] <= now - TOUCH_EVERY_MS and not self._closed:
            self._enqueue(_Op("touch", key))  # refresh its expiry; nobody waits for it
        return SessionRecord(player=row[0], name=row[1], room_code=row[2])

    async def _read(self, fn: Callable[[], T]) -> T:
        if self._closed or self._reader is None:
            raise StoreUnavailable("the sqlite store is closed")
        try:
            return await self._in(self._reader_pool, fn)
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"the sqlite store failed to read: {exc}") from exc
        except RuntimeError as exc:  # the pool was shut down
            raise StoreUnavailable(str(exc)) from exc

    async def pragmas(self) -> dict[str, Any]:
        """The writing connection's journal mode and synchronous level (2: FULL), as
        SQLite reports them: what durability rests on."""

        def read() -> dict[str, Any]:
            assert self._writer is not None
            conn = self._writer.conn
            return {
                "journal_mode": conn.execute("PRAGMA journal_mode").fetchone()[0],
                "synchronous": conn.execute("PRAGMA synchronous").fetchone()[0],
            }

        return await self._in(self._writer_pool, read)

    # -- shutdown --------------------------------------------------------------------

    async def close(self) -> None:
        """Write what is queued, then close both connections and release the lock."""
        if self._closed:
            return
        assert self._idle is not None
        while self._queue or self._inflight is not None:
            if self._inflight is None:
                self._flush()
            await self._idle.wait()
        self._closed = True
        await self._release()

    async def _release(self) -> None:
        writer, reader, checkpointer = self._writer, self._reader, self._checkpointer
        self._writer = self._reader = self._checkpointer = None
        if checkpointer is not None:  # after a running checkpoint, in the same thread
            await self._in(self._checkpoint_pool, checkpointer.close)
        if reader is not None:
            await self._in(self._reader_pool, reader.close)
        if writer is not None:  # the last to close: SQLite checkpoints the WAL then
            await self._in(self._writer_pool, writer.close)
        for pool in (self._writer_pool, self._reader_pool, self._checkpoint_pool):
            pool.shutdown(wait=False)
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None

    @staticmethod
    def default_dir() -> Path:
        """Where ``serve`` keeps its data without ``--data-dir``: ``./klondike-data``
        (or ``$KLONDIKE_DATA_DIR``)."""
        return Path(os.environ.get("KLONDIKE_DATA_DIR") or "klondike-data")
