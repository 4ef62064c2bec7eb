"""A quick-match room whose server dies during its countdown still starts by
itself, once (docs/protocol.md, "Quick match"): the countdown's end is in the
room's ``created`` record, so the rebuilt room counts down to the same moment.

On the embedded store, the process is killed with kill -9 and started again on
the same data directory, on a clock the test moves (tests/support/clocked.py):
the players resume mid-countdown and the round starts when the clock reaches
it. On Redis, the node holding the room is killed and the room is rebuilt on the
other node, on the real clock (as tests/test_cluster_quick_match.py): it starts
there, at the recorded time or at once if that has passed."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from server.accounts.redis import RedisAccounts
from server.accounts.sqlite import ACCOUNTS_DB
from server.matchmaking.queues import COUNTDOWN_MS
from tests.support.clocked import ClockedServer
from tests.support.processes import RedisServer, running_servers
from tests.support.raw_client import Client, resume
from tests.support.waiting import eventually


async def signed_in(url: str, handle: str) -> Client:
    client = await Client.open(url)
    await client.hello(handle)
    made = await client.ok("take_handle", handle=handle)
    client.token = made["device_token"]  # a signed-in session resumes by its device token
    return client


async def matched(ann: Client, bob: Client, ladder: str) -> tuple[str, int]:
    """Ann and Bob queue on ``ladder`` and are matched: their room and its start."""
    for c in (ann, bob):
        await c.ok("queue", ladder=ladder)
    got = [await c.notice("matched") for c in (ann, bob)]
    code, starts_at = got[0]["room"]["code"], got[0]["starts_at"]
    assert [(m["room"]["code"], m["starts_at"]) for m in got] == [(code, starts_at)] * 2
    assert all(m["room"]["state"] == "lobby" for m in got)
    return code, starts_at


def room_on_account(data_dir: Path, player: str | None) -> str | None:
    conn = sqlite3.connect(data_dir / ACCOUNTS_DB)
    try:
        row = conn.execute("SELECT room_code FROM accounts WHERE player = ?", (player,)).fetchone()
    finally:
        conn.close()
    return None if row is None else str(row[0])


async def test_kill_9_during_the_countdown_then_the_round_starts_by_itself(
    tmp_path: Path,
) -> None:
    server = ClockedServer(tmp_path / "data")
    await server.start()
    try:
        ann, bob = await signed_in(server.url, "Ann"), await signed_in(server.url, "Bob")
        code, starts_at = await matched(ann, bob, "classic-draw1")
        assert starts_at == server.now + COUNTDOWN_MS
        for c in (ann, bob):  # where each resumes: their account, kept as they are told

            def kept(player: str | None = c.player) -> bool:
                return room_on_account(server.data_dir, player) == code

            await eventually(kept, what="the room on the account")
        await server.kill()
        await server.start()  # the clock where it was: mid-countdown

        back: list[tuple[Client, dict[str, Any]]] = []
        for c in (ann, bob):
            again, welcome = await resume(server.url, c.token)
            room = welcome["room"]
            assert (room["code"], room["state"], room["starts_at"]) == (code, "lobby", starts_at)
            assert room["settings"]["rated"] is True
            back.append((again, room))
        await server.advance(COUNTDOWN_MS)  # nobody asks: the countdown starts it
        for again, _ in back:
            started = await again.event("deal_started")
            assert started["deal"]["number"] == 1 and started["deal"]["started_at"] == starts_at
            assert started["deal"]["board"] is not None
        snapshot = (await back[0][0].ok("snapshot"))["room"]
        assert (snapshot["state"], snapshot["round"], snapshot["starts_at"]) == (
            "playing",
            1,
            None,
        )

        # Once: rebuilt again, past its start, it is the same round and deal.
        await server.kill()
        await server.start()
        await server.advance(COUNTDOWN_MS)
        again, welcome = await resume(server.url, bob.token)
        room = welcome["room"]
        assert (room["state"], room["round"], room["deal"]["number"]) == ("playing", 1, 1)
        assert room["deal"]["started_at"] == starts_at and room["starts_at"] is None
        await again.ok("move", deal=1, move={"kind": "draw"})
    finally:
        await server.kill()
    text = server.log()
    assert "Traceback" not in text and " ERROR " not in text, text[-4000:]


async def test_the_node_holding_the_room_dies_during_the_countdown_and_another_starts_it(
    redis: RedisServer, tmp_path: Path
) -> None:
    with running_servers(redis, tmp_path, 2) as (one, two):
        # Both queue on node one: its pass forms their room, and it holds it.
        ann, bob = await signed_in(one.url, "Ann"), await signed_in(one.url, "Bob")
        code, starts_at = await matched(ann, bob, "classic-draw3")
        accounts = await RedisAccounts.from_url(redis.url)
        try:
            for c in (ann, bob):
                assert c.player is not None

                async def kept(player: str = c.player) -> bool:
                    account = await accounts.account_by_player(player)
                    return account is not None and account.room_code == code

                await eventually(kept, what="the room on the account")
        finally:
            await accounts.close()
        one.kill()

        for c in (ann, bob):  # on the other node: the room is rebuilt there
            again, welcome = await resume(two.url, c.token)
            room = welcome["room"]
            assert room["code"] == code and room["settings"]["rated"] is True
            if room["state"] == "lobby":  # rebuilt before its start: it counts down
                assert room["starts_at"] == starts_at
                deal = (await again.event("deal_started", timeout=20))["deal"]
            else:  # rebuilt after it (the takeover took that long): started at once
                assert room["state"] == "playing" and room["starts_at"] is None
                deal = room["deal"]
            assert deal["number"] == 1 and deal["started_at"] >= starts_at
            await again.ok("move", deal=1, move={"kind": "draw"})
        snapshot = (await again.ok("snapshot"))["room"]
        assert (snapshot["state"], snapshot["round"]) == ("playing", 1)
        assert snapshot["deal"]["number"] == 1
