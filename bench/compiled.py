"""What compiling the server's hot path with mypyc buys, beside the same server interpreted.

The project's packages are copied into a temporary directory and the modules a
move goes through (:data:`HOT`) are compiled there with mypyc (mypy's compiler, a
development dependency: the code is ``mypy --strict`` clean) through a generated
``setup.py`` (``mypycify``, ``build_ext --inplace``). The modules left interpreted,
and why, are :data:`LEFT`. Then, in the same run, the race server is measured
twice over, as the repository has it and from the compiled copy
(``PYTHONPATH`` and the working directory at the copy), the two interleaved
round by round against the machine's noise:

- **flat out** (bench/server.py's load: rooms of 8 bots and a spectator playing as
  fast as the server answers): moves a second and µs of server CPU a move;
- **at human pace** (bench/capacity.py's steps: the server pinned to CPU 0, the
  load to CPU 1, a move every 2–4 s per player): µs of server CPU a move, with its
  kernel part, and p99.

The bare relay (bench/relay.py) is measured once beside them in both, for the
issue's ratios. That the compiled code is what serves is checked, not assumed:
each compiled server's memory map (``/proc/PID/maps``) must hold the copy's
extension files, and the modules the server imports as extensions from the copy
are listed.

mypyc (2.4) does not compile the project as it is. What the build does about it:
a loop over a ``bytearray`` crashes the compiler, so the few such loops in
protocol/ iterate ``bytes(...)`` of it in the source (same values); the plain
classes of the compiled modules are marked, in the copy only, to keep Python's
``__new__`` (see :data:`_MARK`); and the modules in :data:`LEFT` stay interpreted,
each for the reason given there.

The compile time of the chosen set is printed (it compiles into one shared
library: about a minute on this machine). ``--quick`` (the smoke test's) compiles
one small hot module only (server/net/framing.py) and runs a tiny load.

(Longer than most benchmarks here: it builds, drives two other benchmarks' loads
and checks what serves; each part is short.)

Usage: python -m bench.compiled [--rounds 2] [--rooms 4] [--seconds 5]
                                [--steps 2000,4000] [--step-seconds 12] [--warmup 4]
       python -m bench.compiled --quick
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.capacity import LOAD_CPU, Target, on_uvloop, run_steps
from bench.server import LOAD_LIMITS, Proc, drive

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("protocol", "server", "client", "bench")

# The modules a move goes through (docs/performance.md "Where a move's time goes
# now": reading a frame, the room's pipeline and fan-out, the engine, the room's
# fold, the outcome and its digest, encoding and writing), as files.
HOT = (
    "protocol/board.py",
    "protocol/cards.py",
    "protocol/deal.py",
    "protocol/messages.py",
    "protocol/moves.py",
    "protocol/names.py",
    "protocol/outcomes.py",
    "protocol/placings.py",
    "protocol/proof.py",
    "protocol/scoring.py",
    "protocol/solver.py",
    "protocol/strategy.py",
    "protocol/views.py",
    "protocol/wire.py",
    "server/core/decide.py",
    "server/core/durable.py",
    "server/core/lifecycle.py",
    "server/core/room.py",
    "server/core/views.py",
    "server/net/connection.py",
    "server/net/framing.py",
    "server/net/ratelimit.py",
    "server/service/dispatch.py",
)
QUICK = ("server/net/framing.py",)

# Hot modules mypyc (2.4) cannot compile into a working module, left interpreted.
_CLASSVAR = (
    "frozen dataclasses with a ClassVar (the kind's TYPE) subclassed: mypyc hands the"
    " ClassVar to dataclasses as a field, so the subclass fails at import"
    " ('non-default argument follows default argument'); an interpreted class"
    " cannot subclass a compiled one, so every request module stays with it"
)
_FROZEN = (
    "frozen dataclasses in a room's graph, which server/core/durable.py copies with"
    " copy.deepcopy: a compiled class's __setstate__ sets each field with setattr,"
    " which a frozen dataclass refuses (FrozenInstanceError)"
)
LEFT = {
    "protocol/settings.py": _FROZEN,
    "protocol/sheet.py": _FROZEN,
    "server/core/series.py": _FROZEN,
    "protocol/request_fields.py": _CLASSVAR,
    "protocol/requests.py": _CLASSVAR,
    "protocol/*_requests.py": _CLASSVAR,
    "server/rooms/runner.py": (
        "a room's timer, bots and seeds hold its runner by weakref.proxy (so that a"
        " closed room leaves no cycle): a compiled class takes no weak reference"
    ),
    "server/core/values.py": (
        "a deal's derived views are kept by a weak reference to its Deal"
        " (server/rooms/memo.py; the dataclass's weakref_slot): a compiled class"
        " takes no weak reference"
    ),
    "server/core/records.py": (
        "dataclass fields given as field(metadata=...) without a default: the"
        " compiled class fails at import ('non-default argument follows default')"
    ),
}

SETUP = """\
from setuptools import setup
from mypyc.build import mypycify

