"""``deals: winnable`` over real sockets: the room deals a proven seed, its revealed
line replays to a win in the engine, and proving never stalls another race."""

from __future__ import annotations

import asyncio

from protocol.proof import proof_from_wire
from protocol.settings import DealRules
from server.rooms.proofs import ProvenPools

from .server_support import Seeds, player, running_server

BUDGET = 60_000


async def test_a_winnable_room_deals_a_proven_layout_and_reveals_its_line() -> None:
    pools = ProvenPools(size=1, max_states=BUDGET)
    async with running_server(proofs=pools, draw_seed=Seeds()) as server:
        ann = await player(server, "Ann")
        bob = await player(server, "Bob")
        joined = await ann.ok("create_room", settings={"draw": 3, "deals_per_round": 1})
        code = joined["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        refused = await ann.request(
            "update_settings", settings={"deals": "winnable", "variant": "double"}
        )
        assert refused["type"] == "error" and refused["code"] == "bad_setting"
        assert refused["field"] == "variant" and "double" in refused["message"]
        await ann.ok("update_settings", settings={"deals": "winnable"})
        refused = await ann.request("update_settings", settings={"variant": "double"})
        assert refused["code"] == "bad_setting" and refused["field"] == "variant"

        # Meanwhile, a race with random deals in another room: every move answered
        # while the pool fills in a worker process.
        cat = await player(server, "Cat")
        other = (await cat.ok("create_room", settings={"deals_per_round": 1}))["room"]["code"]
        await cat.ok("start")
        answered = 0
        for i in range(30):
            kind = "recycle" if i % 25 == 24 else "draw"  # 24 cards in the stock
            reply = await cat.request("move", deal=1, move={"kind": kind})
            assert reply["type"] == "moved", reply
            answered += 1
            await asyncio.sleep(0)
        assert answered == 30 and other != code

        await ann.ok("start")  # answered once a proven seed is ready
        started = await bob.event("deal_started")
        assert "proof" not in started["deal"] and "seed" not in started["deal"]
        await ann.ok("move", deal=1, move={"kind": "resign"})
        await bob.ok("move", deal=1, move={"kind": "resign"})
        over = await bob.event("deal_over")
        deal = over["deal"]
        rules = DealRules(draw=3)
        proof = proof_from_wire(deal["seed"], rules, deal["proof"])
        assert proof.moves and deal["proof"]["difficulty"] == proof.difficulty
        assert deal["proof"]["length"] == len(proof.moves)
        assert deal["proof"]["passes"] == proof.passes
        assert pools.judged["proven"] >= 1
        metrics = server.metrics.render().decode()
        assert 'klondike_winnable_layouts_total{verdict="proven"}' in metrics
