"""Friends against a real server process (docs/protocol.md, "Friends"): asking,
answering, links, who sees whom online and where, invitations, and what a
stranger gets to know (nothing private).

Every player here holds an account: a guest session that took a handle, on the
raw protocol client, so the wire is what is tested.
"""

from __future__ import annotations

import base64
import itertools
import time
from dataclasses import replace
from typing import Any

import pytest

from server.accounts.memory import MemoryAccounts
from server.store.redis import RedisStore
from tests.support.inprocess import UNLIMITED, FakeClock, Seeds, running_server
from tests.support.processes import RedisServer, ServerProcess
from tests.support.raw_client import Client, player
from tests.support.solver import board_from_view, solve
from tests.support.waiting import eventually

_names = itertools.count(1)
WIN_SEED = "race-27"  # tests/support/solver.py wins it


async def account(url: str, prefix: str) -> Client:
    """A connected session of a new account with a handle of its own."""
    handle = f"{prefix}{next(_names)}"
    client = await player(url, handle)
    made = await client.ok("take_handle", handle=handle)
    client.name, client.token = handle, made["device_token"]
    return client


async def accounts(url: str, *prefixes: str) -> list[Client]:
    return [await account(url, prefix) for prefix in prefixes]


async def listing(client: Client) -> dict[str, dict[str, Any]]:
    reply = await client.ok("friends")
    assert reply["type"] == "friends"
    return {entry["handle"]: entry for entry in reply["friends"]}


async def befriended(a: Client, b: Client) -> None:
    await a.ok("befriend", handle=b.name)
    await b.ok("answer_friend", handle=a.name, accept=True)


async def refused_with(client: Client, kind: str, code: str, **fields: Any) -> dict[str, Any]:
    reply = await client.request(kind, **fields)
    assert (reply["type"], reply.get("code")) == ("error", code), reply
    return reply


async def test_ask_then_accept(live_server: ServerProcess) -> None:
    ann, bea = await account(live_server.url, "Ann"), await account(live_server.url, "Bea")
    asked = await ann.ok("befriend", handle=bea.name.upper())  # handles match in any case
    assert asked["friends"] == [
        {
            "handle": bea.name,
            "player": bea.player,
            "state": "asked",
            "since": pytest.approx(asked["friends"][0]["since"]),
        }
    ]
    seen = (await listing(bea))[ann.name]
    assert set(seen) == {"handle", "player", "state", "since"}  # no presence, no record
    assert seen["state"] == "asking"
    # Asking again, from either side of a request, makes no second request:
    # the one asked who asks back accepts.
    await ann.ok("befriend", handle=bea.name)
    answered = await bea.ok("befriend", handle=ann.name)
    assert [f["state"] for f in answered["friends"]] == ["friends"]
    for me, other in ((ann, bea), (bea, ann)):
        entry = (await listing(me))[other.name]
        assert entry["state"] == "friends"
        assert entry["online"] is True and "room" not in entry
        assert entry["record"] == {"rounds": 0, "won": 0, "lost": 0}
    await ann.close(), await bea.close()


async def test_decline_and_unfriend(live_server: ServerProcess) -> None:
    ann, bea = await account(live_server.url, "Ann"), await account(live_server.url, "Bea")
    await ann.ok("befriend", handle=bea.name)
    declined = await bea.ok("answer_friend", handle=ann.name, accept=False)
    assert declined["friends"] == []
    assert await listing(ann) == {}
    await refused_with(bea, "answer_friend", "not_friends", handle=ann.name, accept=True)
    # The one who asked may not answer their own request.
    await ann.ok("befriend", handle=bea.name)
    await refused_with(ann, "answer_friend", "not_friends", handle=bea.name, accept=True)
    await bea.ok("answer_friend", handle=ann.name, accept=True)
    assert (await bea.ok("unfriend", handle=ann.name))["friends"] == []
    assert await listing(ann) == {}
    await refused_with(ann, "unfriend", "not_friends", handle=bea.name)
    await refused_with(ann, "befriend", "unknown_handle", handle="Nobody-" + ann.name)
    await refused_with(ann, "befriend", "bad_request", handle=ann.name)
    await ann.close(), await bea.close()


async def test_a_friend_link_befriends_at_once_until_replaced(
    live_server: ServerProcess,
) -> None:
    ann, cal, dan = await accounts(live_server.url, "Ann", "Cal", "Dan")
    made = await ann.ok("friend_link")
    link = made["link"]
    assert made["url"] == f"http://127.0.0.1:{live_server.port}/#friend={link}"
    secret = link.removeprefix("f.")
    assert len(base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))) * 8 >= 128
    assert made["qr"].lstrip().startswith("<svg")
    assert [f["state"] for f in (await cal.ok("befriend", link=link))["friends"]] == ["friends"]
    assert (await listing(ann))[cal.name]["state"] == "friends"
    # A new link replaces the old one, which tells nothing any more.
    newer = (await ann.ok("friend_link"))["link"]
    assert newer != link
    await refused_with(dan, "befriend", "bad_code", link=link)
    await refused_with(dan, "befriend", "bad_code", link="f." + "A" * 32)
    assert (await dan.ok("befriend", link=newer))["friends"][0]["handle"] == ann.name
    await refused_with(ann, "befriend", "bad_request", link=newer)  # one's own link
    for client in (ann, cal, dan):
        await client.close()


