"""How much the race server costs over a bare WebSocket relay, under the same load.

The server runs in a subprocess (``python -m server --port 0``); this process is
the load, the one ``klondike-race loadtest`` runs (client/load.py): R rooms of 8
players (plus spectators), each a socket with the product's bot (client/bot.py)
choosing real moves from its board view, the host rematching when a round ends.
Measured, after a warm-up:

- accepted moves a second (``moved`` replies received);
- move-to-acknowledgement latency, p50 and p99, as the bot sees it (send to reply);
- memory per connection: the server's RSS growth once every bot has joined,
  divided by the connections (and again at the end, with the game state);
- the server's CPU use, to tell a saturated server from a saturated load.

Then the same load drives the baseline (bench/relay.py): the same rooms of
sockets, paced alike, each player sending a move-sized frame that is relayed to
the 8 + spectators of its room, the sender's own copy being its acknowledgement.
Both results print, with their ratio; the last line is JSON.

``--rate`` paces the bots to a total target of moves a second instead of flat out.
``--players N`` is the capacity check: N players (N/8 rooms); without ``--rate`` it
first finds the maximum rate, then runs at half of it and reports that run's
latency (target: p99 < 20 ms with 1,000 players).

Usage: python -m bench.server [--rooms 4] [--seconds 5] [--spectators 1]
       python -m bench.server --players 1000 [--rate MOVES_PER_S]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from client.codec import encode
from client.connection import MAX_FRAME
from client.load import (
    Load,
    LoadRoom,
    LoadStats,
    Pacer,
    Seat,
    Watcher,
    open_rooms,
    percentile,
)

ROOT = Path(__file__).resolve().parent.parent
PER_ROOM = 8
RATE_LIMIT = 100_000  # the server's frames a second per connection: bots play flat out
# Every client of a load comes from one address (loopback): lift the server's
# per-address caps, or it would rightly refuse most of them. The tests' server
# processes use the same flags (tests/support/processes.py).
UNCAPPED = [
    "--connections-per-address",
    "1000000",
    "--sessions-per-minute",
    "1000000",
    "--rooms-per-minute",
    "1000000",
    "--join-codes-per-minute",
    "1000000",
    "--friend-asks-per-minute",
    "1000000",
    "--sign-ups-per-minute",
    "1000000",
]
LOAD_LIMITS = ["--rate-limit", str(RATE_LIMIT), *UNCAPPED]


def summary(stats: LoadStats) -> dict[str, Any]:
    """Moves a second and latencies in the measured window."""
    span = stats.window[1] - stats.window[0]
    lat = [x * 1000 for x in stats.latencies]
    return {
        "moves_per_s": round(stats.moves / span, 1) if span else 0.0,
        "acks": stats.moves,
        "p50_ms": round(percentile(lat, 50), 2),
        "p99_ms": round(percentile(lat, 99), 2),
        "errors": sum(n for code, n in stats.errors.items() if not code.startswith("crashed:")),
    }


# ---------------------------------------------------------------------- processes


def rss_kb(pid: int) -> int:
    """A process's resident memory, from /proc (Linux, like taskset)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_times(pid: int) -> tuple[float, float]:
    """A process's CPU time so far, (user, system), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def cpu_s(pid: int) -> float:
    """A process's CPU time so far (user + system)."""
    return sum(cpu_times(pid))


class Proc:
    """A server subprocess that logs the port it listens on."""

    def __init__(self, proc: asyncio.subprocess.Process, port: int) -> None:
        self.proc = proc
        self.port = port

    @classmethod
    async def start(
        cls,
        module: str,
        pattern: str,
        *extra: str,
        env_extra: Mapping[str, str] | None = None,
        cwd: Path = ROOT,
    ) -> Proc:
        """``env_extra`` and ``cwd``: another copy of the code to run (bench/compiled.py)."""
        env = dict(os.environ, PYTHONUNBUFFERED="1", **(env_extra or {}))
        env.pop("KLONDIKE_REDIS_URL", None)
        # BENCH_PROFILE=FILE runs the server through bench/profile.py (its GC and
        # sampling report goes to FILE at exit): a bench-only hook, not a product flag.
        profile = os.environ.get("BENCH_PROFILE") if module == "server" else None
        hook = ["bench.profile", "--out", profile, module, "--"] if profile else [module]
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", *hook, "--port", "0", *extra,
            cwd=cwd, env=env, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert proc.stderr is not None
        while True:
            line = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()
            if not line:
                raise RuntimeError(f"{module} exited before listening")
            found = re.search(pattern, line)
            if found:
                asyncio.get_running_loop().create_task(_drain(proc.stderr))
                return cls(proc, int(found.group(1)))

    def rss_kb(self) -> int:
        return rss_kb(self.proc.pid)

    def cpu_s(self) -> float:
        return cpu_s(self.proc.pid)

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.terminate()
            await asyncio.wait_for(self.proc.wait(), 30)


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.readline():
        pass


