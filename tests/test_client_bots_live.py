"""Bots play a whole round on a live server; so does the ``bot`` command."""

from __future__ import annotations

import asyncio

from client import connect
from client.players import BotPlayer, rounds_played, run_bots
from tests.support.processes import bot_command
from tests.support.sessions import until

FINISHED = {"won", "resigned", "dead"}


async def test_bots_finish_a_round_of_three_deals(live_url: str) -> None:
    async with connect(live_url, name="Host") as host:
        room = await host.create_room({"variant": "thoughtful", "deals_per_round": 3})
        crowd = asyncio.create_task(run_bots(live_url, room.code, 2, pace=0, stop=rounds_played(1)))
        await until(host, lambda r: len(r.players) == 3)
        player = BotPlayer(host, pace=0, stop=rounds_played(1))
        await host.start()
        await asyncio.wait_for(asyncio.gather(player.play(), crowd), 60)
        stats = crowd.result()
        sheet = host.room.sheet if host.room else None
        assert host.room and host.room.state == "round_over" and sheet
        assert len(sheet["rows"]) == 3
        for row in sheet["rows"]:
            assert {c["status"] for c in row["cells"].values()} <= FINISHED
            assert len(row["cells"]) == 3
        assert sum(stats.deals.values()) == 6 and stats.unacknowledged == 0
        assert player.stats.moves > 0 and not player.stats.errors


async def test_the_bot_command_joins_and_plays(live_url: str) -> None:
    async with connect(live_url, name="Host") as host:
        room = await host.create_room({"deals_per_round": 1, "variant": "thoughtful"})
        proc = await bot_command(live_url, room.code, "--count", "2")
        await until(host, lambda r: len(r.players) == 3)
        await host.start()
        await until(host, lambda r: r.my_board is not None)
        await host.resign()
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        assert "moves" in out.decode()
        await until(host, lambda r: r.state == "round_over")
