"""``deals: winnable`` over real sockets: the room deals a proven seed, its revealed
line replays to a win in the engine, and proving never stalls another race; a
room that finds the pool dry waits (its ``start`` unanswered, the waits counted in
/metrics) and is dealt only a proven seed."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any

from client import connect
from protocol.proof import proof_from_wire
from protocol.settings import DealRules
from server.app import RaceServer
from server.core.views import room_view
from server.rooms.proofs import ProvenPools, Verdict, prove_seed
from server.service.adoption import fold_room
from server.store.memory import MemoryStore
from tests.support.gated import GatedExecutor
from tests.support.inprocess import FakeClock, Seeds, running_server
from tests.support.raw_client import player, resume
from tests.support.sessions import until

BUDGET = 60_000


async def test_a_winnable_room_deals_a_proven_layout_and_reveals_its_line() -> None:
    pools = ProvenPools(size=1, max_states=BUDGET)
    async with running_server(proofs=pools, draw_seed=Seeds()) as server:
        ann = await player(server, "Ann")
        bob = await player(server, "Bob")
        joined = await ann.ok("create_room", settings={"draw": 3, "deals_per_round": 1})
        code = joined["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        refused = await ann.request(
            "update_settings", settings={"deals": "winnable", "variant": "double"}
        )
        assert refused["type"] == "error" and refused["code"] == "bad_setting"
        assert refused["field"] == "variant" and "double" in refused["message"]
        await ann.ok("update_settings", settings={"deals": "winnable"})
        refused = await ann.request("update_settings", settings={"variant": "double"})
        assert refused["code"] == "bad_setting" and refused["field"] == "variant"

        # Meanwhile, a race with random deals in another room: every move answered
        # while the pool fills in a worker process.
        cat = await player(server, "Cat")
        other = (await cat.ok("create_room", settings={"deals_per_round": 1}))["room"]["code"]
        await cat.ok("start")
        answered = 0
        for i in range(30):
            kind = "recycle" if i % 25 == 24 else "draw"  # 24 cards in the stock
            reply = await cat.request("move", deal=1, move={"kind": kind})
            assert reply["type"] == "moved", reply
            answered += 1
            await asyncio.sleep(0)
        assert answered == 30 and other != code

        await ann.ok("start")  # answered once a proven seed is ready
        started = await bob.event("deal_started")
        assert "proof" not in started["deal"] and "seed" not in started["deal"]
        await ann.ok("move", deal=1, move={"kind": "resign"})
        await bob.ok("move", deal=1, move={"kind": "resign"})
        over = await bob.event("deal_over")
        deal = over["deal"]
        rules = DealRules(draw=3)
        proof = proof_from_wire(deal["seed"], rules, deal["proof"])
        assert proof.moves and deal["proof"]["difficulty"] == proof.difficulty
        assert deal["proof"]["length"] == len(proof.moves)
        assert deal["proof"]["passes"] == proof.passes
        assert pools.judged["proven"] >= 1
        metrics = server.metrics.render().decode()
        assert 'klondike_winnable_layouts_total{verdict="proven"}' in metrics


# ---------------------------------------------------------------------- a dry pool


class WatchedPools(ProvenPools):
    """The server's pools, telling the test how many takes are under way and how
    many found the pool dry."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.waiting = 0
        self.found_dry = 0
        self.changed = asyncio.Event()

    async def take(
        self, rules: DealRules, dry: Callable[[], None] | None = None
    ) -> tuple[str, str]:
        self.waiting += 1
        self.changed.set()

        def told() -> None:
            self.found_dry += 1
            self.changed.set()
            if dry is not None:
                dry()

        try:
            return await super().take(rules, told)
        finally:
            self.waiting -= 1

    async def until_waiting(self, n: int) -> None:
        while self.waiting != n:
            self.changed.clear()
            await self.changed.wait()

    async def until_dry(self, n: int) -> None:
        """Until ``n`` takes in all have found the pool dry."""
        while self.found_dry < n:
            self.changed.clear()
            await self.changed.wait()


def _sorted_seeds(rules: DealRules) -> tuple[str, list[str]]:
    """One seed the solver does not prove within the budget, then two it does."""
    unproven: str | None = None
    proven: list[str] = []
    for i in range(40):
        seed = f"dry-pool-{i}"
        verdict, _, _ = prove_seed(seed, rules, BUDGET)
        if verdict is Verdict.PROVEN:
            proven.append(seed)
        elif unproven is None:
            unproven = seed
        if unproven is not None and len(proven) >= 2:
            return unproven, proven[:2]
    raise AssertionError("no mix of proven and unproven seeds among 40 layouts")


