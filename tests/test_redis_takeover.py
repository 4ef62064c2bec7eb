"""A room's owner dies while all its clients come back at once (issue 10).

Two ``serve --redis`` processes on a private redis-server. Eight members of one room
(six players, two spectators) are connected to node A; A is killed with ``kill -9``
and all eight resume on node B at the same moment, so B sees eight concurrent
requests for a room it does not run yet. B must rebuild it exactly once: a second
runner would write to the log behind the live one's back (records the live room
never saw), and a rebuild that marks members offline after publishing the room
records players offline while they play.

Everything is counted from the clients' own records (the moves each sent and saw
acknowledged, the members each was shown) and from the store's log, read with a
client that is not the code under test: acknowledged moves lost, moves applied
twice, records written by a stale runner, connected members shown offline. Each
must be 0. The test waits on frames and process exits only.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from protocol.messages import ErrorCode
from server.cluster.leases import LOCAL, Cluster
from server.core import decide as D
from server.core import records as R
from server.core.room import Room
from server.core.values import Role, RoomError
from server.net.clock import SystemClock
from server.net.metrics import Metrics
from server.rooms.runner import RoomRunner
from server.service.adoption import fold_room
from server.service.service import Service
from server.store.base import StoreUnavailable
from server.store.memory import MemoryStore
from server.store.redis import LeaseLost, RedisStore
from tests.support.processes import RedisServer, ServerProcess, running_redis, running_servers
from tests.support.raw_client import Client, after

PLAYERS, SPECTATORS = 6, 2
MOVES_BEFORE, MOVES_AFTER = 6, 4


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    with running_redis(tmp_path / "redis") as server:
        yield server


class Mover:
    """A player that remembers every move it sent and saw acknowledged, in order."""

    def __init__(self, client: Client) -> None:
        from client.bot import Bot

        self.client = client
        self.player = client.player
        self.bot = Bot(search_budget=0)
        self.view: dict[str, Any] | None = None
        self.acked: list[dict[str, Any]] = []  # the moves (wire maps) acknowledged

    async def play(self, count: int) -> None:
        from protocol.moves import MoveKind

        for _ in range(count):
            assert self.view is not None
            move = self.bot.decide(self.view)
            if move.kind is MoveKind.RESIGN:
                return
            reply = await self.client.request("move", deal=1, move=move.to_wire())
            assert reply["type"] == "moved", reply
            self.acked.append(move.to_wire())
            self.view = after(self.view, reply)


async def joined(url: str, name: str) -> Client:
    client = await Client.open(url)
    await client.hello(name)
    return client


async def resume(url: str, token: str | None) -> tuple[Client, dict[str, Any]]:
    client = await Client.open(url)
    welcome = await client.ok("hello", version=2, token=token)
    return client, welcome


async def seen_up_to(client: Client, seq: int) -> None:
    """Until the client has an event numbered ``seq`` or later: every event before
    it has then arrived too (a room's events reach each member in seq order)."""
    while not any(e["seq"] >= seq for e in client.events):
        client._arrived.clear()
        if any(e["seq"] >= seq for e in client.events):
            return
        await asyncio.wait_for(client._arrived.wait(), 10)


def shown_offline(welcome_room: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
    """Who the client was last shown as offline: its welcome's member list, then
    every ``members`` event after it."""
    members = {"players": welcome_room["players"], "spectators": welcome_room["spectators"]}
    for event in events:
        if event["type"] == "members":
            members = {"players": event["players"], "spectators": event["spectators"]}
    return [m["id"] for m in members["players"] + members["spectators"] if not m["connected"]]


def http_get(node: ServerProcess, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{node.port}{path}", timeout=5) as reply:
        text: str = reply.read().decode()
        return text


def adoptions(node: ServerProcess) -> float:
    text = http_get(node, "/metrics")
    match = re.search(r"^klondike_room_adoptions_total (\S+)$", text, re.M)
    assert match is not None, text
    return float(match.group(1))


async def test_owner_killed_while_eight_clients_resume_on_the_other_node(
    redis: RedisServer, tmp_path: Path
) -> None:
    with running_servers(redis, tmp_path, 2) as (a, b):
        clients = [await joined(a.url, f"M{i}") for i in range(PLAYERS + SPECTATORS)]
        host = clients[0]
        settings = {"scoring": "standard", "time_limit_minutes": 30}
        code = (await host.ok("create_room", settings=settings))["room"]["code"]
        for i, c in enumerate(clients[1:], 1):
            await c.ok("join_room", code=code, role="player" if i < PLAYERS else "spectator")
        await host.ok("start")
        movers = [Mover(c) for c in clients[:PLAYERS]]
        for m in movers:
            m.view = (await m.client.event("deal_started"))["deal"]["board"]
        await asyncio.gather(*(m.play(MOVES_BEFORE) for m in movers))
        assert await asyncio.to_thread(adoptions, b) == 0

        a.kill()  # returns once the process is gone
        for c in clients:
            assert await c.closed() == 1006
        back = await asyncio.gather(*(resume(b.url, c.token) for c in clients))

        by_player = {
            c.player: (new, welcome["room"])
            for c, (new, welcome) in zip(clients, back, strict=True)
        }
        for m in movers:
            new, room = by_player[m.player]
            assert room["deal"]["board"]["moves"] == len(m.acked)
            m.client, m.view = new, room["deal"]["board"]
        await asyncio.gather(*(m.play(MOVES_AFTER) for m in movers))
        last = max(room["seq"] for _, room in by_player.values())
        offline: dict[str, list[str]] = {}
        for pid, (new, room) in by_player.items():
            await seen_up_to(new, last + 1)  # the moves' events came after every welcome
            offline[pid] = shown_offline(room, new.events)

        assert await asyncio.to_thread(adoptions, b) == 1
        health = await asyncio.to_thread(http_get, b, "/healthz")
        assert '"rooms": 1' in health or '"rooms":1' in health, health

        raw: list[bytes] = redis("LRANGE", f"klondike:room:{code}:log", 0, -1)
        log = [R.decode_record(r) for r in raw]
        # Compacted at the round's start: the log starts at that snapshot, numbered on.
        head = log[0].index if isinstance(log[0], R.Checkpoint) else 0
        stale = [i for i, r in enumerate(log, head) if isinstance(r, R.MovePlayed) and r.index != i]
        lost = twice = 0
        for m in movers:
            logged = [
                r.move.to_wire()
                for r in log
                if isinstance(r, R.MovePlayed) and r.player == m.player
            ]
            assert logged == m.acked[: len(logged)] or logged[: len(m.acked)] == m.acked
            lost += max(0, len(m.acked) - len(logged))
            twice += max(0, len(logged) - len(m.acked))
        folded, _ = await fold_room(code, raw)
        counts = {
            "acknowledged moves lost": lost,
            "moves applied twice": twice,
            "records by a stale runner": len(stale),
            "connected members shown offline": sum(len(v) for v in offline.values()),
            "connected members offline in the log": sum(
                not m.connected for m in folded.members.values()
            ),
        }
        assert counts == dict.fromkeys(counts, 0), (counts, offline)
        assert sum(m.acked != [] for m in movers) == PLAYERS
        rebuilt = b.log_path.read_text().count(f"room {code} rebuilt")
        assert rebuilt == 1, b.log_path.read_text()[-4000:]


# ---------------------------------------------------------------- in one process


def adoptions_of(service: Service) -> float:
    return float(service.metrics.room_adoptions._value.get())


async def a_dead_nodes_room(redis: RedisServer, code: str) -> None:
    """A room with two members, written by a node that then died holding its lease
    (a token of a node nobody subscribes for: the cluster finds it dead)."""
    store = await RedisStore.from_url(redis.url)
    try:
        assert await store.reserve_room(code)
        gone = Service(store, SystemClock(), Metrics())
        runner = RoomRunner(gone, Room(code))
        gone.rooms[code] = runner
        await runner.run(lambda r, c: D.decide_create(r, "pAnn", "Ann", {}, c))
        await runner.run(lambda r, c: D.decide_join(r, "pBob", "Bob", Role.PLAYER, c))
        runner.stop()
    finally:
        await store.close()
    redis("SET", f"klondike:room:{code}:lease", "gone-node#1", "PX", 60_000)


async def test_concurrent_adoptions_make_one_runner_and_a_stale_one_cannot_append(
    redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="klondike_race.service")
    code = "TAKE01"
    await a_dead_nodes_room(redis, code)
    store = await RedisStore.from_url(redis.url)
    service = Service(store, SystemClock(), Metrics())
    cluster = await Cluster.start(service, lease_ms=60_000)  # no tick or scan meanwhile
    service.cluster = cluster
    try:
        found = await asyncio.gather(
            *(cluster.locate(code) for _ in range(8)),
            *(service.adoption.adopt(code) for _ in range(4)),
        )
        assert found == [LOCAL] * 8 + [True] * 4
        assert adoptions_of(service) == 1
        assert sum(f"room {code} rebuilt" in r.getMessage() for r in caplog.records) == 1
        first = service.rooms[code]
        assert not any(m.connected for m in first.room.members.values())  # nobody is here
        first_token = redis("GET", f"klondike:room:{code}:lease")
        length = redis("LLEN", f"klondike:room:{code}:log")

        # A second incarnation while the first still runs (what the bug made:
        # the first forgotten, not stopped): a new token, and the store refuses
        # the first one although nothing told it to stop.
        del service.rooms[code]
        assert await service.adoption.adopt(code)
        second = service.rooms[code]
        assert second is not first and not first.stopped
        assert adoptions_of(service) == 2
        second_token = redis("GET", f"klondike:room:{code}:lease")
        assert second_token not in (None, first_token)

        with pytest.raises(RoomError) as refused:
            await first.run(lambda r, _c: D.decide_presence(r, "pAnn", True))
        assert refused.value.code == ErrorCode.STORAGE_UNAVAILABLE
        assert redis("LLEN", f"klondike:room:{code}:log") == length
        # Redis itself refuses the old token, whoever sends it.
        elsewhere = await RedisStore.from_url(redis.url)
        try:
            elsewhere.fence(code, first_token)
            with pytest.raises(LeaseLost):
                await elsewhere.append(code, [R.encode_record(R.Presence("x", True))])
        finally:
            await elsewhere.close()
        assert redis("LLEN", f"klondike:room:{code}:log") == length

        await second.run(lambda r, _c: D.decide_presence(r, "pAnn", True))
        raw = redis("LRANGE", f"klondike:room:{code}:log", 0, -1)
        assert len(raw) == length + 1
        folded, _ = await fold_room(code, raw)
        assert folded.members["pAnn"].connected and not folded.members["pBob"].connected
        first.stop()
    finally:
        await service.stop()
        await cluster.stop()
        await store.close()


class JoiningStore(MemoryStore):
    """Appends wait for the test and join one pending group commit (as Redis
    appends do within a loop tick), so several futures fail together."""

    def __init__(self) -> None:
        super().__init__()
        self.held = False
        self.waiting: list[asyncio.Future[int]] = []

    def append(self, code: str, records: Sequence[bytes]) -> asyncio.Future[int]:
        if not self.held:
            return super().append(code, records)
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.waiting.append(fut)
        return fut

    def joinable(self, code: str) -> bool:
        return self.held

    def fail(self) -> None:
        for fut in self.waiting:
            fut.set_exception(StoreUnavailable("Redis is down (the test)"))
        self.waiting = []


async def test_a_failed_group_commit_is_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    """Three commands joined into one append that fails: the first failure rolls
    the room back, and the other two futures must still be retrieved, or asyncio
    logs 'Future exception was never retrieved' (an ERROR) for an expected outage."""
    store = JoiningStore()
    service = Service(store, SystemClock(), Metrics())
    runner = RoomRunner(service, Room("OUTAGE"))
    service.rooms["OUTAGE"] = runner
    await runner.run(lambda r, c: D.decide_create(r, "pAnn", "Ann", {}, c))
    store.held = True
    joins = [
        runner.run(lambda r, c, p=p: D.decide_join(r, p, p, Role.PLAYER, c))
        for p in ("pBob", "pCat", "pDan")
    ]
    tasks = [asyncio.ensure_future(j) for j in joins]
    while len(store.waiting) < 3:
        await asyncio.sleep(0)
    store.fail()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(o, RoomError) for o in outcomes), outcomes
    del tasks, joins, outcomes
    gc.collect()
    await asyncio.sleep(0)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "append failed" in warnings[0], warnings
    runner.stop()


async def test_records_waiting_under_an_old_token_are_refused(redis: RedisServer) -> None:
    """The store's side of per-incarnation fencing: an append carries its runner's
    token; one queued under a token that is replaced before the batch goes out is
    refused, not sent under the new one, and an old token is refused at once."""
    store = await RedisStore.from_url(redis.url)
    code = "FENCE1"
    try:
        assert await store.reserve_room(code)
        lease = f"klondike:room:{code}:lease"
        redis("SET", lease, "me#1", "PX", 60_000)
        store.fence(code, b"me#1")
        queued = store.append(code, [b"old"], fence=b"me#1")  # goes out next tick
        redis("SET", lease, "me#2", "PX", 60_000)
        store.fence(code, b"me#2")  # the room is rebuilt before it went out
        with pytest.raises(LeaseLost):
            await queued
        assert await store.append(code, [b"new"], fence=b"me#2") == 1
        with pytest.raises(LeaseLost):
            await store.append(code, [b"stale"], fence=b"me#1")
        store.forget(code)  # dropped: even the last token is refused now
        with pytest.raises(LeaseLost):
            await store.append(code, [b"gone"], fence=b"me#2")
        assert redis("LRANGE", f"klondike:room:{code}:log", 0, -1) == [b"new"]
    finally:
        await store.close()
