"""The embedded store (server/store/sqlite.py) on its own: order, group commit,
sessions, closing, and what a failed transaction leaves (nothing).

What the tests check about the database they read with their own ``sqlite3``
connection, not through the store. They wait on futures and on one pass of the
event loop (:func:`next_tick`), never on the clock."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest

from server.store.base import SessionRecord, StoreUnavailable, token_key
from server.store.sqlite import CHECKPOINT_EVERY, DB_NAME, SqliteStore


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    s = await SqliteStore.at(tmp_path / "data")
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
def raw(tmp_path: Path, store: SqliteStore) -> Iterator[sqlite3.Connection]:
    """The test's own connection to the store's database (autocommit)."""
    conn = sqlite3.connect(tmp_path / "data" / DB_NAME, isolation_level=None, timeout=10)
    try:
        yield conn
    finally:
        conn.close()


async def next_tick() -> None:
    """One pass of the event loop: callbacks scheduled before this (the store's
    flush) have run when it returns. Not a wait on time."""
    ran = asyncio.Event()
    asyncio.get_running_loop().call_soon(ran.set)
    await ran.wait()


def log_of(raw: sqlite3.Connection, code: str) -> list[bytes]:
    """A room's log as the database holds it: chunks, each a msgpack array of records
    starting at record ``seq`` (checked to follow on without a gap)."""
    out: list[bytes] = []
    for seq, n, data in raw.execute(
        "SELECT seq, n, data FROM chunks WHERE code = ? ORDER BY seq", (code,)
    ):
        records = msgpack.unpackb(data, raw=False)
        assert (seq, n) == (len(out), len(records))
        out.extend(records)
    return out


async def test_wal_and_full_sync(store: SqliteStore, raw: sqlite3.Connection) -> None:
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent
    assert await store.pragmas() == {"journal_mode": "wal", "synchronous": 2}  # 2: FULL


async def test_checkpoints_run_beside_the_writer(tmp_path: Path) -> None:
    store = await SqliteStore.at(tmp_path / "d")
    try:
        for i in range(CHECKPOINT_EVERY + 1):
            assert await store.append("AAAAAA", [b"%d" % i]) == i + 1
        assert store.transactions == CHECKPOINT_EVERY + 1
    finally:
        await store.close()
    assert store.checkpoints == 1  # its future settled before close() returned
    again = await SqliteStore.at(tmp_path / "d")
    try:
        assert await again.load("AAAAAA") == [b"%d" % i for i in range(CHECKPOINT_EVERY + 1)]
    finally:
        await again.close()


async def test_append_and_load_keep_order_across_reopen(tmp_path: Path) -> None:
    store = await SqliteStore.at(tmp_path / "d")
    assert await store.reserve_room("AAAAAA")
    assert not await store.reserve_room("AAAAAA")  # taken
    assert await store.append("AAAAAA", [b"r0", b"r1"]) == 2
    assert await store.append("AAAAAA", [b"r2"]) == 3
    assert await store.append("BBBBBB", [b"\x00\xff"]) == 1  # binary as given
    assert await store.load("AAAAAA") == [b"r0", b"r1", b"r2"]
    assert await store.load("ZZZZZZ") == []
    await store.close()

    again = await SqliteStore.at(tmp_path / "d")
    try:
        assert await again.open_rooms() == ["AAAAAA", "BBBBBB"]
        assert await again.load("AAAAAA") == [b"r0", b"r1", b"r2"]
        assert await again.append("AAAAAA", [b"r3"]) == 4  # the log goes on where it was
        assert await again.load("AAAAAA") == [b"r0", b"r1", b"r2", b"r3"]
        assert await again.load("BBBBBB") == [b"\x00\xff"]
    finally:
        await again.close()


async def test_appends_in_one_tick_are_one_transaction(store: SqliteStore) -> None:
    before = store.transactions
    futs = [store.append(f"ROOM{i:02d}", [b"a%d" % i, b"b%d" % i]) for i in range(10)]
    futs.append(store.append("ROOM00", [b"c0"]))  # joins ROOM00's unsent append
    assert store.joinable("ROOM00")
    assert await asyncio.gather(*futs) == [2] * 10 + [3]
    assert store.transactions == before + 1
    assert await store.load("ROOM00") == [b"a0", b"b0", b"c0"]


async def test_appends_during_a_transaction_join_the_next(
    store: SqliteStore, raw: sqlite3.Connection
) -> None:
    """Hold the database's write lock so that the first transaction stays in
    flight; everything appended meanwhile goes as one second transaction."""
    raw.execute("BEGIN IMMEDIATE")  # the writer's BEGIN waits for this (busy timeout)
    before = store.transactions
    first = store.append("AAAAAA", [b"a0"])
    assert store.joinable("AAAAAA")  # not sent yet: a further append would join it
    await next_tick()  # the flush ran: AAAAAA's append is in flight
    assert not store.joinable("AAAAAA")
    second = [store.append("BBBBBB", [b"b0"]), store.append("CCCCCC", [b"c0"])]
    second.append(store.append("BBBBBB", [b"b1"]))
    assert store.joinable("BBBBBB") and store.joinable("CCCCCC")
    assert not first.done()
    raw.execute("ROLLBACK")  # let the writer in
    assert await first == 1
    assert await asyncio.gather(*second) == [1, 1, 2]
    assert store.transactions == before + 2  # one for AAAAAA, one for the rest
    assert log_of(raw, "BBBBBB") == [b"b0", b"b1"]


async def test_a_failed_transaction_refuses_all_of_it_and_leaves_nothing(
    store: SqliteStore, raw: sqlite3.Connection
) -> None:
    assert await store.append("AAAAAA", [b"a0"]) == 1
    assert await store.append("BBBBBB", [b"b0"]) == 1
    # A real SQLite error in the middle of a transaction, as a full disk would raise.
    raw.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON chunks WHEN instr(NEW.data, X'DEAD') > 0"
        " BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
    )
    failed_before, tx_before = store.failed, store.transactions
    # The session write's task runs before the flush these appends schedule, so all
    # four go in one transaction.
    session = asyncio.ensure_future(store.put_session("tok", SessionRecord("p1", "Ann", None)))
    a = store.append("AAAAAA", [b"a1", b"a2"])
    bad = store.append("BBBBBB", [b"b1", b"\xde\xad"])
    c = store.append("CCCCCC", [b"c0"])
    for fut in (a, bad, c, session):
        with pytest.raises(StoreUnavailable, match="refused by the test"):
            await fut
    assert (store.failed, store.transactions) == (failed_before + 1, tx_before)
    assert log_of(raw, "AAAAAA") == [b"a0"]  # rolled back: nothing of the transaction
    assert log_of(raw, "BBBBBB") == [b"b0"]
    assert log_of(raw, "CCCCCC") == []
    assert await store.get_session("tok") is None

    raw.execute("DROP TRIGGER refuse")
    assert await store.append("AAAAAA", [b"a1"]) == 2  # numbered on from what is there
    assert await store.load("AAAAAA") == [b"a0", b"a1"]


async def test_a_locked_database_is_unavailable_then_recovers(tmp_path: Path) -> None:
    store = await SqliteStore.at(tmp_path / "d", busy_timeout_ms=50)
    raw = sqlite3.connect(tmp_path / "d" / DB_NAME, isolation_level=None)
    try:
        raw.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreUnavailable, match="locked"):
            await store.append("AAAAAA", [b"a0"])
        raw.execute("ROLLBACK")
        assert await store.append("AAAAAA", [b"a0"]) == 1
        assert log_of(raw, "AAAAAA") == [b"a0"]
    finally:
        raw.close()
        await store.close()


async def test_sessions_are_kept_by_hashed_token(
    store: SqliteStore, raw: sqlite3.Connection
) -> None:
    await store.put_session("secret-token", SessionRecord("p1", "Ann", None))
    await store.put_session("secret-token", SessionRecord("p1", "Ann", "AAAAAA"))
    await store.put_session("other", SessionRecord("p2", "Bob", None))
    assert await store.get_session("secret-token") == SessionRecord("p1", "Ann", "AAAAAA")
    assert await store.get_session("other") == SessionRecord("p2", "Bob", None)
    assert await store.get_session("nobody") is None
    keys = [k for (k,) in raw.execute("SELECT key FROM sessions ORDER BY key")]
    assert keys == sorted([token_key("secret-token"), token_key("other")])
    assert "secret-token" not in repr(raw.execute("SELECT * FROM sessions").fetchall())
    await store.delete_session("other")  # a guest who took a handle: its token is no session
    assert await store.get_session("other") is None
    assert raw.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1


async def test_expired_sessions_are_forgotten(tmp_path: Path) -> None:
    store = await SqliteStore.at(tmp_path / "d", session_ttl_ms=0)  # expired on writing
    try:
        await store.put_session("tok", SessionRecord("p1", "Ann", None))
        assert await store.get_session("tok") is None
    finally:
        await store.close()


async def test_closed_rooms_are_not_recovered(store: SqliteStore, raw: sqlite3.Connection) -> None:
    assert await store.reserve_room("AAAAAA")
    assert await store.append("AAAAAA", [b"a0", b"a1"]) == 2
    assert await store.append("BBBBBB", [b"b0"]) == 1
    await store.close_room("AAAAAA")
    assert await store.open_rooms() == ["BBBBBB"]
    assert await store.load("AAAAAA") == []
    assert log_of(raw, "AAAAAA") == []  # the log is deleted
    assert not await store.reserve_room("AAAAAA")  # the code stays taken a while


async def test_a_closed_code_is_free_after_closed_ttl(tmp_path: Path) -> None:
    store = await SqliteStore.at(tmp_path / "d", closed_ttl_ms=0)
    try:
        assert await store.append("AAAAAA", [b"old"]) == 1
        await store.close_room("AAAAAA")
        assert await store.reserve_room("AAAAAA")
        assert await store.append("AAAAAA", [b"new"]) == 1  # a fresh log
        assert await store.load("AAAAAA") == [b"new"]
    finally:
        await store.close()


async def test_one_process_per_data_dir(store: SqliteStore, tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable, match="in use"):
        await SqliteStore.at(tmp_path / "data")


async def test_close_writes_what_is_queued(tmp_path: Path) -> None:
    store = await SqliteStore.at(tmp_path / "d")
    futs = [store.append("AAAAAA", [b"%d" % i]) for i in range(5)]
    await store.close()
    assert [f.result() for f in futs] == [1, 2, 3, 4, 5]
    with pytest.raises(StoreUnavailable):
        await store.append("AAAAAA", [b"late"])
    again = await SqliteStore.at(tmp_path / "d")  # the lock was released
    try:
        assert await again.load("AAAAAA") == [b"0", b"1", b"2", b"3", b"4"]
    finally:
        await again.close()
