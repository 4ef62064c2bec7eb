"""The daily deal over real sockets: published a week ahead, revealed when its
UTC day ends, and never changed once published.

The in-process server runs on a clock the test moves by hand (a day passes
when the test says so); every frame it sends is captured, and no seed of a
day that is not over is in any of them. The stores each keep the first deal
published for a day, two Redis connections racing included; the default
(SQLite) server killed with -9 comes back with the same commitments, and two
nodes on one Redis, publishing at once, show the same days. The commands as
people run them: ``daily --fetch FILE`` keeps the week's commitments, and
``verify --daily DATE --saved FILE`` passes on the revealed day, fails on a day
not over yet and on a saved commitment the seed does not hash to.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date, timedelta
from pathlib import Path

import pytest

from client.daily import FORMAT
from protocol.deal import commitment
from protocol.proof import proof_from_wire
from protocol.settings import DealRules
from server.daily.redis import RedisDaily
from server.daily.schedule import (
    DAYS_AHEAD,
    LADDERS,
    DailyDeal,
    day_of,
    day_start,
)
from server.daily.sqlite import SqliteDaily
from server.daily.store import DailyStore, MemoryDaily
from server.rooms.proofs import ProvenPools
from tests.support import ROOT
from tests.support.embedded import EmbeddedServer
from tests.support.inprocess import FakeClock, Outbox, running_server
from tests.support.processes import RedisServer, running_servers
from tests.support.raw_client import Client, player
from tests.support.waiting import TIMEOUT, eventually

BUDGET = 60_000  # the solver's budget per layout here: enough for most deals
WINDOW = len(LADDERS) * (DAYS_AHEAD + 1)  # the days-and-ladders kept published


def deal(day: date, ladder: str, seed: str) -> DailyDeal:
    return DailyDeal.made(day, ladder, seed, "DR1", 1.0)


# ---------------------------------------------------------------------- the stores


@asynccontextmanager
async def each_store(
    kind: str, tmp_path: Path, redis: RedisServer | None
) -> AsyncIterator[tuple[DailyStore, DailyStore]]:
    """Two handles on one store (two nodes' connections for Redis)."""
    if kind == "memory":
        store = MemoryDaily()
        yield store, store
    elif kind == "sqlite":
        sqlite = await SqliteDaily.at(tmp_path / "data")
        try:
            yield sqlite, sqlite
        finally:
            await sqlite.close()
    else:
        assert redis is not None
        a, b = await RedisDaily.from_url(redis.url), await RedisDaily.from_url(redis.url)
        try:
            yield a, b
        finally:
            await a.close()
            await b.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_a_published_day_is_the_first_one_kept(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    redis = request.getfixturevalue("redis") if kind == "redis" else None
    day = date(2026, 12, 2)
    async with each_store(kind, tmp_path, redis) as (a, b):
        # Two publishers racing on the same days with seeds of their own: both
        # are answered with one deal a day, the same.
        for i in range(5):
            d = day + timedelta(i)
            got = await asyncio.gather(
                a.publish(deal(d, "classic-draw1", f"a{i}")),
                b.publish(deal(d, "classic-draw1", f"b{i}")),
            )
            assert got[0] == got[1] and got[0].seed in (f"a{i}", f"b{i}")
        kept = await a.days(day, day + timedelta(4))
        assert [d.day for d in kept] == [day + timedelta(i) for i in range(5)]
        assert kept == await b.days(day, day + timedelta(4))
        # A day once kept is never replaced.
        again = await b.publish(deal(day, "classic-draw1", "late"))
        assert again == kept[0] and again.commitment == commitment(again.seed)
        await a.publish(deal(day, "classic-draw3", "three"))
        listed = await b.days(day, day)
        assert [(d.ladder, d.seed) for d in listed] == [
            ("classic-draw1", kept[0].seed),
            ("classic-draw3", "three"),
        ]
        assert await a.days(day - timedelta(3), day - timedelta(1)) == []


async def test_the_sqlite_store_keeps_days_across_a_reopen(tmp_path: Path) -> None:
    store = await SqliteDaily.at(tmp_path)
    first = await store.publish(deal(date(2026, 12, 2), "classic-draw3", "kept"))
    await store.close()
    store = await SqliteDaily.at(tmp_path)
    try:
        assert await store.days(date(2026, 12, 1), date(2026, 12, 3)) == [first]
    finally:
        await store.close()


# ---------------------------------------------------------------------- in process


def seeds_in(frames: list[bytes | str], seeds: set[str]) -> set[str]:
    """The seeds that appear in any frame (msgpack and JSON keep a string as is)."""
    found = set()
    for raw in frames:
        data = raw if isinstance(raw, bytes) else raw.encode()
        found |= {s for s in seeds if s.encode() in data}
    return found


async def test_days_are_published_ahead_and_revealed_when_they_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outbox = Outbox(monkeypatch)
    clock = FakeClock()
    pools = ProvenPools(size=2, max_states=BUDGET)
    async with running_server(clock=clock, proofs=pools, publish_daily=True) as server:
        daily = server.service.daily
        today = day_of(clock.now())
        await asyncio.wait_for(daily.until_published(today + timedelta(DAYS_AHEAD)), 8 * TIMEOUT)
        guest = await player(server, "Gus")
        listed = await guest.ok("daily")
        assert listed["today"] == today.isoformat()
        days = listed["days"]
        assert [(d["date"], d["ladder"]) for d in days] == [
            ((today + timedelta(i)).isoformat(), name)
            for i in range(DAYS_AHEAD + 1)
            for name in sorted(LADDERS)
        ]
        assert all("seed" not in d and "proof" not in d for d in days)
        assert all(len(d["commitment"]) == 64 for d in days)
        assert {d["ladder"]: d["rules"]["draw"] for d in days} == {
            "classic-draw1": 1,
            "classic-draw3": 3,
        }
        saved = {(d["date"], d["ladder"]): d["commitment"] for d in days}

        # A day passes on the server's clock: today is revealed, a new day is
        # published at the end of the week.
        clock.advance(day_start(today + timedelta(1)) - clock.now())
        await asyncio.wait_for(
            daily.until_published(today + timedelta(DAYS_AHEAD + 1)), 8 * TIMEOUT
        )
        listed = await guest.ok("daily")
        assert listed["today"] == (today + timedelta(1)).isoformat()
        shown = {(d["date"], d["ladder"]): d for d in listed["days"]}
        assert len(shown) == 2 * (DAYS_AHEAD + 2)
        for name, lad in LADDERS.items():
            past = shown[(today.isoformat(), name)]
            assert commitment(past["seed"]) == saved[(today.isoformat(), name)]
            proof = proof_from_wire(past["seed"], lad.rules, past["proof"])
            assert past["proof"]["length"] == len(proof.moves)
            assert DealRules.from_wire(past["rules"]) == lad.rules
        for key, digest in saved.items():
            assert shown[key]["commitment"] == digest  # nothing published changed
        assert sum("seed" in d for d in shown.values()) == len(LADDERS)

        # Every frame the server sent to anyone: no seed of a day not over.
        kept = await daily.store.days(today - timedelta(1), today + timedelta(DAYS_AHEAD + 1))
        secret = {d.seed for d in kept if d.day > today}
        revealed = {d.seed for d in kept if d.day == today}
        assert len(secret) == 2 * (DAYS_AHEAD + 1) and len(revealed) == 2
        assert seeds_in(outbox.frames, secret) == set()
        assert seeds_in(outbox.frames, revealed) == revealed

        # The deal of a day, seed and all, is the server's to read.
        own = await daily.deal(today + timedelta(1), "classic-draw3")
        assert own is not None and own.seed in secret
        await guest.close()


async def cli(*args: str) -> tuple[int, str]:
    """``klondike-race ARGS`` as people run it; its exit status and its output."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.cli", *args, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return await proc.wait(), out.decode()


async def test_the_commitments_saved_before_a_day_verify_it_after(tmp_path: Path) -> None:
    clock = FakeClock()
    pools = ProvenPools(size=2, max_states=BUDGET)
    saved = tmp_path / "daily.json"
    async with running_server(clock=clock, proofs=pools, publish_daily=True) as server:
        daily = server.service.daily
        today = day_of(clock.now())
        await asyncio.wait_for(daily.until_published(today + timedelta(DAYS_AHEAD)), 8 * TIMEOUT)
        code, out = await cli("daily", "--url", server.url, "--fetch", str(saved))
        assert code == 0, out
        assert f"saved {WINDOW} new commitment(s)" in out
        kept = json.loads(saved.read_text())["days"]
        assert len(kept) == WINDOW

        # Not over yet: nothing to verify.
        code, out = await cli("verify", "--daily", today.isoformat(), "--url", server.url,
                              "--saved", str(saved))  # fmt: skip
        assert code == 1 and "NOT REVEALED" in out and "FAILED" in out, out

        clock.advance(day_start(today + timedelta(1)) - clock.now())
        await asyncio.wait_for(
            daily.until_published(today + timedelta(DAYS_AHEAD + 1)), 8 * TIMEOUT
        )
        code, out = await cli("verify", "--daily", today.isoformat(), "--url", server.url,
                              "--saved", str(saved))  # fmt: skip
        assert code == 0, out
        assert out.count("OK: the seed matches the commitment") == len(LADDERS)
        assert out.count("WIN: the engine replays") == len(LADDERS)
        assert f"VERIFIED: daily deal of {today.isoformat()}" in out

        # A saved commitment the revealed seed does not hash to: a mismatch.
        first = f"{today.isoformat()} classic-draw1"
        other = f"{(today + timedelta(1)).isoformat()} classic-draw1"
        kept[first] = kept[other]
        saved.write_text(json.dumps({"format": FORMAT, "days": kept}))
        code, out = await cli("verify", "--daily", today.isoformat(), "--url", server.url,
                              "--saved", str(saved))  # fmt: skip
        assert code == 1 and "MISMATCH" in out and "FAILED" in out, out


async def test_daily_needs_a_hello() -> None:
    async with running_server() as server:
        client = await Client.open(server.url)
        refused = await client.request("daily")
        assert refused["type"] == "error" and refused["code"] == "hello_first"
        await client.close()


# ---------------------------------------------------------------------- real processes


async def commitments(url: str, want: int) -> dict[tuple[str, str], str]:
    """The published commitments, once ``want`` days-and-ladders are listed."""
    client = await player(url, "Viv")
    try:

        async def listed() -> dict[tuple[str, str], str] | None:
            days = (await client.ok("daily"))["days"]
            out = {(d["date"], d["ladder"]): d["commitment"] for d in days}
            return out if len(out) >= want else None

        got: dict[tuple[str, str], str] = await eventually(
            listed, 8 * TIMEOUT, what="the days published", pause=0.5
        )
        return got
    finally:
        await client.close()


async def test_kill_9_and_restart_changes_no_published_day(embedded: EmbeddedServer) -> None:
    """Killed while it publishes the week (a few days out), then once it has: the
    days it had shown are the same after each restart, and the week gets full."""
    early = await commitments(embedded.url, 4)
    await embedded.kill()
    await embedded.start()
    full = await commitments(embedded.url, WINDOW)
    assert {k: v for k, v in full.items() if k in early} == early
    await embedded.kill()
    await embedded.start()
    again = await commitments(embedded.url, WINDOW)
    assert {k: v for k, v in again.items() if k in full} == full


async def test_two_redis_nodes_publishing_at_once_show_the_same_days(
    redis: RedisServer, tmp_path: Path
) -> None:
    with running_servers(redis, tmp_path, 2) as nodes:
        a, b = await asyncio.gather(
            commitments(nodes[0].url, WINDOW), commitments(nodes[1].url, WINDOW)
        )
        assert a == b and len(a) == WINDOW
        # A key a published day (the results' one-time upgrade mark aside).
        keys = [k for k in redis("KEYS", "*daily:*") if not k.endswith(b"daily:ranked_by_homes")]
        assert len(keys) == WINDOW
