"""Where a server process spends its CPU and its garbage-collector pauses, seen from inside.

py-spy sees only the outer frames of this interpreter here, so the benchmarks bring
their own instruments, switched on for one server process by launching it through
this module (a bench-only hook: the product has no such flag)::

    python -m bench.profile --out prof.json -- server --port 0 --memory ...

runs ``python -m server ...`` with:

- a **GC monitor** (``gc.callbacks``): passes and pause time per generation, the
  longest pause, objects collected;
- a **sampling profiler**: ``SIGPROF`` every ``--interval`` ms of the process's CPU
  time (``setitimer(ITIMER_PROF)``), the handler counts the sampled stack's frames:
  *self* (the innermost frame: where the CPU is) and *total* (any frame on the
  stack: what a stage costs with everything it calls); the frames of the GC monitor
  count as ``<gc>`` (a pause is sampled in whatever allocation triggered it);
- the process's CPU time, its young-generation allocation counts (every gen-0 pass
  is ``gc.get_threshold()[0]`` more tracked objects allocated than freed);
- a **loop-hold monitor**: a task in the server's event loop wakes every ms (the
  loop runners, asyncio's and uvloop's, are wrapped to start it), and the gap
  between two wakes, less the ms, is how long the loop was held; every hold over
  ``--hold-ms`` (5) is kept with the collector's pauses inside it and the stacks
  the sampler caught during it (the project's frames, innermost first), so that
  the longest holds say what they were.

The report goes to ``--out`` as JSON at exit (a SIGTERM is the server's graceful
stop, so its atexit runs) and, on ``SIGUSR2``, at once: a benchmark asks for one
at the start and end of its window and takes the difference (:func:`delta`).
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import gc
import json
import resource
import runpy
import signal
import sys
import time
from collections import Counter, deque
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

__all__ = ["STAGES", "GcMonitor", "HoldMonitor", "Sampler", "delta", "read_report", "stage_of"]

HOLD_BUCKETS_MS = (5, 10, 20, 50, 100)


class GcMonitor:
    """Counts collector passes and their pauses, by generation (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.passes = [0, 0, 0]
        self.pause_s = [0.0, 0.0, 0.0]
        self.longest_s = [0.0, 0.0, 0.0]
        self.collected = 0
        self.over_15ms = 0
        self._started = 0.0

    def install(self) -> None:
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        pause = time.perf_counter() - self._started
        g = info["generation"]
        self.passes[g] += 1
        self.pause_s[g] += pause
        self.longest_s[g] = max(self.longest_s[g], pause)
        self.collected += info.get("collected", 0)
        if pause > 0.015:
            self.over_15ms += 1

    def report(self) -> dict[str, Any]:
        return {
            "passes": list(self.passes),
            "pause_ms": [round(s * 1000, 2) for s in self.pause_s],
            "longest_ms": [round(s * 1000, 2) for s in self.longest_s],
            "pause_total_ms": round(sum(self.pause_s) * 1000, 2),
            "pauses_over_15ms": self.over_15ms,
            "collected": self.collected,
            "threshold": list(gc.get_threshold()),
        }


class Sampler:
    """A ``SIGPROF`` sampler of the main thread's stack, by function."""

    def __init__(self, interval_s: float, holds: HoldMonitor | None = None) -> None:
        self.interval = interval_s
        self.holds = holds
        self.samples = 0
        self.reentered = 0  # signals that arrived while a sample was being taken
        self.self_counts: Counter[str] = Counter()
        self.total_counts: Counter[str] = Counter()
        self._in_gc = False
        self._busy = False

    def install(self) -> None:
        signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)
        gc.callbacks.append(self._gc_phase)

    def _gc_phase(self, phase: str, _info: dict[str, int]) -> None:
        self._in_gc = phase == "start"

    def _sample(self, _sig: int, frame: FrameType | None) -> None:
        """Python runs a signal's handler between any two bytecodes, this handler's
        own included: a sample that took longer than the interval would be
        interrupted by the next one, and that by the next, until the stack
        overflowed. So a signal that arrives mid-sample is only counted, and the
        sample itself stays cheap (a dict lookup per frame, no file system)."""
        if self._busy:
            self.reentered += 1
            return
        self._busy = True
        try:
            self._take(frame)
        finally:
            self._busy = False

    def _take(self, frame: FrameType | None) -> None:
        self.samples += 1
        where = "<gc>" if self._in_gc else _where(frame)
        seen: set[str] = set()
        first = True
        if self._in_gc:
            self.self_counts["<gc>"] += 1
            self.total_counts["<gc>"] += 1
            first = False
        while frame is not None:
            name = _function(frame.f_code)
            if first:
                self.self_counts[name] += 1
                first = False
            if name not in seen:
                seen.add(name)
                self.total_counts[name] += 1
            frame = frame.f_back
        if self.holds is not None and self.holds.stalled():
            self.holds.sampled(where)

    def report(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "reentered": self.reentered,
            "interval_ms": self.interval * 1000,
            "self": dict(self.self_counts),
            "total": dict(self.total_counts),
        }


