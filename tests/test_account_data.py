"""Control over one's data through real sockets, on the embedded (SQLite) stores:
a new handle once in 30 days, what others may see, everything exported, and an
account deleted for good (docs/protocol.md, "Accounts").

The in-process server runs on a clock the test moves by hand (set to now, as
replays are kept 90 days by the store's own clock), so 30 days pass without
waiting; what is left of a deleted account is read from the database files with
the test's own ``sqlite3`` once the server has stopped.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from protocol.messages import CloseCode
from server.accounts.model import secret_hash
from server.accounts.sqlite import ACCOUNTS_DB, SqliteAccounts
from server.app import RaceServer
from server.store.sqlite import SqliteStore
from tests.support.inprocess import FakeClock, running_server
from tests.support.raw_client import Client, player
from tests.support.waiting import eventually

DAY_MS = 86_400_000
DELETED = "a deleted player"


@asynccontextmanager
async def sqlite_server(data_dir: Path, clock: FakeClock) -> AsyncIterator[RaceServer]:
    """The server as ``serve --data-dir`` runs it (rooms and accounts in SQLite),
    on the test's clock."""
    store = await SqliteStore.at(data_dir)
    accounts = await SqliteAccounts.at(data_dir)
    async with running_server(clock=clock, store=store, accounts=accounts) as server:
        yield server


