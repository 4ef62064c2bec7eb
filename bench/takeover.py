"""Takeover of a room with a long history: how long until it answers, and how long
the rebuild holds the event loop, with and without compaction.

A room of four players (and a spectator) plays ``--deals`` deals (rounds of five,
rematched) through the real runner, its players making legal moves greedily until
they win or give up. That history is then put in the embedded SQLite store (the
default of ``serve``) in the two shapes a store may hold it:

- ``whole``: every record, as a server without compaction keeps it;
- ``compacted``: what this server keeps, the last snapshot and the records after it.

and each is taken over ``--repeat`` times by a fresh service (``Adoption.adopt``: load,
fold, presence decided, runner published), three ways:

- ``whole, at once``: the whole log folded in one go, as before compaction;
- ``whole, in slices``: the whole log folded in slices of a few ms;
- ``compacted``: the compacted log, folded in slices (what ``serve`` does now).

``takeover`` is from the start of adoption to the room's answer to a member (a
snapshot view built and encoded, as a resuming client's welcome carries), median
and worst; ``longest hold`` the longest the event loop went without running a 1 ms
timer meanwhile. A human table, then one JSON object as the last line.

    .venv/bin/python -m bench.takeover [--deals 50] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from protocol.board import Board
from protocol.moves import Move, MoveKind, Status
from protocol.wire import encode
from server.core import decide as D
from server.core import records as R
from server.core.records import Decision, decode_record
from server.core.room import Room
from server.core.values import Role, RoomError
from server.core.views import room_view
from server.net.clock import SystemClock
from server.net.metrics import Metrics
from server.rooms.runner import RoomRunner
from server.service import adoption
from server.service.service import Service
from server.store.memory import MemoryStore
from server.store.sqlite import SqliteStore

PLAYERS = ["pAnn", "pBob", "pCat", "pDan"]
HOME = (MoveKind.TABLEAU_TO_FOUNDATION, MoveKind.WASTE_TO_FOUNDATION)


class Clock:
    """A clock that moves a little with every move, so deals last minutes."""

    def __init__(self) -> None:
        self.ms = 1_764_430_000_000

    def now(self) -> int:
        return self.ms

    async def sleep_until(self, deadline: int) -> None:
        await asyncio.Event().wait()  # the history has no time limit


class Keeping(MemoryStore):
    """Keeps the whole log (snapshots too); compactions are accepted and dropped."""

    async def compact(self, code: str, keep_from: int, first: bytes) -> None:
        return None


def choose(board: Board, rng: random.Random) -> Move:
    """Mostly greedy, sometimes anything: deals of a hundred moves or more."""
    moves = board.legal_moves()
    home = [m for m in moves if m.kind in HOME]
    if home and rng.random() < 0.9:
        return home[0]
    return rng.choice(moves)


def _join(player: str, room: Room, ctx: D.Ctx) -> Decision:
    return D.decide_join(room, player, player[1:], Role.PLAYER, ctx)


def _move(player: str, deal: int, n: int, move: Move, room: Room, ctx: D.Ctx) -> Decision:
    return D.decide_move(room, player, deal, n, move, ctx)


async def play_history(deals: int, seed: int = 1) -> list[bytes]:
    """The room's whole log after ``deals`` deals (snapshots included)."""
    rng = random.Random(seed)
    store, clock = Keeping(), Clock()
    seeds = (f"bench-{i}" for i in range(10**9))
    service = Service(store, clock, Metrics(), draw_seed=lambda: next(seeds))
    code = "BENCH1"
    await store.reserve_room(code)
    runner = RoomRunner(service, Room(code))
    service.rooms[code] = runner
    await runner.run(
        lambda r, c: D.decide_create(
            r, PLAYERS[0], "Ann", {"deals_per_round": 5, "break_seconds": 0}, c
        )
    )
    for pid in PLAYERS[1:]:
        await runner.run(partial(_join, pid))
    await runner.run(lambda r, c: D.decide_join(r, "sSam", "Sam", Role.SPECTATOR, c))
    await runner.run(lambda r, c: D.decide_start(r, PLAYERS[0], c))
    played = 0
    while played < deals:
        room = runner.room
        deal = room.running
        if deal is None:  # the round is over: another
            await runner.run(lambda r, c: D.decide_rematch(r, PLAYERS[0], c))
            continue
        key = (room.round, deal.number)
        for pid in PLAYERS:
            board = deal.replays[pid].board
            if board.status is not Status.PLAYING:
                continue
            n = len(deal.logs[pid])
            move = Move(MoveKind.RESIGN) if n >= 150 else choose(board, rng)
            clock.ms += rng.randint(300, 3000)
            with contextlib.suppress(RoomError):
                await runner.run(partial(_move, pid, key[1], n, move))
            await asyncio.sleep(0)  # as between requests: compactions run
        now = runner.room.running
        if now is None or (runner.room.round, now.number) != key:
            played += 1
    runner.stop()
    await service.stop()
    return list(store._logs[code])