def _metric(server: RaceServer, line_start: str) -> float:
    for line in server.metrics.render().decode().splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no metric {line_start!r}")


async def test_a_dry_pool_holds_the_deal_and_never_deals_an_unproven_layout() -> None:
    rules = DealRules(draw=1)
    unproven, proven = _sorted_seeds(rules)
    # Then more, for the refills behind the two deals: held back by the gate.
    source = itertools.chain([unproven, *proven], (f"later-{i}" for i in itertools.count()))
    gated = GatedExecutor()
    pools = WatchedPools(size=1, max_states=BUDGET, new_seed=lambda: next(source), executor=gated)
    try:
        async with running_server(proofs=pools, draw_seed=Seeds()) as server:
            try:
                ann = await player(server, "Ann")
                bob = await player(server, "Bob")
                cat = await player(server, "Cat")
                dan = await player(server, "Dan")
                winnable = {"deals": "winnable", "deals_per_round": 1}
                code = (await ann.ok("create_room", settings=winnable))["room"]["code"]
                await dan.ok("join_room", code=code, role="player")
                await bob.ok("create_room", settings=winnable)
                await cat.ok("create_room", settings={"deals_per_round": 1})
                await cat.ok("start")

                # Both winnable rooms start at once on a dry pool: neither is answered.
                starts = [asyncio.create_task(c.request("start")) for c in (ann, bob)]
                await pools.until_waiting(2)  # both rooms wait for a proven seed
                assert gated.in_progress == 1  # the refill has asked for its first solve
                assert _metric(server, "klondike_winnable_waits_total") == 2
                assert _metric(server, 'klondike_winnable_pool{rules="classic/draw1/passes0"}') == 0
                # Every member of a waiting room is told, and a snapshot says so too.
                for c in (ann, dan, bob):
                    notice = await c.event("finding_deal")
                    assert notice["deal"] == 1 and notice["finding"] is True
                seq = dan.last("finding_deal")["seq"]  # type: ignore[index]
                assert (await dan.ok("snapshot"))["room"]["finding_deal"] == 1

                # Meanwhile another room's moves are all answered, the refill in progress.
                for i in range(30):
                    assert gated.in_progress == 1 and pools.ready(rules) == 0
                    kind = "recycle" if i % 25 == 24 else "draw"
                    reply = await cat.request("move", deal=1, move={"kind": kind})
                    assert reply["type"] == "moved", reply
                assert not any(s.done() for s in starts)  # still waiting, visibly unanswered
                assert ann.last("deal_started") is None and bob.last("deal_started") is None

                # The first layout is not proven: skipped, nobody dealt. Then two proven.
                gated.allow()
                await gated.until_asked(2)
                assert pools.judged[Verdict.PROVEN] == 0 and not any(s.done() for s in starts)
                gated.allow(2)
                replies = await asyncio.gather(*starts)
                assert all(r["type"] != "error" for r in replies), replies

                started = await dan.event("deal_started")  # ends the wait
                assert started["seq"] > seq and dan.unseen("finding_deal") == []
                assert (await dan.ok("snapshot"))["room"]["finding_deal"] is None
                assert not dan.unseen("finding_deal")
                dealt = []
                for c in (ann, bob):
                    await c.event("deal_started")
                    await c.ok("move", deal=1, move={"kind": "resign"})
                    if c is ann:
                        await dan.ok("move", deal=1, move={"kind": "resign"})
                    deal = (await c.event("deal_over"))["deal"]
                    assert proof_from_wire(deal["seed"], rules, deal["proof"]).moves
                    dealt.append(deal["seed"])
                assert sorted(dealt) == sorted(proven) and unproven not in dealt
                assert pools.judged[Verdict.PROVEN] == 2
                assert pools.judged[Verdict.UNDECIDED] + pools.judged[Verdict.IMPOSSIBLE] == 1
            finally:  # a failed check: let the waiting rooms be dealt, and stop
                gated.allow(100)
    finally:
        gated.shutdown()