setup(
    name="klondike_race_compiled",
    py_modules=[],
    ext_modules=mypycify({args!r}, opt_level="3"),
)
"""


# ---------------------------------------------------------------------- the build

# A compiled class's __new__ runs its __init__ (so that its attributes are always
# set), unless it allows interpreted subclasses: then __new__ and __init__ are
# Python's (mypyc's `serializable` mark would skip __init__ even on a call of the
# class, in mypyc 2.4). The product needs Python's __new__ in two places:
# Board.copy (Board.__new__(Board), then every slot set) and a room's durable copy
# (server/core/durable.py: copy.deepcopy, which makes every object of a room's
# graph through __new__). So each plain class of a compiled module is marked in
# the copy; adopting mypyc would mean the same marks in the source, and
# mypy_extensions (mypy's own dependency) at run time.
_MARK = "@mypyc_attr(allow_interpreted_subclasses=True)\n"
_PLAIN_CLASS = re.compile(r"^class \w+:", re.MULTILINE)
_FUTURE = "from __future__ import annotations\n"


def mark_plain_classes(path: Path) -> int:
    """Mark each plain class of a module (see above); how many were marked."""
    text = path.read_text()
    marked, n = _PLAIN_CLASS.subn(lambda m: _MARK + m.group(0), text)
    if n:
        assert _FUTURE in marked, path
        marked = marked.replace(_FUTURE, _FUTURE + "\nfrom mypy_extensions import mypyc_attr\n", 1)
        path.write_text(marked)
    return n


def build(into: Path, modules: Sequence[str]) -> float:
    """Copy the packages into ``into`` and compile ``modules`` there; seconds taken."""
    skip = shutil.ignore_patterns("__pycache__", "*.so", ".mypy_cache")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, into / package, ignore=skip)
    # mypy's configuration (strict, python 3.11) from the project's, under a name
    # setuptools does not read as the project's metadata.
    shutil.copy(ROOT / "pyproject.toml", into / "mypy.toml")
    for m in modules:
        mark_plain_classes(into / m)
    args = ["--config-file", "mypy.toml", *modules]
    (into / "setup.py").write_text(SETUP.format(args=args))
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"],
        cwd=into,
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        said = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
        raise RuntimeError(f"mypyc failed:\n{said}")
    return took


def extensions(into: Path, modules: Sequence[str]) -> dict[str, Path]:
    """Each compiled module's extension file in the copy, by module name."""
    found: dict[str, Path] = {}
    for m in modules:
        stem = Path(m).with_suffix("")
        hits = sorted((into / stem.parent).glob(f"{stem.name}.cpython-*.so"))
        if not hits:
            raise RuntimeError(f"{m}: no extension module built")
        found[".".join(stem.parts)] = hits[0]
    return found