class HoldMonitor:
    """How long the event loop goes without running a 1 ms ticker, and what held it.

    The ticker runs in the server's loop (:meth:`start`); the sampler asks
    :meth:`stalled` at each sample and hands the stack of a stalled loop to
    :meth:`sampled`; the collector's pauses are counted on ``gc.callbacks``."""

    TICK_S = 0.001

    def __init__(self, hold_ms: float, keep: int = 5000) -> None:
        self.hold_s = hold_ms / 1000
        self.keep = keep
        self.beat = 0.0  # the ticker's last wake (0: not started)
        self.ticks = 0
        self.counts = [0] * len(HOLD_BUCKETS_MS)  # holds over each bucket's ms
        self.holds: deque[dict[str, Any]] = deque(maxlen=keep)  # the latest, oldest first
        self.stall_samples: Counter[str] = Counter()  # every stalled sample, by stack
        self._samples: Counter[str] = Counter()  # this stall's
        self._gc_s = 0.0  # collector pause since the last beat
        self._gc_gens: set[int] = set()
        self._gc_started = 0.0

    def install(self) -> None:
        gc.callbacks.append(self._gc_phase)

    def _gc_phase(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        self._gc_s += time.perf_counter() - self._gc_started
        self._gc_gens.add(info["generation"])

    def start(self) -> None:
        asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        self.beat = time.perf_counter()
        while True:
            await asyncio.sleep(self.TICK_S)
            now = time.perf_counter()
            hold = now - self.beat - self.TICK_S
            self.beat = now
            self.ticks += 1
            if hold > self.hold_s:
                self._held(hold, now)
            self._samples.clear()
            self._gc_s = 0.0
            self._gc_gens.clear()

    def _held(self, hold: float, now: float) -> None:
        ms = hold * 1000
        for i, bucket in enumerate(HOLD_BUCKETS_MS):
            if ms > bucket:
                self.counts[i] += 1
        self.holds.append(
            {
                "ms": round(ms, 1),
                "at": round(now, 3),
                "gc_ms": round(self._gc_s * 1000, 1),
                "gc_gens": sorted(self._gc_gens),
                "samples": dict(self._samples.most_common(6)),
            }
        )

    def stalled(self) -> bool:
        return self.beat > 0 and time.perf_counter() - self.beat > self.hold_s

    def sampled(self, where: str) -> None:
        self._samples[where] += 1
        self.stall_samples[where] += 1

    def report(self) -> dict[str, Any]:
        return {
            "ticks": self.ticks,
            "over_ms": dict(zip((str(b) for b in HOLD_BUCKETS_MS), self.counts, strict=True)),
            "holds": list(self.holds),
            "stalled_samples": dict(self.stall_samples.most_common(40)),
        }


def _where(frame: FrameType | None, depth: int = 5) -> str:
    """The sampled stack in short: the innermost frame, then the project's frames
    above it (innermost first), ``depth`` in all."""
    parts: list[str] = []
    first = True
    while frame is not None and len(parts) < depth:
        code = frame.f_code
        name = _short(code.co_filename)
        if first or name.startswith(_PROJECT):
            parts.append(f"{name}:{code.co_name}:{frame.f_lineno}")
        first = False
        frame = frame.f_back
    return " < ".join(parts)


_PROJECT = ("server/", "protocol/", "client/", "bench/")


def _wrap_runners(holds: HoldMonitor) -> None:
    """Start the hold monitor's ticker in whatever loop the server runs on."""

    def wrap(run: Any) -> Any:
        def runner(main: Any, *args: Any, **kwargs: Any) -> Any:
            async def monitored() -> Any:
                holds.start()
                return await main

            return run(monitored(), *args, **kwargs)

        return runner

    asyncio.run = wrap(asyncio.run)
    try:
        import uvloop  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return
    uvloop.run = wrap(uvloop.run)


_ROOT = str(Path(__file__).resolve().parent.parent) + "/"  # once: the handler must not stat
_SHORT: dict[str, str] = {}  # file name -> its short form, filled as the sampler meets them
_FUNCTION: dict[CodeType, str] = {}  # code -> "short/file.py:function"


def _short(path: str) -> str:
    short = _SHORT.get(path)
    if short is None:
        short = path
        for marker in ("/site-packages/", "/lib/python3"):
            if marker in path:
                short = path.split(marker, 1)[1]
                break
        else:
            if path.startswith(_ROOT):
                short = path[len(_ROOT) :]
        _SHORT[path] = short
    return short


def _function(code: CodeType) -> str:
    name = _FUNCTION.get(code)
    if name is None:
        name = _FUNCTION[code] = f"{_short(code.co_filename)}:{code.co_name}"
    return name


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _heap(top: int = 25) -> dict[str, Any]:
    """What a full collection walks: every object the collector tracks, frozen
    ones too, counted by type, the most common first."""
    counts: dict[str, int] = {}
    frozen = gc.get_freeze_count()
    if frozen:  # the server freezes what lived a second (server/collector.py): count it too
        gc.unfreeze()
    objects = gc.get_objects()
    if frozen:
        gc.freeze()
    for obj in objects:
        name = type(obj).__qualname__
        counts[name] = counts.get(name, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])[:top]
    return {"tracked": len(objects), "frozen": frozen, "types": dict(ranked)}


