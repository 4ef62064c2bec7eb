"""What ``deals: winnable`` costs: proofs a second, the share proven, refills, ``start``.

Three measurements, each beside its baseline:

1. **The solver on random layouts.** ``--layouts`` engine layouts per draw count
   (deterministic seeds ``bench-winnable-N`` by default, fresh CSPRNG seeds from
   server/ids.py with ``--fresh``) are given to the solver within the server's
   budget (server/rooms/proofs.py ``MAX_STATES``, ``--budget``), one worker process
   per core, and each winning line is replayed by the engine (protocol/proof.py
   ``check_proof``). Reported: proofs a second per core (proven layouts over the
   solver's CPU seconds), seconds per layout, and the share proven within the budget
   (impossible, undecided and refused too), printed beside the published
   winnability figures — which come from complete searches, so ours, within a
   budget, is a lower bound of the same thing.
2. **Refilling a pool of 8** from empty, per draw count, with the server's one
   worker process (``--workers``), as :class:`ProvenPools` does in the server.
3. **``start`` latency**, ``winnable`` against ``random``, on a real server
   process (``python -m server --memory``, caps lifted as in bench/server.py) while
   ``--rooms`` other rooms of 8 bots play at ``--rate`` moves a second: one host
   creates a room, starts it and measures the send-to-reply time; samples alternate
   between the two kinds every ``--interval`` seconds after the server's pool is
   warm. The server's ``klondike_winnable_waits`` counter tells how many winnable
   starts found the pool dry; the other rooms' move latency is reported too.

Usage: python -m bench.winnable [--layouts 40] [--budget N] [--fresh]
       [--samples 12] [--interval 0.5] [--rooms 2] [--rate 200]

Human tables, then one JSON object on the last line.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import time
import urllib.request
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bench.server import LOAD_LIMITS, PER_ROOM, Proc, summary
from client.codec import decode, encode
from client.connection import open_socket
from client.load import Load, LoadStats, open_rooms, percentile
from client.session import say_hello
from protocol.settings import DealRules
from server import ids
from server.rooms.proofs import MAX_STATES, ProvenPools, Verdict, prove_seed

# Published winnability of random deals, complete searches (no budget), for the table.
PUBLISHED = {
    1: "91.9% (ShootMe's Klondike-Solver, 1,000 deals)",
    3: "83.6% (ShootMe's Klondike-Solver, 1,000 deals); 81.945% ± 0.084% (Solvitaire)",
}
POOL = 8
SERVER = r"listening on ws://[^:]+:(\d+)/ws"


# ---------------------------------------------------------------------- 1. the solver


def _timed_prove(seed: str, draw: int, budget: int) -> tuple[str, float, int]:
    """In a worker: the verdict, the CPU seconds it took, the proof's length."""
    began = time.process_time()
    verdict, _, proof = prove_seed(seed, DealRules(draw=draw), budget)
    return verdict.value, time.process_time() - began, len(proof.moves) if proof else 0


