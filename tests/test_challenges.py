"""Challenges over real sockets, on a clock the test moves: a challenge made of
a room's past deal and of a daily run, taken once by another player (a second
take refused) with the challenger's run as a ghost advancing at its pace, both
results on both players' lists and profiles after; every frame the taker gets
holds no seed, no card face down or in the stock, and the challenger's past
deal is not replayed to the taker before their run is over; and on the
embedded store, a take resumed after ``kill -9`` and counted once.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from protocol.board import Board
from protocol.moves import Move
from protocol.settings import DealRules
from protocol.views import hidden_cards
from server.app import RaceServer
from server.daily.schedule import day_of
from tests.support.dailies import publish, published_on_disk, winning_moves
from tests.support.embedded import EmbeddedServer
from tests.support.inprocess import UNLIMITED, FakeClock, Seeds, running_server
from tests.support.raw_client import Client, player, resume
from tests.support.solver import solve
from tests.test_daily_runs import D1, clock_at_noon, finish, refused
from tests.test_hidden_information import cards_in
from tests.test_history import OTHER_SEED, WIN_SEED, wall_clock

PROGRESS_KEYS = {"score", "home", "moves", "status", "finished"}


async def signed_in(server: RaceServer, handle: str) -> Client:
    client = await player(server, handle)
    made = await client.ok("take_handle", handle=handle)
    client.token = made["device_token"]
    return client


async def room_deal(client: Client, clock: FakeClock, step_ms: int) -> tuple[str, list[Move]]:
    """A room of one (dealt ``WIN_SEED``), its one deal won at ``step_ms`` a
    move: the deal's key and moves."""
    made = clock.now()
    settings = {"deals_per_round": 1, "break_seconds": 0}
    code = (await client.ok("create_room", settings=settings))["room"]["code"]
    await client.ok("start")
    await client.event("deal_started")
    solution = solve(Board.deal(WIN_SEED, DealRules()))  # the server's first seed
    assert solution is not None
    for move in solution:
        clock.advance(step_ms)
        reply = await client.request("move", deal=1, move=move.to_wire())
        assert reply["type"] == "moved", reply
    await client.event("deal_over")
    await client.ok("leave_room")
    return f"{code}-{made}/1/1", list(solution)


