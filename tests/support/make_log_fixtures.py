"""Write tests/fixtures/logs/: real room logs from both durable stores, and what
they fold to (see tests/support/log_fixtures.py).

Run once, by the release whose log format the fixtures pin::

    python -m tests.support.make_log_fixtures

Each store (the embedded SQLite one, and Redis on a redis-server of its own)
runs the in-process server with a clock moved by hand, and two rooms are
played over real sockets: a long one (several deals, a break ended by the
host, by the clock and by a removal, a late join, a bot, a member dropping and
coming back, a winnable deal after a rematch, compaction along the way) and a
short one the host closes.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from server.rooms.proofs import ProvenPools
from server.service.adoption import fold_room
from server.store.base import Store
from server.store.redis import RedisStore
from server.store.sqlite import SqliteStore
from tests.support.inprocess import FakeClock, Seeds, running_server
from tests.support.log_fixtures import FIXTURES, describe, write_log
from tests.support.processes import RedisServer
from tests.support.raw_client import Client, player, resume

BUDGET = 60_000
# Proven for draw one within BUDGET (as in tests/test_redis_winnable.py).
PROVEN = ["dry-pool-0", "dry-pool-1", "dry-pool-2", "dry-pool-5", "dry-pool-6", "dry-pool-8"]


def _tap(store: Store) -> dict[str, list[bytes]]:
    """Every record appended to ``store``, per room, in order."""
    appended: dict[str, list[bytes]] = {}
    append = store.append

    def tapped(code: str, records: Sequence[bytes], *args: Any) -> Awaitable[int]:
        appended.setdefault(code, []).extend(records)
        return append(code, records, *args)  # type: ignore[call-arg]

    store.append = tapped  # type: ignore[method-assign]
    return appended


async def _moves(c: Client, deal: int, *kinds: str) -> None:
    for kind in kinds:
        await c.ok("move", deal=deal, move={"kind": kind})


async def _play(store: Store, clock: FakeClock) -> list[tuple[str, list[bytes]]]:
    source = itertools.chain(PROVEN, (f"later-{i}" for i in itertools.count()))
    pools = ProvenPools(size=1, max_states=BUDGET, new_seed=lambda: next(source))
    async with running_server(store=store, clock=clock, proofs=pools, draw_seed=Seeds()) as server:
        ann = await player(server, "Ann")
        bob = await player(server, "Bob")
        cat = await player(server, "Cat")
        dan = await player(server, "Dan")
        settings = {"deals_per_round": 3, "break_seconds": 10, "draw": 1}
        code = (await ann.ok("create_room", settings=settings))["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        await cat.ok("join_room", code=code, role="spectator")
        await ann.ok("add_bot", pace="relaxed")
        (bot,) = server.service.rooms[code].room.bots()

        # Deal 1: a few moves, then the host ends it; a friend joins in the break.
        await ann.ok("start")
        await _moves(ann, 1, "draw", "draw", "draw")
        await _moves(bob, 1, "draw", "draw", "resign")
        await ann.ok("next_deal")
        await ann.event("break_started")
        await dan.ok("join_room", code=code, role="player")
        await bob.ok("ready")
        clock.advance(10_000)  # the clock ends the break
        await dan.event("deal_started", timeout=30)
        await clock.settled()

        # Deal 2: everyone resigns but the bot; removing it ends the deal.
        await _moves(dan, 2, "draw", "resign")
        await _moves(ann, 2, "draw", "resign")
        await _moves(bob, 2, "resign")
        await ann.ok("remove_player", player=bot)
        await ann.event("break_started")

        # Bob drops and comes back; Dan leaves; the host deals at once.
        token = bob.token
        await bob.close()
        await ann.event("members")
        bob, _ = await resume(server.url, token)
        await dan.ok("leave_room")
        await ann.ok("update_settings", settings={"race_bonus": 5})
        await ann.ok("next_deal")
        await ann.event("deal_started")
        await _moves(ann, 3, "draw", "draw", "resign")
        await _moves(bob, 3, "draw", "resign")
        await ann.event("round_over")

        # A rematch of one winnable deal.
        await ann.ok("update_settings", settings={"deals": "winnable", "deals_per_round": 1})
        await ann.ok("rematch")
        await ann.event("deal_started", timeout=60)
        await _moves(ann, 1, "draw", "draw", "resign")
        await _moves(bob, 1, "resign")
        await ann.event("round_over")

        # A short room the host closes.
        eve = await player(server, "Eve")
        short = (await eve.ok("create_room"))["room"]["code"]
        await cat.ok("leave_room")
        await cat.ok("join_room", code=short, role="player")
        await eve.ok("start")
        await _moves(cat, 1, "draw")
        await eve.ok("close_room")
        await cat.event("room_closed")
        for c in (ann, bob, cat, dan, eve):
            await c.close()
        runners = [server.service.rooms[c] for c in (code, short) if c in server.service.rooms]
        for runner in runners:
            while runner.pending:  # every append returned
                await asyncio.sleep(0.01)
            while runner._compacting:
                await asyncio.sleep(0.01)
        return [(code, await store.load(code)), (short, await store.load(short))]


async def _record(
    name: str, open_store: Callable[[], Awaitable[Store]], expected: dict[str, Any]
) -> None:
    clock = FakeClock()
    store = await open_store()
    appended = _tap(store)
    try:
        logs = await _play(store, clock)
        for label, (code, stored) in zip(("long", "short"), logs, strict=True):
            for kind, data in (("appended", appended[code]), ("stored", stored)):
                stem = f"{name}-{label}.{kind}"
                write_log(FIXTURES / f"{stem}.msgpack", data)
                room, _ = await fold_room(code, data)
                expected[stem] = {"code": code, "now": clock.ms, **describe(room, clock.ms)}
    finally:
        await store.close()  # the server closed it already; closing twice is harmless


async def main() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    expected: dict[str, Any] = {}
    work = Path(tempfile.mkdtemp(prefix="log-fixtures-"))
    try:
        await _record("sqlite", lambda: SqliteStore.at(work / "data"), expected)
        redis = RedisServer(work / "redis")
        redis.start()
        try:
            await _record("redis", lambda: RedisStore.from_url(redis.url, timeout=5.0), expected)
        finally:
            redis.kill()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(expected, sort_keys=True, separators=(",", ":"))
    (FIXTURES / "expected.json").write_text(text + "\n")


if __name__ == "__main__":
    asyncio.run(main())
