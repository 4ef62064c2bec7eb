"""What a deal's end costs the event loop, stage by stage, in one process.

A deal ends on the move that ends the last board still in play: that one command
carries ``deal_ended`` (the revealed deal, every log with its results, the sheet)
and the ``break`` (or ``round_over``), and the runner writes a compaction snapshot
behind them (server/rooms/runner.py). All of it runs in one pass of the event loop,
so its sum is a hold every other room on the core waits through.

This drives the room core the way the shell does (decide, encode the records,
commit, snapshot, encode every event once per distinct map, as the fan-out does),
with rooms of 8 players (the product's bot, with chance) and a spectator,
``deals_per_round`` 20, and times each stage of each deal-ending command, and of
an ordinary move for scale. Times are wall time of this process on one core, in
ms; run it on a quiet core (or compare runs back to back).

Usage: python -m bench.dealend [--rounds 2] [--moves-per-deal 0]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any, TypeVar

from protocol.moves import Status
from protocol.strategy import Bot
from protocol.views import player_view
from protocol.wire import encode
from server.core import decide as C
from server.core import records as R
from server.core.records import Decision, encode_record
from server.core.room import Room
from server.core.values import Fanout, Role

T = TypeVar("T")
PLAYERS = 8


def timed(into: dict[str, list[float]], stage: str, f: Callable[[], T]) -> T:
    t0 = time.perf_counter()
    out = f()
    into.setdefault(stage, []).append((time.perf_counter() - t0) * 1000)
    return out


def fan_out(room: Room, events: list[Fanout]) -> int:
    """Encode each event once per distinct map, as server/rooms/runner.py does."""
    cache: dict[int, bytes | str] = {}
    total = 0
    for fan in events:
        for member in room.members.values():
            msg = fan.for_member(member)
            data = cache.get(id(msg))
            if data is None:
                data = cache[id(msg)] = encode(msg, True)
            total += len(data)
    return total


def play(rounds: int, seed: int) -> dict[str, list[float]]:
    rng = random.Random(seed)
    seeds = (f"bench-{seed}-{i}" for i in itertools.count())
    now = [1_000_000]

    def ctx() -> C.Ctx:
        return C.Ctx(now[0], lambda: next(seeds))

    room = Room("BENCH1")
    times: dict[str, list[float]] = {}
    last_snapshot = [0]

    def run(decision: Decision, stages: dict[str, list[float]] | None) -> None:
        into = stages if stages is not None else {}
        timed(into, "encode records", lambda: [encode_record(r) for r in decision.records])
        events = timed(into, "commit (fold + events)", lambda: room.commit(decision))
        if any(isinstance(r, (R.DealEnded, R.RoundStarted)) for r in decision.records):
            timed(into, "snapshot (build + encode)", room.take_checkpoint)
            last_snapshot[0] = room.n_records
        timed(into, "fan-out encode", lambda: fan_out(room, events))

    ids = [f"p{i}" for i in range(PLAYERS)]
    run(C.decide_create(room, ids[0], "P0", {"deals_per_round": 20}, ctx()), None)
    for pid in ids[1:]:
        run(C.decide_join(room, pid, pid.upper(), Role.PLAYER, ctx()), None)
    run(C.decide_join(room, "s0", "S0", Role.SPECTATOR, ctx()), None)
    run(C.decide_start(room, ids[0], ctx()), None)
    for _ in range(rounds):
        while room.state.value != "round_over":
            if room.state.value == "break":
                now[0] += 10_000
                run(C.decide_tick(room, ctx()), None)
                continue
            deal = room.running
            assert deal is not None
            bots = {p: Bot(chance=rng) for p in deal.replays}
            while room.running is deal:
                live = [p for p, r in deal.replays.items() if r.board.status is Status.PLAYING]
                pid = rng.choice(live)
                now[0] += rng.randint(200, 500)
                board = deal.replays[pid].board
                move = bots[pid].decide(player_view(board))
                n = len(deal.logs[pid])
                stages: dict[str, list[float]] = {}
                t0 = time.perf_counter()
                decision = C.decide_move(room, pid, deal.number, n, move, ctx())
                stages["decide"] = [(time.perf_counter() - t0) * 1000]
                ends = any(isinstance(r, R.DealEnded) for r in decision.records)
                run(decision, stages)
                label = "deal end" if ends else "move"
                for stage, ms in stages.items():
                    times.setdefault(f"{label}: {stage}", []).extend(ms)
                times.setdefault(f"{label}: total", []).append(sum(sum(v) for v in stages.values()))
            times.setdefault("moves per deal", []).append(sum(len(x) for x in deal.logs.values()))
        run(C.decide_rematch(room, ids[0], ctx()), None)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    gc.collect()
    gc.freeze()
    times = play(args.rounds, args.seed)
    out: dict[str, Any] = {}
    print(f"{'stage':<42} {'median':>8} {'p90':>8} {'max':>8}  (ms; {args.rounds} rounds)")
    for stage, xs in sorted(times.items()):
        xs = sorted(xs)
        p90 = xs[int(0.9 * (len(xs) - 1))]
        row = {"median": statistics.median(xs), "p90": p90, "max": xs[-1], "n": len(xs)}
        out[stage] = {k: round(v, 3) for k, v in row.items()}
        print(f"{stage:<42} {row['median']:>8.3f} {p90:>8.3f} {xs[-1]:>8.3f}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
