"""What the Redis store and a second node cost, under the same load as bench/server.py.

Runs, in one go and on one machine, the same race load (R rooms of 8 bot players
plus spectators: client/load.py, as bench/server.py and ``klondike-race loadtest``)
against:

1. the server on the in-memory store, flat out;
2. the server on the Redis store (a private ``redis-server`` with
   ``appendonly yes``/``appendfsync always``, so every move is fsynced before it is
   acknowledged), flat out;
3. the same at half the rate the Redis run reached: the latency a room sees when
   the server is not saturated;
4. two nodes on that Redis, each room's players split between them: half of every
   room's moves are relayed from the node their player sits on to the room's owner.

Targets: the Redis store keeps at least 60 % of the in-memory moves a
second, and its p99 at half load stays under 25 ms. The last line is JSON.

Usage: python -m bench.redis [--rooms 8] [--seconds 5] [--spectators 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.server import LOAD_LIMITS, PER_ROOM, Proc, drive, show, store_args, store_verdict

SERVER = r"listening on ws://[^:]+:(\d+)/ws"


class Redis:
    """A private, durable redis-server for the run."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="bench-redis-"))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server", "--port", str(self.port),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
                "--appendfsync", "always", "--dir", str(self.dir),
            ],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


async def start_server(redis: Redis | None) -> Proc:
    extra = LOAD_LIMITS + (["--redis", redis.url] if redis else ["--memory"])
    return await Proc.start("server", SERVER, *extra)


async def one(redis: Redis | None, args: argparse.Namespace, rate: float = 0.0) -> dict[str, Any]:
    proc = await start_server(redis)
    try:
        return await drive(
            "race", [proc], args.rooms, args.spectators, rate, args.warmup, args.seconds
        )
    finally:
        await proc.stop()


async def main(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"rooms": args.rooms, "players": args.rooms * PER_ROOM}
    memory = await one(None, args)
    show("in-memory store", memory)
    redis = Redis()
    try:
        durable = await one(redis, args)
        show("redis store", durable)
        half = durable["moves_per_s"] / 2
        paced = await one(redis, args, half)
        show(f"redis store @ {half:.0f}/s", paced)
        procs = [await start_server(redis), await start_server(redis)]
        try:
            # Each room lives on the first node; its seats alternate between the two.
            two = await drive(
                "race",
                procs,
                args.rooms,
                args.spectators,
                0.0,
                args.warmup,
                args.seconds,
                settings={"deals_per_round": 20},
            )
        finally:
            for p in procs:
                await p.stop()
        show("two nodes, redis", two)
    finally:
        redis.stop()
    verdict = store_verdict("redis", memory, durable, paced)
    result.update(
        memory=memory,
        redis=durable,
        redis_half_load=dict(paced, target_rate=half),
        two_nodes=two,
        redis_vs_memory=verdict["ratio"],
        targets_met=verdict["targets_met"],
    )
    return result


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(store_args(__doc__)))))