async def test_online_and_room_are_shown_only_when_the_friend_allows(
    live_server: ServerProcess,
) -> None:
    ann, bea = await account(live_server.url, "Ann"), await account(live_server.url, "Bea")
    await befriended(ann, bea)
    code = (await bea.ok("create_room"))["room"]["code"]
    entry = (await listing(ann))[bea.name]
    assert (entry["online"], entry["room"]) == (True, code)

    await bea.ok("account_settings", shows_online=False)
    entry = (await listing(ann))[bea.name]
    assert "online" not in entry and "room" not in entry
    assert entry["state"] == "friends"  # still friends: only presence is kept back
    assert (await listing(bea))[ann.name]["online"] is True

    await bea.ok("account_settings", shows_online=True)
    await bea.close()

    async def offline() -> bool:
        return (await listing(ann))[bea.name]["online"] is False

    await eventually(offline, what="Bea seen offline once her connection is gone")
    assert "room" not in (await listing(ann))[bea.name]
    await ann.close()


async def test_an_invitation_reaches_the_friend(live_server: ServerProcess) -> None:
    ann, bea, eve = await accounts(live_server.url, "Ann", "Bea", "Eve")
    await befriended(ann, bea)
    await refused_with(ann, "invite_friend", "not_in_room", handle=bea.name)
    code = (await ann.ok("create_room"))["room"]["code"]
    assert (await ann.ok("invite_friend", handle=bea.name))["type"] == "ok"
    invite = await bea.notice("friend_invite")
    assert invite == {
        "type": "friend_invite",
        "from": ann.name,
        "player": ann.player,
        "room": code,
        "role": "player",
    }
    joined = await bea.ok("join_room", code=invite["room"], role=invite["role"])
    assert joined["room"]["code"] == code
    # A stranger is not invited, and is not told anything of whether one is online.
    await refused_with(ann, "invite_friend", "not_friends", handle=eve.name)
    await eve.caught_up()
    assert eve.notices("friend_invite") == []
    for client in (ann, bea, eve):
        await client.close()


async def test_a_stranger_sees_nothing_private(live_server: ServerProcess) -> None:
    ann, bea, eve = await accounts(live_server.url, "Ann", "Bea", "Eve")
    await befriended(ann, bea)
    code = (await ann.ok("create_room"))["room"]["code"]
    assert await listing(eve) == {}
    asked = await eve.ok("befriend", handle=ann.name)
    assert asked["friends"] == [
        {
            "handle": ann.name,
            "player": ann.player,
            "state": "asked",
            "since": asked["friends"][0]["since"],
        }
    ]
    # Ann sees a request from Eve: no more of Eve than her handle and player id.
    assert set((await listing(ann))[eve.name]) == {"handle", "player", "state", "since"}
    await refused_with(eve, "invite_friend", "not_in_room", handle=ann.name)
    await eve.caught_up()
    everything = " ".join(str(frame.msg) for frame in eve.frames)
    assert code not in everything
    assert ann.token is not None and bea.token is not None
    assert ann.token not in everything and bea.token not in everything
    # A guest has no friends to ask about.
    guest = await player(live_server.url, "Guest")
    await refused_with(guest, "friends", "not_signed_in")
    await refused_with(guest, "befriend", "not_signed_in", handle=ann.name)
    for client in (ann, bea, eve, guest):
        await client.close()


