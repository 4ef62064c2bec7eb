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
  is ``gc.get_threshold()[0]`` more tracked objects allocated than freed).

The report goes to ``--out`` as JSON at exit (a SIGTERM is the server's graceful
stop, so its atexit runs) and, on ``SIGUSR2``, at once: a benchmark asks for one
at the start and end of its window and takes the difference (:func:`delta`).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import resource
import runpy
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = ["GcMonitor", "Sampler", "delta", "read_report"]


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

    def __init__(self, interval_s: float) -> None:
        self.interval = interval_s
        self.samples = 0
        self.self_counts: Counter[str] = Counter()
        self.total_counts: Counter[str] = Counter()
        self._in_gc = False

    def install(self) -> None:
        signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)
        gc.callbacks.append(self._gc_phase)

    def _gc_phase(self, phase: str, _info: dict[str, int]) -> None:
        self._in_gc = phase == "start"

    def _sample(self, _sig: int, frame: FrameType | None) -> None:
        self.samples += 1
        seen: set[str] = set()
        first = True
        if self._in_gc:
            self.self_counts["<gc>"] += 1
            self.total_counts["<gc>"] += 1
            first = False
        while frame is not None:
            code = frame.f_code
            name = f"{_short(code.co_filename)}:{code.co_name}"
            if first:
                self.self_counts[name] += 1
                first = False
            if name not in seen:
                seen.add(name)
                self.total_counts[name] += 1
            frame = frame.f_back

    def report(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "interval_ms": self.interval * 1000,
            "self": dict(self.self_counts),
            "total": dict(self.total_counts),
        }


def _short(path: str) -> str:
    for marker in ("/site-packages/", "/lib/python3"):
        if marker in path:
            return path.split(marker, 1)[1]
    root = str(Path(__file__).resolve().parent.parent) + "/"
    return path[len(root) :] if path.startswith(root) else path


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def read_report(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


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
        "total_share": shares(after["profile"]["total"], total_b),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True, help="where the JSON report goes")
    parser.add_argument("--interval", type=float, default=1.0, help="ms of CPU between samples")
    parser.add_argument("module", help="the module to run as __main__ (server)")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    monitor = GcMonitor()
    sampler = Sampler(args.interval / 1000)
    out: Path = args.out

    def write(*_: object) -> None:
        report = {
            "cpu_s": _cpu_s(),
            "gc": monitor.report(),
            "profile": sampler.report(),
            "at": time.time(),
        }
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(report))
        tmp.replace(out)

    monitor.install()
    sampler.install()
    signal.signal(signal.SIGUSR2, write)
    atexit.register(write)
    rest = args.args[1:] if args.args[:1] == ["--"] else args.args
    sys.argv = [args.module, *rest]
    runpy.run_module(args.module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
