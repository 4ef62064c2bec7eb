"""How many human-pace players one core holds at p99 < 50 ms, beside a bare relay.

The server runs as users run it (``klondike-race serve --memory``, the load's
per-address caps lifted: every socket comes from loopback), pinned to CPU 0 with
``taskset -c 0``; this process is the load, pinned to CPU 1 (bench/wsload.py: a
lean WebSocket client, so that the load is not what is measured). Rooms of 8
players and a spectator, ``deals_per_round`` 20, ``break_seconds`` 0; each player
makes a real legal move (the product's bot) every 2–4 s, at a random phase, and
the host rematches when a round ends. The number of players steps up (``--steps``), each
step adding rooms to those already playing, then measuring for ``--seconds``.

Per step: offered and achieved moves a second, p50/p99/max round trip (move sent
to its ``moved``), server CPU (its share of CPU 0, and µs per accepted move with
the kernel's part of it),
RSS per connection and its growth per 1,000 moves, bytes on the wire per move (both
ways, every frame: bench/websocket.py ``WIRE``) and the server's frames per move,
errors. The load measures
itself too: its own CPU share (and µs per move) and its event loop's lag (a 10 ms ticker's
lateness). A step where the load is the bottleneck — above a third of its core,
or a lag p99 over ``--max-lag`` ms — is refused: its figures are not a
measurement of the server, and it is printed as refused, not as a result.

Last, the largest number of players held (p99 < 50 ms, every offered move
answered, no errors); then the same steps against the bare relay (bench/relay.py)
as the baseline, and against Colyseus, the other baseline: a relay room on
Colyseus' own server (bench/colyseus/server.js under ``node``, pinned to CPU 0 too;
its load is bench/colyseusload.py, the relay's seats behind Colyseus' matchmaker).
Colyseus is measured where ``node`` and its install are found (``npm install
--prefix bench/colyseus``); otherwise a note says it was skipped and how to install.

``--profile`` launches the server through bench/profile.py and adds, per step, its
GC passes and pauses and young objects per move.

The last line is one JSON object with every figure.

Usage: python -m bench.capacity [--steps 1000,2000,4000,6000,8000,10000,12000]
                                [--seconds 20] [--warmup 5] [--profile]
                                [--servers race,relay,colyseus]
       python -m bench.capacity --quick      (a tiny run: the smoke test's)
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import dataclasses
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bench.profile import delta, read_report
from bench.seats import MOVE_EVERY
from bench.server import LOAD_LIMITS, PER_ROOM, _drain, cpu_times, rss_kb
from bench.websocket import WIRE
from bench.wsload import HumanLoad
from client.load import FLAT_OUT, LoadStats, percentile

ROOT = Path(__file__).resolve().parent.parent
COLYSEUS = ROOT / "bench" / "colyseus"  # its package.json pins the version
SERVER_CPU, LOAD_CPU = 0, 1
TARGET_P99_MS = 50.0
LOAD_SHARE_LIMIT = 1 / 3  # the load's CPU share above which its step is refused
SETTINGS = {**FLAT_OUT, "deals_per_round": 20}  # break_seconds 0: deals follow at once


class LagMeter:
    """The load's event-loop lag: how late a 10 ms ticker wakes."""

    def __init__(self, tick: float = 0.01) -> None:
        self.tick = tick
        self.lags: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(self.tick)
            self.lags.append(max(0.0, time.perf_counter() - before - self.tick))

    def take(self) -> list[float]:
        lags, self.lags = self.lags, []
        return lags

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


# ---------------------------------------------------------------------- the process under test


