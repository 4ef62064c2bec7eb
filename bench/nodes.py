"""Several server processes on one machine, measured at human pace: what a move
costs the whole deployment (every node and redis-server), beside one process.

Several processes can serve one game only through the cluster (``serve --redis``:
rooms in Redis, one owner node per room by lease, a client whose socket is on
another node tunnelled to the owner over Redis pub/sub: server/cluster/). So the
run compares, with bench/capacity.py's load (rooms of 8 players and a spectator,
a real legal move every 2–4 s per player) and its step figures:

``memory``  one process, the in-memory store (what bench/capacity.py measures);
``redis``   one process on the Redis store: the cluster's baseline;
``owner``   two processes on that Redis, rooms created on each in turn and every
            seat of a room connected to the room's owner: no tunnel. The server
            does not send a client to its room's node (a socket stays where it
            landed, and is tunnelled), so here the load picks the right node;
``tunnel``  two processes, each room's players alternating between its owner and
            the other node: half of the moves are tunnelled (the spectator sits
            on the owner).

Every server process and redis-server are pinned to CPU 0, the load to CPU 1: the
total capacity of one core cannot rise, so what is measured is CPU per move of the
deployment (the nodes', from ``/proc/PID/stat``, and redis-server's, all its
threads, the same way). redis-server is a private one on a free port, started
per configuration as bench/redis.py starts it, with the persistence the product
asks for (README's "What each store keeps"): ``appendonly yes``, ``appendfsync
always``, its file in a temporary directory on this machine's disk.

Configurations run one after another, each stepping its players up
(``--steps``); ``--rounds 2`` runs the whole sequence twice (interleaved: the
drift of a shared machine shows as a difference between rounds). Last, from the
highest step's figures, a PROJECTION (not a measurement: this machine has two
cores and the load needs one) of the players k processes on k cores would hold,
with Redis on a core of its own.

Usage: python -m bench.nodes [--steps 2000,4000] [--seconds 15] [--warmup 5]
                             [--rounds 1] [--configs memory,redis,owner,tunnel]
       python -m bench.nodes --quick      (a tiny run: the smoke test's)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.capacity import (
    LOAD_CPU,
    SERVER_CPU,
    SETTINGS,
    LagMeter,
    Target,
    _measure,
    _uvloop,
    load_options,
    on_uvloop,
)
from bench.redis import Redis
from bench.seats import MOVE_EVERY
from bench.server import PER_ROOM, cpu_times
from bench.wsload import HumanLoad

MOVES_PER_PLAYER_S = 1 / (sum(MOVE_EVERY) / 2)  # a move every 3 s on average
PERSISTENCE = "appendonly yes, appendfsync always"  # bench/redis.py's Redis, as deployed
TUNNELLED = (PER_ROOM // 2) / PER_ROOM  # the players on the other node, run "tunnel"
HELD_SHARE = 0.85  # of a core: the race server held p99 < 50 ms at 85 % busy (docs/performance.md)


@dataclass(frozen=True)
class Config:
    name: str
    label: str
    nodes: int
    redis: bool
    tunnelled: bool


CONFIGS = {
    c.name: c
    for c in (
        Config("memory", "1 process, memory", 1, False, False),
        Config("redis", "1 process, redis", 1, True, False),
        Config("owner", "2 procs, on owner", 2, True, False),
        Config("tunnel", "2 procs, half tunnelled", 2, True, True),
    )
}


def redis_version() -> str:
    said = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout
    return next((w[2:] for w in said.split() if w.startswith("v=")), "?")


def pin(pid: int, cpu: int) -> None:
    """Every thread of ``pid`` (redis-server's background threads too) on ``cpu``."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(int(tid), {cpu})


@dataclass
class Deployment:
    """The server side of one configuration, read as one process by capacity.py's
    step: its nodes' CPU and memory summed. Each CPU reading also takes
    redis-server's at the same instant, so its share covers the step's window."""

    nodes: list[Target]
    redis: Redis | None
    tunnelled: bool
    readings: list[tuple[float, float]] = field(default_factory=list)  # (when, redis cpu)

    def cpu_times(self) -> tuple[float, float]:
        user = kernel = 0.0
        for node in self.nodes:
            u, k = node.cpu_times()
            user, kernel = user + u, kernel + k
        spent = sum(cpu_times(self.redis.proc.pid)) if self.redis else 0.0
        self.readings.append((time.perf_counter(), spent))
        return user, kernel

    def rss_kb(self) -> int:
        return sum(node.rss_kb() for node in self.nodes)

    async def snapshot(self) -> dict[str, Any] | None:
        return None

    def placement(self, room: int) -> Sequence[str]:
        """Where room ``room``'s seats connect: the creator (who makes its node the
        owner) on node ``room mod n``; the players after it on the owner, or, tunnelled,
        on each node in turn; the spectator on the owner."""
        n = len(self.nodes)
        owner = self.nodes[room % n].url
        if not self.tunnelled:
            return [owner] * (PER_ROOM + 1)
        return [self.nodes[(room + p) % n].url for p in range(PER_ROOM)] + [owner]

    def redis_share(self) -> float:
        """redis-server's share of a core between the last two readings."""
        (t0, c0), (t1, c1) = self.readings[-2:]
        return (c1 - c0) / (t1 - t0) if self.redis else 0.0


async def run_config(config: Config, args: argparse.Namespace, round_: int) -> list[dict[str, Any]]:
    """Start the deployment, step the players up on it, stop it: each step's figures."""
    redis = Redis() if config.redis else None
    if redis is not None:
        pin(redis.proc.pid, SERVER_CPU)
    delay = [] if args.progress_delay is None else ["--progress-delay", str(args.progress_delay)]
    store = ["--redis", redis.url] if redis else ["--memory"]
    nodes: list[Target] = []
    out: list[dict[str, Any]] = []
    try:
        for _ in range(config.nodes):
            nodes.append(await Target.start("race", None, delay, store))
        deployment = Deployment(nodes, redis, config.tunnelled)
        load = HumanLoad("race", nodes[0].url, SETTINGS, PER_ROOM, deployment.placement)
        lag = LagMeter()
        lag.start()
        rss0 = deployment.rss_kb()
        try:
            for players in args.steps:
                # at least a room per node, so that each node owns rooms
                want = max(config.nodes, players // PER_ROOM)
                if want > len(load.rooms):
                    try:
                        await load.add_rooms(want - len(load.rooms))
                    except RuntimeError as exc:
                        print(f"{config.label:<24} {players:>6} players  NOT SEATED: {exc}")
                        out.append({"players": players, "round": round_, "not_seated": str(exc)})
                        break
                await asyncio.sleep(args.warmup)
                step = await _measure(deployment, load.stats, lag, len(load.rooms), args)
                step["rss_per_conn_kb"] = round(
                    (step.pop("rss_kb") - rss0) / step["connections"], 1
                )
                add_redis(step, deployment)
                step["round"] = round_
                out.append(step)
                show(config, step)
        finally:
            lag.stop()
            await load.stop(grace=5.0)
    finally:
        for node in nodes:
            await node.stop()
        if redis is not None:
            redis.stop()
    return out


def add_redis(step: dict[str, Any], deployment: Deployment) -> None:
    """redis-server's share and µs a move, and the deployment's (nodes + redis)."""
    share = deployment.redis_share()
    per_move = share / step["moves_per_s"] * 1e6 if step["moves_per_s"] else 0.0
    step["redis_cpu"] = round(share, 3)
    step["redis_us_per_move"] = round(per_move, 1)
    step["deployment_cpu"] = round(step["server_cpu"] + share, 3)
    step["deployment_us_per_move"] = round(step["cpu_us_per_move"] + per_move, 1)


def show(config: Config, s: dict[str, Any]) -> None:
    head = f"{config.label:<24} {s['players']:>6} players"
    if s["refused"]:
        print(f"{head}  REFUSED, the load is the bottleneck: {s['refused']}", flush=True)
        return
    print(
        f"{head}  {s['moves_per_s']:>6.0f} moves/s  p50 {s['p50_ms']:>6.2f}"
        f"  p99 {s['p99_ms']:>7.2f} ms  nodes {s['server_cpu']:>5.1%}"
        f" {s['cpu_us_per_move']:>4.0f} µs/move (kernel {s['kernel_us_per_move']:.0f})"
        f"  redis {s['redis_cpu']:>5.1%} {s['redis_us_per_move']:>4.0f} µs/move"
        f"  = {s['deployment_us_per_move']:>4.0f} µs/move ({s['deployment_cpu']:.1%} of CPU 0)"
        f"  {s['frames_per_move']:.1f} frames/move  errors {s['errors']}"
        f"  [load {s['load_cpu']:.0%}, lag p99 {s['load_lag_p99_ms']:.1f} ms]",
        flush=True,
    )


# ---------------------------------------------------------------------- what the figures say


def summarize(runs: dict[str, list[dict[str, Any]]], top: int) -> dict[str, dict[str, float]]:
    """Per configuration, the medians over rounds of its steps at ``top`` players."""
    out: dict[str, dict[str, float]] = {}
    keys = ("cpu_us_per_move", "kernel_us_per_move", "redis_us_per_move", "deployment_us_per_move")
    for name, steps in runs.items():
        measured = [s for s in steps if s.get("players") == top and not s.get("refused")]
        measured = [s for s in measured if "not_seated" not in s]
        if measured:
            out[name] = {k: round(statistics.median(s[k] for s in measured), 1) for k in keys}
            out[name]["p99_ms"] = round(statistics.median(s["p99_ms"] for s in measured), 2)
            out[name]["errors"] = sum(s["errors"] for s in measured)
    return out


def compare(summary: dict[str, dict[str, float]]) -> dict[str, float]:
    """What Redis, a second process and a tunnel cost a move, in µs of CPU."""
    got: dict[str, float] = {}
    mem, one, owner, tunnel = (summary.get(n) for n in ("memory", "redis", "owner", "tunnel"))
    if mem and one:
        got["redis_store_nodes_us"] = round(one["cpu_us_per_move"] - mem["cpu_us_per_move"], 1)
        got["redis_server_us"] = one["redis_us_per_move"]
        got["redis_store_total_us"] = round(
            one["deployment_us_per_move"] - mem["deployment_us_per_move"], 1
        )
    if one and owner:
        got["second_process_us"] = round(
            owner["deployment_us_per_move"] - one["deployment_us_per_move"], 1
        )
    if owner and tunnel:  # a tunnelled seat's move: the difference over their share
        for key, name in (("cpu_us_per_move", "nodes"), ("redis_us_per_move", "redis")):
            extra = (tunnel[key] - owner[key]) / TUNNELLED
            got[f"tunnelled_move_{name}_us"] = round(extra, 1)
        got["tunnelled_move_us"] = round(
            got["tunnelled_move_nodes_us"] + got["tunnelled_move_redis_us"], 1
        )
    return got


def project(summary: dict[str, dict[str, float]], cost: dict[str, float]) -> list[dict[str, Any]]:
    """PROJECTED players on k node cores + one core for redis-server, from the
    two-process figures: each node's CPU per move as measured with every seat on
    its room's owner, plus, when clients land on any of k nodes at random, the
    (k-1)/k of moves tunnelled at the measured cost of a tunnelled move (the
    nodes' part on the nodes' cores, Redis' on Redis'). Players a core holds =
    core-seconds / (CPU per move × moves a player-second); a figure at 100 % of
    each core and at 85 %, where one in-memory process held p99 < 50 ms. A
    tunnel cost measured below zero (noise) counts as none."""
    owner = summary.get("owner")
    if owner is None or "tunnelled_move_nodes_us" not in cost:
        return []
    if owner["cpu_us_per_move"] <= 0:  # a tiny run may see no clock tick
        return []
    rows: list[dict[str, Any]] = []
    for k in (1, 2, 4, 8):
        for landing, share in (("on owner", 0.0), ("at random", (k - 1) / k)):
            if k == 1 and landing != "on owner":
                continue
            node_us = owner["cpu_us_per_move"] + share * max(0.0, cost["tunnelled_move_nodes_us"])
            redis_us = owner["redis_us_per_move"] + share * max(
                0.0, cost["tunnelled_move_redis_us"]
            )
            nodes_hold = k / (node_us * 1e-6 * MOVES_PER_PLAYER_S)
            redis_hold = 1 / (redis_us * 1e-6 * MOVES_PER_PLAYER_S) if redis_us > 0 else 0.0
            ceiling = min(nodes_hold, redis_hold) if redis_hold else nodes_hold
            rows.append(
                {
                    "node_cores": k,
                    "seats": landing,
                    "node_us_per_move": round(node_us, 1),
                    "redis_us_per_move": round(redis_us, 1),
                    "limit": "nodes" if ceiling == nodes_hold else "redis",
                    "players_at_100pct": int(ceiling),
                    "players_at_85pct": int(ceiling * HELD_SHARE),
                }
            )
    return rows


def report(
    summary: dict[str, dict[str, float]],
    cost: dict[str, float],
    rows: list[dict[str, Any]],
    top: int,
) -> None:
    print(f"\nat {top} players (medians over rounds), µs of CPU a move:")
    print(f"{'':<24} {'nodes':>7} {'kernel':>7} {'redis':>7} {'total':>7} {'p99 ms':>8}")
    for name, s in summary.items():
        print(
            f"{CONFIGS[name].label:<24} {s['cpu_us_per_move']:>7.0f}"
            f" {s['kernel_us_per_move']:>7.0f} {s['redis_us_per_move']:>7.0f}"
            f" {s['deployment_us_per_move']:>7.0f} {s['p99_ms']:>8.2f}"
        )
    for key, value in cost.items():
        print(f"  {key:<28} {value:>7.0f} µs")
    mem = summary.get("memory")
    if mem and mem["deployment_us_per_move"] > 0:  # a tiny run may see no clock tick
        one_core = 1 / (mem["deployment_us_per_move"] * 1e-6 * MOVES_PER_PLAYER_S)
        print(
            "\nmeasured baseline: 1 process, memory,"
            f" {mem['deployment_us_per_move']:.0f} µs a move:"
            f" {int(one_core):,} players at 100 % of its core, {int(one_core * HELD_SHARE):,}"
            f" at {HELD_SHARE:.0%}"
        )
    print(
        "PROJECTION (not measured): k node processes on k cores + redis-server on a core of"
        f" its own, a move every {1 / MOVES_PER_PLAYER_S:g} s per player:"
    )
    if not rows:
        print("  none: it needs the owner and tunnel runs, with CPU time seen in them")
    for r in rows:
        print(
            f"  {r['node_cores']} node cores, seats {r['seats']:<9}"
            f"  nodes {r['node_us_per_move']:>4.0f} µs/move"
            f"  redis {r['redis_us_per_move']:>4.0f}"
            f"  -> {r['players_at_100pct']:>7,} players at 100 %,"
            f" {r['players_at_85pct']:>7,} at {HELD_SHARE:.0%} (limit: {r['limit']})"
        )


async def main(args: argparse.Namespace) -> dict[str, Any]:
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setaffinity(0, {LOAD_CPU})
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    version = redis_version()
    print(
        f"nodes: steps {args.steps} players, {args.seconds:g} s each after {args.warmup:g} s,"
        f" {args.rounds} round(s) of {','.join(args.configs)}; rooms of {PER_ROOM} + 1 spectator,"
        f" a move every {MOVE_EVERY[0]:g}-{MOVE_EVERY[1]:g} s; every server process and"
        f" redis-server {version} ({PERSISTENCE}) on CPU {SERVER_CPU}, load on CPU {LOAD_CPU}"
        f" ({'uvloop' if _uvloop() else 'asyncio'})",
        flush=True,
    )
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in args.configs}
    for round_ in range(args.rounds):
        for name in args.configs:
            runs[name] += await run_config(CONFIGS[name], args, round_)
    top = max(args.steps)
    summary = summarize(runs, top)
    cost = compare(summary)
    rows = project(summary, cost)
    report(summary, cost, rows, top)
    return {
        "steps": args.steps,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "redis_version": version,
        "redis_persistence": PERSISTENCE,
        "loadavg": list(os.getloadavg()),
        "configs": runs,
        "summary_at": top,
        "summary": summary,
        "costs_us": cost,
        "projection": rows,
    }


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--steps", default="2000,4000", help="players at each step (rooms of 8)")
    parser.add_argument("--seconds", type=float, default=15.0, help="measured seconds per step")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before measuring a step")
    parser.add_argument("--rounds", type=int, default=1, help="times the configurations run")
    parser.add_argument(
        "--configs", default=",".join(CONFIGS), help=f"which, in order: {', '.join(CONFIGS)}"
    )
    load_options(parser)
    parser.add_argument("--quick", action="store_true", help="a tiny run (the smoke test's)")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps, args.seconds, args.warmup = "16", 1.0, 0.5
    args.steps = [int(x) for x in str(args.steps).split(",") if x]
    args.configs = [x for x in str(args.configs).split(",") if x]
    unknown = set(args.configs) - set(CONFIGS)
    if unknown:
        parser.error(f"unknown configurations: {sorted(unknown)}")
    return args


if __name__ == "__main__":
    print(json.dumps(on_uvloop(main(parse()))))