def mapped(pid: int, into: Path) -> list[Path]:
    """The copy's extension files in a process's memory map.

    All the compiled modules but one live in one shared library (``*__mypyc*.so``),
    each module's own file being a small stub; the loader maps a stub whose bytes
    it has already loaded only once, so this proves compiled code runs, not which
    modules (:func:`imported` says that)."""
    with open(f"/proc/{pid}/maps") as f:
        paths = {line.split()[-1] for line in f if line.rstrip().endswith(".so")}
    return sorted(p for p in map(Path, paths) if p.is_relative_to(into))


def imported(into: Path, built: dict[str, Path]) -> list[str]:
    """The compiled modules the server imports (its entry point, app and service),
    as extensions, when started the way the benchmark starts it (the copy first on
    the path)."""
    names = sorted(built)
    probe = (
        "import sys, server.cli, server.app, server.service.service\n"
        f"print(' '.join(m for m in {names!r} if str(getattr(sys.modules.get(m), "
        "'__file__', '')).endswith('.so')))"
    )
    env = dict(os.environ, PYTHONPATH=str(into))
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=into, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.split()


# ---------------------------------------------------------------------- runs


class Build:
    """Where the compiled copy is and what of it a server imported."""

    def __init__(self, into: Path, built: dict[str, Path]) -> None:
        self.into = into
        self.built = built
        self.imported = imported(into, built)
        self.env = {"PYTHONPATH": str(into)}

    def check(self, pid: int) -> None:
        """The server process runs the copy's compiled code (see :func:`mapped`)."""
        if not mapped(pid, self.into):
            raise RuntimeError("the server loaded none of the compiled modules")


async def flat_out(kind: str, args: argparse.Namespace, build: Build) -> dict[str, Any]:
    """One flat-out run of bench/server.py's load on one server process."""
    if kind == "relay":
        proc = await Proc.start("bench.relay", r"relay listening on ws://[^:]+:(\d+)/ws")
    else:
        where: dict[str, Any] = {"env_extra": build.env, "cwd": build.into}
        proc = await Proc.start(
            "server",
            r"listening on ws://[^:]+:(\d+)/ws",
            *LOAD_LIMITS,
            "--memory",
            **(where if kind == "compiled" else {}),
        )
        if kind == "compiled":
            build.check(proc.proc.pid)
    try:
        r = await drive(
            "relay" if kind == "relay" else "race",
            [proc],
            args.rooms,
            1,
            0.0,
            args.flat_warmup,
            args.seconds,
        )
    finally:
        await proc.stop()
    r["cpu_us_per_move"] = round(1e6 / r["moves_per_cpu_s"], 1) if r["moves_per_cpu_s"] else 0.0
    return r


async def human(kind: str, args: argparse.Namespace, build: Build) -> list[dict[str, Any]]:
    """One capacity run (bench/capacity.py's steps) on one server process."""
    cap = argparse.Namespace(
        steps=args.steps,
        seconds=args.step_seconds,
        warmup=args.warmup,
        max_lag=args.max_lag,
        progress_delay=None,
        profile=False,
    )
    if kind == "relay":
        return await run_steps("relay", cap)
    if kind == "interpreted":
        return await run_steps("race", cap)

    def started(target: Target) -> None:
        build.check(target.proc.pid)

    return await run_steps("race", cap, build.env, build.into, started)


def spread(values: Sequence[float]) -> str:
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    whole = all(float(v).is_integer() for v in values)
    form = ".0f" if hi >= 100 or whole else ".1f"
    return f"{lo:{form}}" if lo == hi else f"{lo:{form}}-{hi:{form}}"


def median(values: Sequence[float]) -> float:
    return round(statistics.median(values), 1) if values else 0.0


def table(title: str, rows: dict[str, list[dict[str, Any]]], cols: list[tuple[str, str]]) -> None:
    print(f"\n{title}")
    print(f"{'':<14}" + "".join(f"{head:>22}" for head, _ in cols))
    for kind, runs in rows.items():
        cells = [spread([r[key] for r in runs if key in r]) for _, key in cols]
        print(f"{kind:<14}" + "".join(f"{c:>22}" for c in cells))