async def test_a_shutdown_does_not_wait_for_a_dry_pool() -> None:
    """A room waiting for a proven seed when the server stops is refused at once
    (nothing was dealt), so the stop is not held up by a solver."""
    gated = GatedExecutor()  # holds every solve: the pool stays dry
    pools = WatchedPools(size=1, max_states=BUDGET, executor=gated)
    try:
        async with running_server(proofs=pools) as server:
            ann = await player(server, "Ann")
            await ann.ok("create_room", settings={"deals": "winnable", "deals_per_round": 1})
            start = asyncio.create_task(ann.request("start"))
            await pools.until_waiting(1)
        # The server has stopped (the block ended): the waiting start was refused.
        try:
            reply = await start
        except ConnectionError:
            reply = {"code": "closed"}
        assert reply.get("code") in ("storage_unavailable", "closed"), reply
        assert ann.last("deal_started") is None
    finally:
        gated.shutdown()


@contextlib.asynccontextmanager
async def _dry_pool(**server: Any) -> AsyncIterator[tuple[RaceServer, WatchedPools, GatedExecutor]]:
    """A server whose pool of proven seeds stays dry until the test lets the
    solver go (``gated.allow``); its first seeds are ones the solver proves."""
    rules = DealRules(draw=1)
    _unproven, proven = _sorted_seeds(rules)
    source = itertools.chain(proven, (f"later-{i}" for i in itertools.count()))
    gated = GatedExecutor()
    pools = WatchedPools(size=1, max_states=BUDGET, new_seed=lambda: next(source), executor=gated)
    try:
        async with running_server(proofs=pools, **server) as server:
            try:
                yield server, pools, gated
            finally:
                gated.allow(100)
    finally:
        gated.shutdown()


async def test_the_python_client_shows_the_room_finding_a_deal() -> None:
    """The client library folds ``finding_deal`` into its room state: set while
    the pool is dry, cleared by the deal it was finding."""
    async with (
        _dry_pool() as (server, pools, gated),
        connect(f"ws://127.0.0.1:{server.port}/ws", name="Ann") as ann,
    ):
        await ann.create_room({"deals": "winnable", "deals_per_round": 1})
        start = asyncio.create_task(ann.start())
        await pools.until_waiting(1)
        room = await until(ann, lambda r: r.finding_deal is not None)
        assert room.finding_deal == 1 and room.my_board is None
        gated.allow(2)
        await start
        room = await until(ann, lambda r: r.my_board is not None)
        assert room.finding_deal is None


async def test_a_member_resuming_while_the_room_finds_a_deal_is_welcomed_at_once() -> None:
    """A hello into a room waiting on a dry pool is not held behind the solver:
    the welcome's snapshot says the room is finding deal 1, and the member's
    leaving and coming back are recorded at once, before the deal."""
    async with _dry_pool() as (server, pools, gated):
        ann = await player(server, "Ann")
        dan = await player(server, "Dan")
        winnable = {"deals": "winnable", "deals_per_round": 1}
        code = (await ann.ok("create_room", settings=winnable))["room"]["code"]
        await dan.ok("join_room", code=code, role="player")
        start = asyncio.create_task(ann.request("start"))
        await pools.until_waiting(1)
        await dan.event("finding_deal")
        token = dan.token
        await dan.close()

        dan2, welcome = await resume(f"ws://127.0.0.1:{server.port}/ws", token)
        assert welcome["type"] == "welcome", welcome
        assert welcome["room"]["finding_deal"] == 1
        assert welcome["room"]["deal"] is None
        seen: list[bool] = []  # Dan's presence in Ann's members events, from his join on
        while False not in seen or not seen[-1]:
            members = await ann.event("members")
            seen += [m["connected"] for m in members["players"] if m["name"] == "Dan"]
        assert not start.done() and ann.last("deal_started") is None

        gated.allow(2)
        assert (await start)["type"] != "error"
        await dan2.event("deal_started")