def solve_layouts(draw: int, seeds: list[str], budget: int, workers: int) -> dict[str, Any]:
    wall0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        got = list(pool.map(_timed_prove, seeds, [draw] * len(seeds), [budget] * len(seeds)))
    wall = time.perf_counter() - wall0
    verdicts = {v.value: sum(1 for g in got if g[0] == v.value) for v in Verdict}
    cpu = sum(g[1] for g in got)
    proven = verdicts[Verdict.PROVEN.value]
    lengths = sorted(g[2] for g in got if g[0] == Verdict.PROVEN.value)
    return {
        "layouts": len(seeds),
        "verdicts": verdicts,
        "proven_share": round(proven / len(seeds), 4) if seeds else 0.0,
        "proofs_per_core_s": round(proven / cpu, 2) if cpu else 0.0,
        "s_per_layout": round(cpu / len(seeds), 3) if seeds else 0.0,
        "wall_s": round(wall, 2),
        "median_length": lengths[len(lengths) // 2] if lengths else 0,
    }


# ---------------------------------------------------------------------- 2. refills


async def refill_time(draw: int, budget: int, workers: int, fresh: bool) -> dict[str, Any]:
    """Seconds for a :class:`ProvenPools` to fill a pool of 8 from empty."""
    counter = itertools.count()
    new_seed = ids.new_seed if fresh else (lambda: f"bench-refill-{draw}-{next(counter)}")
    full = asyncio.Event()
    pools = ProvenPools(size=POOL, workers=workers, max_states=budget, new_seed=new_seed)
    pools.report_to(lambda _v: None, lambda _r, n: full.set() if n >= POOL else None)
    rules = DealRules(draw=draw)
    began = time.perf_counter()
    try:
        pools.want(rules)
        await asyncio.wait_for(full.wait(), 600)
        took = time.perf_counter() - began
    finally:
        await pools.close()
    judged = sum(pools.judged.values())
    return {"seconds": round(took, 2), "layouts_judged": judged, "workers": workers}


# ---------------------------------------------------------------------- 3. start latency


class Host:
    """A bare client that creates a room and starts it, timing the ``start``."""

    def __init__(self, ws: Any, kind: str) -> None:
        self.ws = ws
        self.kind = kind
        self.ids = itertools.count(1)

    @classmethod
    async def open(cls, url: str, name: str) -> Host:
        ws, kind = await open_socket(url, open_timeout=30, max_queue=None)
        await say_hello(ws, kind, {"name": name})
        return cls(ws, kind)

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        rid = next(self.ids)
        await self.ws.send(encode({"type": kind, "id": rid, **fields}, self.kind))
        while True:
            reply = decode(await self.ws.recv(), self.kind)
            if reply.get("id") == rid:
                if reply.get("type") == "error":
                    raise RuntimeError(f"{kind} refused: {reply}")
                return reply

    async def close(self) -> None:
        await self.ws.close()


async def _metric(port: int, name: str, label: str = "") -> float:
    def get() -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            return str(r.read().decode())

    text = await asyncio.to_thread(get)
    found = re.search(
        rf"^{re.escape(name)}(?:{{[^}}]*{re.escape(label)}[^}}]*}})? (\S+)$", text, re.M
    )
    return float(found.group(1)) if found else 0.0


async def start_latency(args: argparse.Namespace, draw: int) -> dict[str, Any]:
    proc = await Proc.start("server", SERVER, *LOAD_LIMITS, "--memory")
    url = f"ws://127.0.0.1:{proc.port}/ws"
    stats = LoadStats()
    load: Load | None = None
    try:
        settings = {"draw": draw, "deals_per_round": 1}
        if args.rooms:
            made = await open_rooms([url], args.rooms, PER_ROOM, 0, settings, stats)
            load = Load(made, stats, rate=args.rate)
            stats.window = (time.perf_counter(), time.perf_counter() + 3600)
            load.start()
        # Warm the server's pool: a winnable room asks for its rules, then wait
        # until 8 proven seeds are ready, as on a server that has been up a while.
        warm = await Host.open(url, "warm")
        await warm.request("create_room", settings={**settings, "deals": "winnable"})
        label = f'rules="classic/draw{draw}/passes0"'
        warm_began = time.perf_counter()
        while await _metric(proc.port, "klondike_winnable_pool", label) < POOL:
            await asyncio.sleep(0.2)
        warm_s = time.perf_counter() - warm_began
        await warm.close()
        waits0 = await _metric(proc.port, "klondike_winnable_waits_total")
        lat: dict[str, list[float]] = {"random": [], "winnable": []}
        for i in range(2 * args.samples):
            kind = "winnable" if i % 2 else "random"
            host = await Host.open(url, f"host{i}")
            try:
                await host.request("create_room", settings={**settings, "deals": kind})
                sent = time.perf_counter()
                await host.request("start")
                lat[kind].append((time.perf_counter() - sent) * 1000)
            finally:
                await host.close()
            await asyncio.sleep(args.interval)
        waits = await _metric(proc.port, "klondike_winnable_waits_total") - waits0
        left = await _metric(proc.port, "klondike_winnable_pool", label)
        if load is not None:
            stats.window = (stats.window[0], time.perf_counter())
            await load.stop(grace=5.0)
    finally:
        await proc.stop()
    out: dict[str, Any] = {
        kind: {
            "p50_ms": round(percentile(v, 50), 2),
            "p99_ms": round(percentile(v, 99), 2),
            "samples": len(v),
        }
        for kind, v in lat.items()
    }
    out["winnable_waits"] = int(waits)
    out["pool_left"] = int(left)
    out["warm_s"] = round(warm_s, 2)
    out["other_rooms"] = {"rooms": args.rooms, **summary(stats)} if args.rooms else None
    return out


# ---------------------------------------------------------------------- the run


def _seeds(n: int, fresh: bool) -> list[str]:
    return [ids.new_seed() if fresh else f"bench-winnable-{i}" for i in range(n)]


async def main(args: argparse.Namespace) -> dict[str, Any]:
    cores = os.cpu_count() or 1
    result: dict[str, Any] = {
        "cores": cores,
        "budget": args.budget,
        "seeds": "fresh" if args.fresh else "deterministic",
    }
    print(f"Solver on random layouts (budget {args.budget:,} states, {cores} worker processes)")
    print(
        f"{'draw':<6}{'layouts':>8}{'proven':>8}{'impossible':>11}{'undecided':>10}"
        f"{'refused':>8}{'proofs/core-s':>14}{'s/layout':>9}   published (complete search)"
    )
    solver: dict[str, Any] = {}
    for draw in (1, 3):
        r = solve_layouts(draw, _seeds(args.layouts, args.fresh), args.budget, cores)
        solver[f"draw{draw}"] = r
        v = r["verdicts"]
        print(
            f"{draw:<6}{r['layouts']:>8}{r['proven_share']:>8.1%}{v['impossible']:>11}"
            f"{v['undecided']:>10}{v['refused']:>8}{r['proofs_per_core_s']:>14.2f}"
            f"{r['s_per_layout']:>9.3f}   {PUBLISHED[draw]}"
        )
    result["solver"] = solver
    result["published"] = {"draw1": PUBLISHED[1], "draw3": PUBLISHED[3]}

    print(f"\nRefilling a pool of {POOL} from empty ({args.workers} worker process(es))")
    refill: dict[str, Any] = {}
    for draw in (1, 3):
        r = await refill_time(draw, args.budget, args.workers, args.fresh)
        refill[f"draw{draw}"] = r
        print(f"draw {draw}: {r['seconds']:.2f} s, {r['layouts_judged']} layouts judged")
    result["refill"] = refill

    draw = args.latency_draw
    print(
        f"\n`start` latency, draw {draw}, {args.samples} samples per kind, one every"
        f" {2 * args.interval:g} s, while {args.rooms} other rooms of {PER_ROOM} bots play"
        f" at {args.rate:g} moves/s"
    )
    lat = await start_latency(args, draw)
    for kind in ("random", "winnable"):
        r = lat[kind]
        print(f"{kind:<10} p50 {r['p50_ms']:>8.2f} ms   p99 {r['p99_ms']:>8.2f} ms")
    print(
        f"winnable starts that found the pool dry: {lat['winnable_waits']}"
        f" (pool of {POOL} warm after {lat['warm_s']:.1f} s; {lat['pool_left']} left at the end)"
    )
    other = lat["other_rooms"]
    if other:
        print(
            f"other rooms: {other['moves_per_s']:.0f} moves/s, move p50 {other['p50_ms']:.2f} ms,"
            f" p99 {other['p99_ms']:.2f} ms, {other['errors']} errors"
        )
    result["start"] = lat
    return result


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--layouts", type=int, default=40, help="layouts per draw count (40)")
    parser.add_argument(
        "--budget", type=int, default=MAX_STATES,
        help=f"solver states per layout (the server's, {MAX_STATES:,})",
    )  # fmt: skip
    parser.add_argument("--fresh", action="store_true",
                        help="fresh CSPRNG seeds instead of deterministic ones")  # fmt: skip
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes refilling a pool (the server's, 1)")  # fmt: skip
    parser.add_argument("--samples", type=int, default=12, help="`start`s per kind (12)")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between starts")
    parser.add_argument("--rooms", type=int, default=2, help="other rooms of 8 bots (2)")
    parser.add_argument("--rate", type=float, default=200.0,
                        help="their moves a second, all together (200)")  # fmt: skip
    parser.add_argument("--latency-draw", type=int, choices=(1, 3), default=3,
                        help="the draw of the `start` rooms (3)")  # fmt: skip
    return parser.parse_args(argv)


if __name__ == "__main__":
    res = asyncio.run(main(parse()))
    print(json.dumps(res))
