"""Rated rooms through real sockets (docs/protocol.md, "Ratings"): the
``rated`` setting and its refusals, the forecast before a round, the rating
change after it (a player who left mid-way placed last), the ladders."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from server.ratings import keeping
from server.ratings.model import predicted_places, rate_round, shown
from tests.support.inprocess import FakeClock, running_server
from tests.support.raw_client import Client, player

_names = itertools.count(1)
QUICK = {"deals_per_round": 1, "break_seconds": 0}


async def signed_in(url: str, prefix: str) -> Client:
    handle = f"{prefix}{next(_names)}"
    client = await player(url, handle)
    made = await client.ok("take_handle", handle=handle)
    client.name, client.token = handle, made["device_token"]
    return client


def counted(server: Any, name: str) -> float:
    for line in server.metrics.render().decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"no {name} on /metrics")


async def refused(client: Client, kind: str, why: str, **fields: Any) -> dict[str, Any]:
    reply = await client.request(kind, **fields)
    assert (reply["type"], reply.get("code")) == ("error", why), reply
    return reply


async def test_a_rated_room_takes_signed_in_players_only_and_no_bots() -> None:
    async with running_server(clock=FakeClock()) as server:
        ann, bob = await signed_in(server.url, "Ann"), await signed_in(server.url, "Bob")
        guest = await player(server, "Gus")
        # A guest cannot make a rated room, nor take a seat in one.
        no = await refused(guest, "create_room", "not_ratable", settings={"rated": True})
        assert no["players"] == [guest.player]
        code = (await ann.ok("create_room", settings={"rated": True, **QUICK}))["room"]["code"]
        no = await refused(guest, "join_room", "not_ratable", code=code, role="player")
        assert "signed-in" in no["message"]
        await guest.ok("join_room", code=code, role="spectator")  # watching is anyone's
        no = await refused(ann, "add_bot", "not_ratable", pace="fast")
        assert "bots are never rated" in no["message"]
        await bob.ok("join_room", code=code, role="player")

        # Turned on with a guest seated, or with a bot seated: refused, naming them.
        for c in (ann, bob, guest):
            await c.ok("leave_room")
        code2 = (await bob.ok("create_room", settings=QUICK))["room"]["code"]
        await guest.ok("join_room", code=code2, role="player")
        no = await refused(bob, "update_settings", "not_ratable", settings={"rated": True})
        assert no["players"] == [guest.player]
        await guest.ok("leave_room")
        await bob.ok("add_bot", pace="fast")
        no = await refused(bob, "update_settings", "not_ratable", settings={"rated": True})
        assert len(no["players"]) == 1 and no["players"][0].startswith("b")


async def test_a_rated_round_locks_its_rules_and_rates_a_leaver_last() -> None:
    clock = FakeClock(1_800_000_000_000)
    async with running_server(clock=clock) as server:
        ann, bob, dan = [await signed_in(server.url, p) for p in ("Ann", "Bob", "Dan")]
        code = (await ann.ok("create_room", settings=QUICK))["room"]["code"]
        for c in (bob, dan):
            await c.ok("join_room", code=code, role="player")
        await ann.ok("update_settings", settings={"rated": True})

        # Before the round: every player's rating and predicted placing.
        forecast = await bob.ok("forecast")
        assert forecast["ladder"] == "classic-draw1"
        assert set(forecast["players"]) == {ann.player, bob.player, dan.player}
        for seen in forecast["players"].values():
            assert seen["rating"] == 1000 and seen["provisional"] and seen["rounds"] == 0
        expected = predicted_places({}, [ann.player, bob.player, dan.player])
        assert {p: v["predicted"] for p, v in forecast["players"].items()} == expected

        await ann.ok("start")
        await ann.event("deal_started")
        no = await refused(ann, "update_settings", "rated_locked", settings={"draw": 3})
        assert no["field"] == "draw"
        await refused(ann, "update_settings", "rated_locked", settings={"rated": False})
        await refused(ann, "update_settings", "rated_locked", settings={"scoring": "vegas"})
        await ann.ok("update_settings", settings={"break_seconds": 5})  # not the game's
        late = await player(server, "Lea")
        await refused(late, "join_room", "rated_locked", code=code, role="player")

        await dan.ok("leave_room")  # mid-way: placed last
        clock.advance(1000)
        await ann.ok("move", deal=1, move={"kind": "resign"})
        await bob.ok("move", deal=1, move={"kind": "resign"})
        over = await ann.event("round_over")
        [result] = over["series"]["rounds"]
        assert result["ladder"] == "classic-draw1" and result["left"] == [dan.player]
        changes = (await ann.event("rating_changes"))["changes"]
        assert (await bob.event("rating_changes"))["changes"] == changes

        places = {ann.player: 1, bob.player: 1, dan.player: 3}
        after = rate_round({}, places, over["series"]["rounds"][0]["ended_at"] / 1000)
        for p, r in after.items():
            assert changes[p] == {
                "before": 1000,
                "after": shown(r),
                "change": shown(r) - 1000,
                "rounds": 1,
                "provisional": True,
            }
        assert changes[dan.player]["change"] < 0 < changes[ann.player]["change"]
        assert changes[ann.player] == changes[bob.player]  # tied

        # After the round the rules open again, rated too.
        await ann.ok("update_settings", settings={"draw": 3})
        await ann.ok("update_settings", settings={"rated": False})

        # The ladder: the top, one's own position and those around it, the chart.
        table = await dan.ok("ladder", ladder="classic-draw1")
        order = sorted(after, key=lambda p: (-shown(after[p]), p))
        assert [r["player"] for r in table["top"]] == order
        assert [r["position"] for r in table["top"]] == [1, 2, 3]
        assert table["top"][0]["name"] in (ann.name, bob.name)
        assert table["position"] == 3 and table["around"] == table["top"]
        assert table["friends"] is None
        [point] = table["chart"]
        assert point["rating"] == shown(after[dan.player])
        assert point["key"].startswith(f"{code}-") and point["key"].endswith("/1")
        [rated] = (await dan.ok("profile"))["profile"]["ratings"]
        assert rated == {
            "ladder": "classic-draw1",
            "rating": shown(after[dan.player]),
            "rounds": 1,
            "provisional": True,
            "chart": [[point["t"], point["rating"]]],
        }
        [kept] = (await dan.ok("export_account"))["data"]["ratings"]
        mine = after[dan.player]
        assert kept == {
            "ladder": "classic-draw1",
            "mu": mine.mu,
            "sigma": mine.sigma,
            "rounds": 1,
            "last_played": mine.last_played,
            "chart": [point],
        }
        empty = await dan.ok("ladder", ladder="classic-draw3")
        assert empty["top"] == [] and empty["position"] is None and empty["chart"] == []


async def test_friends_only_ladder_and_the_same_address_counter() -> None:
    async with running_server(clock=FakeClock(1_800_000_000_000)) as server:
        ann, bob, cat = [await signed_in(server.url, p) for p in ("Ann", "Bob", "Cat")]
        code = (await ann.ok("create_room", settings={"rated": True, **QUICK}))["room"]["code"]
        for c in (bob, cat):
            await c.ok("join_room", code=code, role="player")
        await ann.ok("start")
        await ann.event("deal_started")
        for c in (ann, bob, cat):
            await c.ok("move", deal=1, move={"kind": "resign"})
        await ann.event("rating_changes")
        # Three players from one address (every client here is 127.0.0.1): three
        # pairs for fair play's counter, none of them repeated yet.
        assert counted(server, "klondike_rated_same_address_total") == 3
        assert counted(server, "klondike_rated_same_address_repeats_total") == 0
        for _ in range(2):  # the same three again, twice: repeated pairs
            await ann.ok("rematch")
            await ann.event("deal_started")
            for c in (ann, bob, cat):
                await c.ok("move", deal=1, move={"kind": "resign"})
            await ann.event("rating_changes")
        assert counted(server, "klondike_rated_same_address_total") == 9
        assert counted(server, "klondike_rated_same_address_repeats_total") == 3
        await ann.ok("befriend", handle=bob.name)
        await bob.ok("answer_friend", handle=ann.name, accept=True)
        table = await ann.ok("ladder", ladder="classic-draw1", friends=True)
        assert {r["player"] for r in table["friends"]} == {ann.player, bob.player}
        assert len(table["top"]) == 3


async def test_a_ladders_names_are_read_in_one_store_call_per_table() -> None:
    async with running_server(clock=FakeClock(1_800_000_000_000)) as server:
        people = [await signed_in(server.url, p) for p in ("Ann", "Bob", "Cat", "Dan")]
        ann = people[0]
        code = (await ann.ok("create_room", settings={"rated": True, **QUICK}))["room"]["code"]
        for c in people[1:]:
            await c.ok("join_room", code=code, role="player")
        await ann.ok("start")
        await ann.event("deal_started")
        for c in people:
            await c.ok("move", deal=1, move={"kind": "resign"})
        await ann.event("rating_changes")
        store = server.service.accounts
        calls: dict[str, int] = {"handles": 0, "account_by_player": 0}
        for name in calls:
            real = getattr(store, name)

            def counting(*args: Any, _real: Any = real, _name: str = name) -> Any:
                calls[_name] += 1
                return _real(*args)

            setattr(store, name, counting)
        table = await ann.ok("ladder", ladder="classic-draw1")
        assert {r["name"] for r in table["top"]} == {c.name for c in people}
        assert len(table["top"]) == 4 and table["around"] == table["top"]
        assert calls == {"handles": 2, "account_by_player": 0}  # the top, and around one


async def rated_round_over(url: str) -> tuple[list[Client], str]:
    """Three signed-in players in a rated room of one deal, each resigned: the
    round is over, its rating being applied."""
    people = [await signed_in(url, p) for p in ("Ann", "Bob", "Cat")]
    ann = people[0]
    code = (await ann.ok("create_room", settings={"rated": True, **QUICK}))["room"]["code"]
    for c in people[1:]:
        await c.ok("join_room", code=code, role="player")
    await ann.ok("start")
    await ann.event("deal_started")
    for c in people:
        await c.ok("move", deal=1, move={"kind": "resign"})
    await ann.event("round_over")
    return people, code


def held_ratings(server: Any) -> tuple[asyncio.Event, asyncio.Event]:
    """The account store's application of a rated round held at a gate: (asked,
    open)."""
    store = server.service.accounts
    real = store.apply_rated_round
    asked, gate = asyncio.Event(), asyncio.Event()

    async def apply(*args: Any) -> Any:
        asked.set()
        await gate.wait()
        return await real(*args)

    store.apply_rated_round = apply
    return asked, gate


async def test_a_forecast_waits_for_the_round_being_applied() -> None:
    async with running_server(clock=FakeClock(1_800_000_000_000)) as server:
        asked, gate = held_ratings(server)
        keeper = server.service.ratings
        real_settled = keeper.settled_for

        async def settled_for(players: Any) -> bool:
            # The forecast is asked while the round is still being applied;
            # let the application go on from here.
            assert asked.is_set() and not gate.is_set()
            gate.set()
            return bool(await real_settled(players))

        keeper.settled_for = settled_for
        bob = (await rated_round_over(server.url))[0][1]
        await asked.wait()
        forecast = await bob.ok("forecast")
        assert gate.is_set()
        assert forecast["pending"] is False
        assert {v["rounds"] for v in forecast["players"].values()} == {1}
        changes = (await bob.event("rating_changes"))["changes"]
        assert {p: v["rating"] for p, v in forecast["players"].items()} == {
            p: c["after"] for p, c in changes.items()
        }


async def test_a_forecast_says_when_the_round_is_still_being_applied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(keeping, "SETTLE_S", 0.0)  # the store away for good, as it were
    async with running_server(clock=FakeClock(1_800_000_000_000)) as server:
        asked, gate = held_ratings(server)
        bob = (await rated_round_over(server.url))[0][1]
        await asked.wait()
        forecast = await bob.ok("forecast")
        assert forecast["pending"] is True
        assert {v["rounds"] for v in forecast["players"].values()} == {0}
        gate.set()
        await bob.event("rating_changes")
        again = await bob.ok("forecast")
        assert again["pending"] is False
        assert {v["rounds"] for v in again["players"].values()} == {1}