async def test_a_late_friend_joins_while_the_room_finds_a_deal_and_is_dealt_in() -> None:
    """Only a request that would deal waits for a proven seed. A friend's
    ``join_room`` during the wait is answered at once, its snapshot saying the
    room is finding deal 1; the deal, decided after the join, deals her in."""
    async with _dry_pool() as (server, pools, gated):
        ann = await player(server, "Ann")
        eve = await player(server, "Eve")
        winnable = {"deals": "winnable", "deals_per_round": 1}
        code = (await ann.ok("create_room", settings=winnable))["room"]["code"]
        start = asyncio.create_task(ann.request("start"))
        await pools.until_waiting(1)
        await ann.event("finding_deal")

        joined = await eve.ok("join_room", code=code, role="player")
        assert joined["room"]["finding_deal"] == 1 and joined["room"]["deal"] is None
        assert not start.done() and gated.in_progress == 1

        gated.allow(2)
        assert (await start)["type"] != "error"
        started = await eve.event("deal_started")
        assert started["deal"]["number"] == 1
        reply = await eve.request("move", deal=1, move={"kind": "draw"})
        assert reply["type"] == "moved", reply  # she is in the deal, not watching it


async def test_a_break_that_ends_on_a_dry_pool_holds_only_the_deal() -> None:
    """The break runs out (the clock) with no proven seed ready: the timer's deal
    waits for one, and the room's requests do not wait with it. A friend joins
    mid-round, is told deal 2 is being found, and is dealt into it."""
    clock = FakeClock()
    async with _dry_pool(clock=clock) as (server, pools, gated):
        ann = await player(server, "Ann")
        eve = await player(server, "Eve")
        settings = {"deals": "winnable", "deals_per_round": 2, "break_seconds": 10}
        code = (await ann.ok("create_room", settings=settings))["room"]["code"]
        start = asyncio.create_task(ann.request("start"))
        await pools.until_waiting(1)
        gated.allow()  # deal 1's seed; the refill behind it waits at the gate
        assert (await start)["type"] != "error"
        await ann.event("deal_started")
        await ann.ok("move", deal=1, move={"kind": "resign"})
        await ann.event("break_started")

        clock.advance(10_000)  # the break is over: deal 2 wants a seed, none is ready
        notice = await ann.event("finding_deal")
        assert (notice["deal"], notice["finding"]) == (2, True)
        joined = await eve.ok("join_room", code=code, role="player")
        assert joined["room"]["finding_deal"] == 2 and joined["room"]["state"] == "break"
        assert (await ann.ok("snapshot"))["room"]["finding_deal"] == 2
        assert ann.last("deal_started")["deal"]["number"] == 1  # type: ignore[index]

        gated.allow()
        started = await eve.event("deal_started")
        assert started["deal"]["number"] == 2
        reply = await eve.request("move", deal=2, move={"kind": "draw"})
        assert reply["type"] == "moved", reply


async def test_a_room_stays_whole_through_what_it_does_while_it_finds_a_deal() -> None:
    """While deal 2 waits for a proven seed, the room takes its other requests at
    once, all at the same moment: a player and a spectator join, a player leaves,
    the host changes a setting that applies now, a player says ready, members ask
    for snapshots. Then the seed comes: deal 2 is dealt once to each member, to the
    room as those requests left it, from a proven seed; and the room rebuilt from
    its log (as a restart or a takeover would) is the live one."""
    clock = FakeClock()
    store = MemoryStore()
    async with _dry_pool(clock=clock, store=store) as (server, pools, gated):
        ann, bob, cat, dan, eve = [
            await player(server, n) for n in ("Ann", "Bob", "Cat", "Dan", "Eve")
        ]
        settings = {"deals": "winnable", "deals_per_round": 3, "break_seconds": 10}
        code = (await ann.ok("create_room", settings=settings))["room"]["code"]
        for c in (bob, cat):
            await c.ok("join_room", code=code, role="player")
        start = asyncio.create_task(ann.request("start"))
        await pools.until_waiting(1)
        gated.allow()
        assert (await start)["type"] != "error"
        for c in (ann, bob, cat):
            await c.event("deal_started")
            await c.ok("move", deal=1, move={"kind": "resign"})
        await ann.event("break_started")

        clock.advance(10_000)
        for c in (ann, bob, cat):
            assert (await c.event("finding_deal"))["deal"] == 2
        replies = await asyncio.gather(
            dan.request("join_room", code=code, role="player"),
            eve.request("join_room", code=code, role="spectator"),
            cat.request("leave_room"),
            ann.request("update_settings", settings={"race_bonus": 50}),
            bob.request("ready"),
            ann.request("snapshot"),
            bob.request("snapshot"),
        )
        assert [r["type"] for r in replies] == ["joined", "joined", "ok", "ok", "ok"] + [
            "snapshot"
        ] * 2, replies
        assert all(r["room"]["finding_deal"] == 2 for r in replies if "room" in r)
        assert gated.in_progress == 1 and ann.last("deal_started")["deal"]["number"] == 1  # type: ignore[index]

        gated.allow()
        for c in (ann, bob, dan, eve):
            started = await c.event("deal_started")
            assert started["deal"]["number"] == 2
        snap = (await eve.ok("snapshot"))["room"]
        assert snap["finding_deal"] is None and snap["settings"]["race_bonus"] == 50
        assert {p["name"] for p in snap["players"]} == {"Ann", "Bob", "Dan"}
        for c in (ann, bob, dan):  # each is dealt in, and once
            assert (await c.request("move", deal=2, move={"kind": "resign"}))["type"] == "moved"
        for c in (ann, bob, dan, eve):
            await c.caught_up()
            assert c.unseen("deal_started") == []
        over = (await eve.event("deal_over"))["deal"]
        assert proof_from_wire(over["seed"], DealRules(draw=1), over["proof"]).moves

        live = server.service.rooms[code].room
        rebuilt, _ = await fold_room(code, await store.load(code))
        now = clock.now()
        for member in (ann.player, dan.player, eve.player):
            assert member is not None
            assert room_view(rebuilt, member, now) == room_view(live, member, now)


