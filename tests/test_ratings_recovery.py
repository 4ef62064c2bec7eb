"""A rated round's rating change is applied exactly once across kill -9 of the
default, embedded server, and across kill -9 and failover on Redis.

The server is killed the moment a player receives ``round_over`` (so whether
the rating was applied after the room's record is anybody's guess), then
started again on the same data directory: the rebuilt room rates its round
again, and the store, finding the round's key, writes nothing twice. Then the
application is lost on purpose (the test's own sqlite3 deletes the ratings, as
if the process had died between the room's record and the write) and the next
restart applies it, once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from server.accounts.redis import RedisAccounts
from server.ratings.model import rate_round
from tests.support.accounts_db import forget, killed_as_told, rows
from tests.support.embedded import EmbeddedServer
from tests.support.processes import RedisServer, running_servers
from tests.support.raw_client import Client, resume


async def signed_in(url: str, handle: str) -> Client:
    client = await Client.open(url)
    await client.hello(handle)
    made = await client.ok("take_handle", handle=handle)
    client.token = made["device_token"]  # a signed-in session resumes by its device token
    return client


async def test_kill_9_between_the_round_and_its_reply_rates_once(
    embedded: EmbeddedServer,
) -> None:
    ann, bob = await signed_in(embedded.url, "Ann"), await signed_in(embedded.url, "Bob")
    settings = {"deals_per_round": 1, "break_seconds": 0, "rated": True}
    code = await killed_as_told(embedded.kill_now, ann, bob, "round_over", settings)
    await embedded.exited()
    players = sorted([ann.player, bob.player])

    applied: list[tuple[Any, ...]] | None = None
    for lost in (False, True, False):
        if lost:
            forget(embedded.data_dir, "ratings", "rated_rounds", "rating_points")
            assert rows(embedded.data_dir, "SELECT * FROM rated_rounds") == []
        await embedded.start()  # the room is rebuilt from its log
        [(key, t)] = rows(embedded.data_dir, "SELECT key, t FROM rated_rounds")
        assert key.startswith(f"{code}-") and key.endswith("/1")
        kept = rows(
            embedded.data_dir,
            "SELECT player, mu, sigma, rounds FROM ratings ORDER BY player",
        )
        assert [(p, n) for p, _, _, n in kept] == [(p, 1) for p in players]
        points = rows(embedded.data_dir, "SELECT player, key FROM rating_points ORDER BY player")
        assert points == [(p, key) for p in players]
        # Both resigned with the same score: a shared first place, rated as such.
        after = rate_round({}, {ann.player: 1, bob.player: 1}, t)
        for p, mu, sigma, _ in kept:
            assert (mu, sigma) == pytest.approx((after[p].mu, after[p].sigma))
        if applied is not None:
            assert kept == applied  # applied again from scratch: the same figures
        applied = kept
        await embedded.kill()


async def test_kill_9_on_redis_then_another_node_rates_once(
    redis: RedisServer, tmp_path: Path
) -> None:
    """The same on Redis, and across nodes: the node running the room dies at
    ``round_over``; the room is rebuilt by another node (its players resume
    there), which applies the round once, found by key if the dead node had."""
    with running_servers(redis, tmp_path, 2) as (one, two):
        ann, bob = await signed_in(one.url, "Ann"), await signed_in(one.url, "Bob")
        settings = {"deals_per_round": 1, "break_seconds": 0, "rated": True}
        code = await killed_as_told(one.kill, ann, bob, "round_over", settings)

        for c in (ann, bob):  # on the other node: the room is rebuilt there
            again, welcome = await resume(two.url, c.token)
            assert welcome["room"]["code"] == code and welcome["room"]["state"] == "round_over"
            table = await again.ok("ladder", ladder="classic-draw1")
            assert [r["rounds"] for r in table["top"]] == [1, 1]
            assert len(table["chart"]) == 1
        accounts = await RedisAccounts.from_url(redis.url)
        try:
            [rnd] = await accounts.rated_rounds("classic-draw1")
            assert rnd.key.startswith(f"{code}-") and rnd.places == {
                ann.player: 1,
                bob.player: 1,
            }
            ratings = await accounts.ratings("classic-draw1", rnd.places)
            after = rate_round({}, rnd.places, rnd.t)
            assert ratings == after
        finally:
            await accounts.close()
