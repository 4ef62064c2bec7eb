"""A reference race that plays beside a test: no client, however hostile, may
delay, silence or break it (issue: no client can hurt another).

Two players and a spectator in a room of their own; one player draws (and
recycles) over and over while the test runs, and each move must be answered,
and seen by the rival and the spectator. How fast is for bench/, not here: the
race only counts. Its clients may come from an address of their own (through
``X-Forwarded-For``, when the server trusts 127.0.0.1 as a proxy), so that caps
a test puts on its own address do not touch it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from server.app import RaceServer
from tests.support.raw_client import Client


@dataclass
class Race:
    moves: int = 0  # answered with `moved`
    refused: list[dict[str, Any]] = field(default_factory=list)


async def _client(server: RaceServer, name: str, address: str | None) -> Client:
    headers = {"X-Forwarded-For": address} if address else {}
    client = await Client.open(server.url, additional_headers=headers)
    await client.hello(name)
    return client


async def seat_race(ann: Client, bob: Client, sam: Client) -> str:
    """Ann's room with Bob playing and Sam watching, its first deal dealt to all
    three: its code."""
    code: str = (await ann.ok("create_room"))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    await sam.ok("join_room", code=code, role="spectator")
    await ann.ok("start")
    for c in (ann, bob, sam):
        await c.event("deal_started")
    return code


@contextlib.asynccontextmanager
async def beside_a_race(
    server: RaceServer, *, address: str | None = None, at_least: int = 5
) -> AsyncIterator[Race]:
    ann, bob, sam = [await _client(server, n, address) for n in ("Ref-A", "Ref-B", "Ref-S")]
    await seat_race(ann, bob, sam)
    race = Race()
    stop = asyncio.Event()

    async def play() -> None:
        while not stop.is_set() or race.moves < at_least:
            reply = await ann.request("move", deal=1, move={"kind": "draw"})
            if reply["type"] == "error" and reply["code"] == "stock_empty":
                reply = await ann.request("move", deal=1, move={"kind": "recycle"})
            if reply["type"] != "moved":
                race.refused.append(reply)
                return
            race.moves += 1
            for watcher in (bob, sam):
                seen = await watcher.event("progress", player=ann.player)
                assert seen["progress"]["moves"] == reply["outcome"]["moves"]

    task = asyncio.get_running_loop().create_task(play())
    try:
        yield race
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
        for c in (ann, bob, sam):
            await c.close()
    assert race.refused == []
    assert race.moves >= at_least
