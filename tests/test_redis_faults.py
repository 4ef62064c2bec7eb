"""Honest refusals under faults (issue 10): real sockets, real redis-server and
server processes, each fault provoked deterministically.

- A lost reply: Redis runs an append, the node never hears (tests/redis_proxy.py
  swallows Redis's bytes, then cuts the connection).
- The same, then an outage longer than the 3 s lease (the proxy refuses
  connections until the lease has expired in Redis).
- The owner frozen (SIGSTOP) past its lease while another node takes over, then
  thawed (SIGCONT).
- Redis killed with ``kill -9`` after it ran an append whose reply was lost, and
  restarted.

Clients follow docs/protocol.md: a move refused with ``storage_unavailable`` was not
applied, so once the store is back they play it again from the board the server
shows them (the ``logged`` of a fresh snapshot or welcome); a connection lost with a
move in flight resumes and sends the very same request (same ``n``); a
``storage_uncertain`` re-syncs and sends the same ``n``. From the clients' own records
and the store's log each test counts acknowledged moves lost, refused moves applied,
moves applied twice, records written by a stale runner and connected members shown
offline: every count is 0. Waits are on frames, process exits and conditions read
from Redis directly, never on sleeps as windows.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from server.core import records as R
from server.core.values import logged_move
from tests.support.processes import RedisServer, ServerProcess, running_redis
from tests.support.raw_client import Client, after_move
from tests.support.redis_proxy import RedisProxy

DEAL = 1


@pytest.fixture
def redis(tmp_path: Path) -> Any:
    with running_redis(tmp_path / "redis") as server:
        yield server


async def until(cond: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    """Until ``cond()`` holds (read afresh every 20 ms), or fail after ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not cond():
        assert loop.time() < deadline, f"timed out waiting for {what or cond}"
        await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def nodes(redis_urls: list[str], directory: Path) -> AsyncIterator[list[ServerProcess]]:
    """Server processes (started from a thread: a node may connect through a proxy
    that runs in this loop); every one is stopped, and its log checked, at the end."""
    procs = [ServerProcess(url, directory / f"node{i + 1}.log") for i, url in enumerate(redis_urls)]
    try:
        for proc in procs:
            await asyncio.to_thread(proc.start)
        yield procs
    finally:
        for proc in procs:
            if proc.proc is not None and proc.proc.poll() is None:
                proc.thaw()
            await asyncio.to_thread(proc.kill)
    for proc in procs:
        text = proc.log_path.read_text()
        assert "Traceback" not in text and " ERROR " not in text, text[-4000:]


class Racer:
    """A player that keeps its own record of what the server told it."""

    def __init__(self, client: Client, url: str) -> None:
        from client.bot import Bot

        self.client = client
        self.url = url  # where to resume
        self.player = client.player
        self.token = client.token
        self.bot = Bot(search_budget=0)
        self.view: dict[str, Any] = {}
        self.acked: dict[int, dict[str, Any]] = {}  # n -> the move acknowledged there
        self.refused: list[tuple[int, dict[str, Any]]] = []  # storage_unavailable
        self.sent: list[list[tuple[int, dict[str, Any]]]] = []  # per intent: (n, move)
        self.back = asyncio.Event()  # set by the test once the store is back
        self.back.set()

    async def resume(self) -> None:
        self.client = await Client.open(self.url)
        welcome = await self.client.ok("hello", version=2, token=self.token)
        self.view = welcome["room"]["deal"]["board"]

    async def fresh_view(self) -> None:
        """The board as the server has it now (resuming if the connection went)."""
        while True:
            if self.client.close_code is not None:
                await self.resume()
                return
            try:
                self.view = (await self.client.ok("snapshot"))["room"]["deal"]["board"]
                return
            except ConnectionError:
                continue

    def next_move(self, prefer_draw: bool = False) -> dict[str, Any]:
        if prefer_draw and self.view["stock"]:
            return {"kind": "draw"}
        return self.bot.decide(self.view).to_wire()

    async def play(self, move: dict[str, Any] | None = None) -> dict[str, Any]:
        """Play one move until it is acknowledged, as docs/protocol.md says."""
        move = move or self.next_move()
        tries: list[tuple[int, dict[str, Any]]] = []
        self.sent.append(tries)
        n = int(self.view["logged"])
        while True:
            tries.append((n, move))
            try:
                reply = await self.client.request("move", deal=DEAL, n=n, move=move)
            except ConnectionError:  # lost with the move in flight: the same request
                await self.resume()
                continue
            if reply["type"] == "moved":
                self.acked[n] = move
                self.view = after_move(self.view, reply, n)
                return reply
            code = reply["code"]
            if code == "rate_limited":  # nothing applied; a client backs off
                await asyncio.sleep(0.2)
                continue
            if code == "storage_uncertain":
                await self.fresh_view()
                continue
            assert code == "storage_unavailable", reply
            self.refused.append((n, move))
            await self.back.wait()  # nothing was done: play it again once it may work
            await asyncio.sleep(0.1)  # (a client's back-off, not a window of the test)
            await self.fresh_view()
            n = int(self.view["logged"])