async def test_the_record_against_a_friend_comes_from_the_rounds_raced_together() -> None:
    """Round 1: Ann wins the deal, Bea resigns; round 2 (a rematch): both resign at
    once, a shared first place, which is neither's win. Cal, a friend who never
    raced Ann, has an empty record."""
    clock = FakeClock(time.time_ns() // 1_000_000)
    async with running_server(clock=clock, draw_seed=Seeds(WIN_SEED)) as server:
        ann, bea, cal = await accounts(server.url, "Ann", "Bea", "Cal")
        await befriended(ann, bea)
        await befriended(cal, ann)
        settings = {"variant": "thoughtful", "deals_per_round": 1, "break_seconds": 0}
        code = (await ann.ok("create_room", settings=settings))["room"]["code"]
        await bea.ok("join_room", code=code, role="player")
        await ann.ok("start")
        start = await ann.event("deal_started")
        solution = solve(board_from_view(start["deal"]["board"]))
        assert solution is not None
        for move in solution:
            clock.advance(40)
            assert (await ann.request("move", deal=1, move=move.to_wire()))["type"] == "moved"
        await bea.ok("move", deal=1, move={"kind": "resign"})
        await bea.event("round_over")
        await ann.ok("rematch")  # deals round 2 at once
        await bea.event("deal_started", round=2)
        clock.advance(5000)
        await ann.ok("move", deal=1, move={"kind": "resign"})
        await bea.ok("move", deal=1, move={"kind": "resign"})
        over = await bea.event("round_over")
        assert sorted(over["winners"]) == sorted([ann.player, bea.player])

        async def recorded(me: Client, other: Client, rounds: int) -> dict[str, Any]:
            record: dict[str, Any] = (await listing(me))[other.name]["record"]
            return record if record["rounds"] == rounds else {}

        # The rounds reach each player's history once the room has folded them.
        ann_vs_bea = await eventually(lambda: recorded(ann, bea, 2), what="both rounds kept")
        assert ann_vs_bea == {"rounds": 2, "won": 1, "lost": 0}
        assert await recorded(bea, ann, 2) == {"rounds": 2, "won": 0, "lost": 1}
        assert (await listing(ann))[cal.name]["record"] == {"rounds": 0, "won": 0, "lost": 0}
        for client in (ann, bea, cal):
            await client.close()


async def test_friends_on_two_nodes_see_each_other_and_are_invited(redis: RedisServer) -> None:
    """Ann's socket is on node A, Bea's on node B (one Redis, one account store):
    each sees the other online, and where; an invitation from Ann's room on A
    reaches Bea's socket on B; once Bea's socket is gone, A sees her offline, and
    so it does when a dead node's note says otherwise."""
    shared = MemoryAccounts()

    async def store() -> RedisStore:
        return await RedisStore.from_url(redis.url, timeout=1.0)

    async with (
        running_server(store_factory=store, clustered=True, accounts=shared) as a,
        running_server(store_factory=store, clustered=True, accounts=shared) as b,
    ):
        ann, bea = await account(a.url, "Ann"), await account(b.url, "Bea")
        await befriended(ann, bea)

        async def seen(me: Client, other: Client, online: bool, room: str | None) -> bool:
            entry = (await listing(me))[other.name]
            return entry["online"] is online and entry.get("room") == room

        await eventually(lambda: seen(ann, bea, True, None), what="Bea online, seen from A")
        on_b = (await bea.ok("create_room"))["room"]["code"]
        await eventually(lambda: seen(ann, bea, True, on_b), what="Bea's room, seen from A")
        on_a = (await ann.ok("create_room"))["room"]["code"]
        await eventually(lambda: seen(bea, ann, True, on_a), what="Ann's room, seen from B")

        await ann.ok("invite_friend", handle=bea.name)
        invite = await bea.notice("friend_invite")
        assert (invite["from"], invite["room"], invite["role"]) == (ann.name, on_a, "player")
        await bea.ok("leave_room")
        await bea.ok("join_room", code=invite["room"], role=invite["role"])  # tunnelled to A
        await eventually(lambda: seen(ann, bea, True, on_a), what="Bea in Ann's room")

        await bea.close()
        await eventually(lambda: seen(ann, bea, False, None), what="Bea offline, seen from A")
        # A node that died with Bea's note left behind does not count: nobody
        # listens on its channel.
        assert bea.player is not None
        redis("SET", f"klondike:here:{bea.player}", "a-node-gone", "PX", 60_000)
        assert await seen(ann, bea, False, None)
        await ann.ok("invite_friend", handle=bea.name)  # to nobody, and no harm
        await ann.close()


async def test_an_address_has_so_many_friend_requests_a_minute_however_it_reconnects() -> None:
    """Asking (by handle or link) and inviting spend one allowance per address:
    a new connection, or another account from the same address, finds it spent."""
    async with running_server(limits=replace(UNLIMITED, friend_asks_per_minute=3)) as server:
        ann, bea, cal = await accounts(server.url, "Ann", "Bea", "Cal")
        await ann.ok("befriend", handle=bea.name)
        link = (await cal.ok("friend_link"))["link"]
        await ann.ok("befriend", link=link)
        await bea.ok("answer_friend", handle=ann.name, accept=True)  # answering is free
        await ann.ok("create_room")
        await ann.ok("invite_friend", handle=bea.name)
        refused = await refused_with(ann, "invite_friend", "limit_reached", handle=bea.name)
        assert refused["limit"] == "friend_asks"
        await refused_with(bea, "befriend", "limit_reached", handle=cal.name)
        await ann.close()
        again = await Client.open(server.url)
        await again.ok("hello", version=2, device=ann.token)
        await refused_with(again, "befriend", "limit_reached", handle=cal.name)
        for client in (again, bea, cal):
            await client.close()
