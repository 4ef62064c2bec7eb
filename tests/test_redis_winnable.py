"""``deals: winnable`` with the Redis store: the nodes share one pool of proven
seeds per rule set, in Redis (a real redis-server). Seeds one node's workers
proved are dealt by the other, no seed is dealt twice across the nodes, the pool
outlives a node, and with Redis away a room is refused rather than dealt an
unproven layout."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from protocol.settings import DealRules
from server.rooms.proofs import ProvenPools, pool_key
from server.store.redis import RedisStore
from tests.support.gated import GatedExecutor
from tests.support.inprocess import running_server
from tests.support.processes import RedisServer
from tests.support.raw_client import Client, player
from tests.support.waiting import TIMEOUT, eventually

BUDGET = 60_000
RULES = DealRules(draw=1)
# Proven for draw one within BUDGET (cheap: about 0.15 s each).
PROVEN = ["dry-pool-0", "dry-pool-1", "dry-pool-2", "dry-pool-5", "dry-pool-6", "dry-pool-8"]


async def test_the_redis_pool_hands_each_seed_out_once_and_outlives_its_node(
    redis: RedisServer,
) -> None:
    key = pool_key(RULES)
    a = await RedisStore.from_url(redis.url, timeout=1.0)
    b = await RedisStore.from_url(redis.url, timeout=1.0)
    try:
        for i in range(40):
            assert await a.put_seed(key, f"s{i}", f"line {i}") == i + 1
        assert await b.seeds_ready(key) == 40
        got = await asyncio.gather(*(s.take_seed(key) for s in (a, b) for _ in range(25)))
        taken = [g for g in got if g is not None]
        assert sorted(taken) == sorted((f"s{i}", f"line {i}") for i in range(40))
        assert got.count(None) == 10
        await a.put_seed(key, "kept", "its line")
        assert redis("TTL", b"klondike:seeds:" + key.encode()) > 3600  # expires unused, a day
    finally:
        await a.close()
        await b.close()
    again = await RedisStore.from_url(redis.url, timeout=1.0)  # a node restarted
    try:
        assert await again.take_seed(key) == ("kept", "its line")
        assert await again.take_seed(key) is None
    finally:
        await again.close()


async def _winnable_room(c: Client) -> None:
    await c.ok("create_room", settings={"deals": "winnable", "deals_per_round": 1})


async def _dealt_seed(c: Client) -> str:
    await c.ok("start")
    await c.event("deal_started")
    await c.ok("move", deal=1, move={"kind": "resign"})
    return str((await c.event("deal_over"))["deal"]["seed"])


async def test_two_nodes_share_one_pool_and_never_deal_a_seed_twice(redis: RedisServer) -> None:
    # Node A's worker proves the PROVEN seeds (then is held back); node B's is
    # held back from the start: every seed B deals was proven by A.
    prover, idle = GatedExecutor(), GatedExecutor()
    prover.allow(len(PROVEN))
    source = itertools.chain(PROVEN, (f"a-later-{i}" for i in itertools.count()))
    pools_a = ProvenPools(
        size=len(PROVEN), max_states=BUDGET, new_seed=lambda: next(source), executor=prover
    )
    b_seeds = (f"b-{i}" for i in itertools.count())
    pools_b = ProvenPools(
        size=len(PROVEN), max_states=BUDGET, new_seed=lambda: next(b_seeds), executor=idle
    )
    store_a = await RedisStore.from_url(redis.url, timeout=1.0)
    store_b = await RedisStore.from_url(redis.url, timeout=1.0)
    try:
        async with (
            running_server(store=store_a, proofs=pools_a) as node_a,
            running_server(store=store_b, proofs=pools_b) as node_b,
        ):
            pools_a.want(RULES)
            await eventually(
                lambda: pools_a.judged["proven"] == len(PROVEN),
                8 * TIMEOUT,  # proofs take a core each: minutes on a busy machine
                what="node A to fill the pool",
            )
            assert await store_b.seeds_ready(pool_key(RULES)) == len(PROVEN)
            assert idle.finished == 0  # node B has proved nothing

            clients: list[Any] = []
            for i in range(len(PROVEN)):
                node = node_a if i % 2 else node_b
                c = await player(node, f"P{i}")
                await _winnable_room(c)
                clients.append(c)
            dealt = await asyncio.gather(*(_dealt_seed(c) for c in clients))
            assert sorted(dealt) == sorted(PROVEN)  # each once, across both nodes
    finally:
        prover.shutdown()
        idle.shutdown()


async def test_redis_away_refuses_the_deal_and_deals_nothing_unproven(
    redis: RedisServer,
) -> None:
    idle = GatedExecutor()  # nothing proven: the pool stays as the test made it
    pools = ProvenPools(size=1, max_states=BUDGET, executor=idle)
    store = await RedisStore.from_url(redis.url, timeout=1.0)
    try:
        async with running_server(store=store, proofs=pools) as server:
            ann = await player(server, "Ann")
            await _winnable_room(ann)
            redis.freeze()
            try:
                refused = await ann.request("start")
            finally:
                redis.thaw()
            assert refused["type"] == "error" and refused["code"] == "storage_unavailable"
            await ann.caught_up()
            assert ann.last("deal_started") is None
    finally:
        idle.shutdown()