def read_log(redis: RedisServer, code: str) -> list[R.Record]:
    return [R.decode_record(r) for r in redis("LRANGE", f"klondike:room:{code}:log", 0, -1)]


async def counts(redis: RedisServer, code: str, racers: list[Racer]) -> dict[str, int]:
    log = read_log(redis, code)
    # A compacted log starts at a snapshot (its moves so far in its deals' logs),
    # numbered on from the snapshot's own index.
    first = log[0] if log else None
    head = first.index if isinstance(first, R.Checkpoint) else 0
    before: dict[str, list[Any]] = {r.player: [] for r in racers}
    if isinstance(first, R.Checkpoint):
        for deal in first.deals:
            assert isinstance(deal, R.CheckpointDeal)
            for p, entries in deal.logs.items():
                before.setdefault(p, []).extend(logged_move(tuple(e)).to_wire() for e in entries)
    lost = refused_applied = twice = 0
    for r in racers:
        moved = [
            rec.move.to_wire()
            for rec in log
            if isinstance(rec, R.MovePlayed) and rec.player == r.player
        ]
        mine = before[r.player] + moved
        at = dict(enumerate(mine))
        lost += sum(at.get(n) != m for n, m in r.acked.items())
        refused_applied += sum(at.get(n) == m and r.acked.get(n) != m for n, m in r.refused)
        twice += sum(len({n for n, m in tries if at.get(n) == m}) > 1 for tries in r.sent)
        assert len(mine) == len(r.acked), (mine, r.acked)  # nothing unaccounted for
    stale = [
        i for i, rec in enumerate(log, head) if isinstance(rec, R.MovePlayed) and rec.index != i
    ]
    offline = 0
    for r in racers:
        room = (await r.client.ok("snapshot"))["room"]
        offline += sum(not m["connected"] for m in room["players"] + room["spectators"])
    return {
        "acknowledged moves lost": lost,
        "refused moves applied": refused_applied,
        "moves applied twice": twice,
        "records by a stale runner": len(stale),
        "connected members shown offline": offline,
    }


async def race(url: str) -> tuple[str, list[Racer]]:
    clients = []
    for name in ("Ann", "Bob"):
        c = await Client.open(url)
        await c.hello(name)
        clients.append(c)
    code = (await clients[0].ok("create_room", settings={"time_limit_minutes": 30}))["room"]["code"]
    await clients[1].ok("join_room", code=code, role="player")
    await clients[0].ok("start")
    racers = [Racer(c, url) for c in clients]
    for r in racers:
        r.view = (await r.client.event("deal_started"))["deal"]["board"]
    for _ in range(3):
        await asyncio.gather(*(r.play() for r in racers))
    return code, racers


def lease(redis: RedisServer, code: str) -> bytes | None:
    held: bytes | None = redis("GET", f"klondike:room:{code}:lease")
    return held


