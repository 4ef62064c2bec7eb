"""What a busy day of daily runs costs: 100,000 results of one daily on one
node, on both durable stores, with 1,000 as the baseline in the same run.

For each durable store (the embedded SQLite store in a fresh data directory; a
private ``redis-server`` with ``appendfsync always``) and each size (the
baseline, then ``--results``), results are written into the store as the
server writes them (server/daily/run_handlers.py, server/daily/runs.py): a
claim when a run begins, the result once its end is durable, ``--writers`` runs
ending at once. Then, on the full day:

1. **Submit.** ``--samples`` more runs, one after another: the claim and the
   result's write, and then the player's own rank read back, as the page at
   the end of a run asks for it (p50/p99 of each).
2. **Page.** ``daily_board``'s reads: a page of 50 at a random place in the
   board and the count (p50/p99).
3. **Stored per result, and per run's line, apart**: a result (its ranking
   fields, the claim, the board's entry) and a line (the run's timed moves,
   kept beside it for its ghost) are stored apart and counted apart. For
   SQLite, the pages of the database after a checkpoint (``dbstat``): the
   ``lines`` table's and its key's, and all the others'; for Redis, ``used_memory`` grown,
   of which the lines' hash (``MEMORY USAGE``) is the lines' part; and the
   in-process store's Python heap (tracemalloc), for scale, its lines' part
   what is freed when they are dropped.

The last line is JSON.

Usage: python -m bench.daily [--results 100000] [--baseline 1000] [--samples 500]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import socket
import sqlite3
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.redis import Redis
from client.load import percentile
from protocol.daily_requests import BOARD_PAGE
from protocol.moves import MoveKind
from server.daily.memory_results import MemoryResults
from server.daily.redis_results import RedisResults
from server.daily.results import Finished, ResultStore, RunResult, homes_of_line
from server.daily.sqlite_results import RESULTS_DB, SqliteResults
from server.store.redis_conn import RedisAddress, config_get

DATE = "2026-12-02"
LADDER = "classic-draw1"


KINDS = [k.value for k in MoveKind if k not in (MoveKind.UNDO, MoveKind.AUTO_COMPLETE)]


def result(i: int, rng: random.Random) -> Finished:
    """Run ``i`` of the day: about a third lost, times and moves spread, and its
    timed moves (its line, what its ghost replays) written with it as the
    server writes them."""
    won = rng.random() > 0.35
    ms = rng.randrange(60_000, 1_800_000)
    moves = rng.randrange(90, 400)
    times = sorted(rng.randrange(0, ms) for _ in range(moves - 1))
    line = [(t, rng.choice(KINDS), rng.randrange(7), rng.randrange(7), 1) for t in [0, *times]]
    home, home_ms = (52, ms) if won else homes_of_line(line, 52)
    run = RunResult(
        DATE, LADDER, f"p{i:07d}", f"Player {i}", "won" if won else "resigned",
        ms, moves, rng.randrange(0, 700), home, home_ms, 1_764_633_600.0, f"R{i:07d}",
    )  # fmt: skip
    return run, line


async def submit(store: ResultStore, finished: Finished) -> None:
    run, line = finished
    await store.claim(run.date, run.ladder, run.player, run.code)
    await store.add_result(run, line)


async def fill(store: ResultStore, first: int, last: int, writers: int, seed: int) -> None:
    rng = random.Random(seed)
    runs = [result(i, rng) for i in range(first, last)]
    queue = iter(runs)

    async def writer() -> None:
        for run in queue:
            await submit(store, run)

    await asyncio.gather(*(writer() for _ in range(writers)))


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    t0 = time.perf_counter()
    await fn()
    return (time.perf_counter() - t0) * 1000


def stats(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(values, 50), 3), "p99_ms": round(percentile(values, 99), 3)}


async def measure(store: ResultStore, n: int, args: argparse.Namespace) -> dict[str, Any]:
    """Fill ``n`` results, then time submissions, rank reads and pages."""
    t0 = time.perf_counter()
    await fill(store, 0, n, args.writers, 1)
    fill_s = time.perf_counter() - t0
    rng = random.Random(2)
    submits, ranks, pages = [], [], []
    for i in range(n, n + args.samples):
        run = result(i, rng)
        player = run[0].player
        submits.append(await timed(lambda run=run: submit(store, run)))  # type: ignore[misc]
        ranks.append(await timed(lambda p=player: store.rank(DATE, LADDER, p)))  # type: ignore[misc]
    total = n + args.samples
    for _ in range(args.samples):
        start = rng.randrange(0, max(1, total - BOARD_PAGE))

        async def page(start: int = start) -> None:
            await store.board(DATE, LADDER, start, BOARD_PAGE + 1)
            await store.count(DATE, LADDER)

        pages.append(await timed(page))
    assert await store.count(DATE, LADDER) == total
    return {
        "results": n,
        "fill_per_s": round(n / fill_s) if fill_s else 0,
        "submit": stats(submits),
        "rank": stats(ranks),
        "page": stats(pages),
    }


async def sqlite_run(n: int, args: argparse.Namespace) -> dict[str, Any]:
    where = Path(tempfile.mkdtemp(prefix="bench-daily-"))
    try:
        store = await SqliteResults.at(where)
        out = await measure(store, n, args)
        await store.close()  # SQLite checkpoints the WAL into the database on close
        size = sum(p.stat().st_size for p in where.glob(f"{RESULTS_DB}*"))
        with sqlite3.connect(where / RESULTS_DB) as db:
            pages = dict(db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"))
        lines = pages.pop("lines") + pages.pop("sqlite_autoindex_lines_1")  # its key's index
        total = n + args.samples
        out["bytes_per_result"] = round(sum(pages.values()) / total, 1)
        out["bytes_per_line"] = round(lines / total, 1)
        out["file_bytes_per_run"] = round(size / total, 1)
        return out
    finally:
        shutil.rmtree(where, ignore_errors=True)


def memory_usage(port: int, key: str) -> int:
    """``MEMORY USAGE key SAMPLES 0`` (every field counted), over a plain socket."""
    words = [b"MEMORY", b"USAGE", key.encode(), b"SAMPLES", b"0"]
    command = b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in words)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(command)
        data = b""
        while not data.endswith(b"\r\n"):
            data += sock.recv(4096)
    if not data.startswith(b":"):
        raise RuntimeError(f"MEMORY USAGE {key}: {data!r}")
    return int(data[1:-2])


def used_memory(port: int) -> int:
    """Redis's ``used_memory``, by ``INFO memory`` over a plain socket."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"INFO memory\r\n")
        data = b""
        while b"used_memory:" not in data or not data.endswith(b"\r\n"):
            data += sock.recv(65536)
    for line in data.decode().splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":", 1)[1])
    raise RuntimeError("no used_memory in INFO")


