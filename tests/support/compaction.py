"""Rooms played through the real runner with random requests, for the compaction
tests: what a room's log looks like once snapshots are in it, and how to tell two
rooms apart."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Sequence
from typing import Any

from protocol.moves import Move, MoveKind, Status
from server.core import decide as D
from server.core.records import Decision, Record, decode_record
from server.core.room import Room
from server.core.values import Role, RoomError
from server.core.views import SPECTATOR_VIEW, room_view
from server.net.metrics import Metrics
from server.rooms.runner import RoomRunner
from server.service.service import Service
from server.store.base import StoreUnavailable
from server.store.memory import MemoryStore
from tests.support.inprocess import FakeClock

__all__ = ["KeepingStore", "describe", "play_randomly"]


class KeepingStore(MemoryStore):
    """The in-memory store, except that a compaction is checked and then keeps
    everything: the whole log, snapshots and all, for the test to fold from any
    point. ``compacted`` lists where each compaction would have cut, counted as a
    compacting store would count (from where it would start by then)."""

    def __init__(self) -> None:
        super().__init__()
        self.compacted: list[int] = []  # where, in the whole log
        self._heads: dict[str, int] = {}  # where the log would start now

    async def compact(self, code: str, keep_from: int, first: bytes) -> None:
        log = self._logs.get(code, [])
        at = self._heads.get(code, 0) + keep_from
        if not 0 <= at < len(log) or log[at] != first:
            raise StoreUnavailable("no such snapshot")
        self._heads[code] = at
        self.compacted.append(at)


_PLAYERS = ["pA", "pB", "pC", "pD"]
_SPECTATORS = ["sX", "sY"]


async def play_randomly(
    rng: random.Random,
    store: MemoryStore,
    steps: int,
    code: str = "ROOM01",
    *,
    leaving: bool = True,
) -> tuple[Service, RoomRunner, FakeClock]:
    """A room created by pA and driven by ``steps`` random requests, refusals
    included: joins and leaves, removals, presence, settings (scoring, bonus,
    deals per round, spectators, time limit), starts, rematches, next deals, time
    running out and many moves (mostly legal: undo, resign and recycles too).
    ``leaving`` false: nobody leaves or is removed, so the room never closes."""
    clock = FakeClock()
    seeds = iter(f"seed-{rng.random()}" for _ in range(100_000))
    service = Service(store, clock, Metrics(), draw_seed=lambda: next(seeds))
    await store.reserve_room(code)
    runner = RoomRunner(service, Room(code))
    service.rooms[code] = runner

    async def run(decide: Any) -> None:
        with contextlib.suppress(RoomError):  # refusals are part of the game
            await runner.run(decide)

    settings = {"undo": True, "spectators": "live"}
    await runner.run(lambda room, ctx: D.decide_create(room, "pA", "A", settings, ctx))
    for _ in range(steps):
        if runner.room.state == "closed":
            break
        await asyncio.sleep(0)  # a request comes from a socket: the loop runs in between
        clock.advance(rng.choice((5, 50, 400, 3000)))
        room = runner.room
        roll = rng.random()
        who = rng.choice(_PLAYERS + _SPECTATORS)
        if room.running is None:
            roll = 0.85 + 0.15 * roll  # no moves to make
        if roll < 0.85:
            assert room.running is not None
            deal = room.running
            pid = rng.choice(list(deal.replays))
            board = deal.replays[pid].board
            if board.status is not Status.PLAYING:
                continue
            c = rng.random()
            if c < 0.02:
                move = Move(MoveKind.RESIGN)
            elif c < 0.08 and board.can_undo():
                move = Move(MoveKind.UNDO)  # as a client's map reads (count 1)
            else:
                move = rng.choice(board.legal_moves())
            n = len(deal.logs[pid])
            await run(
                lambda r, ctx, p=pid, d=deal.number, k=n, m=move: D.decide_move(r, p, d, k, m, ctx)
            )
        elif roll < 0.89:
            role = Role.PLAYER if who.startswith("p") else Role.SPECTATOR
            await run(lambda r, ctx, w=who, ro=role: D.decide_join(r, w, w.upper(), ro, ctx))
        elif roll < 0.915:
            on = rng.random() < 0.5
            await run(lambda r, ctx, w=who, o=on: D.decide_presence(r, w, o))
        elif roll < 0.93 and not leaving:
            continue
        elif roll < 0.925:
            await run(lambda r, ctx, w=who: D.decide_leave(r, w, ctx))
        elif roll < 0.93:
            await run(lambda r, ctx, w=who: D.decide_remove(r, r.host or "", w, ctx))
        elif roll < 0.95:
            changes = rng.choice(
                (
                    {"scoring": rng.choice(("standard", "vegas", "cumulative_vegas", "timed"))},
                    {"race_bonus": rng.choice((0, 50, 100))},
                    {"deals_per_round": rng.randint(1, 4)},
                    {"time_limit_minutes": rng.choice((0, 5))},
                    {"spectators": rng.choice(("none", "live", "after_deal"))},
                    {"draw": rng.choice((1, 3))},
                )
            )
            await run(lambda r, ctx, ch=changes: D.decide_settings(r, r.host or "", ch, ctx))
        elif roll < 0.965:
            await run(lambda r, ctx: D.decide_start(r, r.host or "", ctx))
        elif roll < 0.98:
            await run(lambda r, ctx: D.decide_rematch(r, r.host or "", ctx))
        elif roll < 0.99:
            await run(lambda r, ctx: D.decide_next_deal(r, r.host or "", ctx))
        elif roll < 0.995:
            clock.advance(6 * 60_000)  # past a 5-minute limit, if one is set
            await run(lambda r, ctx: D.decide_tick(r, ctx))
        else:
            await run(lambda r, ctx: Decision())
    return service, runner, clock


def decoded(data: Sequence[bytes]) -> list[Record]:
    return [decode_record(raw) for raw in data]


def describe(room: Room, now: int) -> dict[str, Any]:
    """Everything about a room that a member could ever learn, and its counters:
    two rooms with the same description are the same room."""
    views = {m: room_view(room, m, now) for m in [*room.members, SPECTATOR_VIEW]}
    deals = [
        {
            "n": d.number,
            "seed": d.seed,
            "logs": d.logs,
            "end_t": d.end_t,
            "ended": d.ended_at,
            "first": d.first,
            "won": {p: r.won_seq for p, r in d.replays.items()},
            "ended_t": {p: r.ended_at for p, r in d.replays.items()},
            "steps": {p: r.steps for p, r in d.replays.items()},
        }
        for d in room.deals
    ]
    return {
        "seq": room.seq,
        "n_records": room.n_records,
        "state": room.state,
        "closed": room.closed_reason,
        "members": [(m.id, m.name, m.role, m.connected) for m in room.members.values()],
        "round_players": room.round_players,
        "carry": room.carry,
        "round": (room.round, room.round_started_at, room.round_ends_at),
        "sheet": room.sheet(now).to_wire(),
        "views": views,
        "deals": deals,
    }
