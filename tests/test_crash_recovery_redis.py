"""``klondike-race serve --redis`` survives kill -9: a real server process on a private
redis-server, real WebSocket clients, a race mid-deal, the process killed and
started again. Every acknowledged move is still there, boards, scores and sheet are
identical, and the round's clock runs on from the stored timestamps."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.support.processes import RedisServer, running_servers
from tests.support.raw_client import Client, Player, resume


async def stay_in_one_timed_window(client: Client, started_at: int) -> None:
    """Timed scoring takes 2 points per 10 s of the deal: make sure the rest of the
    test runs inside one such window, so two sheets taken seconds apart must agree."""
    elapsed = (await client.ok("ping"))["now"] - started_at
    if elapsed % 10_000 > 3_000:  # wait for the next tick: a window has just begun
        await client.event("sheet", timeout=15, tick=elapsed // 10_000 + 1)


def boards(snapshot: dict[str, Any]) -> dict[str, Any]:
    deal = snapshot["deal"]
    return {"board": deal["board"], "progress": deal["progress"]}


async def test_kill_9_loses_no_acknowledged_move(redis: RedisServer, tmp_path: Path) -> None:
    with running_servers(redis, tmp_path, 1) as (node,):
        ann, bob, sam = [await Client.open(node.url) for _ in range(3)]
        for client, name in ((ann, "Ann"), (bob, "Bob"), (sam, "Sam")):
            await client.hello(name)
        settings = {"scoring": "timed", "time_limit_minutes": 30, "draw": 3}
        code = (await ann.ok("create_room", settings=settings))["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        await sam.ok("join_room", code=code, role="spectator")
        await ann.ok("start")
        players = [Player(ann), Player(bob)]
        for p in players:
            p.view = (await p.client.event("deal_started"))["deal"]["board"]
        started = (await sam.event("deal_started"))["deal"]["started_at"]
        await stay_in_one_timed_window(ann, started)
        await asyncio.gather(*(p.play(1, 25) for p in players))
        before = {c.player: (await c.ok("snapshot"))["room"] for c in (ann, bob, sam)}
        assert all(len(p.acked) >= 10 for p in players)

        node.kill()
        for c in (ann, bob, sam):
            assert await c.closed() == 1006  # no close frame: the process just died
        node.start()  # same port, same Redis: rooms come back from their logs

        after = {}
        for c in (ann, bob, sam):
            _, welcome = await resume(node.url, c.token)
            after[c.player] = welcome["room"]
            assert welcome["player"] == c.player
        for pid, room in after.items():
            old = before[pid]
            assert room["code"] == code and room["seq"] > old["seq"]  # + presence records
            assert room["round_started_at"] == old["round_started_at"]
            assert room["round_ends_at"] == old["round_ends_at"]  # the clock runs on
            assert room["deal"]["started_at"] == old["deal"]["started_at"]
            assert room["deal"]["commitment"] == old["deal"]["commitment"]
            assert boards(room) == boards(old)
            assert room["sheet"] == old["sheet"]  # Timed: same elapsed window, same score
        for p in players:
            mine = after[p.client.player]["deal"]["board"]
            assert mine == p.view  # the last acknowledged board, exactly
            assert mine["moves"] == len(p.acked)
        spectated = after[sam.player]["deal"]["boards"]
        assert spectated == {p.client.player: p.view for p in players}


async def test_moves_in_flight_at_the_kill(redis: RedisServer, tmp_path: Path) -> None:
    """Moves sent but not answered when the process dies may or may not be in the
    log; every answered one is, and the board is exactly the log's."""
    with running_servers(redis, tmp_path, 1) as (node,):
        ann = await Client.open(node.url)
        await ann.hello("Ann")
        await ann.ok("create_room", settings={"deals_per_round": 1})
        await ann.ok("start")
        player = Player(ann)
        player.view = (await ann.event("deal_started"))["deal"]["board"]
        await player.play(1, 5)
        acked: list[dict[str, Any]] = []
        first_ack = asyncio.Event()

        async def draw() -> None:
            reply = await ann.request("move", deal=1, move={"kind": "draw"})
            if reply["type"] == "moved":
                acked.append(reply)
                first_ack.set()

        tasks = [asyncio.create_task(draw()) for _ in range(40)]
        await first_ack.wait()  # the first is answered, the others are on their way
        node.kill()
        await asyncio.gather(*tasks, return_exceptions=True)
        node.start()
        _, welcome = await resume(node.url, ann.token)
        board = welcome["room"]["deal"]["board"]
        assert board["moves"] >= len(player.acked) + len(acked)
        assert board["moves"] >= acked[-1]["outcome"]["moves"]
