"""A player's record through real sockets: a whole race, then ``profile``,
``history`` and ``past_deal`` tell each player's deals with the placings, scores
and results the room's sheet gave, newest first, in pages; a past deal is
nobody's before it is over, and a stranger's only when its player shows their
record."""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime
from typing import Any

from protocol.settings import Scoring
from server.accounts.profile import CHART_WEEKS
from server.accounts.store import week_start
from tests.support.inprocess import FakeClock, Seeds, running_server
from tests.support.raw_client import Client, player
from tests.support.solver import board_from_view, solve

WIN_SEED = "race-27"  # tests/support/solver.py wins it
OTHER_SEED = "race-28"


async def play(client: Client, deal: int, moves: list[dict[str, Any]], clock: FakeClock) -> None:
    for move in moves:
        clock.advance(40)
        reply = await client.request("move", deal=deal, move=move)
        assert reply["type"] == "moved", (move, reply)


def wall_clock() -> FakeClock:
    """A test clock set to now: replays are kept 90 days by the store's clock."""
    return FakeClock(time.time_ns() // 1_000_000)


async def test_a_race_in_each_players_record() -> None:
    clock = wall_clock()
    async with running_server(clock=clock, draw_seed=Seeds(WIN_SEED, OTHER_SEED)) as server:
        ann = await player(server, "Ann")
        bob = await player(server, "Bob")
        cat = await player(server, "Cat")  # never plays: a stranger to the race
        settings = {"variant": "thoughtful", "deals_per_round": 2, "break_seconds": 0}
        made = clock.now()  # the room's, in its key: a code is drawn again once closed
        code = (await ann.ok("create_room", settings=settings))["room"]["code"]
        room = f"{code}-{made}"
        await bob.ok("join_room", code=code, role="player")
        await ann.ok("start")
        start = await ann.event("deal_started")
        await bob.event("deal_started")
        key1, key2 = f"{room}/1/1", f"{room}/1/2"

        # Deal 1 runs: it is in nobody's record, and its replay is nobody's.
        for who in (ann, bob, cat):
            refused = await who.request("past_deal", key=key1)
            assert refused["code"] == "no_such_deal", refused
        assert (await ann.ok("history"))["deals"] == []

        solution = solve(board_from_view(start["deal"]["board"]))
        assert solution is not None
        await play(ann, 1, [m.to_wire() for m in solution], clock)
        await play(bob, 1, [{"kind": "resign"}], clock)
        ended1 = clock.now() / 1000
        over1 = (await ann.event("deal_over"))["deal"]
        sheet1 = (await ann.event("sheet"))["sheet"]
        # Deal 2: both resign at the same moment: equal, a shared first place.
        await ann.event("deal_started")
        clock.advance(5000)
        await ann.ok("move", deal=2, move={"kind": "resign"})
        await bob.ok("move", deal=2, move={"kind": "resign"})
        ended2 = clock.now() / 1000
        await bob.event("deal_over")
        round_over = await bob.event("round_over")
        rows = round_over["sheet"]["rows"]
        assert rows[0] == sheet1["rows"][0]

        # Each player's deals, newest first, as the sheet and placings have them.
        for who in (ann, bob):
            got = (await who.ok("history"))["deals"]
            assert [d["key"] for d in got] == [key2, key1]
            assert got[1]["placing"] == over1["summary"][who.player]["place"]
            assert got[0]["placing"] == 1 and got[0]["tied"]
            for entry, row, t in zip(got, reversed(rows), (ended2, ended1), strict=True):
                cell = row["cells"][who.player]
                assert entry["score"] == cell["score"] and entry["bonus"] == cell["bonus"]
                assert entry["moves"] == cell["moves"]
                assert entry["room"] == code and entry["round"] == 1
                assert entry["ladder"] == "thoughtful-draw1"
                assert entry["scoring"] == Scoring.STANDARD.value and entry["players"] == 2
                assert entry["t"] == t
        won, lost = (await ann.ok("history"))["deals"][1], (await bob.ok("history"))["deals"][1]
        assert won["result"] == "won" and won["placing"] == 1 and not won["tied"]
        assert won["bonus"] == 100
        assert won["seconds"] == over1["summary"][ann.player]["finished_t"] / 1000
        assert lost["result"] == "resigned" and lost["placing"] == 2 and lost["seconds"] is None
        assert (await ann.ok("history"))["deals"][0]["result"] == "resigned"

        # The profile: totals per rule set, the round, the charts' points.
        profile = (await ann.ok("profile"))["profile"]
        assert profile["handle"] is None  # a guest has a record too
        assert profile["totals"] == [
            {
                "ladder": "thoughtful-draw1",
                "deals": 2,
                "wins": 1,
                "win_rate": 0.5,
                "best_seconds": won["seconds"],
                "average_moves": (won["moves"] + 1) / 2,
            }
        ]
        [played] = profile["rounds"]
        assert played["key"] == f"{room}/1" and played["deals"] == 2
        assert played["total"] == round_over["sheet"]["totals"][ann.player]
        assert played["placing"] == round_over["sheet"]["places"][ann.player]
        assert profile["scores"] == [
            [ended1, won["score"]],
            [ended2, rows[1]["cells"][ann.player]["score"]],
        ]
        assert len(profile["weeks"]) == CHART_WEEKS
        assert profile["weeks"][-1] == [week_start(clock.now() / 1000), 1, 2]
        assert all(w[1:] == [0, 0] for w in profile["weeks"][:-1])

        # A past deal: to its players; a guest's to nobody else.
        replay = (await bob.ok("past_deal", key=key1))["deal"]
        assert replay["seed"] == WIN_SEED and replay["logs"] == over1["logs"]
        assert replay["boards"] == over1["boards"] and replay["summary"] == over1["summary"]
        assert replay["names"] == {ann.player: "Ann", bob.player: "Bob"}
        refused = await cat.request("past_deal", key=key1)
        assert refused["code"] == "no_such_deal"
        refused = await cat.request("profile", handle="nobody-here")
        assert refused["code"] == "unknown_handle"

        # Ann takes a handle: her results as a guest are her account's (it keeps
        # her player id), and an account shows its record by default, so anyone
        # may open her deals and her profile.
        made = await ann.ok("take_handle", handle="Ann")
        assert made["account"]["player"] == ann.player and made["account"]["shows_record"]
        assert (await cat.ok("past_deal", key=key1))["deal"]["seed"] == WIN_SEED
        seen = (await cat.ok("profile", handle="ANN"))["profile"]
        assert seen["handle"] == "Ann" and seen["totals"] == profile["totals"]
        assert seen["scores"] == profile["scores"] and seen["rounds"] == profile["rounds"]
        listed = (await cat.ok("history", handle="ann"))["deals"]
        assert [d["key"] for d in listed] == [key2, key1]
        # Once it does not (no request sets it yet: the store does here), nobody
        # else may; its owner still sees it.
        accounts = server.service.accounts
        assert ann.player is not None
        account = await accounts.account_by_player(ann.player)
        assert account is not None
        assert await accounts.update_account(dataclasses.replace(account, shows_record=False))
        for kind in ("profile", "history"):
            refused = await cat.request(kind, handle="Ann")
            assert refused["code"] == "record_private", refused
        assert (await cat.request("past_deal", key=key1))["code"] == "no_such_deal"
        assert (await ann.ok("profile", handle="Ann"))["profile"]["handle"] == "Ann"
        assert (await bob.ok("past_deal", key=key1))["deal"]["seed"] == WIN_SEED


async def test_history_in_pages() -> None:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        ann = await player(server, "Ann")
        settings = {"deals_per_round": 5, "break_seconds": 0}
        await ann.ok("create_room", settings=settings)
        await ann.ok("start")
        for number in range(1, 6):
            await ann.event("deal_started")
            clock.advance(1000)
            await ann.ok("move", deal=number, move={"kind": "resign"})
            await ann.event("deal_over")
        await ann.event("round_over")
        seen: list[int] = []
        before = None
        pages = 0
        while True:
            fields: dict[str, Any] = {"limit": 2}
            if before is not None:
                fields["before"] = before
            page = await ann.ok("history", **fields)
            pages += 1
            seen += [d["deal"] for d in page["deals"]]
            before = page["next"]
            if before is None:
                break
        assert seen == [5, 4, 3, 2, 1] and pages == 3
        for limit in (0, 51, "2", True):
            refused = await ann.request("history", limit=limit)
            assert refused["code"] == "bad_request", refused


def test_weeks_start_on_monday_utc() -> None:
    for day in range(1, 29):  # February 2027: Monday the 1st, 8th, 15th, 22nd
        t = datetime(2027, 2, day, 23, 59, tzinfo=UTC).timestamp()
        start = datetime.fromtimestamp(week_start(t), UTC)
        assert start.weekday() == 0 and (start.hour, start.minute) == (0, 0)
        assert start.day == 1 + (day - 1) // 7 * 7
