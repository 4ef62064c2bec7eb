"""Rooms survive the server: a new process rebuilds them from the store's logs.

Both a graceful restart and a crash (the store's contents copied mid-game, as a
process kill would leave them) are covered: players resume with their tokens onto
the same boards, seq numbering goes on, and play continues.
"""

from __future__ import annotations

import copy

from server.store.memory import MemoryStore
from tests.support.inprocess import FakeClock, running_server
from tests.support.raw_client import Client, player


async def _game(server: object) -> tuple[Client, Client, str]:
    ann = await player(server, "Ann")  # type: ignore[arg-type]
    bob = await player(server, "Bob")  # type: ignore[arg-type]
    code = (await ann.ok("create_room", settings={"draw": 3}))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    await ann.ok("start")
    for c in (ann, bob):
        await c.event("deal_started")
    for _ in range(4):
        await ann.ok("move", deal=1, move={"kind": "draw"})
    await bob.ok("move", deal=1, move={"kind": "draw"})
    return ann, bob, code


async def test_restart_and_crash_recovery() -> None:
    store = MemoryStore()
    clock = FakeClock()
    async with running_server(store=store, clock=clock) as first:
        ann, bob, code = await _game(first)
        ann_board = (await ann.ok("snapshot"))["room"]["deal"]["board"]
        crashed = copy.deepcopy(store)  # as a kill -9 would leave it: both online
        seq_before = (await ann.ok("snapshot"))["room"]["seq"]
    assert await ann.closed() == 1001

    for kept in (store, crashed):
        async with running_server(store=kept, clock=clock) as second:
            assert code in second.service.rooms
            back = await Client.open(second.url)
            welcome = await back.ok("hello", version=2, token=ann.token)
            room = welcome["room"]
            assert welcome["player"] == ann.player and room["code"] == code
            assert room["deal"]["board"] == ann_board
            assert room["seq"] > seq_before
            online = {p["id"]: p["connected"] for p in room["players"]}
            assert online == {ann.player: True, bob.player: False}
            reply = await back.ok("move", deal=1, move={"kind": "draw"})
            assert reply["outcome"]["moves"] == 5
            bob2 = await Client.open(second.url)
            await bob2.ok("hello", version=2, token=bob.token)
            await back.event("members")
            await bob2.ok("move", deal=1, move={"kind": "draw"})
            progress = await back.event("progress", player=bob.player)
            assert progress["progress"]["moves"] == 2
