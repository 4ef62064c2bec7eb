"""The break between deals and late friends, through real sockets.

In-process with a fake clock (the break runs out when the test moves the clock,
never by waiting), and on the embedded store as a real process killed with
kill -9 in the middle of a break: the break, who is ready and a late friend's seat
are records, so they come back, and the next deal still starts on time."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from client.players import rounds_played, run_bots
from server.store.memory import MemoryStore
from tests.support.embedded import EmbeddedServer
from tests.support.inprocess import FakeClock, running_server
from tests.support.raw_client import Client, player


async def nothing_more(clock: FakeClock, client: Client, kind: str) -> None:
    """No ``kind`` event came of the clock's last move (every timer saw it)."""
    await clock.settled()
    await client.caught_up()
    assert client.unseen(kind) == []


async def room_of(server: Any, **settings: Any) -> tuple[Client, Client, Client, str]:
    """Ann (host) and Bob playing deal 1 of a three-deal round, Sam watching."""
    ann, bob, sam = [await player(server, n) for n in ("Ann", "Bob", "Sam")]
    created = await ann.ok("create_room", settings={"deals_per_round": 3, **settings})
    code = created["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    await sam.ok("join_room", code=code, role="spectator")
    await ann.ok("start")
    for c in (ann, bob, sam):
        await c.event("deal_started")
    return ann, bob, sam, code


async def end_deal(ann: Client, bob: Client, deal: int = 1) -> None:
    await ann.ok("move", deal=deal, n=ann.next_n(deal), move={"kind": "draw"})
    await ann.ok("move", deal=deal, n=ann.next_n(deal), move={"kind": "resign"})
    await bob.ok("move", deal=deal, n=bob.next_n(deal), move={"kind": "resign"})


async def test_the_break_shows_the_results_and_ends_by_the_clock() -> None:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        ann, bob, sam, _code = await room_of(server)
        ended = clock.now()
        await end_deal(ann, bob)
        for c in (ann, bob, sam):
            over = await c.event("deal_over")
            assert over["deal"]["number"] == 1 and over["deal"]["seed"]
            assert set(over["deal"]["boards"]) == {ann.player, bob.player}
            brk = await c.event("break_started")
            assert (brk["deal"], brk["next_deal_at"], brk["ready"]) == (1, ended + 10_000, [])
            assert brk["seq"] == over["seq"] + 2  # deal_over, sheet, break_started
        room = (await sam.ok("snapshot"))["room"]
        assert room["state"] == "break" and room["next_deal_at"] == ended + 10_000
        assert room["ready"] == [] and [h["number"] for h in room["history"]] == [1]
        assert room["history"][0]["summary"][ann.player]["logged"] == 2  # draw, resign
        refused = await ann.request("move", deal=1, n=ann.next_n(1), move={"kind": "draw"})
        assert refused["code"] == "deal_over"  # the break takes no moves

        clock.advance(9_999)
        await nothing_more(clock, sam, "deal_started")
        clock.advance(1)
        for c in (ann, bob, sam):
            started = await c.event("deal_started")
            assert started["deal"]["number"] == 2 and started["deal"]["started_at"] == clock.now()
        assert (await ann.ok("snapshot"))["room"]["state"] == "playing"


async def test_ready_from_every_player_starts_the_next_deal_at_once() -> None:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        ann, bob, sam, _code = await room_of(server)
        await end_deal(ann, bob)
        await sam.event("break_started")
        assert (await sam.request("ready"))["code"] == "not_a_player"
        await ann.ok("ready")
        seen = await sam.event("ready")
        assert (seen["player"], seen["ready"]) == (ann.player, [ann.player])
        await ann.ok("ready")  # twice: nothing more
        await nothing_more(clock, sam, "ready")
        assert (await bob.ok("snapshot"))["room"]["ready"] == [ann.player]
        await bob.ok("ready")
        assert (await sam.event("ready"))["ready"] == [ann.player, bob.player]
        started = await sam.event("deal_started")  # no clock moved
        assert started["deal"]["number"] == 2 and started["deal"]["started_at"] == clock.now()
        assert (await ann.request("ready"))["code"] == "wrong_state"  # no break now


async def test_the_host_moves_on_and_break_seconds_applies_at_once() -> None:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        ann, bob, sam, _code = await room_of(server)
        assert (await bob.request("next_deal"))["code"] == "not_host"
        await ann.ok("next_deal")  # ends deal 1: the break follows
        brk = await sam.event("break_started")
        ended = brk["next_deal_at"] - 10_000
        await ann.ok("next_deal")  # during the break: the next deal, now
        assert (await sam.event("deal_started"))["deal"]["number"] == 2

        await end_deal(ann, bob, 2)
        brk = await sam.event("break_started", deal=2)
        ended = brk["next_deal_at"] - 10_000
        clock.advance(3_000)
        await ann.ok("update_settings", settings={"break_seconds": 30})
        moved = await sam.event("settings")
        assert moved["next_deal_at"] == ended + 30_000 and moved["settings"]["break_seconds"] == 30
        await ann.ok("update_settings", settings={"break_seconds": 2})  # passed: now
        assert (await sam.event("deal_started"))["deal"]["number"] == 3

        await end_deal(ann, bob, 3)  # the round's last deal: no break
        await sam.event("round_over")
        assert sam.unseen("break_started") == []


@pytest.mark.parametrize("value", [-1, 61, "10", True, 1.5, None])
async def test_break_seconds_is_validated(value: Any) -> None:
    async with running_server() as server:
        ann = await player(server, "Ann")
        refused = await ann.request("create_room", settings={"break_seconds": value})
        assert (refused["code"], refused["field"]) == ("bad_setting", "break_seconds")
        room = (await ann.ok("create_room", settings={"break_seconds": 0}))["room"]
        assert room["settings"]["break_seconds"] == 0
        refused = await ann.request("update_settings", settings={"break_seconds": value})
        assert (refused["code"], refused["field"]) == ("bad_setting", "break_seconds")
        default = await player(server, "Bob")
        made = (await default.ok("create_room"))["room"]
        assert made["settings"]["break_seconds"] == 10


async def test_a_late_friend_sits_out_and_plays_the_next_deal() -> None:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        ann, bob, sam, code = await room_of(server)
        dan = await player(server, "Dan")
        info = await dan.ok("room_info", code=code.lower())
        assert info["state"] == "playing" and info["players"] == ["Ann", "Bob"]
        assert (info["seats"], info["deal"], info["deals"]) == (6, 1, 3)
        assert (await dan.request("room_info", code="ZZZZZZ"))["code"] == "no_such_room"
        joined = (await dan.ok("join_room", code=code, role="player"))["room"]
        assert joined["state"] == "playing" and joined["deal"]["board"] is None
        # Sitting this deal out, Dan sees it as the spectators do (live boards
        # here), never more; once dealt in, no rival's board (below).
        watched = (await sam.ok("snapshot"))["room"]["deal"]["boards"]
        assert watched and joined["deal"]["boards"] == watched
        me = next(p for p in joined["players"] if p["id"] == dan.player)
        assert me["joining"] is True
        assert dan.player in joined["sheet"]["players"]
        members = await sam.event("members")
        assert [p.get("joining", False) for p in members["players"]] == [False, False, True]
        refused = await dan.request("move", deal=1, n=0, move={"kind": "draw"})
        assert refused["code"] == "wrong_state"  # not dealt into this deal

        await end_deal(ann, bob)  # Dan holds nothing up
        sheet = (await sam.event("sheet", seq=(await sam.event("deal_over"))["seq"] + 1))["sheet"]
        assert sheet["rows"][0]["absent"] == [dan.player]
        assert dan.player not in sheet["rows"][0]["cells"]
        await sam.event("break_started")
        for c in (ann, bob):
            await c.ok("ready")
        await nothing_more(clock, sam, "deal_started")  # Dan is in the round: not yet
        await dan.ok("ready")
        started = await dan.event("deal_started")
        assert started["deal"]["number"] == 2 and started["deal"]["board"] is not None
        assert started["deal"]["boards"] == {}  # a player now: no rival's board mid-deal
        members = await sam.event("members", seq=started["seq"] + 1)
        assert all("joining" not in p for p in members["players"])
        await dan.ok("move", deal=2, n=0, move={"kind": "draw"})


async def test_a_break_survives_a_crash_and_ends_on_time_after_it() -> None:
    store, clock = MemoryStore(), FakeClock()
    async with running_server(store=store, clock=clock) as first:
        ann, bob, sam, _code = await room_of(first)
        await end_deal(ann, bob)
        brk = await sam.event("break_started")
        await ann.ok("ready")
        await sam.event("ready")
        crashed = copy.deepcopy(store)  # as kill -9 leaves it
    async with running_server(store=crashed, clock=clock) as second:
        back = await Client.open(second.url)
        room = (await back.ok("hello", version=2, token=bob.token))["room"]
        assert room["state"] == "break" and room["next_deal_at"] == brk["next_deal_at"]
        assert room["ready"] == [ann.player]
        clock.advance(brk["next_deal_at"] - clock.now())
        started = await back.event("deal_started")
        assert started["deal"]["number"] == 2 and started["deal"]["board"] is not None
        assert started["deal"]["boards"] == {}  # a player now: no rival's board mid-deal


async def test_kill_9_in_a_break_keeps_it_and_the_late_friend(embedded: EmbeddedServer) -> None:
    ann, bob, dan = [await Client.open(embedded.url) for _ in range(3)]
    for client, name in ((ann, "Ann"), (bob, "Bob"), (dan, "Dan")):
        await client.hello(name)
    settings = {"deals_per_round": 2, "break_seconds": 60}
    code = (await ann.ok("create_room", settings=settings))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    await ann.ok("start")
    await ann.event("deal_started")
    await dan.ok("join_room", code=code, role="player")  # mid-deal: joining
    await end_deal(ann, bob)
    brk = await ann.event("break_started")
    await dan.ok("ready")
    await ann.event("ready")

    await embedded.kill()
    await embedded.start()
    resumed = {}
    for c in (ann, bob, dan):
        again = await Client.open(embedded.url)
        resumed[c.player] = (again, (await again.ok("hello", version=2, token=c.token))["room"])
    host, room = resumed[ann.player]
    assert room["state"] == "break" and room["next_deal_at"] == brk["next_deal_at"]
    assert room["ready"] == [dan.player]
    late = next(p for p in room["players"] if p["id"] == dan.player)
    assert late["joining"] is True and dan.player in room["sheet"]["players"]
    assert room["sheet"]["rows"][0]["absent"] == [dan.player]
    # Ann and Bob get ready too: the last one deals deal 2, with Dan in it.
    await host.ok("ready")
    await resumed[bob.player][0].ok("ready")
    dealt = await resumed[dan.player][0].event("deal_started")
    assert dealt["deal"]["number"] == 2 and dealt["deal"]["board"] is not None


async def test_a_bot_joins_a_running_room_and_plays_from_the_next_deal() -> None:
    """``klondike-race bot`` into a running room (client.players.run_bots, the
    command's coroutine): it sits the running deal out and plays the next."""
    async with running_server() as server:
        ann = await player(server, "Ann")
        settings = {"deals_per_round": 2, "break_seconds": 0}
        code = (await ann.ok("create_room", settings=settings))["room"]["code"]
        await ann.ok("start")
        await ann.event("deal_started")
        url = f"ws://127.0.0.1:{server.port}/ws"
        bots = asyncio.create_task(run_bots(url, code, pace=0, stop=rounds_played(1)))
        members = await ann.event("members")
        bot = next(p for p in members["players"] if p["name"] == "bot")
        assert bot["joining"] is True
        await ann.ok("move", deal=1, move={"kind": "resign"})  # the bot held nothing up
        dealt = await ann.event("deal_started")
        assert bot["id"] in dealt["deal"]["progress"]  # dealt in from deal 2
        await ann.ok("move", deal=2, move={"kind": "resign"})
        await ann.event("round_over")
        stats = await asyncio.wait_for(bots, 60)
        assert sum(stats.deals.values()) == 1 and stats.moves > 0
