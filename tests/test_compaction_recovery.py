"""A compacted room survives ``kill -9`` of ``python -m server``: real process, real
sockets. A deal is played to its end (the log is compacted to its snapshot), the
next one is under way when the process dies; it comes back onto the same boards,
scores, sheet and history, from a log that starts with the snapshot."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]

from server.store.sqlite import DB_NAME
from tests.support.embedded import EmbeddedServer
from tests.support.raw_client import Client, Player


def stored(data_dir: Path, code: str) -> list[dict[str, Any]]:
    """The room's records as the database holds them (the test's own sqlite3)."""
    conn = sqlite3.connect(data_dir / DB_NAME)
    try:
        rows = conn.execute("SELECT data FROM chunks WHERE code = ? ORDER BY seq", (code,))
        chunks = [chunk for (chunk,) in rows]
    finally:
        conn.close()
    return [
        msgpack.unpackb(raw, raw=False, strict_map_key=False)
        for chunk in chunks
        for raw in msgpack.unpackb(chunk, raw=False)
    ]


def seen(room: dict[str, Any]) -> dict[str, Any]:
    deal = room["deal"]
    return {
        "board": deal["board"],
        "boards": deal["boards"],
        "progress": deal["progress"],
        "number": deal["number"],
        "sheet": room["sheet"],
        "history": room["history"],
        "round": room["round"],
    }


async def test_kill_9_after_compaction(embedded: EmbeddedServer) -> None:
    ann, bob, sam = [await Client.open(embedded.url) for _ in range(3)]
    for client, name in ((ann, "Ann"), (bob, "Bob"), (sam, "Sam")):
        await client.hello(name)
    settings = {"scoring": "standard", "deals_per_round": 3, "break_seconds": 0}
    code = (await ann.ok("create_room", settings=settings))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    await sam.ok("join_room", code=code, role="spectator")
    await ann.ok("start")
    players = [Player(c) for c in (ann, bob)]
    for p in players:
        p.view = (await p.client.event("deal_started"))["deal"]["board"]
    for p in players:
        await p.play(1, 8)
    for p in players:
        await p.client.ok("move", deal=1, move={"kind": "resign"})
    for p in players:  # deal 1 is over: deal 2 dealt, a snapshot written
        started = (await p.client.event("deal_started"))["deal"]
        assert started["number"] == 2
        p.view = started["board"]
        p.acked = []
    for p in players:  # each acknowledged after the compaction was queued
        await p.play(2, 6)
    before = {c.player: (await c.ok("snapshot"))["room"] for c in (ann, bob, sam)}

    records = stored(embedded.data_dir, code)
    assert records[0]["k"] == "snapshot"  # compacted: deal 1's records are gone
    assert not any(r["k"] == "move" and r["d"] == 1 for r in records)
    assert [d["n"] for d in records[0]["deals"]] == [1, 2]  # ... into the snapshot

    await embedded.kill()
    await embedded.start()
    for c in (ann, bob, sam):
        again = await Client.open(embedded.url)
        welcome = await again.ok("hello", version=2, token=c.token)
        room = welcome["room"]
        old = before[c.player]
        assert room["seq"] > old["seq"]  # the presence records after the restart
        assert seen(room) == seen(old)
        await again.close()
    for p in players:
        assert p.client.player is not None
        assert before[p.client.player]["deal"]["board"] == p.view