def read_report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


# A move's stages, by where its CPU is (the sampled innermost frame, "file:function"):
# the first whose prefix matches. The profiler's own work (its 1 ms ticker and the
# timers it wakes on) is a stage too, so that it can be left out.
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "the profiler itself",
        ("bench/profile.py", ".11/asyncio/tasks.py:sleep", ".11/asyncio/futures.py:_set_result"),
    ),
    ("collector", ("<gc>",)),
    (
        "reading a frame (websockets, decode, request parse, rate limit)",
        (
            "websockets/",
            "server/net/connection.py:data_received",
            "server/net/connection.py:_frame",
            "server/net/connection.py:serve",
            "server/net/connection.py:_stop_hello_timer",
            "protocol/wire.py:decode",
            "protocol/wire.py:_check",
            "protocol/requests.py",
            "protocol/request_fields.py",
            "server/net/ratelimit.py",
        ),
    ),
    (
        "the engine: the move decided and played, scored",
        (
            "protocol/board.py",
            "protocol/moves.py",
            "protocol/cards.py",
            "protocol/scoring.py",
            "server/core/decide.py",
        ),
    ),
    ("the outcome and its digest", ("protocol/outcomes.py",)),
    ("folding into the room (records, log, progress)", ("server/core/", "protocol/views.py")),
    (
        "encoding (msgpack, message maps)",
        ("protocol/wire.py", "msgpack/", "protocol/messages.py"),
    ),
    ("the room's pipeline and fan-out", ("server/rooms/", "server/service/")),
    (
        "writing (framing, held events, socket writes)",
        ("server/net/connection.py", "server/net/framing.py"),
    ),
    ("dataclass and value inits", ("<string>:__init__",)),
)