async def main(args: argparse.Namespace) -> dict[str, Any]:
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setaffinity(0, {LOAD_CPU})
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    modules = QUICK if args.quick else HOT
    into = Path(tempfile.mkdtemp(prefix="compiled-"))
    try:
        print(f"compiling {len(modules)} modules with mypyc in {into} ...", flush=True)
        took = build(into, modules)
        built = extensions(into, modules)
        print(f"compiled {len(built)} modules in {took:.1f} s", flush=True)
        for m, why in LEFT.items():
            print(f"  left interpreted: {m}: {why}")
        b = Build(into, built)
        kinds = ("interpreted", "compiled")
        flat: dict[str, list[dict[str, Any]]] = {k: [] for k in (*kinds, "relay")}
        paced: dict[str, list[dict[str, Any]]] = {k: [] for k in (*kinds, "relay")}
        for rnd in range(args.rounds):
            order = kinds if rnd % 2 == 0 else kinds[::-1]
            for kind in (*order, "relay") if rnd == 0 else order:
                r = await flat_out(kind, args, b)
                print(
                    f"round {rnd + 1} flat out  {kind:<12} {r['moves_per_s']:>8.0f} moves/s"
                    f"  {r['cpu_us_per_move']:>6.1f} µs cpu/move  p99 {r['p99_ms']:.1f} ms"
                    f"  errors {r['errors']}",
                    flush=True,
                )
                flat[kind].append(r)
            for kind in (*order, "relay") if rnd == 0 else order:
                steps = await human(kind, args, b)
                for s in steps:
                    s["kind"] = kind
                    print(
                        f"round {rnd + 1} human pace {kind:<12} {s.get('players', 0):>6} players"
                        f"  {s.get('cpu_us_per_move', 0):>6.1f} µs cpu/move"
                        f" (kernel {s.get('kernel_us_per_move', 0):.0f})"
                        f"  p99 {s.get('p99_ms', 0):.1f} ms  errors {s.get('errors', '-')}"
                        f"  {s.get('refused') or s.get('not_seated') or ''}",
                        flush=True,
                    )
                paced[kind].extend(steps)
        result = report(args, modules, took, b, flat, paced)
    finally:
        if args.keep:
            print(f"kept the compiled copy in {into}")
        else:
            shutil.rmtree(into, ignore_errors=True)
    return result


