"""The Redis store against real, private redis-server processes: the Store contract,
durability across ``kill -9``, outages, fencing, and that no key outlives its TTL."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from server.store.base import SessionRecord, StoreUnavailable, token_key
from server.store.redis import LeaseLost, RedisStore
from server.store.redis_conn import Link
from tests.support.processes import RedisServer, free_port
from tests.support.waiting import eventually


@pytest.fixture
def store(redis_store: RedisStore) -> RedisStore:
    return redis_store  # tests/conftest.py's, by the short name these tests use


async def served(call: Callable[[], Awaitable[object]]) -> bool:
    """``call()`` done without StoreUnavailable (whatever it returned)."""
    await call()
    return True


async def test_append_keeps_call_order_and_bytes(store: RedisStore) -> None:
    assert await store.reserve_room("AAAAAA")
    assert not await store.reserve_room("AAAAAA")
    records = [bytes([i % 256]) * (i % 7) + b"\x00\xff" for i in range(300)]
    big = b"\x00" * 65536
    # Concurrent appends from many tasks: each gets the log length after its records.
    lengths = await asyncio.gather(*(store.append("AAAAAA", [r]) for r in records))
    assert lengths == list(range(1, 301))
    assert await store.append("AAAAAA", [big, b""]) == 302
    assert await store.load("AAAAAA") == [*records, big, b""]
    assert await store.load("NOSUCH") == []


async def test_appends_are_group_committed(store: RedisStore, redis: RedisServer) -> None:
    redis("CONFIG", "RESETSTAT")
    rooms = [f"ROOM{i:02d}" for i in range(20)]
    for code in rooms:
        await store.reserve_room(code)

    async def player(code: str) -> None:
        for k in range(50):
            await store.append(code, [b"move %d" % k])

    await asyncio.gather(*(player(c) for c in rooms for _ in range(2)))
    stats = redis("INFO", "commandstats").decode()
    evalsha = next(line for line in stats.splitlines() if line.startswith("cmdstat_evalsha:"))
    calls = int(evalsha.split("calls=")[1].split(",")[0])
    assert calls < 2000 / 4, f"2000 appends took {calls} script calls: not coalesced"
    for code in rooms:
        assert len(await store.load(code)) == 100


async def test_sessions_hashed_and_refreshed(tmp_path: Path, redis: RedisServer) -> None:
    store = await RedisStore.from_url(redis.url, session_ttl_ms=60_000)
    try:
        record = SessionRecord(player="pAB12", name="Åse 🂡", room_code="K7QX2M")
        await store.put_session("secret-token", record)
        assert await store.get_session("secret-token") == record
        assert await store.get_session("other") is None
        (key,) = redis("KEYS", "*session*")
        assert token_key("secret-token").encode() in key
        dump = b"".join(redis("KEYS", "*")) + redis("GET", key)
        assert b"secret-token" not in dump
        redis("PEXPIRE", key, 5_000)
        await store.get_session("secret-token")
        assert redis("PTTL", key) > 50_000  # reading the session refreshed its TTL
        await store.delete_session("secret-token")  # a guest who took a handle
        assert await store.get_session("secret-token") is None
        assert redis("KEYS", "*session*") == []
    finally:
        await store.close()


async def test_close_room_and_reuse_of_codes(redis: RedisServer) -> None:
    store = await RedisStore.from_url(redis.url, closed_ttl_ms=5_000)  # outlives the checks below
    try:
        for code in ("ONE111", "TWO222"):
            assert await store.reserve_room(code)
        await store.append("ONE111", [b"a"])
        assert await store.open_rooms() == ["ONE111", "TWO222"]
        await store.close_room("ONE111")
        assert await store.open_rooms() == ["TWO222"]
        assert 0 < redis("PTTL", store.keys.log("ONE111")) <= 5_000
        assert not await store.reserve_room("ONE111")  # its log is still around
        # Once the log has expired, the code is free again.
        await eventually(lambda: store.reserve_room("ONE111"), what="the closed log to expire")
        assert await store.load("ONE111") == []
    finally:
        await store.close()


async def test_idle_rooms_and_sessions_leave_nothing(redis: RedisServer) -> None:
    # Long enough that nothing expires while the test writes, on a busy machine
    # too (at 400 ms a room's log once expired between two of its appends).
    store = await RedisStore.from_url(redis.url, idle_ttl_ms=5_000, session_ttl_ms=5_000)
    try:
        for i in range(5):
            code = f"IDLE{i:02d}"
            await store.reserve_room(code)
            await store.append(code, [b"x"] * i)
        await store.reserve_room("EMPTY0")
        await store.put_session("t", SessionRecord("p", "n", "IDLE01"))
        await store.append("IDLE01", [b"y"])  # refreshes that room's TTL
        assert redis.keys_without_ttl() == []
        assert set(await store.open_rooms()) == {f"IDLE{i:02d}" for i in range(5)} | {"EMPTY0"}
        await eventually(lambda: redis("DBSIZE") == 0, what="every key to expire")
        assert await store.open_rooms() == []
        assert await store.reserve_room("IDLE03")
    finally:
        await store.close()


async def test_no_key_without_ttl_after_a_workload(store: RedisStore, redis: RedisServer) -> None:
    for i in range(10):
        code = f"WORK{i:02d}"
        await store.reserve_room(code)
        await asyncio.gather(*(store.append(code, [b"m"]) for _ in range(20)))
        await store.put_session(f"tok{i}", SessionRecord(f"p{i}", "n", code))
        if i % 2:
            await store.close_room(code)
    assert redis("DBSIZE") > 0
    assert redis.keys_without_ttl() == []
    assert len(await store.open_rooms()) == 5


async def noticed_down(store: RedisStore) -> None:
    """Until every link of the store has seen its connection drop (an event of the
    loop: the kernel reports the peer's close at once)."""
    while any(link.ready for link in store.pool._links):
        await asyncio.sleep(0.01)


async def test_acknowledged_appends_survive_kill_9(store: RedisStore, redis: RedisServer) -> None:
    await store.reserve_room("DURAB1")
    acked = []
    for k in range(200):
        await store.append("DURAB1", [b"rec %d" % k])
        acked.append(b"rec %d" % k)
    redis.kill()
    await noticed_down(store)  # else the append could go out, its outcome unknown
    with pytest.raises(StoreUnavailable):
        await store.append("DURAB1", [b"lost"])
    redis.start()  # same port, same directory: replays its AOF
    await eventually(lambda: served(lambda: store.load("DURAB1")), retry=(StoreUnavailable,))
    # The same store object reconnected by itself; the refused record is not there.
    assert await store.load("DURAB1") == acked
    assert await store.open_rooms() == ["DURAB1"]


async def test_outage_is_storage_unavailable_then_service_resumes(
    store: RedisStore, redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    tries = {"n": 0}
    connect_once = Link._connect_once

    async def counted(link: Link) -> None:
        tries["n"] += 1
        await connect_once(link)

    monkeypatch.setattr(Link, "_connect_once", counted)
    await store.reserve_room("OUTAGE")
    await store.put_session("tok", SessionRecord("p", "n", None))
    redis.kill()
    await noticed_down(store)  # refusals are definite only once nothing is sent
    for op in (
        store.append("OUTAGE", [b"x"]),
        store.load("OUTAGE"),
        store.open_rooms(),
        store.get_session("tok"),
        store.reserve_room("OTHER1"),
        store.put_session("t2", SessionRecord("p", "n", None)),
    ):
        with pytest.raises(StoreUnavailable) as refused:
            await op
        # Refused at once (the connection is known to be gone), not timed out.
        assert "did not answer" not in str(refused.value), refused.value
    # Stay down across several reconnection attempts (of the store's 4 links).
    await eventually(lambda: tries["n"] >= 8, what="reconnection attempts")
    redis.start()
    await eventually(
        lambda: served(lambda: store.append("OUTAGE", [b"back"])), retry=(StoreUnavailable,)
    )
    assert await store.load("OUTAGE") == [b"back"]
    assert await store.get_session("tok") == SessionRecord("p", "n", None)


async def test_frozen_redis_an_append_waits_for_its_outcome(
    store: RedisStore, redis: RedisServer
) -> None:
    """An append sent to a frozen Redis times out with its outcome unknown: the store
    does not answer at the timeout but resolves it once Redis is back, and its answer
    is the log's (the thawed Redis may run the append or the resolution first)."""
    await store.reserve_room("FROZEN")
    await store.append("OTHER1", [b"o"])  # the script is loaded: the append goes out
    redis.freeze()
    try:
        task = asyncio.ensure_future(store.append("FROZEN", [b"x"]))
        done, _ = await asyncio.wait({task}, timeout=1.5)  # past the 1 s timeout
        assert not done
    finally:
        redis.thaw()
    try:
        written = [b"x"] if await task == 1 else None
    except StoreUnavailable:
        written = []
    assert written is not None and await store.load("FROZEN") == written
    assert await store.append("FROZEN", [b"y"]) == len(written) + 1


async def test_a_log_not_as_acknowledged_is_refused_untouched(
    store: RedisStore, redis: RedisServer
) -> None:
    await store.reserve_room("PHANTM")
    await store.append("PHANTM", [b"a", b"b"])
    # Someone else wrote: refuse, trim nothing (it may be somebody's acknowledged move).
    redis("RPUSH", store.keys.log("PHANTM"), "other")
    with pytest.raises(StoreUnavailable):
        await store.append("PHANTM", [b"c"])
    assert await store.load("PHANTM") == [b"a", b"b", b"other"]
    # Redis lost acknowledged records (e.g. run without AOF): refuse, do not paper over.
    redis("LTRIM", store.keys.log("PHANTM"), 0, 0)
    with pytest.raises(StoreUnavailable):
        await store.append("PHANTM", [b"d"])


async def test_a_voided_write_id_is_refused_should_it_arrive_late(
    store: RedisStore, redis: RedisServer
) -> None:
    """Resolution marks an id void unless it was written; the append script then
    refuses that id, so "not written" is final."""
    await store.reserve_room("VOIDED")
    redis("HSET", store.keys.writes("VOIDED"), b"%s.1" % store._id, "void")
    with pytest.raises(StoreUnavailable):
        await store.append("VOIDED", [b"late"])
    assert await store.load("VOIDED") == []


async def test_fenced_appends_need_the_lease(store: RedisStore, redis: RedisServer) -> None:
    await store.reserve_room("FENCE1")
    store.fence("FENCE1", b"node-a:1")
    with pytest.raises(LeaseLost):
        await store.append("FENCE1", [b"no lease"])
    redis("SET", store.keys.lease("FENCE1"), "node-a:1", "PX", 5000)
    assert await store.append("FENCE1", [b"ok"]) == 1
    redis("SET", store.keys.lease("FENCE1"), "node-b:7", "PX", 5000)
    with pytest.raises(LeaseLost):
        await store.append("FENCE1", [b"stale owner"])
    assert await store.load("FENCE1") == [b"ok"]


async def test_scripts_reloaded_after_flush(store: RedisStore, redis: RedisServer) -> None:
    await store.reserve_room("SCRIPT")
    redis("SCRIPT", "FLUSH")
    assert await store.append("SCRIPT", [b"x"]) == 1
    assert not await store.reserve_room("SCRIPT")


async def test_database_from_url(redis: RedisServer) -> None:
    store = await RedisStore.from_url(f"redis://127.0.0.1:{redis.port}/3")
    try:
        await store.reserve_room("DBTHRE")
        await store.append("DBTHRE", [b"x"])
    finally:
        await store.close()
    assert redis("DBSIZE") == 0
    assert (
        int(redis("INFO", "keyspace").split(b"db3:keys=")[1].split(b",")[0]) == 3
    )  # rooms, log, writes


async def test_unreachable_redis_fails_fast() -> None:
    with pytest.raises(StoreUnavailable) as refused:
        await RedisStore.from_url(f"redis://127.0.0.1:{free_port()}/0", connect_timeout=0.5)
    assert "cannot reach Redis" in str(refused.value)
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert others == []  # no reconnection loop left behind


async def test_restart_under_load_keeps_exactly_the_acknowledged(
    store: RedisStore, redis: RedisServer
) -> None:
    rooms = [f"LOAD{i:02d}" for i in range(8)]
    for code in rooms:
        await store.reserve_room(code)
    acked: dict[str, list[bytes]] = {c: [] for c in rooms}
    refused = dict.fromkeys(rooms, 0)
    stop = asyncio.Event()

    async def player(code: str) -> None:
        k = 0
        while not stop.is_set():
            rec = b"%s-%d" % (code.encode(), k)
            k += 1
            try:
                await store.append(code, [rec])
                acked[code].append(rec)
            except StoreUnavailable:
                refused[code] += 1
                await asyncio.sleep(0.02)  # a client's pause before it tries again: no window

    tasks = [asyncio.create_task(player(c)) for c in rooms]
    await eventually(lambda: all(len(a) > 5 for a in acked.values()), what="appends")
    redis.kill()
    await noticed_down(store)
    # Down until every room has had an append refused, or waits on one sent before
    # the kill was noticed: its outcome is unknown, so it is resolved once Redis is
    # back, never refused (the store's rooms with an append in flight).
    await eventually(
        lambda: all(refused[c] or c in store._inflight for c in rooms),
        what="every room to be refused or waiting",
    )
    at_restart = {c: len(a) for c, a in acked.items()}
    redis.start()
    # Reconnected, every room carries on.
    await eventually(
        lambda: all(len(acked[c]) > at_restart[c] + 5 for c in rooms), what="appends again"
    )
    stop.set()
    await asyncio.gather(*tasks)
    for code in rooms:
        assert len(acked[code]) > 10
        assert await store.load(code) == acked[code]


async def test_options_in_the_url(redis: RedisServer) -> None:
    """``serve --redis URL`` passes only a URL: TTLs and prefix ride in its query."""
    url = f"{redis.url}?idle_ttl=60&session_ttl=120&prefix=kr2:"
    store = await RedisStore.from_url(url)
    try:
        await store.reserve_room("OPTION")
        await store.append("OPTION", [b"x"])
        await store.put_session("t", SessionRecord("p", "n", None))
        keys = sorted(k.decode() for k in redis("KEYS", "*"))
        assert all(k.startswith("kr2:") for k in keys), keys
        assert 55_000 < redis("PTTL", "kr2:room:OPTION:log") <= 60_000
        assert 115_000 < redis("PTTL", store.keys.session("t")) <= 120_000
    finally:
        await store.close()
    with pytest.raises(ValueError):
        await RedisStore.from_url(f"{redis.url}?idle_tll=60")


async def test_durability_is_checked(redis: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    store = await RedisStore.from_url(redis.url)
    await store.close()
    assert store.durable is True
    redis("CONFIG", "SET", "appendfsync", "everysec")
    store = await RedisStore.from_url(redis.url)
    await store.close()
    assert store.durable is False
    assert "acknowledged moves can be lost" in caplog.text