@dataclass
class Target:
    """The server (or relay, or Colyseus) process, pinned to its core."""

    proc: asyncio.subprocess.Process
    port: int
    kind: str
    profile: Path | None = None

    @classmethod
    async def start(
        cls,
        kind: str,
        profile: Path | None = None,
        serving: Sequence[str] = (),
        store: Sequence[str] = ("--memory",),
        env_extra: Mapping[str, str] | None = None,
        cwd: Path = ROOT,
    ) -> Target:
        """``serving``: more flags for the race server's ``serve``; ``store``: its
        store's (bench/nodes.py runs it on Redis); ``env_extra`` and ``cwd``: another
        copy of the code to run (bench/compiled.py)."""
        env = dict(os.environ, PYTHONUNBUFFERED="1", **(env_extra or {}))
        env.pop("KLONDIKE_REDIS_URL", None)
        pin = ["taskset", "-c", str(SERVER_CPU)] if shutil.which("taskset") else []
        if kind == "race":
            serve = ["serve", "--host", "127.0.0.1", "--port", "0", *store, *LOAD_LIMITS]
            serve += serving
            if profile is None:
                cmd = [str(Path(sys.executable).parent / "klondike-race"), *serve]
            else:  # the same server, run as python -m server with the instruments in
                where = ["-m", "bench.profile", "--out", str(profile), "server"]
                cmd = [sys.executable, *where, "--", *serve[1:]]
            pattern = r"listening on ws://[^:]+:(\d+)/ws"
        elif kind == "colyseus":
            env["NODE_ENV"] = "production"
            cmd = [str(shutil.which("node")), str(COLYSEUS / "server.js"), "--port", "0"]
            pattern = r"colyseus listening on ws://[^:]+:(\d+)/"
        else:
            cmd = [sys.executable, "-m", "bench.relay", "--port", "0"]
            pattern = r"relay listening on ws://[^:]+:(\d+)/ws"
        proc = await asyncio.create_subprocess_exec(
            *pin, *cmd, cwd=cwd, env=env, stderr=asyncio.subprocess.PIPE
        )
        assert proc.stderr is not None
        said: collections.deque[str] = collections.deque(maxlen=10)  # its last lines
        while True:
            line = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()
            if not line:
                last = "".join(said)
                raise RuntimeError(f"{kind} exited before listening; it said:\n{last}")
            said.append(line)
            found = re.search(pattern, line)
            if found:
                asyncio.get_running_loop().create_task(_drain(proc.stderr))
                return cls(proc, int(found.group(1)), kind, profile)

    @property
    def url(self) -> str:
        """Where the load connects (Colyseus: its matchmaker's host; rooms have paths)."""
        if self.kind == "colyseus":
            return f"ws://127.0.0.1:{self.port}"
        return f"ws://127.0.0.1:{self.port}/ws"

    def rss_kb(self) -> int:
        return rss_kb(self.proc.pid)

    def cpu_times(self) -> tuple[float, float]:
        """Its CPU time so far, (user, system): one reading of /proc for both."""
        return cpu_times(self.proc.pid)

    async def snapshot(self) -> dict[str, Any] | None:
        """The profiler's report as of now (``--profile`` only)."""
        if self.profile is None:
            return None
        before = self.profile.stat().st_mtime_ns if self.profile.exists() else 0
        self.proc.send_signal(__import__("signal").SIGUSR2)
        for _ in range(500):
            if self.profile.exists() and self.profile.stat().st_mtime_ns != before:
                with contextlib.suppress(ValueError):
                    return read_report(self.profile)
            await asyncio.sleep(0.01)
        return None

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 30)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


# ---------------------------------------------------------------------- steps