def report(
    args: argparse.Namespace,
    modules: Sequence[str],
    took: float,
    b: Build,
    flat: dict[str, list[dict[str, Any]]],
    paced: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    table(
        "flat out (bench/server.py's load)",
        flat,
        [("moves/s", "moves_per_s"), ("µs cpu/move", "cpu_us_per_move"), ("errors", "errors")],
    )
    ok = {
        k: [s for s in v if "cpu_us_per_move" in s and not s.get("refused")]
        for k, v in paced.items()
    }
    for players in args.steps:
        table(
            f"human pace, {players} players (bench/capacity.py's step)",
            {k: [s for s in v if s["players"] == players] for k, v in ok.items()},
            [
                ("µs cpu/move", "cpu_us_per_move"),
                ("kernel µs/move", "kernel_us_per_move"),
                ("p99 ms", "p99_ms"),
                ("errors", "errors"),
            ],
        )
    figures: dict[str, Any] = {}
    for kind in flat:
        f_runs, p_runs = flat[kind], ok[kind]
        figures[kind] = {
            "flat_moves_per_s": median([r["moves_per_s"] for r in f_runs]),
            "flat_cpu_us_per_move": median([r["cpu_us_per_move"] for r in f_runs]),
            "flat_errors": sum(r["errors"] for r in f_runs),
            "human_cpu_us_per_move": {
                str(n): median([s["cpu_us_per_move"] for s in p_runs if s["players"] == n])
                for n in args.steps
            },
            "human_errors": sum(s["errors"] for s in p_runs),
        }
    interp, comp, relay = figures["interpreted"], figures["compiled"], figures["relay"]

    def ratio(a: float, c: float) -> float:
        return round(a / c, 3) if c else 0.0

    gains: dict[str, Any] = {
        "flat_cpu": ratio(comp["flat_cpu_us_per_move"], interp["flat_cpu_us_per_move"]),
        "flat_moves": ratio(comp["flat_moves_per_s"], interp["flat_moves_per_s"]),
        "human_cpu": {
            n: ratio(comp["human_cpu_us_per_move"][n], interp["human_cpu_us_per_move"][n])
            for n in interp["human_cpu_us_per_move"]
        },
    }
    against_relay: dict[str, Any] = {
        "flat_moves": {
            k: ratio(figures[k]["flat_moves_per_s"], relay["flat_moves_per_s"])
            for k in ("interpreted", "compiled")
        },
        "human_cpu": {
            k: {
                n: ratio(figures[k]["human_cpu_us_per_move"][n], relay["human_cpu_us_per_move"][n])
                for n in relay["human_cpu_us_per_move"]
            }
            for k in ("interpreted", "compiled")
        },
    }
    print(
        f"\ncompiled / interpreted: flat-out CPU a move {gains['flat_cpu']:.2f}x,"
        f" moves a second {gains['flat_moves']:.2f}x; human-pace CPU a move "
        + ", ".join(f"{v:.2f}x at {n}" for n, v in gains["human_cpu"].items())
    )
    print(
        "against the relay: flat-out moves a second "
        + ", ".join(f"{k} {v:.0%}" for k, v in against_relay["flat_moves"].items())
        + " (target 80%); human-pace CPU a move "
        + "; ".join(
            f"{k} " + ", ".join(f"{v:.2f}x at {n}" for n, v in per.items())
            for k, per in against_relay["human_cpu"].items()
        )
        + " (target 1.3x)"
    )
    print(
        f"compile: {len(modules)} modules in {took:.1f} s; the server imported"
        f" {len(b.imported)} of them compiled: {', '.join(b.imported)}"
    )
    return {
        "compiled_modules": list(modules),
        "left_interpreted": LEFT,
        "compile_seconds": round(took, 1),
        "imported_compiled": b.imported,
        "rounds": args.rounds,
        "flat_seconds": args.seconds,
        "rooms": args.rooms,
        "steps": args.steps,
        "step_seconds": args.step_seconds,
        "figures": figures,
        "compiled_over_interpreted": gains,
        "against_relay": against_relay,
        "flat": flat,
        "human": paced,
    }


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    parser.add_argument("--rooms", type=int, default=4, help="flat out: rooms of 8 (default 4)")
    parser.add_argument("--seconds", type=float, default=5.0, help="flat out: measured seconds")
    parser.add_argument("--flat-warmup", type=float, default=1.0, help="flat out: warm-up")
    parser.add_argument(
        "--steps", default="2000,4000", help="human pace: players at each step (default 2000,4000)"
    )
    parser.add_argument("--step-seconds", type=float, default=12.0, help="human pace: per step")
    parser.add_argument("--warmup", type=float, default=4.0, help="human pace: before a step")
    parser.add_argument("--max-lag", type=float, default=10.0, help="as bench.capacity's")
    parser.add_argument("--keep", action="store_true", help="keep the compiled copy")
    parser.add_argument("--quick", action="store_true", help="a tiny run (the smoke test's)")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.rooms, args.seconds, args.flat_warmup = 1, 1, 1.0, 0.5
        args.steps, args.step_seconds, args.warmup = "16", 1.0, 0.5
    args.steps = [int(x) for x in str(args.steps).split(",") if x]
    return args


if __name__ == "__main__":
    print(json.dumps(on_uvloop(main(parse()))))