async def race(
    taker: Client, clock: FakeClock, moves: list[Move], step_ms: int, pace: tuple[int, int]
) -> list[dict[str, Any]]:
    """The taker plays ``moves`` at ``step_ms`` a move while the challenger's
    ghost (``pace``: one move every so many ms, so many moves) is sent; its
    frames as they came."""
    pace_ms, ghost_moves = pace
    seen: list[dict[str, Any]] = []
    for i, move in enumerate(moves):
        if i:
            for _ in range(step_ms // 100):
                clock.advance(100)
                await clock.settled()
        reply = await taker.request("move", deal=1, move=move.to_wire())
        assert reply["type"] == "moved", reply
        await taker.caught_up()
        for msg in taker.unseen("ghost_progress"):
            await taker.event("ghost_progress")
            assert msg["ghost"] == 1 and set(msg["progress"]) == PROGRESS_KEYS
            seen.append(msg["progress"])
        # The ghost has been sent exactly its moves due by now.
        elapsed = i * step_ms
        assert len(seen) == min(ghost_moves, elapsed // pace_ms + 1), (i, len(seen))
    return seen


def assert_nothing_hidden(client: Client, seed: str, rules: DealRules, sent: list[Move]) -> None:
    """No frame names the seed, or a card face down or in the stock then."""
    board = Board.deal(seed, rules)
    n = 0
    for frame in client.frames:
        msg = frame.msg
        raw = frame.raw if isinstance(frame.raw, bytes) else frame.raw.encode()
        assert seed.encode() not in raw, msg.get("type")
        if msg.get("type") == "moved":
            board.apply(sent[n])
            n += 1
        assert not (cards_in(msg, set()) & hidden_cards(board)), msg.get("type")
    assert n == len(sent)


async def test_a_room_deal_challenged_and_taken_once_with_its_ghost() -> None:
    clock = wall_clock()
    async with running_server(clock=clock, draw_seed=Seeds(WIN_SEED, OTHER_SEED)) as server:
        ann = await signed_in(server, "Ann")
        key, moves = await room_deal(ann, clock, 400)

        guest = await player(server, "Gus")
        await refused(guest, "challenge", "not_signed_in", key=key)
        bob = await signed_in(server, "Bob")
        await refused(bob, "challenge", "no_such_deal", key=key)  # not Bob's deal
        # Ann shows her record: her deal's replay is anyone's, until she challenges with it.
        assert (await bob.ok("past_deal", key=key))["deal"]["seed"] == WIN_SEED

        made = await ann.ok("challenge", key=key)
        code = made["code"]
        assert made["url"].endswith(f"/#challenge={code}") and len(code) >= 26
        assert WIN_SEED not in str(made)

        # The taker-to-be: who challenges, no result of theirs yet, no replay.
        taker = await signed_in(server, "Cyd")
        await refused(taker, "past_deal", "no_such_deal", key=key)
        info = (await taker.ok("challenge_info", code=code))["challenge"]
        assert info["challenger"] == "Ann" and info["ladder"] == "classic-draw1"
        assert info["challenger_result"] is None and info["over"] is False
        await refused(
            taker,
            "challenge_info",
            "bad_code",
            code=code[:-1] + ("B" if code.endswith("A") else "A"),
        )
        await refused(ann, "challenge_start", "bad_request", code=code)  # one's own

        taker.frames.clear()
        joined = await taker.ok("challenge_start", code=code)
        assert [m["name"] for m in joined["room"]["players"]] == ["Cyd"]
        listing = await taker.event("ghosts")
        assert [(g["name"], g["kind"]) for g in listing["ghosts"]] == [("Ann", "challenger")]
        seen = await race(taker, clock, moves, 700, (400, len(moves)))
        await taker.event("deal_over")
        assert [p["moves"] for p in seen] == list(range(1, len(moves) + 1))
        assert seen[-1]["status"] == "won" and seen[-1]["finished"]
        assert_nothing_hidden(taker, WIN_SEED, DealRules(), moves)

        # Once: the take is over.
        await refused(taker, "challenge_start", "challenge_taken", code=code)
        await taker.ok("leave_room")
        await refused(taker, "challenge_start", "challenge_taken", code=code)
        # Its run over, the taker sees the challenger's deal and result.
        assert (await taker.ok("past_deal", key=key))["deal"]["seed"] == WIN_SEED
        info = (await taker.ok("challenge_info", code=code))["challenge"]
        assert info["over"] and info["challenger_result"]["result"] == "won"
        assert info["result"]["name"] == "Cyd" and info["result"]["result"] == "won"
        assert info["challenger_result"]["seconds"] < info["result"]["seconds"]
        # Placed by the rule of runs: both won, the challenger sooner.
        assert (info["challenger_result"]["place"], info["result"]["place"]) == (1, 2)
        assert info["challenger_result"]["home"] == info["result"]["home"] == 52

        for client, role in ((ann, "made"), (taker, "taken")):
            (row,) = (await client.ok("challenges"))["challenges"]
            assert row["role"] == role and row["challenger"] == "Ann"
            assert row["challenger_result"]["result"] == "won"
            (take,) = row["takes"]
            assert take["name"] == "Cyd" and take["result"]["result"] == "won"
            profile = (await client.ok("profile"))["profile"]
            assert profile["challenges"] == [row]
        # Another's profile shows none of theirs.
        assert "challenges" not in (await bob.ok("profile", handle="Ann"))["profile"]
        for client in (ann, guest, bob, taker):
            await client.close()


async def test_a_daily_run_challenged_with_the_result_hidden_until_the_takers_is_over() -> None:
    clock = clock_at_noon()
    async with running_server(clock=clock) as server:
        deals = await publish(server.service.daily.store, day_of(clock.now()))
        deal = deals[D1]
        ann = await signed_in(server, "Ann")
        key = f"daily/{day_of(clock.now()).isoformat()}/{D1}"
        await refused(ann, "challenge", "no_such_deal", key=key)  # no run of hers yet
        await finish(server, ann, clock, "won", 300)
        code = (await ann.ok("challenge", key=key))["code"]

        cyd = await player(server, "Cyd")  # a guest takes it too
        # While the day runs, only once one's own run of the daily is over: the
        # take is no practice run before the one that counts.
        await refused(cyd, "challenge_start", "daily_not_over", code=code)
        await finish(server, cyd, clock, "resigned", 1)
        cyd.frames.clear()
        await cyd.ok("challenge_start", code=code)
        (ghost,) = (await cyd.event("ghosts"))["ghosts"]
        assert (ghost["name"], ghost["kind"]) == ("Ann", "challenger")
        moves = winning_moves(deal)
        seen = await race(cyd, clock, moves[:5], 600, (300, len(moves)))
        assert [p["moves"] for p in seen] == list(range(1, 10))
        (row,) = (await cyd.ok("challenges"))["challenges"]
        assert row["challenger_result"] is None  # hidden while the run goes on
        assert row["takes"][0]["result"] is None
        reply = await cyd.request("move", deal=1, move={"kind": "resign"})
        assert reply["type"] == "moved"
        await cyd.event("deal_over")
        assert_nothing_hidden(
            cyd, deal.seed, deal.rules, [*moves[:5], Move.from_wire({"kind": "resign"})]
        )
        await refused(cyd, "challenge_start", "challenge_taken", code=code)

        (row,) = (await cyd.ok("challenges"))["challenges"]
        assert row["challenger_result"]["result"] == "won"
        assert row["takes"][0]["result"]["result"] == "resigned"
        info = (await cyd.ok("challenge_info", code=code))["challenge"]
        took = Board.deal(deal.seed, deal.rules)
        for move in moves[:5]:
            took.apply(move)
        assert info["result"]["home"] == took.home
        assert (info["challenger_result"]["place"], info["result"]["place"]) == (1, 2)
        (mine,) = (await ann.ok("challenges"))["challenges"]
        assert mine["role"] == "made" and mine["takes"][0]["result"]["result"] == "resigned"
        # The take counts on no daily board (Ann's run and Cyd's own are on it).
        assert (await ann.ok("daily_board", ladder=D1))["count"] == 2
        await ann.close(), await cyd.close()


async def test_a_take_survives_kill_9_mid_run_and_after_it_counted_once(tmp_path: Path) -> None:
    """On the embedded store: a take resumed after ``kill -9`` with its ghost,
    over, and after another ``kill -9`` still over and counted once."""
    data = tmp_path / "data"
    deal = (await published_on_disk(data))[D1]
    server = EmbeddedServer(data)
    await server.start()
    try:
        ann = await player(server.url, "Ann")
        await ann.ok("take_handle", handle="Ann")
        await ann.ok("daily_start", ladder=D1)
        moves = winning_moves(deal)
        for move in moves:
            assert (await ann.request("move", deal=1, move=move.to_wire()))["type"] == "moved"
        await ann.event("deal_over")
        code = (await ann.ok("challenge", key=f"daily/{deal.day.isoformat()}/{D1}"))["code"]
        await ann.close()

        cyd = await player(server.url, "Cyd")
        cyd.token = (await cyd.ok("take_handle", handle="Cyd"))["device_token"]
        await cyd.ok("daily_start", ladder=D1)  # one's own run of the day's daily first
        assert (await cyd.request("move", deal=1, move={"kind": "resign"}))["type"] == "moved"
        await cyd.event("deal_over")
        await cyd.ok("leave_room")
        await cyd.ok("challenge_start", code=code)
        await cyd.event("ghosts")
        for move in moves[:3]:
            assert (await cyd.request("move", deal=1, move=move.to_wire()))["type"] == "moved"
        await cyd.close()

        await server.kill()  # mid-run
        await server.start()
        back, welcome = await resume(server.url, cyd.token)
        assert welcome["room"]["deal"]["board"]["moves"] == 3  # the same board
        (ghost,) = (await back.event("ghosts"))["ghosts"]
        assert (ghost["name"], ghost["kind"]) == ("Ann", "challenger")
        assert (await back.request("move", deal=1, move={"kind": "resign"}))["type"] == "moved"
        await back.event("deal_over")
        (row,) = (await back.ok("challenges"))["challenges"]
        assert row["takes"][0]["result"]["result"] == "resigned"
        await back.close()

        await server.kill()  # over: the rebuilt room writes its result again
        await server.start()
        again, _ = await resume(server.url, cyd.token)
        assert (await again.ok("challenges"))["challenges"] == [row]
        await again.ok("leave_room")
        await refused(again, "challenge_start", "challenge_taken", code=code)
        await again.close()
    finally:
        await server.kill()
    text = server.log()
    assert "Traceback" not in text and " ERROR " not in text, text[-4000:]


async def test_wrong_challenge_codes_are_guesses_limited_per_address() -> None:
    clock = clock_at_noon()
    limits = dataclasses.replace(UNLIMITED, wrong_link_codes_per_minute=3)
    async with running_server(clock=clock, limits=limits) as server:
        deals = await publish(server.service.daily.store, day_of(clock.now()))
        assert deals
        ann = await signed_in(server, "Ann")
        await finish(server, ann, clock, "won", 300)
        code = (await ann.ok("challenge", key=f"daily/{day_of(clock.now()).isoformat()}/{D1}"))[
            "code"
        ]
        eve = await player(server, "Eve")
        for guess in ("A" * 26, "B" * 26, "C" * 26):
            await refused(eve, "challenge_info", "bad_code", code=guess)
        # Used up, from this address: the right code gets no answer either, a
        # new connection none (the limit is the address's).
        await refused(eve, "challenge_start", "limit_reached", code=code)
        other = await player(server, "Fay")
        await refused(other, "challenge_info", "limit_reached", code=code)
        for client in (ann, eve, other):
            await client.close()


async def test_challenges_are_in_the_export_and_withdrawn_with_the_account() -> None:
    """One's challenges are one's data: those made (with one's run and its
    line, never the deal's seed) and taken are in the export; deleting the
    account withdraws those made (their link refused, ``challenge_withdrawn``,
    not counted as a guess), while a taker's take stays theirs."""
    clock = wall_clock()
    limits = dataclasses.replace(UNLIMITED, wrong_link_codes_per_minute=3)
    seeds = Seeds(WIN_SEED, OTHER_SEED)
    async with running_server(clock=clock, draw_seed=seeds, limits=limits) as server:
        ann = await signed_in(server, "Ann")
        key, moves = await room_deal(ann, clock, 400)
        code = (await ann.ok("challenge", key=key))["code"]
        bea = await signed_in(server, "Bea")
        await bea.ok("challenge_start", code=code)
        await bea.ok("move", deal=1, move={"kind": "resign"})
        await bea.event("deal_over")
        await bea.ok("leave_room")

        mine = (await ann.ok("export_account"))["data"]["challenges"]
        (made,) = mine["made"]
        assert (made["source"], made["takes"], made["run"]["result"]) == (key, 1, "won")
        assert [m[1] for m in made["line"]] == [m.kind.value for m in moves]
        assert mine["taken"] == []
        assert WIN_SEED not in str(mine) and code not in str(mine)
        theirs = (await bea.ok("export_account"))["data"]["challenges"]
        assert theirs["made"] == []
        (taken,) = theirs["taken"]
        assert taken["result"]["result"] == "resigned"
        assert taken["result"]["ladder"] == "classic-draw1"

        assert (await ann.ok("delete_account", handle="Ann"))["type"] == "account_deleted"
        await refused(bea, "challenge_info", "challenge_withdrawn", code=code)
        gus = await player(server, "Gus")
        for _ in range(5):  # more than the 3 wrong codes an address may try: none is counted
            await refused(gus, "challenge_start", "challenge_withdrawn", code=code)
        assert (await bea.ok("export_account"))["data"]["challenges"]["taken"] == [taken]
        assert server.service.challenges is not None
        assert await server.service.challenges.made_by(ann.player) == []
        await bea.close(), await gus.close()
