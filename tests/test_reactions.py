"""Reactions (docs/protocol.md ``react``) over real sockets: a member's tap reaches
the room as a ``reaction`` event carrying the seq of the last event, and nothing
is recorded; only the named few are taken; while a deal runs a spectator's
reaches only the spectators (it could be news of a rival's board); an address
has so many a minute, and a new connection or session does not give it more."""

from __future__ import annotations

from dataclasses import replace

from client import connect
from server.app import RaceServer
from server.store.memory import MemoryStore
from tests.support.inprocess import UNLIMITED, running_server
from tests.support.raw_client import Client, player


async def room_of_four(server: RaceServer) -> tuple[Client, Client, Client, Client, str]:
    """Ann (host) and Bob playing, Sam and Tim watching, in the lobby."""
    ann, bob, sam, tim = [await player(server, n) for n in ("Ann", "Bob", "Sam", "Tim")]
    code = (await ann.ok("create_room"))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    for c in (sam, tim):
        await c.ok("join_room", code=code, role="spectator")
    return ann, bob, sam, tim, code


async def test_a_reaction_reaches_the_room_and_is_not_recorded() -> None:
    store = MemoryStore()
    async with running_server(store=store) as server:
        ann, bob, sam, tim, code = await room_of_four(server)
        for c in (ann, bob, sam, tim):
            await c.caught_up()
        seq = ann.last("members")["seq"]  # type: ignore[index]
        logged = len(await store.load(code))

        assert (await ann.ok("react", reaction="clap"))["type"] == "ok"
        for c in (ann, bob, sam, tim):
            got = await c.event("reaction")
            assert got == {
                "type": "reaction", "seq": seq, "aside": True, "player": ann.player,
                "reaction": "clap",
            }  # fmt: skip
        assert len(await store.load(code)) == logged  # nothing recorded
        # The room's next event numbers on from the last one, as after a tick.
        await bob.ok("leave_room")
        assert (await ann.event("members"))["seq"] == seq + 1


async def test_only_the_named_reactions_and_only_members() -> None:
    async with running_server() as server:
        ann, _bob, _sam, _tim, _code = await room_of_four(server)
        for bad in ({"reaction": "poop"}, {"reaction": 3}, {}):
            refused = await ann.request("react", **bad)
            assert refused["code"] == "bad_request", refused
        outsider = await player(server, "Out")
        assert (await outsider.request("react", reaction="wave"))["code"] == "not_in_room"
        await ann.caught_up()
        assert ann.unseen("reaction") == []


async def test_while_a_deal_runs_a_spectators_reaction_reaches_only_spectators() -> None:
    async with running_server() as server:
        ann, bob, sam, tim, _code = await room_of_four(server)
        await ann.ok("start")
        for c in (ann, bob, sam, tim):
            await c.event("deal_started")

        await sam.ok("react", reaction="wow")
        for c in (sam, tim):
            assert (await c.event("reaction"))["player"] == sam.player
        await bob.ok("react", reaction="fire")  # a player's reaches everyone
        for c in (ann, bob, sam, tim):
            assert (await c.event("reaction"))["player"] == bob.player
        for c in (ann, bob):
            await c.caught_up()
            assert [e["player"] for e in c.events if e["type"] == "reaction"] == [bob.player]

        # Once the deal is over the spectators' reactions reach everyone again.
        for c in (ann, bob):
            await c.ok("move", deal=1, move={"kind": "resign"})
        await ann.event("deal_over")
        await tim.ok("react", reaction="gg")
        for c in (ann, bob, sam):
            assert (await c.event("reaction"))["player"] == tim.player


async def test_an_address_has_so_many_reactions_a_minute_however_it_reconnects() -> None:
    limits = replace(UNLIMITED, reactions_per_minute=3)
    async with running_server(limits=limits) as server:
        ann, bob, _sam, _tim, _code = await room_of_four(server)
        for _ in range(3):
            await ann.ok("react", reaction="clap")
        refused = await ann.request("react", reaction="clap")
        assert (refused["code"], refused["limit"]) == ("limit_reached", "reactions")
        # Another member from the same address, and a new connection of Ann's.
        assert (await bob.request("react", reaction="clap"))["code"] == "limit_reached"
        await ann.close()
        again = await Client.open(server.url)
        await again.ok("hello", version=2, token=ann.token)
        assert (await again.request("react", reaction="clap"))["code"] == "limit_reached"
        await again.caught_up()
        assert len(again.unseen("reaction")) == 0


async def test_the_python_client_reacts_and_hears_reactions() -> None:
    async with running_server() as server:
        url = f"ws://127.0.0.1:{server.port}/ws"
        async with connect(url, name="Ann") as ann, connect(url, name="Bob") as bob:
            room = await ann.create_room()
            await bob.join_room(room.code)
            events = bob.events()  # subscribed from here on
            await ann.react("wave")
            event = await anext(e async for e in events if e.type == "reaction")
            assert ann.room is not None and bob.room is not None
            assert event["player"] == ann.room.me and event["reaction"] == "wave"
            assert event.seq == bob.room.seq  # the seq of the last event