async def test_the_next_deals_seed_is_taken_while_the_deal_is_played() -> None:
    """With deals left in the round, the room takes the next deal's proven seed
    while the running deal is played: the move that ends it is answered and deals
    the next at once, with the solver held back and the pool dry, and nobody is
    told the room is finding deal 2."""
    async with _dry_pool() as (server, pools, gated):
        ann = await player(server, "Ann")
        bob = await player(server, "Bob")
        settings = {"deals": "winnable", "deals_per_round": 2, "break_seconds": 0}
        code = (await ann.ok("create_room", settings=settings))["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        start = asyncio.create_task(ann.request("start"))
        await pools.until_waiting(1)
        gated.allow()  # deal 1's seed
        assert (await start)["type"] != "error"
        await ann.event("finding_deal")  # the start waited: the pool was dry then
        for c in (ann, bob):
            await c.event("deal_started")
        finding = len([e for e in bob.events if e["type"] == "finding_deal"])

        gated.allow()  # one more solve: the seed taken ahead for deal 2
        await gated.until_asked(3)  # the refill behind it asks again: it is taken
        assert pools.ready(DealRules(draw=1)) == 0 and gated.in_progress == 1
        await ann.ok("move", deal=1, move={"kind": "resign"})
        assert (await bob.request("move", deal=1, move={"kind": "resign"}))["type"] == "moved"
        for c in (ann, bob):
            assert (await c.event("deal_started"))["deal"]["number"] == 2
        await bob.caught_up()  # deal 2's wait, had there been one, was told by now
        assert len([e for e in bob.events if e["type"] == "finding_deal"]) == finding


async def test_a_pool_dry_all_deal_does_not_hold_the_move_that_ends_it() -> None:
    """The next deal's seed, taken ahead, is still being found when the deal ends
    (the solver held all deal): the move that ends it is answered at once, a break
    begins (``break_seconds`` 0: already over by the clock), the room is told it is
    finding deal 2, and deal 2 is dealt once the seed is there."""
    async with _dry_pool() as (server, pools, gated):
        ann = await player(server, "Ann")
        settings = {"deals": "winnable", "deals_per_round": 2, "break_seconds": 0}
        await ann.ok("create_room", settings=settings)
        start = asyncio.create_task(ann.request("start"))
        await pools.until_waiting(1)
        gated.allow()  # deal 1's seed; deal 2's, taken ahead, waits at the gate
        assert (await start)["type"] != "error"
        await ann.event("deal_started")
        await pools.until_dry(2)  # the seed taken ahead finds the pool dry too

        ended = await ann.request("move", deal=1, move={"kind": "resign"})
        assert ended["type"] == "moved", ended
        brk = await ann.event("break_started")
        assert brk["deal"] == 1
        assert (await ann.event("finding_deal"))["deal"] == 2
        assert gated.in_progress == 1 and ann.last("deal_started")["deal"]["number"] == 1  # type: ignore[index]

        gated.allow()
        assert (await ann.event("deal_started"))["deal"]["number"] == 2
        assert (await ann.ok("snapshot"))["room"]["finding_deal"] is None
