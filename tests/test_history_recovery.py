"""A player's record survives kill -9 on the default, embedded server: each deal
in it exactly once, its totals counted once.

The server is killed the moment a player receives ``deal_over`` (so whether the
history write after the room's record had happened is anybody's guess), then
started again on the same data directory: the rebuilt room writes its deals over
again, and the store keeps each key once. Then the write is lost on purpose (the
test's own sqlite3 deletes the history rows, as if the process had died between
the room's record and the history write) and the next restart puts it back."""

from __future__ import annotations

import re
from typing import Any

from tests.support.accounts_db import forget, killed_as_told, rows
from tests.support.embedded import EmbeddedServer
from tests.support.raw_client import Client


async def resumed(url: str, token: str | None) -> Client:
    client = await Client.open(url)
    welcome = await client.ok("hello", version=2, token=token)
    client.player, client.token = welcome["player"], token
    return client


async def records(url: str, tokens: list[str | None]) -> list[tuple[dict[str, Any], ...]]:
    out = []
    for token in tokens:
        client = await resumed(url, token)
        history = await client.ok("history")
        profile = await client.ok("profile")
        out.append((history, profile))
        await client.close()
    return out


async def test_kill_9_after_the_deal_each_entry_once(embedded: EmbeddedServer) -> None:
    ann, bob = await Client.open(embedded.url), await Client.open(embedded.url)
    await ann.hello("Ann")
    await bob.hello("Bob")
    settings = {"deals_per_round": 1, "break_seconds": 0}
    code = await killed_as_told(embedded.kill_now, ann, bob, "deal_over", settings)
    await embedded.exited()
    players = [ann.player, bob.player]

    key: str | None = None
    for lost in (False, True):
        if lost:
            forget(embedded.data_dir, "deals", "rounds", "totals", "replays")
            assert rows(embedded.data_dir, "SELECT * FROM deals") == []
        await embedded.start()  # the room is rebuilt from its log
        if key is None:
            [(key,)] = rows(embedded.data_dir, "SELECT key FROM replays")
            assert re.fullmatch(rf"{code}-\d+/1/1", key)
        kept = rows(embedded.data_dir, "SELECT player, key FROM deals ORDER BY player")
        assert kept == sorted((p, key) for p in players)
        # Each deal counts once in its ladder's totals and once in its week's.
        counted = rows(
            embedded.data_dir,
            "SELECT player, ladder LIKE 'week:%', deals FROM totals ORDER BY 1, 2",
        )
        assert counted == sorted((p, week, 1) for p in players for week in (0, 1))
        assert rows(embedded.data_dir, "SELECT key FROM replays") == [(key,)]
        assert len(rows(embedded.data_dir, "SELECT * FROM rounds")) == 2
        got = await records(embedded.url, [ann.token, bob.token])
        for (history, profile), resign_moves in zip(got, (2, 1), strict=True):
            [entry] = history["deals"]
            assert entry["key"] == key and entry["result"] == "resigned"
            assert entry["moves"] == resign_moves
            [totals] = profile["profile"]["totals"]
            assert totals["deals"] == 1 and totals["wins"] == 0
            assert [r["key"] for r in profile["profile"]["rounds"]] == [key.rsplit("/", 1)[0]]
        await embedded.kill()