def shapes(log: list[bytes]) -> dict[str, list[bytes]]:
    snapshots = [isinstance(decode_record(raw), R.Checkpoint) for raw in log]
    last = max(i for i, snap in enumerate(snapshots) if snap)
    return {
        "whole": [raw for raw, snap in zip(log, snapshots, strict=True) if not snap],
        "compacted": log[last:],
    }


class LagMonitor:
    """A 1 ms timer: how late it ran at worst is how long the loop was held."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time() + 0.001

        def tick() -> None:
            nonlocal due
            now = loop.time()
            self.worst = max(self.worst, now - due + 0.001)
            due = now + 0.001
            self._handle = loop.call_at(due, tick)

        self._handle = loop.call_at(due, tick)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()


async def take_over(store: SqliteStore, code: str) -> tuple[float, float]:
    """One takeover: (seconds until the room answered, longest loop hold)."""
    service = Service(store, SystemClock(), Metrics())
    monitor = LagMonitor()
    monitor.start()
    start = time.perf_counter()
    try:
        assert await service.adoption.adopt(code)
        runner = service.rooms[code]
        answered = asyncio.get_running_loop().create_future()

        def answer() -> Any:
            view = room_view(runner.room, PLAYERS[0], service.clock.now())
            data = encode({"type": "welcome", "room": view}, True)
            return lambda: answered.set_result(data)

        await runner.read(answer)
        await answered
        took = time.perf_counter() - start
    finally:
        monitor.stop()
        await service.stop()
    return took, monitor.worst


async def measure(log: list[bytes], repeat: int) -> dict[str, dict[str, Any]]:
    forms = shapes(log)
    out: dict[str, dict[str, Any]] = {}
    ways = (
        ("whole_at_once", "whole", True),
        ("whole_slices", "whole", False),
        ("compacted", "compacted", False),
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = await SqliteStore.at(Path(tmp))
        try:
            for k, (name, form, at_once) in enumerate(ways):
                takes: list[float] = []
                holds: list[float] = []
                for i in range(repeat):
                    code = f"TK{k}{i:03d}"  # a room of its own for each takeover
                    await store.reserve_room(code)
                    await store.append(code, forms[form])
                    saved = adoption.FOLD_SLICE_S
                    if at_once:
                        adoption.FOLD_SLICE_S = float("inf")
                    try:
                        took, hold = await take_over(store, code)
                    finally:
                        adoption.FOLD_SLICE_S = saved
                    takes.append(took)
                    holds.append(hold)
                out[name] = {
                    "records": len(forms[form]),
                    "bytes": sum(map(len, forms[form])),
                    "takeover_ms_p50": round(statistics.median(takes) * 1000, 1),
                    "takeover_ms_max": round(max(takes) * 1000, 1),
                    "longest_hold_ms": round(max(holds) * 1000, 1),
                }
        finally:
            await store.close()
    return out


def table(result: dict[str, Any]) -> Iterator[str]:
    yield (
        f"{result['deals']} deals, {result['records_written']} records written, "
        f"4 players + 1 spectator; SQLite store, {result['repeat']} takeovers each"
    )
    yield f"{'':18} {'records':>8} {'KiB':>7} {'takeover p50':>13} {'max':>8} {'longest hold':>13}"
    for name in ("whole_at_once", "whole_slices", "compacted"):
        r = result[name]
        yield (
            f"{name:18} {r['records']:>8} {r['bytes'] / 1024:>7.0f} "
            f"{r['takeover_ms_p50']:>10.1f} ms {r['takeover_ms_max']:>5.1f} ms "
            f"{r['longest_hold_ms']:>10.1f} ms"
        )


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    log = await play_history(args.deals)
    result: dict[str, Any] = {"deals": args.deals, "repeat": args.repeat}
    result["records_written"] = sum(
        1 for raw in log if not isinstance(decode_record(raw), R.Checkpoint)
    )
    result.update(await measure(log, args.repeat))
    whole, compacted = result["whole_at_once"], result["compacted"]
    result["speedup"] = round(whole["takeover_ms_p50"] / max(compacted["takeover_ms_p50"], 0.1), 1)
    result["hold_under_50ms"] = compacted["longest_hold_ms"] < 50
    for line in table(result):
        print(line)
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
