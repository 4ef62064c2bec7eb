"""What forming quick-match rooms costs: 10,000 players queued at once on one
node against a baseline of 100.

Two figures per queue size. ``match_ms``: the matchmaker alone
(server/matchmaking/match.py ``form_rooms``) over the whole queue. ``rooms_ms``:
one pass of the node's queues (server/matchmaking/queues.py) over the same
players, up to every room made, its players seated and told ``matched`` — the
rooms' log appends included (the in-memory store, so the figure is the server's
own work, not a disk's). Each with the process's CPU time beside the wall time;
the countdown and the rounds themselves are not timed.

Players have shown ratings drawn around 1000 (sd 200) and have waited 0 to 20 s.

Usage: .venv/bin/python bench/matchmaking.py [--players N] [--baseline N]
Prints a table, then one line of JSON (the last line) for scripts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol.messages import Message
from server.matchmaking.book import Entry
from server.matchmaking.match import Waiter, form_rooms
from server.matchmaking.queues import Waiting
from server.net.clock import SystemClock
from server.net.metrics import Metrics
from server.peer import SessionState, Site
from server.service.service import Service
from server.store.memory import MemoryStore


class Inbox:
    """A connection that only counts ``matched``: what the bench waits for."""

    def __init__(self, told: list[int]) -> None:
        self.told = told
        self.session: SessionState | None = None
        self.binary = True
        self.closing = False
        self.address = "bench"
        self.link_base: str | None = None
        self.site: Site | None = None

    def send(self, msg: Message) -> None:
        if msg["type"] == "matched":
            self.told[0] += 1

    def send_data(self, data: bytes | str) -> None:
        pass

    def send_later(self, data: bytes | str) -> None:
        self.send_data(data)

    def error(self, rid: Any, code: Any, message: str, **extra: Any) -> None:
        pass

    def close(self, code: Any, reason: str) -> None:
        pass


def queue(n: int, seed: int = 1) -> list[Waiter]:
    rng = random.Random(seed)
    return [Waiter(f"p{i}", round(rng.gauss(1000, 200)), rng.uniform(0, 20)) for i in range(n)]


def time_match(waiters: list[Waiter]) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    rooms = form_rooms(waiters)
    return (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3, len(rooms)


async def time_rooms(waiters: list[Waiter]) -> tuple[float, float, int]:
    """One pass of a node's queues over ``waiters``, up to every ``matched`` sent."""
    service = Service(MemoryStore(), SystemClock(), Metrics())
    quick = service.quick
    now = service.clock.now()
    told = [0]
    for w in waiters:
        session = SessionState(f"t{w.player}", w.player, w.player, account=f"a{w.player}")
        peer = Inbox(told)
        entry = Entry(
            w.player, w.player, "classic-draw1", w.rating, now - int(w.waited * 1000), "", w.player
        )
        await quick.book.put(entry)
        quick.entries[w.player] = Waiting(session, peer, entry, booked=True)
    expected = sum(len(r) for r in form_rooms(waiters))
    wall, cpu = time.perf_counter(), time.process_time()
    await quick.pass_now()
    while told[0] < expected:
        await asyncio.sleep(0)
    spent = (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3
    rooms = len(service.rooms)
    await service.stop()
    return spent[0], spent[1], rooms


def measure(n: int) -> dict[str, Any]:
    waiters = queue(n)
    match_wall, match_cpu, rooms = time_match(waiters)
    rooms_wall, rooms_cpu, made = asyncio.run(time_rooms(waiters))
    assert made == rooms, (made, rooms)
    return {
        "players": n,
        "rooms": rooms,
        "match_ms": round(match_wall, 2),
        "match_cpu_ms": round(match_cpu, 2),
        "rooms_ms": round(rooms_wall, 1),
        "rooms_cpu_ms": round(rooms_cpu, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--baseline", type=int, default=100)
    args = parser.parse_args(argv)
    rows = [measure(args.baseline), measure(args.players)]
    print(f"{'players':>8} {'rooms':>6} {'match ms':>9} {'cpu':>8} {'rooms ms':>9} {'cpu':>8}")
    for r in rows:
        print(
            f"{r['players']:>8} {r['rooms']:>6} {r['match_ms']:>9.2f} {r['match_cpu_ms']:>8.2f}"
            f" {r['rooms_ms']:>9.1f} {r['rooms_cpu_ms']:>8.1f}"
        )
    base, big = rows
    print(
        json.dumps(
            {
                "baseline": base,
                "queued": big,
                "rooms_ms_per_player_ratio": round(
                    (big["rooms_ms"] / big["players"]) / (base["rooms_ms"] / base["players"]), 2
                )
                if base["rooms_ms"]
                else None,
                "python": platform.python_version(),
            }
        )
    )


if __name__ == "__main__":
    main()