# ---------------------------------------------------------------------- the baseline's load


class RelayBot(Seat):
    """A player against the relay: a move-sized frame, acknowledged by its echo.

    The relay passes frames on untouched, so the echo is found by comparing bytes:
    like a race player (client/load.py), it does not decode frames it has no use for.
    """

    def __init__(self, ws: Any, stats: LoadStats, me: int) -> None:
        super().__init__(ws, stats, kind="")
        self.me = me

    async def play(self, load: Load, pacer: Pacer) -> None:
        move = {"kind": "tableau_tableau", "from": 6, "to": 2, "count": 1}
        for rid in itertools.count(1):
            if pacer.interval:
                await pacer.wait()
            if load.stopping:
                return
            msg = {"type": "move", "id": rid, "p": self.me, "deal": 1, "n": rid - 1, "move": move}
            frame = encode(msg, "")
            self.in_flight = True
            sent = time.perf_counter()
            await self.ws.send(frame)
            while await self.ws.recv() != frame:
                pass
            self.in_flight = False
            self.stats.ack(sent, time.perf_counter())


async def relay_room(url: str, room: int, spectators: int, stats: LoadStats) -> LoadRoom:
    room_url = f"{url}?room={room}"

    async def sock() -> Any:
        return await connect(room_url, compression=None, max_size=MAX_FRAME, open_timeout=30)

    players: list[Seat] = [RelayBot(await sock(), stats, i) for i in range(PER_ROOM)]
    watchers: list[Seat] = [Watcher(await sock(), stats) for _ in range(spectators)]
    return LoadRoom(players, watchers)


async def _gather_limited(
    factories: list[Callable[[], Awaitable[Any]]], limit: int = 50
) -> list[Any]:
    sem = asyncio.Semaphore(limit)

    async def one(f: Callable[[], Awaitable[Any]]) -> Any:
        async with sem:
            return await f()

    return list(await asyncio.gather(*(one(f) for f in factories)))


# ---------------------------------------------------------------------- runs