def wall_clock() -> FakeClock:
    return FakeClock(time.time_ns() // 1_000_000)


async def account(server: RaceServer, handle: str) -> tuple[Client, dict[str, Any]]:
    """A guest who took ``handle``, and the ``account_made`` reply."""
    client = await player(server, handle)
    made = await client.ok("take_handle", handle=handle, label="laptop")
    client.name, client.token = handle, made["device_token"]
    return client, made


async def refused(client: Client, kind: str, code: str, **fields: Any) -> dict[str, Any]:
    reply = await client.request(kind, **fields)
    assert (reply["type"], reply.get("code")) == ("error", code), reply
    return reply


async def race(host: Client, *others: Client, deals: int = 1) -> str:
    """A room of ``host`` and ``others`` where everyone resigns every deal of one
    round; its code, once each has seen the round over."""
    settings = {"deals_per_round": deals, "break_seconds": 0}
    code: str = (await host.ok("create_room", settings=settings))["room"]["code"]
    for other in others:
        await other.ok("join_room", code=code, role="player")
    await host.ok("start")
    for n in range(1, deals + 1):
        for who in (host, *others):
            await who.event("deal_started")
            reply = await who.request("move", deal=n, move={"kind": "resign"})
            assert reply["type"] == "moved", reply
    for who in (host, *others):
        await who.event("round_over")
    return code


async def test_a_handle_changes_once_in_30_days_and_friends_and_profile_follow(
    tmp_path: Path,
) -> None:
    clock = wall_clock()
    async with sqlite_server(tmp_path, clock) as server:
        ann, made = await account(server, "Annie")
        bea, _ = await account(server, "Bea")
        await ann.ok("befriend", handle="Bea")
        await bea.ok("answer_friend", handle="Annie", accept=True)
        taken = made["account"]["handle_changed"]

        too_soon = await refused(ann, "change_handle", "handle_change_too_soon", handle="Ann")
        assert too_soon["allowed"] == taken + 30 * 86_400
        clock.advance(30 * DAY_MS - 1_000)
        await refused(ann, "change_handle", "handle_change_too_soon", handle="Ann")
        clock.advance(1_000)
        await refused(ann, "change_handle", "bad_handle", handle="admin")
        await refused(ann, "change_handle", "handle_in_use", handle="BEA")
        changed = (await ann.ok("change_handle", handle="Ann"))["account"]
        assert (changed["handle"], changed["handle_changed"]) == ("Ann", clock.ms / 1000)
        assert changed["player"] == made["account"]["player"]

        # Friends and the public profile follow the new handle; the old one is free.
        friends = (await bea.ok("friends"))["friends"]
        assert [f["handle"] for f in friends] == ["Ann"]
        assert (await bea.ok("profile", handle="ann"))["profile"]["handle"] == "Ann"
        await refused(bea, "profile", "unknown_handle", handle="Annie")
        cid, _ = await account(server, "annie")  # the old handle, any case, is free again
        await refused(ann, "change_handle", "handle_change_too_soon", handle="Anna")
        # A new sign-in and a resume name the session by the new handle.
        await ann.close()
        again = await Client.open(server.url)
        welcome = await again.ok("hello", version=2, device=made["device_token"])
        assert (welcome["name"], welcome["account"]["handle"]) == ("Ann", "Ann")
        for client in (again, bea, cid):
            await client.close()


async def test_settings_hide_the_record_from_others_and_presence_from_friends(
    tmp_path: Path,
) -> None:
    async with sqlite_server(tmp_path, wall_clock()) as server:
        ann, _ = await account(server, "Annie")
        bea, _ = await account(server, "Bea")
        await ann.ok("befriend", handle="Bea")
        await bea.ok("answer_friend", handle="Annie", accept=True)
        await race(ann, bea)
        key = (await ann.ok("history"))["deals"][0]["key"]
        assert (await bea.ok("profile", handle="Annie"))["profile"]["handle"] == "Annie"

        shown = (await ann.ok("account_settings", shows_record=False))["account"]
        assert (shown["shows_record"], shown["shows_online"]) == (False, True)
        await refused(bea, "profile", "record_private", handle="Annie")
        await refused(bea, "history", "record_private", handle="Annie")
        assert len((await ann.ok("history"))["deals"]) == 1  # one's own, as ever
        # Bea played the deal too: it stays hers to replay.
        assert (await bea.ok("past_deal", key=key))["deal"]["key"] == key
        stranger = await player(server, "Cid")
        assert (await stranger.ok("past_deal", key=key))["deal"]["key"] == key  # Bea shows hers
        await bea.ok("account_settings", shows_record=False)
        await refused(stranger, "past_deal", "no_such_deal", key=key)

        assert "online" in (await bea.ok("friends"))["friends"][0]
        hidden = (await ann.ok("account_settings", shows_online=False))["account"]
        assert (hidden["shows_record"], hidden["shows_online"]) == (False, False)
        entry = (await bea.ok("friends"))["friends"][0]
        assert "online" not in entry and "room" not in entry
        await refused(ann, "account_settings", "bad_request", shows_record="no")
        guest = await player(server, "Dee")
        await refused(guest, "account_settings", "not_signed_in", shows_record=True)
        for client in (ann, bea, stranger, guest):
            await client.close()


async def test_the_export_holds_every_deal_and_no_secret(tmp_path: Path) -> None:
    async with sqlite_server(tmp_path, wall_clock()) as server:
        ann, made = await account(server, "Annie")
        bea, _ = await account(server, "Bea")
        await ann.ok("befriend", handle="Bea")
        await race(ann, bea, deals=3)
        await ann.ok("leave_room")
        await race(ann, deals=2)
        history = (await ann.ok("history", limit=50))["deals"]
        assert len(history) == 5

        data = (await ann.ok("export_account"))["data"]
        assert data["account"]["handle"] == "Annie"
        assert data["account"]["player"] == made["account"]["player"]
        assert {d["key"] for d in data["deals"]} == {d["key"] for d in history}
        assert len(data["rounds"]) == 2
        assert [d["label"] for d in data["devices"]] == ["laptop"]
        assert data["friends"] == [
            {"handle": "Bea", "state": "asked", "since": data["friends"][0]["since"]}
        ]
        assert data["recovery_codes_left"] == 10 and data["passkeys"] == []
        assert sum(t["deals"] for t in data["totals"]) == 5
        text = json.dumps(data)  # JSON as it is
        for secret in (made["device_token"], secret_hash(made["device_token"])):
            assert secret not in text
        for code in made["recovery_codes"]:
            assert secret_hash(code) not in text
        await ann.close()
        await bea.close()


def rows_naming(data_dir: Path, value: str) -> list[str]:
    """The tables of the accounts database with a value that holds ``value``."""
    found = []
    conn = sqlite3.connect(data_dir / ACCOUNTS_DB)
    try:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in conn.execute(f"SELECT * FROM {table}"):
                cells = [c if isinstance(c, bytes) else str(c).encode() for c in row]
                if any(value.encode() in cell for cell in cells):
                    found.append(table)
        return found
    finally:
        conn.close()


def count(data_dir: Path, sql: str, *args: str) -> int:
    conn = sqlite3.connect(data_dir / ACCOUNTS_DB)
    try:
        return int(conn.execute(sql, args).fetchone()[0])
    finally:
        conn.close()


async def test_a_deleted_account_leaves_nothing_and_others_see_a_deleted_player(
    tmp_path: Path,
) -> None:
    clock = wall_clock()
    async with sqlite_server(tmp_path, clock) as server:
        ann, made = await account(server, "Zelda")
        me, token = made["account"]["player"], made["device_token"]
        bea, _ = await account(server, "Bea")
        await ann.ok("befriend", handle="Bea")
        await bea.ok("answer_friend", handle="Zelda", accept=True)
        await ann.ok("friend_link")
        code = await race(ann, bea, deals=2)
        key = next(d["key"] for d in (await bea.ok("history"))["deals"] if d["deal"] == 1)
        assert (await bea.ok("past_deal", key=key))["deal"]["names"][me] == "Zelda"

        await refused(ann, "delete_account", "wrong_handle", handle="Bea")
        assert (await ann.ok("delete_account", handle=" zelda "))["type"] == "account_deleted"
        assert await ann.closed() == CloseCode.SIGNED_OUT

        # Bea, still in the room, sees the player renamed, live and in a snapshot.
        renamed = await bea.event("members")
        assert {p["id"]: p["name"] for p in renamed["players"]}[me] == DELETED
        room = (await bea.ok("snapshot"))["room"]
        assert {p["id"]: p["name"] for p in room["players"]}[me] == DELETED
        assert (await bea.ok("past_deal", key=key))["deal"]["names"][me] == DELETED
        assert (await bea.ok("friends"))["friends"] == []

        gone = await Client.open(server.url)
        assert (await gone.request("hello", version=2, device=token))["code"] == "unknown_token"
        await gone.close()
        cid, _ = await account(server, "Zelda")  # the handle is free again
        assert (await cid.ok("profile"))["profile"]["totals"] == []  # nothing carried over

        # The room closes when idle, and the seat's session is saved as ever: the
        # device token still answers unknown_token (it is no guest's session).
        room = server.service.rooms[code]
        await bea.ok("leave_room")
        await eventually(lambda: not any(m.connected for m in room.room.members.values()))
        clock.advance(server.service.idle_room_ms + 1)
        await clock.settled()
        await eventually(lambda: code not in server.service.rooms)
        await eventually(lambda: not server.service.tasks._running, what="the seat saved")
        gone = await Client.open(server.url)
        assert (await gone.request("hello", version=2, device=token))["code"] == "unknown_token"
        assert (await gone.request("hello", version=2, token=token))["code"] == "unknown_token"
        for client in (gone, bea, cid):
            await client.close()

    # Nothing of Zelda's account is left. Her player id stays in the list of
    # deleted players, and in what others keep of the races they ran with her
    # (Bea's rounds, the deals' replays) as the public id it always was; her
    # handle and token are nowhere, and nothing is kept under her player.
    assert rows_naming(tmp_path, secret_hash(token)) == []
    assert set(rows_naming(tmp_path, "Zelda")) == {"accounts"}  # Cid's, since
    for table in ("accounts", "deals", "rounds", "totals"):
        assert count(tmp_path, f"SELECT count(*) FROM {table} WHERE player = ?", me) == 0
    for table in ("friendships", "friend_links", "link_codes", "passkeys"):
        assert count(tmp_path, f"SELECT count(*) FROM {table}") == 0
    assert count(tmp_path, "SELECT count(*) FROM devices") == 2  # Bea's and Cid's
    assert count(tmp_path, "SELECT count(*) FROM recovery_codes") == 20
    assert count(tmp_path, "SELECT count(*) FROM replays") == 2
    assert count(tmp_path, "SELECT count(*) FROM deleted WHERE player = ?", me) == 1
