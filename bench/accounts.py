"""What remembering players costs: signing in by device token, and the profile
of a player with 10,000 deals, on both durable stores.

For each durable store (the embedded SQLite store in a fresh data directory; a
private ``redis-server``), one server process, and this process as its clients:

1. **Sign-in.** A signed-in device opens a socket and says ``hello`` with its
   device token, ``--signins`` times, one after another; measured from sending
   ``hello`` to its ``welcome``. Baseline, in the same run: a guest resuming its
   session by session token (the path every reconnect takes today).
2. **Profile.** ``profile`` for a player with ``--deals`` deals (10,000 by
   default) kept on their account, ``--profiles`` times; baseline: the profile of
   a player with 10 deals. Plus the first page of ``history``.

The deals are written into the account store directly (the server stopped, for
SQLite), as the server would have after that many races. The last line is JSON.

Usage: python -m bench.accounts [--deals 10000] [--signins 300] [--profiles 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bench.redis import Redis
from bench.server import LOAD_LIMITS, Proc
from client.codec import MSGPACK, decode, encode
from client.load import percentile
from protocol.wire import VERSION
from server.accounts.model import DealEntry, RoundEntry
from server.accounts.store import AccountStore

SERVER = r"listening on ws://[^:]+:(\d+)/ws"
LADDERS = ("klondike-1", "klondike-3")


class Socket:
    """One msgpack socket to the server, requests answered in order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.next_id = 0

    @classmethod
    async def open(cls, port: int) -> Socket:
        ws = await connect(f"ws://127.0.0.1:{port}/ws", subprotocols=[MSGPACK], max_size=None)  # type: ignore[list-item]
        return cls(ws)

    async def ask(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        await self.ws.send(encode({"type": kind, "id": rid, **fields}, MSGPACK))
        while True:
            frame = decode(await self.ws.recv(), MSGPACK)
            if frame.get("id") == rid:
                if frame["type"] == "error":
                    raise RuntimeError(f"{kind}: {frame['code']}: {frame.get('message')}")
                return frame

    async def close(self) -> None:
        await self.ws.close()


def history(player: str, deals: int, start: float) -> tuple[list[DealEntry], list[RoundEntry]]:
    """``deals`` deals in rounds of 3, one a minute from ``start``."""
    entries = [
        DealEntry(
            key=f"R{i // 3:06d}/{i // 3}/{i % 3 + 1}",
            t=start + 60 * i,
            room=f"R{i // 3:06d}",
            round=i // 3,
            deal=i % 3 + 1,
            ladder=LADDERS[i % 2],
            rules={"draw": 1 + 2 * (i % 2)},
            placing=1 + i % 4,
            score=300 + (i * 37) % 500,
            bonus=100 if i % 4 == 0 else 0,
            seconds=120.0 + i % 300 if i % 3 else None,
            moves=80 + i % 60,
            result="won" if i % 3 else "resigned",
            players=4,
        )
        for i in range(deals)
    ]
    rounds = [
        RoundEntry(
            key=f"R{r:06d}/{r}",
            t=start + 180 * r + 170,
            room=f"R{r:06d}",
            round=r,
            deals=3,
            total=1200,
            placing=1 + r % 4,
            tied=False,
            players=["pfriend1", "pfriend2"],
        )
        for r in range(deals // 3)
    ]
    return entries, rounds


async def seed(store: AccountStore, player: str, deals: int) -> None:
    entries, rounds = history(player, deals, time.time() - 60 * deals)
    for i in range(0, len(entries), 500):
        await store.add_history(player, entries[i : i + 500], rounds[i // 3 : (i + 500) // 3])


async def timed(n: int, step: Any) -> list[float]:
    """Milliseconds of ``n`` runs of ``step``, one after another."""
    out = []
    for _ in range(n):
        out.append(await step())
    return out


def figures(ms: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(ms, 50), 3), "p99_ms": round(percentile(ms, 99), 3)}


async def measure(port: int, people: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    async def hello(**who: str) -> float:
        sock = await Socket.open(port)
        t0 = time.perf_counter()
        await sock.ask("hello", version=VERSION, **who)
        ms = (time.perf_counter() - t0) * 1000
        await sock.close()
        return ms

    device = await timed(args.signins, lambda: hello(device=people["big"]["device"]))
    guest = await timed(args.signins, lambda: hello(token=people["guest"]))

    async def profile_of(who: str, kind: str) -> list[float]:
        sock = await Socket.open(port)
        await sock.ask("hello", version=VERSION, device=people[who]["device"])

        async def one() -> float:
            t0 = time.perf_counter()
            await sock.ask(kind)
            return (time.perf_counter() - t0) * 1000

        try:
            return await timed(args.profiles, one)
        finally:
            await sock.close()

    return {
        "sign_in_device": figures(device),
        "resume_guest": figures(guest),
        "profile_big": figures(await profile_of("big", "profile")),
        "profile_small": figures(await profile_of("small", "profile")),
        "history_big": figures(await profile_of("big", "history")),
    }


async def make_people(port: int) -> dict[str, Any]:
    """Two accounts (handles taken as guests) and a guest."""
    people: dict[str, Any] = {}
    for who in ("big", "small"):
        sock = await Socket.open(port)
        welcome = await sock.ask("hello", version=VERSION, name=who.title())
        made = await sock.ask("take_handle", handle=f"bench-{who}", label="bench")
        people[who] = {"player": welcome["player"], "device": made["device_token"]}
        await sock.close()
    sock = await Socket.open(port)
    people["guest"] = (await sock.ask("hello", version=VERSION, name="Guest"))["token"]
    await sock.close()
    return people


async def on_sqlite(args: argparse.Namespace) -> dict[str, Any]:
    from server.accounts.sqlite import SqliteAccounts

    data = Path(tempfile.mkdtemp(prefix="bench-accounts-"))
    store = ["--data-dir", str(data)]
    try:
        proc = await Proc.start("server", SERVER, *LOAD_LIMITS, *store)
        people = await make_people(proc.port)
        await proc.stop()
        accounts = await SqliteAccounts.at(data)
        await seed(accounts, people["big"]["player"], args.deals)
        await seed(accounts, people["small"]["player"], 10)
        await accounts.close()
        proc = await Proc.start("server", SERVER, *LOAD_LIMITS, *store)
        try:
            return await measure(proc.port, people, args)
        finally:
            await proc.stop()
    finally:
        shutil.rmtree(data, ignore_errors=True)


async def on_redis(args: argparse.Namespace) -> dict[str, Any]:
    from server.accounts.redis import RedisAccounts

    redis = Redis()
    try:
        proc = await Proc.start("server", SERVER, *LOAD_LIMITS, "--redis", redis.url)
        try:
            people = await make_people(proc.port)
            accounts = RedisAccounts("127.0.0.1", redis.port)
            await accounts.connect()
            await seed(accounts, people["big"]["player"], args.deals)
            await seed(accounts, people["small"]["player"], 10)
            await accounts.close()
            return await measure(proc.port, people, args)
        finally:
            await proc.stop()
    finally:
        redis.stop()


ROWS = (
    ("sign_in_device", "sign in by device token"),
    ("resume_guest", "  baseline: guest resumes by token"),
    ("profile_big", "profile, {deals} deals"),
    ("profile_small", "  baseline: profile, 10 deals"),
    ("history_big", "history first page, {deals} deals"),
)


def show(result: dict[str, Any], deals: int) -> None:
    print(f"{'':40} {'sqlite p50':>11} {'p99':>8} {'redis p50':>11} {'p99':>8}   (ms)")
    for key, label in ROWS:
        s, r = result["sqlite"][key], result["redis"][key]
        print(
            f"{label.format(deals=f'{deals:,}'):40} {s['p50_ms']:>11.2f} {s['p99_ms']:>8.2f}"
            f" {r['p50_ms']:>11.2f} {r['p99_ms']:>8.2f}"
        )


async def main(args: argparse.Namespace) -> dict[str, Any]:
    result = {"deals": args.deals, "sqlite": await on_sqlite(args), "redis": await on_redis(args)}
    show(result, args.deals)
    return result


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=10_000)
    parser.add_argument("--signins", type=int, default=300)
    parser.add_argument("--profiles", type=int, default=100)
    result = asyncio.run(main(parser.parse_args()))
    print(json.dumps(result))


if __name__ == "__main__":
    cli()