def stage_of(where: str) -> str:
    for stage, prefixes in STAGES:
        if where.startswith(prefixes):
            return stage
    return "the event loop and the rest"


def delta(before: dict[str, Any], after: dict[str, Any], moves: int) -> dict[str, Any]:
    """What happened between two reports, per accepted move where it says so."""
    gb, ga = before["gc"], after["gc"]
    passes = [a - b for a, b in zip(ga["passes"], gb["passes"], strict=True)]
    pause = [round(a - b, 2) for a, b in zip(ga["pause_ms"], gb["pause_ms"], strict=True)]
    cpu = after["cpu_s"] - before["cpu_s"]
    samples = after["profile"]["samples"] - before["profile"]["samples"]
    self_b = before["profile"]["self"]
    total_b = before["profile"]["total"]

    def shares(now: dict[str, int], then: dict[str, int]) -> dict[str, float]:
        diff = {k: v - then.get(k, 0) for k, v in now.items()}
        ranked = sorted(diff.items(), key=lambda kv: -kv[1])[:25]
        return {k: round(v / samples, 3) for k, v in ranked if samples and v > 0}

    per = max(moves, 1)
    hb, ha = before.get("holds"), after.get("holds")
    holds: dict[str, Any] = {}
    if hb is not None and ha is not None:
        since = before["at_perf"]
        holds = {
            "over_ms": {k: v - hb["over_ms"][k] for k, v in ha["over_ms"].items()},
            "longest": sorted((h for h in ha["holds"] if h["at"] > since), key=lambda h: -h["ms"])[
                :12
            ],
            "stalled_samples": shares(ha["stalled_samples"], hb["stalled_samples"]),
        }
    return {
        "moves": moves,
        "cpu_s": round(cpu, 3),
        "cpu_us_per_move": round(cpu / per * 1e6, 1),
        "gc_passes": passes,
        "gc_pause_ms": pause,
        "gc_pause_us_per_move": round(sum(pause) * 1000 / per, 1),
        "gc_longest_ms": ga["longest_ms"],
        "young_objects_per_move": round(passes[0] * ga["threshold"][0] / per, 1),
        "samples": samples,
        "self_share": shares(after["profile"]["self"], self_b),
        "stages": stages(after["profile"]["self"], self_b, samples),
        "total_share": shares(after["profile"]["total"], total_b),
        "holds": holds,
        "heap": after.get("heap", {}),
    }


def stages(now: dict[str, int], then: dict[str, int], samples: int) -> dict[str, float]:
    """Every self sample between two reports, summed by :data:`STAGES`: shares."""
    by: Counter[str] = Counter()
    for where, n in now.items():
        by[stage_of(where)] += n - then.get(where, 0)
    return {k: round(v / samples, 3) for k, v in by.most_common() if samples and v > 0}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True, help="where the JSON report goes")
    parser.add_argument("--interval", type=float, default=1.0, help="ms of CPU between samples")
    parser.add_argument("--hold-ms", type=float, default=5.0, help="loop holds kept: over this")
    parser.add_argument("module", help="the module to run as __main__ (server)")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    monitor = GcMonitor()
    holds = HoldMonitor(args.hold_ms)
    sampler = Sampler(args.interval / 1000, holds)
    out: Path = args.out

    def write(*_: object) -> None:
        report = {
            "cpu_s": _cpu_s(),
            "gc": monitor.report(),
            "profile": sampler.report(),
            "holds": holds.report(),
            "heap": _heap(),
            "at": time.time(),
            "at_perf": time.perf_counter(),
        }
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(report))
        tmp.replace(out)

    monitor.install()
    holds.install()
    sampler.install()
    _wrap_runners(holds)
    signal.signal(signal.SIGUSR2, write)
    atexit.register(write)
    rest = args.args[1:] if args.args[:1] == ["--"] else args.args
    sys.argv = [args.module, *rest]
    runpy.run_module(args.module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
