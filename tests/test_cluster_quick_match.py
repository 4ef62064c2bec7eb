"""Quick match on two ``serve --redis`` nodes sharing one private redis-server:
one queue per ladder across nodes (docs/protocol.md, "Quick match"). Players
queued on different nodes race in one rated room; leaving the queue on one node
is seen by the other at once; churn across nodes never seats a player twice."""

from __future__ import annotations

import asyncio
import itertools
import random
from pathlib import Path
from typing import Any

from tests.support.processes import RedisServer, running_servers
from tests.support.raw_client import Client, Player, player
from tests.support.waiting import eventually

_names = itertools.count(1)


async def signed_in(url: str, prefix: str) -> Client:
    handle = f"{prefix}{next(_names)}"
    client = await player(url, handle)
    made = await client.ok("take_handle", handle=handle)
    client.name, client.token = handle, made["device_token"]
    return client


def queued_players(redis: RedisServer) -> set[str]:
    return {p.decode() for p in redis("ZRANGE", "klondike:quick:queue", 0, -1)}


async def test_players_on_two_nodes_race_in_one_rated_room(
    redis: RedisServer, tmp_path: Path
) -> None:
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann, bob = await signed_in(a.url, "Ann"), await signed_in(b.url, "Bob")
        await ann.ok("queue", ladder="classic-draw1")
        assert queued_players(redis) == {ann.player}
        queued = await bob.ok("queue", ladder="classic-draw1")
        assert queued["position"] == 2  # behind Ann, who queued on the other node
        got = [await c.notice("matched") for c in (ann, bob)]
        assert got[0]["room"]["code"] == got[1]["room"]["code"]
        assert got[0]["starts_at"] == got[1]["starts_at"]
        assert all(m["rated"] and m["room"]["settings"]["rated"] for m in got)
        assert {p["id"] for p in got[1]["room"]["players"]} == {ann.player, bob.player}
        assert queued_players(redis) == set()
        # Both race in it once the countdown is over, wherever the room runs.
        players = [Player(ann), Player(bob)]
        for p in players:
            p.view = (await p.client.event("deal_started", timeout=20))["deal"]["board"]
        await asyncio.gather(*(p.play(1, 1) for p in players))
        forecast = await bob.ok("forecast")
        assert forecast["ladder"] == "classic-draw1"
        # In the room now: no queue on either node.
        for c in (ann, bob):
            refused = await c.request("queue", ladder="classic-draw3")
            assert refused["code"] == "already_in_room", refused


async def test_leaving_the_queue_on_one_node_is_seen_by_the_other_at_once(
    redis: RedisServer, tmp_path: Path
) -> None:
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann, cid = await signed_in(a.url, "Ann"), await signed_in(a.url, "Cid")
        bob = await signed_in(b.url, "Bob")
        await ann.ok("queue", ladder="classic-draw3")
        assert (await ann.ok("unqueue"))["type"] == "ok"
        assert queued_players(redis) == set()
        # Bob queues on B right after: Ann, had she been left in the queue,
        # would be his rival at once. Cid's queuing on A matches him instead.
        assert (await bob.ok("queue", ladder="classic-draw3"))["position"] == 1
        await cid.ok("queue", ladder="classic-draw3")
        room = (await bob.notice("matched"))["room"]
        assert {p["id"] for p in room["players"]} == {bob.player, cid.player}
        await ann.caught_up()
        assert ann.notices("matched") == []
        # One queue at a time, across nodes: Ann, queued on A, cannot queue
        # again through B (a second device of hers there).
        await ann.ok("queue", ladder="classic-draw1")
        phone = await Client.open(b.url)
        welcome = await phone.ok("hello", version=2, device=ann.token)
        assert welcome["player"] == ann.player
        refused = await phone.request("queue", ladder="classic-draw3")
        assert refused["code"] == "already_queued", refused


async def test_churn_across_nodes_never_seats_a_player_twice(
    redis: RedisServer, tmp_path: Path
) -> None:
    """Ten players, five on each node, join and leave the queue at random, then
    all that are left wait: every one of them is seated once, in one room; the
    last one alone (if any) leaves."""
    rng = random.Random(24)
    with running_servers(redis, tmp_path, 2) as nodes:
        clients = [await signed_in(nodes[i % 2].url, f"C{i}-") for i in range(10)]
        plans = [rng.randint(1, 4) for _ in clients]
        leaves = [[rng.random() < 0.5 for _ in range(4)] for _ in clients]

        async def churn(i: int, c: Client) -> bool:
            """Queue and leave as planned; True when left out of the queue."""
            for n in range(plans[i]):
                reply = await c.request("queue", ladder="thoughtful-draw3")
                if reply["type"] == "error":  # matched by now: the room follows
                    assert reply["code"] == "already_in_room", reply
                    return False
                if not leaves[i][n]:
                    return False
                left = await c.request("unqueue")
                if left["type"] == "error":  # matched meanwhile
                    assert left["code"] == "not_queued", left
                    return False
            return True

        out = await asyncio.gather(*(churn(i, c) for i, c in enumerate(clients)))
        for c, left in zip(clients, out, strict=True):
            if left:  # everyone left out waits now
                reply = await c.request("queue", ladder="thoughtful-draw3")
                assert reply["type"] == "queued" or reply["code"] == "already_in_room", reply
        await eventually(lambda: len(queued_players(redis)) <= 1, what="the queue to settle")
        alone = [c for c in clients if c.player in queued_players(redis)]
        for c in alone:
            left = await c.request("unqueue")
            if left["type"] == "ok":
                clients.remove(c)
        matched: dict[str, dict[str, Any]] = {}
        for c in clients:
            matched[str(c.player)] = await c.notice("matched", timeout=20)
            await c.caught_up()
            assert len(c.notices("matched")) == 1, c.notices("matched")
        rooms: dict[str, set[str]] = {}
        for pid, m in matched.items():
            seated = {p["id"] for p in m["room"]["players"]}
            assert pid in seated
            assert rooms.setdefault(m["room"]["code"], seated) == seated
        everyone = [pid for seated in rooms.values() for pid in seated]
        assert len(everyone) == len(set(everyone))  # nobody in two rooms
        assert set(everyone) == set(matched)  # every seated player was told
        assert len(everyone) >= 9
        assert queued_players(redis) == set()


async def test_a_dead_nodes_players_leave_the_queue(redis: RedisServer, tmp_path: Path) -> None:
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann = await signed_in(a.url, "Ann")
        bob, cid = await signed_in(b.url, "Bob"), await signed_in(b.url, "Cid")
        await ann.ok("queue", ladder="double-draw1")
        a.kill()  # nobody refreshes Ann's entry any more: it lapses
        await eventually(
            lambda: redis("EXISTS", f"klondike:quick:entry:{ann.player}") == 0,
            what="Ann's entry to lapse",
        )
        assert (await bob.ok("queue", ladder="double-draw1"))["position"] == 1
        await cid.ok("queue", ladder="double-draw1")
        room = (await bob.notice("matched"))["room"]
        assert {p["id"] for p in room["players"]} == {bob.player, cid.player}
        assert queued_players(redis) == set()
