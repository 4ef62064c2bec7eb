"""Flooders closed with 4008 cost bounded work from that moment: over real sockets,
a server process of its own, flooders in a process of their own.

Four connections from one address stream pings, requests or both, as fast as
the kernel takes them, and stop neither for the close frame nor for the end of
the server's stream. Meanwhile a race in another room (two players and a
spectator) and a lone client, each from an address of its own, go on playing.
Every flooder is closed with 4008 and then dropped (its writes end in a reset),
no pong follows a close frame, and the others go on being answered, their
moves reaching their rival and spectator, while the flood runs. Connections closed for bad input (by
websockets or by the server), or by their own close frame, are dropped alike
though they send on.

Each victim makes round trips from the flood's start (the flooder's connections
open) until the server has dropped the last flooder (the flooder process exits
then) or for 40 round trips: within a session's burst of frames, so the
victims, who play as fast as their replies come, need no pace. Each kind of
flood gets new victims on new addresses.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support import ROOT
from tests.support.processes import ServerProcess
from tests.support.raw_client import Client
from tests.support.reference_race import seat_race

# The flooders' address, then the race's and the lone client's, per kind of flood
# (all of 127.0.0.0/8 is loopback).
ADDRESSES = {
    "ping": ("127.0.0.5", "127.0.0.6", "127.0.0.7"),
    "data": ("127.0.0.8", "127.0.0.9", "127.0.0.10"),
    "both": ("127.0.0.11", "127.0.0.12", "127.0.0.13"),
}
# Bad input that closes a connection (tests/support/flooder.py OPENINGS): each
# flooder's address, what it floods with after it, and its close code.
BAD_INPUT = {
    "too_big": ("127.0.0.14", "both", 1009),
    "bad_opcode": ("127.0.0.15", "both", 1002),
    "bad_utf8": ("127.0.0.16", "both", 1007),
    "before_hello": ("127.0.0.17", "data", 4002),  # pings would spend the address's frames
    "close": ("127.0.0.18", "both", 1000),
}
AFTER_CLOSE = 4  # pongs a flooder may still read after the close frame: a small constant
BEFORE, DURING = 30, 40  # round trips of each victim before and from a flood's start


@dataclass
class Victim:
    """A client making round trips one after another, timing each."""

    client: Client
    watchers: tuple[Client, ...] = ()  # who must see each move (a race's rival, spectator)
    times: list[tuple[float, float]] = field(default_factory=list)  # (sent, took)
    _kind: str = "draw"

    async def trip(self) -> None:
        sent = time.perf_counter()
        if not self.watchers:
            reply = await self.client.request("ping")
            assert reply["type"] == "pong", reply
            self.times.append((sent, time.perf_counter() - sent))
            return
        reply = await self.client.request("move", deal=1, move={"kind": self._kind})
        self.times.append((sent, time.perf_counter() - sent))
        if reply["type"] == "error" and reply["code"] == "stock_empty":
            self._kind = "recycle"
            return
        assert reply["type"] == "moved", reply
        self._kind = "draw"
        for watcher in self.watchers:
            seen = await watcher.event("progress", player=self.client.player)
            assert seen["progress"]["moves"] == reply["outcome"]["moves"]

    async def trips(self, n: int) -> None:
        for _ in range(n):
            await self.trip()

    async def during(self, done: asyncio.Future[Any], most: int) -> None:
        """Round trips while ``done`` is pending, ``most`` of them at the most."""
        for _ in range(most):
            if done.done():
                return
            await self.trip()

    def between(self, start: float, end: float) -> list[float]:
        return [took for sent, took in self.times if start <= sent <= end]


async def _client(url: str, address: str, name: str) -> Client:
    client = await Client.open(url, local_addr=(address, 0))
    await client.hello(name)
    return client


async def victims(url: str, race: str, alone: str) -> tuple[Victim, Victim]:
    """A race in a room of its own (Ann moves; Bob and a spectator watch) and a
    lone client pinging, from two addresses of their own."""
    ann, bob, sam = [await _client(url, race, n) for n in ("Ann", "Bob", "Sam")]
    lone = await _client(url, alone, "Lone")
    await seat_race(ann, bob, sam)
    return Victim(ann, (bob, sam)), Victim(lone)


@dataclass
class Flood:
    started: float = 0.0
    ended: float = 0.0
    report: list[dict[str, Any]] = field(default_factory=list)


async def flood(port: int, source: str, mode: str, flooding: asyncio.Event, *options: str) -> Flood:
    """Run a deaf flooder process (it sends on until the server drops each of its
    connections); ``flooding`` is set once its connections are open."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.support.flooder", "--port", str(port),
        "--source", source, "--mode", mode, "--deaf", *options,
        cwd=ROOT, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    result = Flood()
    assert await proc.stdout.readline() == b"flooding\n"
    result.started = time.perf_counter()
    flooding.set()
    out = await proc.stdout.read()
    assert await proc.wait() == 0
    result.ended = time.perf_counter()
    result.report = json.loads(out)
    return result


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    """The server as users run it, with the documented frame limits."""
    process = ServerProcess(None, tmp_path / "server.log", options=())
    process.start()
    try:
        yield process
    finally:
        process.kill()


async def test_flooders_are_closed_and_dropped_and_nobody_else_waits(
    server: ServerProcess,
) -> None:
    for mode, (at_flood, at_race, at_lone) in ADDRESSES.items():
        race, lone = await victims(server.url, at_race, at_lone)
        await asyncio.gather(race.trips(BEFORE), lone.trips(BEFORE))
        flooding = asyncio.Event()
        done = asyncio.ensure_future(
            flood(server.port, at_flood, mode, flooding, "--connections", "4")
        )
        await flooding.wait()
        await asyncio.gather(race.during(done, DURING), lone.during(done, DURING))
        result = await done
        for conn in result.report:
            assert conn["close"] == 4008, (mode, result.report)
            assert conn["ended"] == "reset", (mode, result.report)  # dropped, not kept
            assert conn["pongs_after_close"] <= AFTER_CLOSE, (mode, result.report)
        for name, victim in (("race", race), ("lone", lone)):
            # Served while the flood ran: each of these round trips was answered
            # right, and each move reached the rival and the spectator (Victim.trip).
            # How long they took is a figure for a benchmark, not a test: on a
            # busy machine the flooder's own process takes the time.
            assert victim.between(result.started, result.ended), (mode, name)


async def test_closed_for_bad_input_and_dropped_though_the_peer_sends_on(
    server: ServerProcess,
) -> None:
    """websockets closes a connection by itself for a frame over the size limit
    (1009), a reserved opcode (1002) or a text frame that is not UTF-8 (1007),
    the server for requests before hello (4002), and a peer may close with its
    own close frame (1000, echoed). Each flooder sends on after that, past the
    end of the server's stream: it is answered nothing more and dropped, not read
    and discarded for as long as it sends."""
    results = await asyncio.gather(
        *(
            flood(server.port, source, mode, asyncio.Event(), "--opening", opening,
                  "--connections", "2", "--give-up", "10")
            for opening, (source, mode, _) in BAD_INPUT.items()
        )
    )  # fmt: skip
    for (opening, (_, _, code)), result in zip(BAD_INPUT.items(), results, strict=True):
        for conn in result.report:
            assert conn["close"] == code, (opening, result.report)
            assert conn["ended"] == "reset", (opening, result.report)  # dropped, not kept
            assert conn["pongs_after_close"] <= AFTER_CLOSE, (opening, result.report)
