"""Compaction: a room's log keeps a snapshot and a short tail, and means the same.

The property: for logs of rooms played at random through the real runner (every
kind of record, refusals, rollbacks aside), folding the log from any of its
snapshots gives the room the whole log gives, the live room included: same seq and
record count, the same snapshot view for every member and for spectators, the same
sheet. Then each store's ``compact``, a room whose log stays short however many
deals it plays, and a rebuild that never holds the event loop long."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from server.core import records as R
from server.core.records import decode_record
from server.core.room import Room
from server.service.adoption import fold_room
from server.store.base import StoreUnavailable
from server.store.memory import MemoryStore
from server.store.redis import RedisStore
from server.store.sqlite import SqliteStore
from tests.support.compaction import KeepingStore, decoded, describe, play_randomly


@pytest.mark.parametrize("seed", range(24))
async def test_folding_from_any_snapshot_gives_the_same_room(seed: int) -> None:
    store = KeepingStore()
    service, runner, clock = await play_randomly(random.Random(seed), store, 700)
    try:
        raw = store._logs["ROOM01"]
        records = decoded(raw)
        now = clock.now()
        whole = Room.rebuild("ROOM01", records)
        expected = describe(whole, now)
        assert describe(runner.room, now) == expected  # the live room too
        cuts = [i for i, r in enumerate(records) if isinstance(r, R.Checkpoint)]
        assert cuts or whole.round == 0, "a room that played has snapshots"
        for i in cuts:
            assert records[i].index == i  # numbered as the whole log is
            assert describe(Room.rebuild("ROOM01", records[i:]), now) == expected
        # What adoption folds: from the last snapshot, however much is left before it.
        for start in [0, *cuts]:
            room, durable = await fold_room("ROOM01", raw[start:])
            assert describe(room, now) == expected
            assert durable.length == whole.n_records
            assert durable.head == start
            assert describe(durable.restore(), now) == expected
        # Every compaction the runner asked for cut at a snapshot, in order.
        assert all(isinstance(records[i], R.Checkpoint) for i in store.compacted)
        assert store.compacted == sorted(set(store.compacted))
        assert not whole.round or store.compacted
    finally:
        runner.stop()
        await service.stop()


async def test_a_compacted_room_plays_on_exactly_like_the_whole_log() -> None:
    """The real in-memory store compacts; the room rebuilt from what it keeps is
    the live room, and a room rebuilt from it numbers its records on."""
    store = MemoryStore()
    service, runner, clock = await play_randomly(random.Random(99), store, 900)
    try:
        kept = store._logs["ROOM01"]
        assert runner.compactions > 0
        assert isinstance(decode_record(kept[0]), R.Checkpoint)
        room, durable = await fold_room("ROOM01", kept)
        assert describe(room, clock.now()) == describe(runner.room, clock.now())
        assert durable.length == runner.room.n_records
    finally:
        runner.stop()
        await service.stop()


class MeasuringStore(MemoryStore):
    """The in-memory store, keeping the longest any log has been."""

    def __init__(self) -> None:
        super().__init__()
        self.longest = 0

    def append(self, code: str, records: Sequence[bytes]) -> asyncio.Future[int]:
        done = super().append(code, records)
        self.longest = max(self.longest, len(self._logs[code]))
        return done


async def test_a_long_room_keeps_a_short_log() -> None:
    """Many deals played: the store never holds more than a snapshot and about a
    deal of records (here at most a few hundred), whatever the room's age."""
    store = MeasuringStore()
    service, runner, _clock = await play_randomly(random.Random(7), store, 6000, leaving=False)
    try:
        assert runner.room.round >= 10
        assert runner.room.n_records > 4000
        assert store.longest < 700, store.longest  # at any time, not only at the end
        assert runner.compactions >= 10
    finally:
        runner.stop()
        await service.stop()


