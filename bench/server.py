"""How much the race server costs over a bare WebSocket relay, under the same load.

The server runs in a subprocess (``python -m server --port 0``); this process is
the load: R rooms of 8 bot players (plus spectators) that play real moves chosen
from their board views (bench/bot.py), resign after a cap so deals turn over, and
rematch when a round ends. Measured, after a warm-up:

- accepted moves a second (``moved`` replies received);
- move-to-acknowledgement latency, p50 and p99, as the bot sees it (send to reply);
- memory per connection: the server's RSS growth once every bot has joined,
  divided by the connections (and again at the end, with the game state);
- the server's CPU use, to tell a saturated server from a saturated load.

Then the same load drives the baseline (bench/relay.py): each "move" frame is
relayed to the 8 + spectators of its room, the sender's own copy being its
acknowledgement. Both results print, with their ratio; the last line is JSON.

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
import random
import re
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from bench.bot import choose_move

ROOT = Path(__file__).resolve().parent.parent
PER_ROOM = 8
MOVE_CAP = 150  # a bot resigns after this many moves in a deal
CONNECT = {"compression": None, "max_size": None, "max_queue": None, "open_timeout": 30}


@dataclass
class Load:
    """What the bots saw: acknowledgement times and latencies in the window."""

    window: tuple[float, float] = (0.0, 0.0)
    latencies: list[float] = field(default_factory=list)
    errors: int = 0

    def ack(self, sent: float, now: float) -> None:
        if self.window[0] <= sent and now <= self.window[1]:
            self.latencies.append(now - sent)

    def summary(self) -> dict[str, Any]:
        span = self.window[1] - self.window[0]
        lat = sorted(self.latencies)
        q = statistics.quantiles(lat, n=100) if len(lat) >= 2 else [0.0] * 99
        return {
            "moves_per_s": round(len(lat) / span, 1) if span else 0.0,
            "acks": len(lat),
            "p50_ms": round(q[49] * 1000, 2),
            "p99_ms": round(q[98] * 1000, 2),
            "errors": self.errors,
        }


# ---------------------------------------------------------------------- processes


class Proc:
    """A server subprocess that logs the port it listens on."""

    def __init__(self, proc: asyncio.subprocess.Process, port: int) -> None:
        self.proc = proc
        self.port = port

    @classmethod
    async def start(cls, module: str, pattern: str, *extra: str) -> Proc:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("KLONDIKE_REDIS_URL", None)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", module, "--port", "0", *extra,
            cwd=ROOT, env=env, stderr=asyncio.subprocess.PIPE,
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
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def cpu_s(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.terminate()
            await asyncio.wait_for(self.proc.wait(), 30)


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.readline():
        pass


# ---------------------------------------------------------------------- bots


class Pacer:
    """Sleeps so that one bot moves ``rate`` times a second (0: flat out)."""

    def __init__(self, rate: float, rng: random.Random) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self.next = time.perf_counter() + rng.random() * self.interval

    async def wait(self) -> None:
        if not self.interval:
            return
        delay = self.next - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        self.next = max(self.next + self.interval, time.perf_counter() - self.interval)


async def _send(ws: ClientConnection, msg: dict[str, Any]) -> None:
    await ws.send(msgpack.packb(msg))


async def _recv(ws: ClientConnection) -> dict[str, Any]:
    msg: dict[str, Any] = msgpack.unpackb(await ws.recv())
    return msg


class RaceBot:
    """A player of the real protocol; the host also starts and rematches."""

    def __init__(self, ws: ClientConnection, host: bool, seed: int) -> None:
        self.ws = ws
        self.host = host
        self.rng = random.Random(seed)
        self.board: dict[str, Any] | None = None
        self.deal = 0
        self.moves = 0
        self.ids = itertools.count(1)

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        rid = next(self.ids)
        await _send(self.ws, {"type": kind, "id": rid, **fields})
        while True:
            msg = await _recv(self.ws)
            if msg.get("id") == rid:
                return msg
            await self.event(msg)

    async def event(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "deal_started":
            self.board, self.deal, self.moves = msg["deal"]["board"], msg["deal"]["number"], 0
        elif kind == "round_over" and self.host:
            await _send(self.ws, {"type": "rematch", "id": "rematch"})

    async def play(self, load: Load, pacer: Pacer) -> None:
        while True:
            if self.board is None or self.board["status"] != "playing":
                await self.event(await _recv(self.ws))
                continue
            await pacer.wait()
            move = choose_move(self.board, self.rng) if self.moves < MOVE_CAP else None
            sent = time.perf_counter()
            reply = await self.request("move", deal=self.deal, move=move or {"kind": "resign"})
            self.moves += 1
            if reply["type"] == "moved":
                load.ack(sent, time.perf_counter())
                self.board = reply["board"]
            else:
                load.errors += 1
                if reply.get("code") in ("wrong_deal", "wrong_state", "deal_over"):
                    self.board = None


class RelayBot:
    """The same load against the relay: a move-sized frame, acked by its echo."""

    def __init__(self, ws: ClientConnection, me: int) -> None:
        self.ws = ws
        self.me = me

    async def play(self, load: Load, pacer: Pacer) -> None:
        move = {"kind": "tableau_tableau", "from": 6, "to": 2, "count": 1}
        for rid in itertools.count(1):
            await pacer.wait()
            sent = time.perf_counter()
            await _send(self.ws, {"type": "move", "id": rid, "p": self.me, "deal": 1, "move": move})
            while True:
                msg = await _recv(self.ws)
                if msg.get("p") == self.me and msg.get("id") == rid:
                    break
            load.ack(sent, time.perf_counter())


async def watch(ws: ClientConnection) -> None:
    """A spectator: reads and decodes everything, like a client rendering it."""
    while True:
        await _recv(ws)


# ---------------------------------------------------------------------- runs


async def _gather_limited(
    factories: list[Callable[[], Awaitable[Any]]], limit: int = 50
) -> list[Any]:
    sem = asyncio.Semaphore(limit)

    async def one(f: Callable[[], Awaitable[Any]]) -> Any:
        async with sem:
            return await f()

    return list(await asyncio.gather(*(one(f) for f in factories)))


async def race_room(
    url: str, room: int, spectators: int
) -> tuple[list[RaceBot], list[ClientConnection]]:
    async def hello(name: str) -> ClientConnection:
        ws = await connect(url, subprotocols=["klondike-race.v1.msgpack"], **CONNECT)  # type: ignore[list-item]
        await _send(ws, {"type": "hello", "id": 0, "version": 1, "name": name})
        await _recv(ws)
        return ws

    host_ws = await hello(f"h{room}")
    host = RaceBot(host_ws, True, room * 100)
    joined = await host.request("create_room", settings={})  # house defaults: 3 deals a round
    code = joined["room"]["code"]
    bots = [host]
    for i in range(1, PER_ROOM):
        ws = await hello(f"b{room}.{i}")
        bot = RaceBot(ws, False, room * 100 + i)
        await bot.request("join_room", code=code, role="player")
        bots.append(bot)
    watchers = []
    for i in range(spectators):
        ws = await hello(f"s{room}.{i}")
        await _send(ws, {"type": "join_room", "id": 1, "code": code, "role": "spectator"})
        await _recv(ws)
        watchers.append(ws)
    return bots, watchers


async def relay_room(
    url: str, room: int, spectators: int
) -> tuple[list[RelayBot], list[ClientConnection]]:
    room_url = f"{url}?room={room}"
    bots = [RelayBot(await connect(room_url, **CONNECT), i) for i in range(PER_ROOM)]  # type: ignore[arg-type]
    watchers = [await connect(room_url, **CONNECT) for _ in range(spectators)]  # type: ignore[arg-type]
    return bots, watchers


async def drive(
    kind: str, proc: Proc, rooms: int, spectators: int, rate: float, warmup: float, seconds: float
) -> dict[str, Any]:
    """Connect every bot, measure memory, run the load, measure again."""
    url = f"ws://127.0.0.1:{proc.port}/ws"
    rss0 = proc.rss_kb()
    factory = race_room if kind == "race" else relay_room
    made = await _gather_limited([lambda r=r: factory(url, r, spectators) for r in range(rooms)])  # type: ignore[misc]
    conns = rooms * (PER_ROOM + spectators)
    await asyncio.sleep(0.2)
    rss1 = proc.rss_kb()
    per_bot = rate / (rooms * PER_ROOM) if rate else 0.0
    load = Load()
    start = time.perf_counter()
    load.window = (start + warmup, start + warmup + seconds)
    tasks: list[asyncio.Task[Any]] = []
    for bots, watchers in made:
        if kind == "race":
            await bots[0].request("start")
        for b in bots:
            tasks.append(asyncio.create_task(b.play(load, Pacer(per_bot, random.Random(id(b))))))
        tasks += [asyncio.create_task(watch(w)) for w in watchers]
    await asyncio.sleep(warmup)
    cpu0, wall0, mine0 = proc.cpu_s(), time.perf_counter(), time.process_time()
    await asyncio.sleep(seconds)
    cpu = (proc.cpu_s() - cpu0) / (time.perf_counter() - wall0)
    mine = (time.process_time() - mine0) / (time.perf_counter() - wall0)
    rss2 = proc.rss_kb()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    failed = [t for t in tasks if t.done() and not t.cancelled() and t.exception() is not None]
    closed = [t for t in failed if isinstance(t.exception(), ConnectionClosed)]
    for bots, watchers in made:
        for ws in [b.ws for b in bots] + watchers:
            await ws.close()
    out = load.summary()
    out.update(
        moves_per_cpu_s=round(out["moves_per_s"] / cpu, 1) if cpu else 0.0,
        connections=conns,
        mem_per_conn_kb=round((rss1 - rss0) / conns, 1),
        mem_per_conn_kb_end=round((rss2 - rss0) / conns, 1),
        server_cpu=round(cpu, 2),
        load_cpu=round(mine, 2),
        bots_failed=len(failed) - len(closed),
        bots_closed=len(closed),
    )
    return out


async def measure(kind: str, args: argparse.Namespace, rooms: int, rate: float) -> dict[str, Any]:
    if kind == "race":
        # Bots play flat out, far above a person's 50 frames a second.
        proc = await Proc.start(
            "server", r"listening on ws://[^:]+:(\d+)/ws", "--rate-limit", "100000"
        )
    else:
        proc = await Proc.start("bench.relay", r"relay listening on ws://[^:]+:(\d+)/ws")
    try:
        return await drive(kind, proc, rooms, args.spectators, rate, args.warmup, args.seconds)
    finally:
        await proc.stop()


def show(label: str, r: dict[str, Any]) -> None:
    print(
        f"{label:<24} {r['moves_per_s']:>9.0f} moves/s   p50 {r['p50_ms']:>6.2f} ms"
        f"   p99 {r['p99_ms']:>7.2f} ms   {r['mem_per_conn_kb']:>6.1f} KiB/conn"
        f"   server cpu {r['server_cpu']:.2f} ({r['moves_per_cpu_s']:.0f}/cpu-s)"
        f"   load cpu {r['load_cpu']:.2f}"
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


if __name__ == "__main__":
    res = asyncio.run(main(parse()))
    print(json.dumps(res))