async def lost_reply(redis: RedisServer, proxy: RedisProxy, code: str, racer: Racer) -> Any:
    """Start a draw whose append Redis runs while its reply is swallowed."""
    key = f"klondike:room:{code}:log"
    before = redis("LLEN", key)
    proxy.swallow = True
    racer.back.clear()
    task = asyncio.ensure_future(racer.play(racer.next_move(prefer_draw=True)))
    await until(lambda: redis("LLEN", key) > before, what="Redis to run the append")
    return task


@dataclass
class LostReply:
    """A race on one node that reaches Redis through a proxy, with Ann's move
    executed by Redis and its reply swallowed: the start of every lost-reply test."""

    proxy: RedisProxy
    code: str
    racers: list[Racer]
    move: Any  # the draw in flight (a task)


@contextlib.asynccontextmanager
async def a_lost_reply(redis: RedisServer, tmp_path: Path) -> AsyncIterator[LostReply]:
    proxy = RedisProxy(redis.port)
    await proxy.accept()
    try:
        async with nodes([proxy.url], tmp_path) as (node,):
            code, racers = await race(node.url)
            move = await lost_reply(redis, proxy, code, racers[0])
            yield LostReply(proxy, code, racers, move)
    finally:
        await proxy.close()


async def play_on_and_count(redis: RedisServer, code: str, racers: list[Racer]) -> None:
    """Every racer moves once more, then every count is 0."""
    await asyncio.gather(*(r.play() for r in racers))
    result = await counts(redis, code, racers)
    assert result == dict.fromkeys(result, 0), result


async def test_a_lost_reply_is_resolved_not_refused(redis: RedisServer, tmp_path: Path) -> None:
    async with a_lost_reply(redis, tmp_path) as lost:
        ann = lost.racers[0]
        lost.proxy.cut()  # the reply is lost with its connection
        lost.proxy.swallow = False
        ann.back.set()
        reply = await lost.move
        assert reply["type"] == "moved"
        assert ann.refused == []  # the server knew the move was written
        await play_on_and_count(redis, lost.code, lost.racers)


async def test_a_lost_reply_then_an_outage_longer_than_the_lease(
    redis: RedisServer, tmp_path: Path
) -> None:
    async with a_lost_reply(redis, tmp_path) as lost:
        code, proxy = lost.code, lost.proxy
        await proxy.refuse()  # the reply is lost, and Redis stays away ...
        await until(lambda: lease(redis, code) is None, what="the lease to expire")
        proxy.swallow = False
        await proxy.accept()  # ... until the lease has expired
        # Held again: re-taken by its runner, or by a new incarnation.
        await until(lambda: lease(redis, code) is not None, what="the lease held again")
        lost.racers[0].back.set()
        await lost.move
        await play_on_and_count(redis, code, lost.racers)


async def test_the_owner_frozen_past_its_lease(redis: RedisServer, tmp_path: Path) -> None:
    async with nodes([redis.url, redis.url], tmp_path) as (a, b):
        code, racers = await race(a.url)
        held = lease(redis, code)
        assert held is not None
        a.freeze()
        for r in racers:
            r.url = b.url
            r.back.clear()
        moves = [asyncio.ensure_future(r.play()) for r in racers]  # to a frozen node
        await until(lambda: lease(redis, code) not in (None, held), what="B to take over")
        a.thaw()
        for r in racers:
            r.back.set()
        await asyncio.gather(*moves)
        for r in racers:  # every client is on B by now, or A relays it there
            if r.client.close_code is None and r.client is not None:
                await r.client.close()
            await r.resume()
        await play_on_and_count(redis, code, racers)


async def test_redis_killed_after_a_lost_reply_and_restarted(
    redis: RedisServer, tmp_path: Path
) -> None:
    async with a_lost_reply(redis, tmp_path) as lost:
        ann, bob = lost.racers
        await asyncio.to_thread(redis.kill)  # kill -9, with the reply unsent
        lost.proxy.swallow = False
        bob.back.clear()
        other = asyncio.ensure_future(bob.play())  # while Redis is down
        await asyncio.to_thread(redis.start)
        ann.back.set()
        bob.back.set()
        await lost.move
        await other
        await play_on_and_count(redis, lost.code, lost.racers)