async def drive(
    kind: str,
    procs: list[Proc],
    rooms: int,
    spectators: int,
    rate: float,
    warmup: float,
    seconds: float,
    settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Connect every seat, measure memory, run the load, measure again.

    With several ``procs`` (server nodes sharing a store) each room is created on
    the first and its seats alternate between them.
    """
    urls = [f"ws://127.0.0.1:{p.port}/ws" for p in procs]
    rss0 = sum(p.rss_kb() for p in procs)
    stats = LoadStats()
    if kind == "race":
        made = await open_rooms(urls, rooms, PER_ROOM, spectators, settings or {}, stats)
        if len(made) < rooms:
            raise RuntimeError(f"only {len(made)} of {rooms} rooms opened: {dict(stats.errors)}")
    else:
        made = await _gather_limited(
            [lambda r=r: relay_room(urls[0], r, spectators, stats) for r in range(rooms)]  # type: ignore[misc]
        )
    conns = rooms * (PER_ROOM + spectators)
    await asyncio.sleep(0.2)
    rss1 = sum(p.rss_kb() for p in procs)
    load = Load(made, stats, rate=rate)
    start = time.perf_counter()
    stats.window = (start + warmup, start + warmup + seconds)
    load.start()
    await asyncio.sleep(warmup)
    cpu0, wall0, mine0 = sum(p.cpu_s() for p in procs), time.perf_counter(), time.process_time()
    rss_w = sum(p.rss_kb() for p in procs)
    await asyncio.sleep(seconds)
    wall = time.perf_counter() - wall0
    cpu = (sum(p.cpu_s() for p in procs) - cpu0) / wall
    mine = (time.process_time() - mine0) / wall
    rss2 = sum(p.rss_kb() for p in procs)
    await load.stop(grace=5.0)
    out = summary(stats)
    out.update(
        moves_per_cpu_s=round(out["moves_per_s"] / cpu, 1) if cpu else 0.0,
        connections=conns,
        mem_per_conn_kb=round((rss1 - rss0) / conns, 1),
        mem_per_conn_kb_end=round((rss2 - rss0) / conns, 1),
        # Memory flat under sustained play: the RSS the measured window added,
        # per 1,000 accepted moves (target near 0; allocator noise is a few KiB).
        rss_growth_kb_per_1000_moves=(
            round((rss2 - rss_w) / out["acks"] * 1000, 1) if out["acks"] else 0.0
        ),
        server_cpu=round(cpu, 2),
        load_cpu=round(mine, 2),
        bots_failed=sum(n for code, n in stats.errors.items() if code.startswith("crashed:")),
        bots_closed=stats.disconnects,
        unacknowledged=stats.unacknowledged,
    )
    return out


async def measure(kind: str, args: argparse.Namespace, rooms: int, rate: float) -> dict[str, Any]:
    if kind == "race":
        # Bots play flat out, far above a person's 50 frames a second.
        proc = await Proc.start(
            "server",
            r"listening on ws://[^:]+:(\d+)/ws",
            *LOAD_LIMITS,
            "--memory",
        )
    else:
        proc = await Proc.start("bench.relay", r"relay listening on ws://[^:]+:(\d+)/ws")
    try:
        return await drive(kind, [proc], rooms, args.spectators, rate, args.warmup, args.seconds)
    finally:
        await proc.stop()


def show(label: str, r: dict[str, Any]) -> None:
    print(
        f"{label:<24} {r['moves_per_s']:>9.0f} moves/s   p50 {r['p50_ms']:>6.2f} ms"
        f"   p99 {r['p99_ms']:>7.2f} ms   {r['mem_per_conn_kb']:>6.1f} KiB/conn"
        f"   server cpu {r['server_cpu']:.2f} ({r['moves_per_cpu_s']:.0f}/cpu-s)"
        f"   load cpu {r['load_cpu']:.2f}   +{r['rss_growth_kb_per_1000_moves']:.0f} KiB/1000 moves"
        f"   ({r['connections']} conns, {r['errors']} errors)"
    )


async def main(args: argparse.Namespace) -> dict[str, Any]:
    rooms = max(1, args.players // PER_ROOM) if args.players else args.rooms
    result: dict[str, Any] = {
        "rooms": rooms,
        "players": rooms * PER_ROOM,
        "spectators": rooms * args.spectators,
        "seconds": args.seconds,
    }
    server = await measure("race", args, rooms, args.rate)
    show("race server" + (f" @ {args.rate:.0f}/s" if args.rate else ""), server)
    result["server"] = server
    if args.players and not args.rate:
        half = server["moves_per_s"] / 2
        paced = await measure("race", args, rooms, half)
        show(f"race server @ {half:.0f}/s", paced)
        result["half_load"] = dict(paced, target_rate=half)
    base = await measure("relay", args, rooms, args.rate)
    show("baseline relay", base)
    result["baseline"] = base
    ratio = server["moves_per_s"] / base["moves_per_s"] if base["moves_per_s"] else 0.0
    per_cpu = (
        server["moves_per_cpu_s"] / base["moves_per_cpu_s"] if base["moves_per_cpu_s"] else 0.0
    )
    result["ratio"] = round(ratio, 3)
    result["ratio_per_cpu"] = round(per_cpu, 3)
    print(
        f"server / baseline: {ratio:.1%} of the relay's moves a second"
        f" ({per_cpu:.1%} per second of server CPU, which other load on the machine skews less)"
    )
    return result


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rooms", type=int, default=4, help="rooms of 8 players (default 4)")
    parser.add_argument("--players", type=int, default=0, help="players in all (overrides --rooms)")
    parser.add_argument("--spectators", type=int, default=1, help="spectators per room (default 1)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds before measuring")
    parser.add_argument(
        "--rate", type=float, default=0.0, help="total moves/s target (0: flat out)"
    )
    return parser.parse_args(argv)


def store_verdict(
    name: str, memory: dict[str, Any], durable: dict[str, Any], paced: dict[str, Any]
) -> dict[str, Any]:
    """A durable store against the in-memory one (the targets: at least 60 %
    of its moves a second, p99 under 25 ms at half load), printed and as figures."""
    ratio = durable["moves_per_s"] / memory["moves_per_s"] if memory["moves_per_s"] else 0.0
    print(
        f"{name} / memory: {ratio:.1%} of the moves a second (target >= 60%);"
        f" p99 at half load {paced['p99_ms']:.1f} ms (target < 25 ms)"
    )
    return {"ratio": round(ratio, 3), "targets_met": ratio >= 0.6 and paced["p99_ms"] < 25}


def store_args(doc: str | None, argv: list[str] | None = None) -> argparse.Namespace:
    """The command line of a store benchmark (bench/redis.py, bench/sqlite.py)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--rooms", type=int, default=8, help="rooms of 8 players (default 8)")
    parser.add_argument("--spectators", type=int, default=1, help="spectators per room")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds before measuring")
    return parser.parse_args(argv)


if __name__ == "__main__":
    res = asyncio.run(main(parse()))
    print(json.dumps(res))