async def run_steps(
    kind: str,
    args: argparse.Namespace,
    env_extra: Mapping[str, str] | None = None,
    cwd: Path = ROOT,
    started: Callable[[Target], None] | None = None,
) -> list[dict[str, Any]]:
    """Step the players up on one process; a step's figures, or why it was refused.

    ``env_extra``, ``cwd``: as :meth:`Target.start`; ``started`` is shown the process
    once it listens (bench/compiled.py looks at what it loaded)."""
    profile = Path(tempfile.mkdtemp()) / "profile.json" if args.profile and kind == "race" else None
    delay = [] if args.progress_delay is None else ["--progress-delay", str(args.progress_delay)]
    target = await Target.start(kind, profile, delay, env_extra=env_extra, cwd=cwd)
    if started is not None:
        started(target)
    load = HumanLoad(kind, target.url, SETTINGS, PER_ROOM)
    lag = LagMeter()
    lag.start()
    out: list[dict[str, Any]] = []
    rss0 = target.rss_kb()
    try:
        for players in args.steps:
            want = max(1, players // PER_ROOM)
            if want > len(load.rooms):
                try:
                    await load.add_rooms(want - len(load.rooms))
                except RuntimeError as exc:  # a server too busy to seat them: the end
                    print(f"{LABELS[kind]:<12} {players:>6} players  NOT SEATED: {exc}", flush=True)
                    out.append({"players": players, "not_seated": str(exc)})
                    break
            await asyncio.sleep(args.warmup)
            step = await _measure(target, load.stats, lag, len(load.rooms), args)
            step["rss_per_conn_kb"] = round((step.pop("rss_kb") - rss0) / step["connections"], 1)
            out.append(step)
            show(kind, step, args)
    finally:
        lag.stop()
        await load.stop(grace=5.0)
        await target.stop()
    return out


class Measured(Protocol):
    """What a step reads of the server side: one :class:`Target`, or a deployment of
    several processes read as one (bench/nodes.py)."""

    def cpu_times(self) -> tuple[float, float]: ...

    def rss_kb(self) -> int: ...

    async def snapshot(self) -> dict[str, Any] | None: ...


async def _measure(
    target: Measured, stats: LoadStats, lag: LagMeter, rooms: int, args: argparse.Namespace
) -> dict[str, Any]:
    players = rooms * PER_ROOM
    stats.latencies, stats.moves = [], 0
    errors0 = sum(stats.errors.values())
    before = await target.snapshot()
    start = time.perf_counter()
    stats.window = (start, start + args.seconds)
    (user0, kernel0), mine0, rss0 = target.cpu_times(), time.process_time(), target.rss_kb()
    sys0 = os.times().system
    wire0 = dataclasses.replace(WIRE)
    lag.take()
    await asyncio.sleep(args.seconds)
    wall = time.perf_counter() - start
    user1, kernel1 = target.cpu_times()
    cpu = (user1 + kernel1 - user0 - kernel0) / wall
    server_kernel = (kernel1 - kernel0) / wall
    mine = (time.process_time() - mine0) / wall
    kernel = (os.times().system - sys0) / wall
    rss1 = target.rss_kb()
    sent = WIRE.bytes_in - wire0.bytes_in + WIRE.bytes_out - wire0.bytes_out
    frames = WIRE.frames_in - wire0.frames_in
    lags = [x * 1000 for x in lag.take()]
    after = await target.snapshot()
    lat = [x * 1000 for x in stats.latencies]
    moves = stats.moves
    step: dict[str, Any] = {
        "players": players,
        "connections": rooms * (PER_ROOM + 1),
        "offered_moves_per_s": round(players / (sum(MOVE_EVERY) / 2), 1),
        "moves_per_s": round(moves / wall, 1),
        "p50_ms": round(percentile(lat, 50), 2),
        "p99_ms": round(percentile(lat, 99), 2),
        "max_ms": round(max(lat, default=0.0), 2),
        "server_cpu": round(cpu, 3),
        "cpu_us_per_move": round(cpu * wall / moves * 1e6, 1) if moves else 0.0,
        # The kernel's part of it: the socket reads and writes, the same for any
        # server sending the same frames; the rest is the server's own code.
        "kernel_us_per_move": round(server_kernel * wall / moves * 1e6, 1) if moves else 0.0,
        # What a move costs on the wire, both ways (WebSocket frames, headers
        # included): the move, its reply and every frame it causes, for each server.
        "wire_bytes_per_move": round(sent / moves, 1) if moves else 0.0,
        "frames_per_move": round(frames / moves, 2) if moves else 0.0,  # server to load
        "rss_kb": rss1,
        "rss_growth_kb_per_1000_moves": round((rss1 - rss0) / moves * 1000, 1) if moves else 0.0,
        "errors": sum(stats.errors.values()) - errors0,
        "load_cpu": round(mine, 3),
        "load_kernel_cpu": round(kernel, 3),  # the part of load_cpu spent in the kernel
        "load_cpu_us_per_move": round(mine * wall / moves * 1e6, 1) if moves else 0.0,
        "load_lag_p99_ms": round(percentile(lags, 99), 2),
        "load_lag_max_ms": round(max(lags, default=0.0), 2),
    }
    if before is not None and after is not None:
        step["profile"] = delta(before, after, moves)
    why = []
    if mine > LOAD_SHARE_LIMIT:
        why.append(f"load cpu {mine:.0%} > {LOAD_SHARE_LIMIT:.0%}")
    if step["load_lag_p99_ms"] > args.max_lag:
        why.append(f"load lag p99 {step['load_lag_p99_ms']} ms > {args.max_lag} ms")
    step["refused"] = "; ".join(why) or None
    return step


def held(steps: list[dict[str, Any]]) -> int:
    """The most players of a step measured (not refused) at p99 < 50 ms, with every
    offered move answered (90 %: the phases are random) and no errors."""
    best = 0
    for s in steps:
        if "not_seated" in s:
            continue
        ok = s["refused"] is None and s["errors"] == 0 and s["p99_ms"] < TARGET_P99_MS
        if ok and s["moves_per_s"] >= 0.9 * s["offered_moves_per_s"]:
            best = max(best, s["players"])
    return best


LABELS = {"race": "race server", "relay": "bare relay", "colyseus": "colyseus"}


def show(kind: str, s: dict[str, Any], args: argparse.Namespace) -> None:
    label = LABELS[kind]
    head = f"{label:<12} {s['players']:>6} players ({s['connections']:>6} conns)"
    if s["refused"]:
        print(
            f"{head}  REFUSED, the load is the bottleneck: {s['refused']}"
            f" ({s['load_cpu_us_per_move']:.0f} µs of load cpu a move)",
            flush=True,
        )
        return
    line = (
        f"{head}  offered {s['offered_moves_per_s']:>7.0f}/s  achieved {s['moves_per_s']:>7.0f}/s"
        f"  p50 {s['p50_ms']:>6.2f}  p99 {s['p99_ms']:>7.2f}  max {s['max_ms']:>7.1f} ms"
        f"  server cpu {s['server_cpu']:>5.1%} ({s['cpu_us_per_move']:.0f} µs/move,"
        f" kernel {s['kernel_us_per_move']:.0f})"
        f"  {s['wire_bytes_per_move']:.0f} B, {s['frames_per_move']:.1f} frames/move"
        f"  {s['rss_per_conn_kb']:>5.1f} KiB/conn  +{s['rss_growth_kb_per_1000_moves']:.0f}"
        f" KiB/1000 moves  errors {s['errors']}"
        f"  [load cpu {s['load_cpu']:.0%} ({s['load_cpu_us_per_move']:.0f} µs/move,"
        f" kernel {s['load_kernel_cpu']:.0%}),"
        f" lag p99 {s['load_lag_p99_ms']:.1f} ms]"
    )
    print(line, flush=True)
    prof = s.get("profile")
    if prof:
        print(
            f"{'':<12} gc passes {prof['gc_passes']} pauses {prof['gc_pause_ms']} ms"
            f" (longest {prof['gc_longest_ms']} ms), {prof['young_objects_per_move']}"
            " young objects/move",
            flush=True,
        )
        own = 1 - prof["stages"].get("the profiler itself", 0.0)  # the rest is the server's
        cpu = s["cpu_us_per_move"]
        parts = ", ".join(
            f"{k} {v / own * cpu:.0f}"
            for k, v in prof["stages"].items()
            if k != "the profiler itself" and own > 0
        )
        print(f"{'':<12} µs a move by stage: {parts}", flush=True)
        heap = prof.get("heap") or {}
        if heap:
            kinds = ", ".join(f"{k} {v}" for k, v in list(heap["types"].items())[:8])
            print(f"{'':<12} tracked heap {heap['tracked']}: {kinds}", flush=True)


def colyseus_version() -> str | None:
    """The Colyseus (``@colyseus/core``) that ``node`` finds for bench/colyseus/server.js,
    or None: not installed. Both packages server.js requires are loaded, not only a
    package.json found: an install cut short has the one and fails at the other."""
    node = shutil.which("node")
    if node is None:
        return None
    loads = "require('@colyseus/core'); require('@colyseus/ws-transport');"
    found = subprocess.run(
        [node, "-p", f"{loads} require('@colyseus/core/package.json').version"],
        cwd=COLYSEUS,
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        return None
    return found.stdout.strip() or None


def colyseus_skipped() -> str | None:
    """Why Colyseus cannot be measured here, or None: it can."""
    if shutil.which("node") is None:
        return "skipped: node is not installed (then: npm install --prefix bench/colyseus)"
    if colyseus_version() is None:
        return "skipped: colyseus is not installed (npm install --prefix bench/colyseus)"
    return None


async def main(args: argparse.Namespace) -> dict[str, Any]:
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setaffinity(0, {LOAD_CPU})
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the children inherit it
    print(
        f"capacity: steps {args.steps} players, {args.seconds:g} s each after {args.warmup:g} s,"
        f" rooms of {PER_ROOM} + 1 spectator, a move every {MOVE_EVERY[0]:g}-{MOVE_EVERY[1]:g} s;"
        f" server on CPU {SERVER_CPU}, load on CPU {LOAD_CPU}"
        f" ({'uvloop' if _uvloop() else 'asyncio'})",
        flush=True,
    )
    race = await run_steps("race", args) if "race" in args.servers else []
    best = held(race)
    print(f"race server held {best} players at p99 < {TARGET_P99_MS:g} ms", flush=True)
    relay = await run_steps("relay", args) if "relay" in args.servers else []
    relay_best = held(relay)
    print(f"bare relay held {relay_best} players at p99 < {TARGET_P99_MS:g} ms", flush=True)
    skipped = colyseus_skipped() if "colyseus" in args.servers else "skipped: not asked for"
    version = None if skipped else colyseus_version()
    cy: list[dict[str, Any]] = []
    cy_best: int | None = None
    if skipped:
        print(f"colyseus: {skipped}", flush=True)
    else:
        print(f"colyseus: {version} (@colyseus/core), a relay room on node", flush=True)
        cy = await run_steps("colyseus", args)
        cy_best = held(cy)
        print(f"colyseus held {cy_best} players at p99 < {TARGET_P99_MS:g} ms", flush=True)
    return {
        "steps": args.steps,
        "seconds": args.seconds,
        "loop": "uvloop" if _uvloop() else "asyncio",
        "race": race,
        "relay": relay,
        "held_players": best,
        "relay_held_players": relay_best,
        "colyseus": cy,  # its steps, as "relay"'s; none when skipped
        "colyseus_held_players": cy_best,
        "colyseus_version": version,
        "colyseus_skipped": skipped,  # why it was not measured, or None
    }


def _uvloop() -> bool:
    try:
        import uvloop  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


def load_options(parser: argparse.ArgumentParser) -> None:
    """The options of a run of human-pace steps, here and in bench/nodes.py: when
    a step is refused for the load's sake, and the race server's event batching."""
    parser.add_argument(
        "--max-lag",
        type=float,
        default=10.0,
        help="load's loop-lag p99 (ms) above which a step is refused",
    )
    parser.add_argument(
        "--progress-delay",
        type=float,
        default=None,
        help="the race server's serve --progress-delay (default: the server's own)",
    )


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--steps",
        default="1000,2000,4000,6000,8000,10000,12000",
        help="players at each step, comma-separated (rooms of 8)",
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds per step")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before measuring a step")
    load_options(parser)
    parser.add_argument(
        "--servers",
        default="race,relay,colyseus",
        help="which to measure, comma-separated (a figure alone compares with nothing)",
    )
    parser.add_argument("--profile", action="store_true", help="GC and sampling figures per step")
    parser.add_argument("--quick", action="store_true", help="a tiny run (the smoke test's)")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps, args.seconds, args.warmup = "8,16", 2.0, 1.0
    args.steps = [int(x) for x in str(args.steps).split(",") if x]
    args.servers = {x for x in str(args.servers).split(",") if x}
    return args


def on_uvloop(run: Coroutine[Any, Any, dict[str, Any]]) -> dict[str, Any]:
    """A benchmark's run on uvloop where it is installed (the loop the server takes
    when it can: the load should not be the slower of the two), else on asyncio."""
    try:
        import uvloop  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return asyncio.run(run)
    result: dict[str, Any] = uvloop.run(run)
    return result


if __name__ == "__main__":
    print(json.dumps(on_uvloop(main(parse()))))
