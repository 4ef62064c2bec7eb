"""Progress events wait and leave batched (docs/protocol.md "Batched events").

Through real sockets: a player's and a spectator's ``progress`` events are held
back and leave as one ``events`` frame ahead of the next frame that goes at once,
in ``seq`` order, none dropped; so a spectator that keeps every board by the
outcomes ends each stretch of play with exactly the boards a snapshot shows.
A member tunnelled to the room's node from another (server/cluster/relay.py)
gets the same frames: its events wait on the room's node.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from bench.server import UNCAPPED
from client.bot import Bot
from tests.support.inprocess import UNLIMITED, running_server
from tests.support.processes import RedisServer, running_servers
from tests.support.raw_client import JSON, Client, after, player

HELD = dataclasses.replace(UNLIMITED, progress_delay=3600.0)  # only another frame lets them go


async def _room(server: Any, settings: dict[str, Any]) -> tuple[list[Client], list[Client]]:
    """Ann and Bob playing, Sam (msgpack) and Joe (JSON) watching; started."""
    ann = await player(server, "Ann")
    bob = await player(server, "Bob", JSON)
    sam = await player(server, "Sam")
    joe = await player(server, "Joe", JSON)
    code = (await ann.ok("create_room", settings=settings))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    for watcher in (sam, joe):
        await watcher.ok("join_room", code=code, role="spectator")
    await ann.ok("start")
    return [ann, bob], [sam, joe]


def _unlogged(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k != "logged"}


def _seqs(events: list[dict[str, Any]]) -> list[int]:
    return [e["seq"] for e in events]


async def test_progress_waits_and_leaves_in_one_frame_ahead_of_the_next() -> None:
    async with running_server(limits=HELD) as server:
        (ann, bob), watchers = await _room(server, {"deals_per_round": 2})
        started = await watchers[0].event("deal_started")
        await watchers[1].event("deal_started")
        for p in (ann, bob):
            await p.event("deal_started")
        boards = {w.name: dict(started["deal"]["boards"]) for w in watchers}
        for who in (ann, ann, ann, ann, bob, bob, bob, bob):
            reply = await who.request("move", deal=1, move={"kind": "draw"})
            assert reply["type"] == "moved", reply

        # Ann's own replies took her waiting events along; Bob's four moves since
        # wait for her until a frame goes at once: a ping's pong.
        waiting = ann.received
        await ann.caught_up()
        assert ann.received == waiting + 2  # one events frame, then the pong
        assert [e["player"] for e in ann.unseen("progress")][-4:] == [bob.player] * 4

        for watcher in watchers:
            before = watcher.received
            await watcher.caught_up()
            assert watcher.received == before + 2  # all eight moves in one frame, the pong
            moves = [e for e in watcher.events if e["type"] == "progress"]
            assert len(moves) == 8
            first = started["seq"] + 1
            assert _seqs(moves) == list(range(first, first + 8))  # in order, no gap
            kept = boards[watcher.name]
            for event in moves:
                kept[event["player"]] = after(kept[event["player"]], event)
            snap = await watcher.ok("snapshot")
            assert snap["room"]["deal"]["boards"] == kept


async def _play(client: Client, view: dict[str, Any], deal: int, moves: int) -> dict[str, Any]:
    """Up to ``moves`` of the bot's moves, then resign; the board kept by the
    outcomes of the replies."""
    bot = Bot(search_budget=0)
    for _ in range(moves):
        if view["status"] != "playing":
            return view
        reply = await client.request("move", deal=deal, move=bot.decide(view).to_wire())
        assert reply["type"] == "moved", reply
        view = after(view, reply)
    if view["status"] == "playing":
        reply = await client.request("move", deal=deal, move={"kind": "resign"})
        assert reply["type"] == "moved", reply
        view = after(view, reply)
    return view


async def test_a_spectator_ends_every_deal_with_the_exact_boards() -> None:
    settings = {"deals_per_round": 2, "break_seconds": 0}
    async with running_server() as server:  # the default wait: batches as they come
        players, watchers = await _room(server, settings)
        for deal in (1, 2):
            starts = [await c.event("deal_started") for c in players]
            seen = [await w.event("deal_started") for w in watchers]
            # Both play at once, so that their moves' progress events wait together.
            ends = await asyncio.gather(
                *(
                    _play(c, s["deal"]["board"], deal, 25)
                    for c, s in zip(players, starts, strict=True)
                )
            )
            logged = sum(v["logged"] for v in ends)
            for w, dealt in zip(watchers, seen, strict=True):
                kept = dict(dealt["deal"]["boards"])
                for _ in range(logged):  # every move's outcome, in order, checked by its digest
                    event = await w.event("progress", deal=deal)
                    kept[event["player"]] = after(kept[event["player"]], event)
                await w.event("deal_over")
                for c, end in zip(players, ends, strict=True):
                    assert _unlogged(kept[c.player or ""]) == _unlogged(end)


async def test_a_tunnelled_members_progress_waits_on_the_owner_and_leaves_batched(
    redis: RedisServer, tmp_path: Path
) -> None:
    """The room runs on node A; Bob (JSON) plays and Far (msgpack) watches through
    node B. Their progress events wait on A as a local member's do, here until
    another frame takes them along, and cross the tunnel as the one ``events``
    frame each gets, in ``seq`` order, ahead of that frame."""
    held = [*UNCAPPED, "--progress-delay", "3600"]
    with running_servers(redis, tmp_path, 2, held) as (a, b):
        ann = await player(a.url, "Ann")
        bob, far = await player(b.url, "Bob", JSON), await player(b.url, "Far")
        code = (await ann.ok("create_room", settings={"deals_per_round": 2}))["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        await far.ok("join_room", code=code, role="spectator")
        await ann.ok("start")
        started = await far.event("deal_started")
        for p in (ann, bob):
            await p.event("deal_started")
        first = started["seq"] + 1
        for _ in range(4):
            reply = await ann.request("move", deal=1, move={"kind": "draw"})
            assert reply["type"] == "moved", reply

        # Bob's reply takes Ann's four moves along, in one frame right ahead of it.
        before = bob.received
        reply = await bob.request("move", deal=1, move={"kind": "draw"})
        assert reply["type"] == "moved", reply
        assert bob.received == before + 2
        batch = [f.msg for f in bob.frames[-5:-1]]
        assert [e["type"] for e in batch] == ["progress"] * 4
        assert [e["player"] for e in batch] == [ann.player] * 4
        assert _seqs(batch) == list(range(first, first + 4))
        # His own move's progress waits too, and leaves alone as itself.
        before = bob.received
        await bob.caught_up()
        assert bob.received == before + 2
        own = bob.frames[-2].msg
        assert (own["type"], own["player"], own["seq"]) == ("progress", bob.player, first + 4)

        # Far's five, kept by their outcomes, make the boards a snapshot shows.
        before = far.received
        await far.caught_up()
        assert far.received == before + 2
        moves = [e for e in far.events if e["type"] == "progress"]
        assert _seqs(moves) == list(range(first, first + 5))
        kept = dict(started["deal"]["boards"])
        for event in moves:
            kept[event["player"]] = after(kept[event["player"]], event)
        snap = await far.ok("snapshot")
        assert snap["room"]["deal"]["boards"] == kept


async def test_a_tunnelled_members_progress_leaves_when_its_wait_is_over(
    redis: RedisServer, tmp_path: Path
) -> None:
    """At the default wait the owner's timer lets a tunnelled spectator's events
    out: it gets every move while asking nothing."""
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann, far = await player(a.url, "Ann"), await player(b.url, "Far")
        code = (await ann.ok("create_room"))["room"]["code"]
        await far.ok("join_room", code=code, role="spectator")
        await ann.ok("start")
        started = await far.event("deal_started")
        await ann.event("deal_started")
        for _ in range(3):
            reply = await ann.request("move", deal=1, move={"kind": "draw"})
            assert reply["type"] == "moved", reply
        moves = [await far.event("progress", player=ann.player) for _ in range(3)]
        first = started["seq"] + 1
        assert _seqs(moves) == list(range(first, first + 3))
