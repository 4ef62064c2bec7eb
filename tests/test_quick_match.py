"""Quick match through real sockets (docs/protocol.md, "Quick match"): signed-in
players queued on a ladder are matched into one rated room that starts by itself
after the countdown; leaving the queue is instant; one queue or room at a time;
bots offered after 30 s alone. The server's clock is moved by hand."""

from __future__ import annotations

import asyncio
import itertools

from client import connect
from server.matchmaking.match import BOTS_AFTER_S
from server.matchmaking.queues import COUNTDOWN_MS, QUICK_DEALS
from tests.support.inprocess import FakeClock, running_server
from tests.support.raw_client import Client, player, resume
from tests.support.waiting import eventually

_names = itertools.count(1)


async def signed_in(url: str, prefix: str) -> Client:
    handle = f"{prefix}{next(_names)}"
    client = await player(url, handle)
    made = await client.ok("take_handle", handle=handle)
    client.name, client.token = handle, made["device_token"]
    return client


async def refused(client: Client, kind: str, why: str, **fields: object) -> None:
    reply = await client.request(kind, **fields)
    assert (reply["type"], reply.get("code")) == ("error", why), reply


async def test_two_queued_players_race_in_one_rated_room_after_the_countdown() -> None:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        ann, bob = await signed_in(server.url, "Ann"), await signed_in(server.url, "Bob")
        queued = await ann.ok("queue", ladder="thoughtful-draw1")
        assert (queued["type"], queued["position"], queued["waited"]) == ("queued", 1, 0)
        await bob.ok("queue", ladder="thoughtful-draw1")
        got = [await c.notice("matched") for c in (ann, bob)]
        assert got[0]["room"]["code"] == got[1]["room"]["code"]
        room = got[0]["room"]
        assert got[0]["rated"] is True and room["settings"]["rated"] is True
        assert room["settings"]["variant"] == "thoughtful"
        assert room["settings"]["deals_per_round"] == QUICK_DEALS
        assert {p["id"] for p in room["players"]} == {ann.player, bob.player}
        starts_at = got[0]["starts_at"]
        assert starts_at == clock.now() + COUNTDOWN_MS
        for c in (ann, bob):
            assert (await c.event("countdown"))["starts_at"] == starts_at
        await ann.caught_up()
        assert ann.unseen("deal_started") == []  # not before the countdown is over
        clock.advance(COUNTDOWN_MS)
        for c in (ann, bob):
            assert (await c.event("deal_started"))["deal"]["number"] == 1
        # Seated by the server: room requests are theirs now; no second queue.
        assert (await bob.ok("forecast"))["ladder"] == "thoughtful-draw1"
        await refused(ann, "queue", "already_in_room", ladder="classic-draw1")


async def test_leaving_is_instant_and_one_queue_at_a_time() -> None:
    async with running_server(clock=FakeClock()) as server:
        ann, bob = await signed_in(server.url, "Ann"), await signed_in(server.url, "Bob")
        guest = await player(server, "Gus")
        await refused(guest, "queue", "not_signed_in", ladder="classic-draw1")
        await refused(ann, "queue", "bad_request", ladder="chess-draw1")
        await ann.ok("queue", ladder="classic-draw1")
        await refused(ann, "queue", "already_queued", ladder="classic-draw3")
        await refused(ann, "create_room", "already_queued", settings={})
        assert (await ann.ok("unqueue"))["type"] == "ok"
        await refused(ann, "unqueue", "not_queued")
        # Ann left: Bob waits alone on her ladder, and is matched with nobody.
        await bob.ok("queue", ladder="classic-draw1")
        await bob.caught_up()
        assert bob.notices("matched") == []
        await ann.ok("create_room", settings={})  # out of the queue, free for a room


async def test_bots_are_offered_after_thirty_seconds_alone_unrated() -> None:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        ann = await signed_in(server.url, "Ann")
        await ann.ok("queue", ladder="classic-draw3")
        await refused(ann, "accept_bots", "bots_not_yet")
        clock.advance(int(BOTS_AFTER_S * 1000))
        offered = await ann.notice("bots_offered")
        assert offered["ladder"] == "classic-draw3" and offered["waited"] >= BOTS_AFTER_S
        await ann.ok("accept_bots")
        matched = await ann.notice("matched")
        assert matched["rated"] is False and matched["room"]["settings"]["rated"] is False
        players = matched["room"]["players"]
        assert len(players) == 3
        assert [p for p in players if p["id"] != ann.player and not p.get("bot")] == []
        await ann.event("countdown")
        clock.advance(COUNTDOWN_MS)
        await ann.event("deal_started")


async def test_the_python_client_queues_and_is_seated() -> None:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        ann = await connect(server.url, name="Ann")
        bob = await connect(server.url, name="Bob")
        try:
            await ann.take_handle("AnnQuick")
            await bob.take_handle("BobQuick")
            assert (await ann.queue("classic-draw3"))["position"] == 1
            assert ann.queued == "classic-draw3"
            await bob.queue("classic-draw3")
            rooms = [await c.matched(timeout=10) for c in (ann, bob)]
            assert rooms[0].code == rooms[1].code and rooms[0].settings["rated"] is True
            assert ann.queued is None
            async with asyncio.timeout(10):
                while ann.room is not None and ann.room.starts_at is None:
                    await ann.wait_update()
            clock.advance(COUNTDOWN_MS)
            async with asyncio.timeout(10):
                while bob.room is not None and bob.room.deal is None:
                    await bob.wait_update()
            assert bob.room is not None and bob.room.state == "playing"
        finally:
            await ann.close()
            await bob.close()


async def test_a_closed_connection_leaves_the_queue() -> None:
    async with running_server(clock=FakeClock()) as server:
        ann, bob = await signed_in(server.url, "Ann"), await signed_in(server.url, "Bob")
        await ann.ok("queue", ladder="classic-draw1")
        await ann.close()
        quick = server.service.quick
        await eventually(lambda: ann.player not in quick.entries, what="Ann out of the queue")
        await bob.ok("queue", ladder="classic-draw1")
        await bob.caught_up()
        assert bob.notices("matched") == []


async def test_a_client_back_during_the_countdown_gets_it_in_its_room_view() -> None:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        ann, bob = await signed_in(server.url, "Ann"), await signed_in(server.url, "Bob")
        for c in (ann, bob):
            await c.ok("queue", ladder="classic-draw1")
        starts_at = (await bob.notice("matched"))["starts_at"]
        assert starts_at == clock.now() + COUNTDOWN_MS
        await bob.close()  # a reload mid-countdown
        back, welcome = await resume(server.url, bob.token)
        assert welcome["room"]["starts_at"] == starts_at
        assert welcome["room"]["state"] == "lobby"
        assert (await back.ok("snapshot"))["room"]["starts_at"] == starts_at
        clock.advance(COUNTDOWN_MS)
        await back.event("deal_started")
        assert (await back.ok("snapshot"))["room"]["starts_at"] is None
        assert (await ann.ok("snapshot"))["room"]["starts_at"] is None