async def redis_run(n: int, args: argparse.Namespace) -> dict[str, Any]:
    redis = Redis()
    try:
        fsync = await config_get(RedisAddress.parse(redis.url), ["appendfsync"], 5.0)
        before = used_memory(redis.port)
        store = await RedisResults.from_url(redis.url)
        out = await measure(store, n, args)
        await store.close()
        grown = used_memory(redis.port) - before
        lines = memory_usage(redis.port, f"{store.base}lines:{DATE}:{LADDER}")
        total = n + args.samples
        out["bytes_per_result"] = round((grown - lines) / total, 1)
        out["bytes_per_line"] = round(lines / total, 1)
        out["appendfsync"] = fsync[0] if fsync else "?"
        return out
    finally:
        redis.stop()


async def memory_heap(n: int) -> tuple[float, float]:
    """The in-process store's heap per result and per line (tracemalloc), for
    scale: the lines' part is what dropping them frees."""
    tracemalloc.start()
    store = MemoryResults()
    before = tracemalloc.get_traced_memory()[0]
    await fill(store, 0, n, 1, 1)
    grown = tracemalloc.get_traced_memory()[0] - before
    kept = tracemalloc.get_traced_memory()[0]
    for daily in store._dailies.values():
        daily.lines.clear()
    lines = kept - tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return round((grown - lines) / n, 1), round(lines / n, 1)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"samples": args.samples, "writers": args.writers}
    for name, run in (("sqlite", sqlite_run), ("redis", redis_run)):
        for label, n in (("baseline", args.baseline), ("day", args.results)):
            figures = await run(n, args)
            out[f"{name}_{label}"] = figures
            print(
                f"{name:6} {n:>7} results: submit p50 {figures['submit']['p50_ms']:.2f} ms"
                f" p99 {figures['submit']['p99_ms']:.2f} ms; rank p50"
                f" {figures['rank']['p50_ms']:.2f} p99 {figures['rank']['p99_ms']:.2f} ms;"
                f" page p50 {figures['page']['p50_ms']:.2f} p99 {figures['page']['p99_ms']:.2f}"
                f" ms; {figures['bytes_per_result']} B/result,"
                f" {figures['bytes_per_line']} B/line;"
                f" filled at {figures['fill_per_s']}/s",
                flush=True,
            )
    per_result, per_line = await memory_heap(min(args.results, 20_000))
    out["memory_store_heap_bytes_per_result"] = per_result
    out["memory_store_heap_bytes_per_line"] = per_line
    print(f"memory store heap: {per_result} B/result, {per_line} B/line")
    return out


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--results", type=int, default=100_000)
    p.add_argument("--baseline", type=int, default=1_000)
    p.add_argument("--samples", type=int, default=500)
    p.add_argument("--writers", type=int, default=32, help="runs ending at once while filling")
    return p.parse_args(argv)


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(parse()))))
