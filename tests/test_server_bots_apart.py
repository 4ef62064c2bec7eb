"""Bots are players, not clones: three bots of one pace over a round of 20 deals
play different lines and finish at different times, and bots get ready in a
break, so that a break ends as soon as the people are ready too.

In-process with a fake clock that the test moves from one wake-up to the next
(:class:`Table`), as a real clock would pass them: a round of bots that would
take half an hour is played in seconds, and every pause a bot takes is the one it
drew. The deals are draw three with one pass through the stock, which a bot ends
in a few dozen moves (it resigns once nothing useful is left); the person resigns
each deal at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from server.app import RaceServer
from server.core.values import RoomState
from server.rooms.bots import BotDriver
from server.rooms.runner import RoomRunner
from tests.support.inprocess import FakeClock, Seeds, running_server
from tests.support.raw_client import Client, player
from tests.support.waiting import eventually

ROUND = {"draw": 3, "break_seconds": 30}


class Table:
    """One room's bots and the fake clock, moved from one wake-up to the next once
    every bot has done what the last move of the clock asked of it: each bot then
    sleeps on the clock (its pause) or waits for the room to change."""

    def __init__(self, server: RaceServer, clock: FakeClock, code: str) -> None:
        self.clock = clock
        self.runner: RoomRunner = server.service.rooms[code]

    @property
    def room(self) -> Any:
        return self.runner.room

    def _resting(self, driver: BotDriver) -> bool:
        task = driver._task
        if task.done() or self.clock.asleep(task):
            return True
        # Or waiting for the room to change: its event is not set, and it is
        # awaited (its waiters: a bot between two awaits has not got there yet).
        waits = driver._woken
        return not waits.is_set() and bool(getattr(waits, "_waiters", None))

    def at_rest(self) -> bool:
        return all(self._resting(d) for d in self.runner.bots.drivers.values())

    async def run_until(self, done: Callable[[], bool], *, what: str) -> None:
        """Move the clock, wake-up by wake-up, until ``done()`` holds at rest."""
        while True:
            # A bot thinks in a worker thread for a millisecond or two: looked at
            # often, as this wait comes once for every move of the round.
            await eventually(self.at_rest, what="the bots to rest", pause=0.001)
            if done():
                return
            deadline = self.clock.next_deadline()
            assert deadline is not None, f"nothing left to wake while waiting for {what}"
            self.clock.advance(max(0, deadline - self.clock.now()))
            await asyncio.sleep(0)


async def seat(server: RaceServer, clock: FakeClock, bots: int, pace: str) -> tuple[Client, Table]:
    ann = await player(server, "Ann")
    code = (await ann.ok("create_room", settings=ROUND | {"deals_per_round": 20}))["room"]["code"]
    for _ in range(bots):
        await ann.ok("add_bot", pace=pace)
    return ann, Table(server, clock, code)


async def test_three_fast_bots_play_twenty_deals_each_in_their_own_way() -> None:
    clock = FakeClock()
    seeds = Seeds(*(f"apart-{i}" for i in range(20)))
    async with running_server(clock=clock, draw_seed=seeds) as server:
        ann, table = await seat(server, clock, 3, "fast")
        members = (await ann.ok("snapshot"))["room"]["players"]
        styles = {p["id"]: p["style"] for p in members if "bot" in p}
        assert sorted(styles.values()) == ["cautious", "greedy", "methodical"]
        bots = list(styles)
        await ann.ok("start")
        moves: dict[str, list[int]] = {b: [] for b in bots}
        ends: dict[str, list[int]] = {b: [] for b in bots}
        for number in range(1, 21):
            started = await ann.event("deal_started")
            await ann.ok("move", deal=number, n=0, move={"kind": "resign"})
            await table.run_until(lambda: table.room.state != RoomState.PLAYING, what="deal over")
            over = (await ann.event("deal_over"))["deal"]
            assert over["number"] == number == started["deal"]["number"]
            for b in bots:
                log = over["logs"][b]
                assert over["summary"][b]["status"] in ("won", "resigned", "dead")
                moves[b].append(len(log))
                ends[b].append(log[-1]["t"])  # when its deal ended, ms into the deal
            if number < 20:
                brk = await ann.event("break_started")
                await ann.ok("ready")
                await table.run_until(lambda: table.room.state != RoomState.BREAK, what="deal")
                assert clock.now() < brk["next_deal_at"]  # the bots were ready before it
        await ann.event("round_over")

        # Moves: no two bots made the same number of moves on every deal, and on
        # most deals the three did not all make as many.
        lines = [tuple(moves[b]) for b in bots]
        assert len(set(lines)) == 3, moves
        alike = [n for n in range(20) if len({moves[b][n] for b in bots}) == 1]
        assert len(alike) <= 5, (alike, moves)
        # Time: on every deal the three finished at three different times, and on
        # most deals the first and the last finished more than 2 s apart.
        assert all(len({ends[b][n] for b in bots}) == 3 for n in range(20)), ends
        spread = [max(ends[b][n] for b in bots) - min(ends[b][n] for b in bots) for n in range(20)]
        assert sum(s > 2000 for s in spread) >= 15, spread
        await ann.close()


async def test_bots_get_ready_in_a_break_and_the_last_person_ready_ends_it() -> None:
    """The bots' ``ready`` comes after a pause of their pace; the break goes on
    while a person is not ready, and ends, before its countdown, when they are."""
    clock = FakeClock()
    async with running_server(clock=clock, draw_seed=Seeds("apart-0", "apart-1")) as server:
        ann, table = await seat(server, clock, 2, "relaxed")
        bots = list(table.room.bots())
        await ann.ok("start")
        await ann.event("deal_started")
        await ann.ok("move", deal=1, n=0, move={"kind": "resign"})
        await table.run_until(lambda: table.room.state != RoomState.PLAYING, what="deal over")
        brk = await ann.event("break_started")
        began = clock.now()
        assert brk["ready"] == []

        await table.run_until(lambda: set(table.room.ready) == set(bots), what="bots ready")
        for _ in bots:
            said = await ann.event("ready")
            assert said["player"] in bots
        assert began + 2_000 <= clock.now() < brk["next_deal_at"]  # relaxed: 2.5 s × 0.8 at least
        assert table.room.state == RoomState.BREAK  # Ann is not ready: the break goes on
        assert table.at_rest() and clock.next_deadline() == brk["next_deal_at"]

        await ann.ok("ready")
        started = await ann.event("deal_started")
        assert started["deal"]["number"] == 2
        assert started["deal"]["started_at"] == clock.now() < brk["next_deal_at"]
        await ann.close()