async def test_adoption_folds_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log that was never compacted (old, or the store refused to) is folded
    in slices: the event loop never waits for the whole of it."""
    store = KeepingStore()
    service, runner, _clock = await play_randomly(random.Random(3), store, 3000, leaving=False)
    runner.stop()
    await service.stop()
    whole = [r for r in store._logs["ROOM01"] if not isinstance(decode_record(r), R.Checkpoint)]
    fresh = MemoryStore()
    fresh._logs["ROOM01"] = list(whole)
    other = type(service)(fresh, _clock, type(service.metrics)())
    gaps: list[float] = []
    done = asyncio.Event()

    async def watch() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    monitor = asyncio.create_task(watch())
    await asyncio.sleep(0)
    try:
        assert await other.adoption.adopt("ROOM01")
        done.set()
        await monitor
        assert len(gaps) > 3  # it let the loop run, more than once
        assert Room.rebuild("ROOM01", map(decode_record, whole)).seq == runner.room.seq
        adopted = other.rooms["ROOM01"].room
        offline = sum(m.connected for m in runner.room.members.values())  # marked so now
        assert adopted.seq == runner.room.seq + offline
    finally:
        done.set()
        await other.stop()


# ---------------------------------------------------------------------- the stores


def _snapshot(index: int) -> bytes:
    """A checkpoint record that says it is record ``index`` of its log."""
    room = Room("CMPCT1")
    room.n_records = index
    return room.take_checkpoint()


def _log() -> list[bytes]:
    snap = _snapshot(3)
    return [b"r0", b"r1", b"r2", snap, b"r4"]


async def _check_store(store: MemoryStore | SqliteStore | RedisStore) -> None:
    """Compaction keeps exactly the records from the snapshot on; it refuses (and
    drops nothing) unless the snapshot is where it is said to be; appends go on
    after it, and a second compaction counts from the new first record."""
    code = "CMPCT1"
    assert await store.reserve_room(code)
    log = _log()
    await store.append(code, log[:2])
    await store.append(code, log[2:])  # the snapshot in the middle of an append
    for where, what in ((2, log[3]), (3, b"r3"), (9, log[3])):
        with pytest.raises(StoreUnavailable):
            await store.compact(code, where, what)
        assert await store.load(code) == log
    await store.compact(code, 3, log[3])
    assert await store.load(code) == log[3:]
    await store.append(code, [b"r5", b"r6"])
    assert await store.load(code) == [*log[3:], b"r5", b"r6"]
    again = _snapshot(7)
    await store.append(code, [again, b"r8"])
    await store.compact(code, 4, again)
    assert await store.load(code) == [again, b"r8"]
    await store.append(code, [b"r9"])
    assert await store.load(code) == [again, b"r8", b"r9"]


async def test_memory_store_compacts() -> None:
    await _check_store(MemoryStore())


async def test_sqlite_store_compacts(tmp_path: Path) -> None:
    store = await SqliteStore.at(tmp_path / "data")
    try:
        await _check_store(store)
    finally:
        await store.close()
    again = await SqliteStore.at(tmp_path / "data")  # as a restart finds it
    try:
        snap = _snapshot(7)
        assert await again.load("CMPCT1") == [snap, b"r8", b"r9"]
        await again.append("CMPCT1", [b"r10"])
        assert (await again.load("CMPCT1"))[-1] == b"r10"
    finally:
        await again.close()


async def test_redis_store_compacts(redis_store: RedisStore) -> None:
    await _check_store(redis_store)
    assert redis_store.expected_length("CMPCT1") == 3  # the bookkeeping follows


async def test_redis_compaction_is_ordered_with_appends(redis_store: RedisStore) -> None:
    """Appends issued while a compaction waits, and one in flight before it, keep
    their order and the acknowledged length stays right for the next one."""
    code = "CMPCT2"
    assert await redis_store.reserve_room(code)
    log = _log()
    await redis_store.append(code, log)
    first = redis_store.append(code, [b"a"])  # in flight when the compaction comes
    trim = redis_store.compact(code, 3, log[3])
    after = [redis_store.append(code, [b"b"]), redis_store.append(code, [b"c"])]
    await asyncio.gather(first, trim, *after)
    assert await redis_store.load(code) == [log[3], log[4], b"a", b"b", b"c"]
    await redis_store.append(code, [b"d"])
    assert await redis_store.load(code) == [log[3], log[4], b"a", b"b", b"c", b"d"]
