"""Exactly-once moves over real sockets (docs/protocol.md, ``move``).

A move carries its number in the player's log (``n``). The same number with the
same move again is a retry: the original reply, nothing logged, no event; after a
drop and a resume, and on a server that rebuilt the room from its store, alike.
Any other number is refused with ``wrong_move_number`` and the player's position.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from protocol.outcomes import view_digest
from server.core.records import Checkpoint, MovePlayed, decode_record
from server.store.memory import MemoryStore
from tests.support.inprocess import FakeClock, running_server
from tests.support.processes import RedisServer, running_redis, running_servers
from tests.support.raw_client import Client, player

DRAW = {"kind": "draw"}


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    with running_redis(tmp_path / "redis") as server:
        yield server


def without_id(reply: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in reply.items() if k != "id"}


async def logged_moves(store: MemoryStore, code: str) -> int:
    """The moves the store holds for a room: what "appended nothing" counts. A
    compacted log keeps those before its last snapshot in the snapshot's logs."""
    count = 0
    for raw in await store.load(code):
        record = decode_record(raw)
        if isinstance(record, Checkpoint):
            count = sum(len(log) for d in record.deals for log in d.logs.values())  # type: ignore[union-attr]
        elif isinstance(record, MovePlayed):
            count += 1
    return count


async def table(server: Any, **settings: Any) -> tuple[Client, Client, str]:
    ann = await player(server, "Ann")
    bob = await player(server, "Bob")
    code = (await ann.ok("create_room", settings=settings))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    await ann.ok("start")
    for c in (ann, bob):
        await c.event("deal_started")
    return ann, bob, code


async def test_a_retry_gets_the_original_reply_and_logs_nothing() -> None:
    store, clock = MemoryStore(), FakeClock()
    async with running_server(store=store, clock=clock) as server:
        ann, bob, code = await table(server, deals_per_round=1, draw=3)
        clock.advance(1500)
        first = await ann.ok("move", deal=1, n=0, move={"kind": "draw"})
        assert first["outcome"]["moves"] == 1 and first["outcome"]["waste"] == 3
        assert first["t"] == 1500
        clock.advance(2500)
        second = await ann.ok("move", deal=1, n=1, move={"kind": "draw"})
        for _ in range(2):
            await bob.event("progress", player=ann.player)
        stored, events = await logged_moves(store, code), len(bob.events)
        clock.advance(5000)  # a retry is answered as it was, not as of now

        # Both moves again, the older one too: their replies, word for word.
        again = await ann.ok("move", deal=1, n=0, move={"kind": "draw"})
        assert without_id(again) == without_id(first) and again["id"] != first["id"]
        again = await ann.ok("move", deal=1, n=1, move={"kind": "draw"})
        assert without_id(again) == without_id(second)
        assert await logged_moves(store, code) == stored
        snap = (await ann.ok("snapshot"))["room"]
        # nothing was played twice
        assert view_digest(snap["deal"]["board"]) == second["digest"]
        assert snap["deal"]["board"]["logged"] == 2
        await bob.ok("ping")  # any event of the retries would have come before this
        assert len(bob.events) == events  # nobody heard of a move

        # A logged number with another move, and a number ahead of the log.
        for n, move in ((1, {"kind": "resign"}), (5, {"kind": "draw"})):
            refused = await ann.request("move", deal=1, n=n, move=move)
            assert (refused["type"], refused["code"]) == ("error", "wrong_move_number")
            assert refused["expected"] == 2 and isinstance(refused["message"], str)
        assert await logged_moves(store, code) == stored

        # The move that ends the round is answered again once the round is over.
        await bob.ok("move", deal=1, n=0, move={"kind": "resign"})
        last = await ann.ok("move", deal=1, n=2, move={"kind": "resign"})
        await ann.event("round_over")
        assert (await ann.ok("snapshot"))["room"]["state"] == "round_over"
        again = await ann.ok("move", deal=1, n=2, move={"kind": "resign"})
        assert without_id(again) == without_id(last)
        late = await ann.request("move", deal=1, n=3, move={"kind": "draw"})
        assert late["code"] == "wrong_state"  # a new move is refused as ever
        assert await logged_moves(store, code) == stored + 2


async def test_a_retry_after_a_resume_and_after_a_restart() -> None:
    store, clock = MemoryStore(), FakeClock()
    async with running_server(store=store, clock=clock) as server:
        ann, bob, code = await table(server, draw=3)
        played = await ann.ok("move", deal=1, n=0, move={"kind": "draw"})
        ann.ws.transport.abort()  # the network goes away, no close frame
        back = await Client.open(server.url)
        welcome = await back.ok("hello", version=2, token=ann.token)
        assert welcome["room"]["deal"]["board"]["logged"] == 1
        again = await back.ok("move", deal=1, n=0, move={"kind": "draw"})
        assert without_id(again) == without_id(played)

        # A move whose reply never came: the frame left, then the connection went.
        # Sent again after the resume, it is played exactly once, whichever way
        # the first one went.
        stored = await logged_moves(store, code)
        await back.send({"type": "move", "id": "lost", "deal": 1, "n": 1, "move": {"kind": "draw"}})
        back.ws.transport.abort()
        third = await Client.open(server.url)
        await third.ok("hello", version=2, token=ann.token)
        retried = await third.ok("move", deal=1, n=1, move={"kind": "draw"})
        assert retried["outcome"]["moves"] == 2 and retried["outcome"]["waste"] == 6
        assert await logged_moves(store, code) == stored + 1
        await third.close()
        await bob.close()

    # Another process rebuilds the room from the store (a failover does the same):
    # the retry's reply is rebuilt from the log, equal to the one sent live.
    async with running_server(store=store, clock=clock) as second:
        ann2 = await Client.open(second.url)
        welcome = await ann2.ok("hello", version=2, token=ann.token)
        assert welcome["room"]["code"] == code
        again = await ann2.ok("move", deal=1, n=1, move={"kind": "draw"})
        assert without_id(again) == without_id(retried)
        again = await ann2.ok("move", deal=1, n=0, move={"kind": "draw"})
        assert without_id(again) == without_id(played)
        assert await logged_moves(store, code) == stored + 1


async def test_a_retry_after_a_failover(redis: RedisServer, tmp_path: Path) -> None:
    """The node holding the room dies with a move's reply unsent; another node takes
    the room over from Redis, and both moves sent again there are played once."""
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann = await Client.open(a.url)
        await ann.hello("Ann")
        code = (await ann.ok("create_room"))["room"]["code"]
        await ann.ok("start")
        await ann.event("deal_started")
        played = await ann.ok("move", deal=1, n=0, move=DRAW)
        await ann.send({"type": "move", "id": "cut", "deal": 1, "n": 1, "move": DRAW})
        a.kill()
        back = await Client.open(b.url)
        await back.ok("hello", version=2, token=ann.token)
        again = await back.ok("move", deal=1, n=0, move=DRAW)
        assert without_id(again) == without_id(played)
        second = await back.ok("move", deal=1, n=1, move=DRAW)
        assert second["outcome"]["moves"] == 2 and second["outcome"]["stock"] == 22
        log = redis("LRANGE", f"klondike:room:{code}:log", 0, -1)
        assert sum(1 for r in log if isinstance(decode_record(r), MovePlayed)) == 2
