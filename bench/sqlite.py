"""What the embedded store costs, under the same load as bench/server.py.

Runs, in one go and on one machine, the same race load (R rooms of 8 bot players
plus spectators: client/load.py, as bench/server.py and ``klondike-race loadtest``)
against:

1. the server on the in-memory store (``--memory``), flat out;
2. the server on its default, embedded store (``--data-dir`` in a fresh temporary
   directory: SQLite in WAL mode, ``synchronous=FULL``, so every move is fsynced
   before it is acknowledged), flat out;
3. the same at half the rate the embedded run reached: the latency a room sees
   when the server is not saturated.

Targets: the embedded store keeps at least 60 % of the in-memory moves a
second, and its p99 at half load stays under 25 ms. The last line is JSON.

Usage: python -m bench.sqlite [--rooms 8] [--seconds 5] [--spectators 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from bench.server import LOAD_LIMITS, PER_ROOM, Proc, drive, show, store_args, store_verdict

SERVER = r"listening on ws://[^:]+:(\d+)/ws"


async def one(durable: bool, args: argparse.Namespace, rate: float = 0.0) -> dict[str, Any]:
    """One server, one load run; the embedded store in a directory of its own, so
    that no run recovers another's rooms."""
    data = Path(tempfile.mkdtemp(prefix="bench-sqlite-"))
    store = ["--data-dir", str(data)] if durable else ["--memory"]
    proc = await Proc.start("server", SERVER, *LOAD_LIMITS, *store)
    try:
        return await drive(
            "race", [proc], args.rooms, args.spectators, rate, args.warmup, args.seconds
        )
    finally:
        await proc.stop()
        shutil.rmtree(data, ignore_errors=True)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"rooms": args.rooms, "players": args.rooms * PER_ROOM}
    memory = await one(False, args)
    show("in-memory store", memory)
    durable = await one(True, args)
    show("embedded store", durable)
    half = durable["moves_per_s"] / 2
    paced = await one(True, args, half)
    show(f"embedded store @ {half:.0f}/s", paced)
    verdict = store_verdict("embedded", memory, durable, paced)
    result.update(
        memory=memory,
        sqlite=durable,
        sqlite_half_load=dict(paced, target_rate=half),
        sqlite_vs_memory=verdict["ratio"],
        targets_met=verdict["targets_met"],
    )
    return result


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(store_args(__doc__)))))
