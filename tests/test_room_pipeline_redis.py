"""The commit pipeline on a real, private redis-server (in-process server, real
sockets): a room's moves from several players go to Redis in batches, one append
in flight per room; and when Redis stops answering mid-pipeline, every undurable
move is refused and the room is exactly what its log in Redis replays to."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from protocol.outcomes import view_digest
from server.app import RaceServer
from server.core.records import decode_record
from server.core.room import Room
from server.core.views import room_view
from server.store.redis import RedisStore
from tests.support.inprocess import Outbox, running_server
from tests.support.processes import RedisServer
from tests.support.raw_client import Client, player
from tests.support.waiting import eventually

PLAYERS = 6


@pytest.fixture
async def server(redis: RedisServer) -> AsyncIterator[RaceServer]:
    store = await RedisStore.from_url(redis.url, timeout=0.5)
    async with running_server(store=store) as srv:
        yield srv


async def table(server: RaceServer) -> tuple[list[Client], Client, str]:
    players = [await player(server, f"P{i}") for i in range(PLAYERS)]
    sam = await player(server, "Sam")
    code = (await players[0].ok("create_room"))["room"]["code"]
    for c in players[1:]:
        await c.ok("join_room", code=code, role="player")
    await sam.ok("join_room", code=code, role="spectator")
    await players[0].ok("start")
    for c in (*players, sam):
        await c.event("deal_started")
    return players, sam, code


async def until_pending(server: RaceServer, code: str, n: int) -> None:
    """Until ``n`` commands of the room are decided and wait for the store."""
    host = server.service.rooms[code]
    await eventually(lambda: host.pending >= n, what=f"{n} pending commands")


def draws(players: list[Client]) -> list[asyncio.Task[dict[str, Any]]]:
    return [asyncio.create_task(c.request("move", deal=1, move={"kind": "draw"})) for c in players]


async def test_moves_of_a_room_are_batched(
    server: RaceServer, redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    players, sam, code = await table(server)
    host = server.service.rooms[code]
    seq = (await sam.ok("snapshot"))["room"]["seq"]
    # While Redis sits on the first move, the others are decided and queue up.
    appends = host.appends
    outbox = Outbox(monkeypatch)
    redis.freeze()
    try:
        moves = draws(players)
        await until_pending(server, code, PLAYERS)
        # Nothing acknowledged before durable: not a frame sent to anyone yet.
        assert len(outbox) == 0
    finally:
        redis.thaw()
    replies = await asyncio.gather(*moves)
    assert [r["type"] for r in replies] == ["moved"] * PLAYERS
    # At most two batches: the rest join the first before Redis is asked, or
    # queue behind it and go together once it is done.
    assert host.appends - appends <= 2
    progress = [await sam.event("progress") for _ in players]
    assert [e["seq"] for e in progress] == list(range(seq + 1, seq + 1 + PLAYERS))

    # Flat out, with nothing frozen: fewer appends than moves, every move kept.
    appends, rounds = host.appends, 15
    for _ in range(rounds):
        assert all(r["type"] == "moved" for r in await asyncio.gather(*draws(players)))
    print(f"{rounds * PLAYERS} moves in {host.appends - appends} appends")
    assert host.appends - appends < rounds * PLAYERS
    log = redis("LRANGE", f"klondike:room:{code}:log", 0, -1)
    # Compacted at the round's start: Redis keeps the records from the snapshot on.
    assert host.durable.head is not None
    assert len(log) + host.durable.head == host.durable.length == host.room.n_records


async def test_redis_failure_mid_pipeline_rolls_back(
    server: RaceServer, redis: RedisServer
) -> None:
    players, sam, code = await table(server)
    host = server.service.rooms[code]
    acked = [await c.ok("move", deal=1, move={"kind": "draw"}) for c in players]
    seq = (await sam.ok("snapshot"))["room"]["seq"]
    for c in players:  # their moves' progress waits (docs/protocol.md "Batched events")
        await c.caught_up()
    marks = [len(c.frames) for c in (*players, sam)]
    appends = host.appends
    redis.freeze()  # the append in flight times out (0.5 s): its outcome unknown
    try:
        moves = [asyncio.ensure_future(m) for m in draws(players)]
        await until_pending(server, code, PLAYERS)
        done, _ = await asyncio.wait(moves, timeout=1.0)  # past the timeout
        assert not done  # not refused: the store cannot tell yet
    finally:
        redis.thaw()  # ... and it resolves the append (Redis may run it first)
    replies = await asyncio.gather(*moves)
    # One append; the moves queued behind it share its fate, whichever it was.
    assert host.appends - appends == 1
    written = replies[0]["type"] == "moved"
    if written:
        assert [r["type"] for r in replies] == ["moved"] * PLAYERS
        seq += PLAYERS
        acked = list(replies)
    else:
        assert [r.get("code") for r in replies] == ["storage_unavailable"] * PLAYERS
        for c, mark in zip((*players, sam), marks, strict=True):  # no event leaked
            assert [f.msg["type"] for f in c.frames[mark:]] == ["error"] * (c is not sam)
    for c, before in zip(players, acked, strict=True):
        room = (await c.ok("snapshot"))["room"]
        assert room["seq"] == seq and view_digest(room["deal"]["board"]) == before["digest"]

    # Service resumes once Redis answers; the log holds exactly what was acknowledged.
    first = players[0]

    async def moved() -> dict[str, Any] | None:
        reply = await first.request("move", deal=1, move={"kind": "draw"})
        if reply["type"] == "moved":
            return reply
        assert reply["code"] == "storage_unavailable"
        return None

    reply = await eventually(moved, what="Redis to answer again")
    assert reply["type"] == "moved" and reply["outcome"]["moves"] == 2 + written
    assert (await sam.event("progress", seq=seq + 1))["player"] == first.player
    log = redis("LRANGE", f"klondike:room:{code}:log", 0, -1)
    rebuilt = Room.rebuild(code, (decode_record(r) for r in log))
    now = server.service.clock.now()
    assert rebuilt.seq == host.room.seq == seq + 1
    for c in (*players, sam):
        assert c.player is not None
        assert (await c.ok("snapshot"))["room"] == room_view(rebuilt, c.player, now)
