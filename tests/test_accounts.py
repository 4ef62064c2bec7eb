"""Accounts over real sockets (docs/protocol.md, "Accounts"): taking a handle,
signing in by link and recovery codes, devices and signing out, the handle rules,
the limits on guessing, and a restart of the default (SQLite) server.

The in-process server runs on a clock the test moves by hand, so a link code's ten
minutes pass without waiting; the restart is a real ``kill -9`` of a real process.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import Any

from protocol.messages import CloseCode
from server.accounts.sqlite import ACCOUNTS_DB
from tests.support.embedded import EmbeddedServer
from tests.support.inprocess import UNLIMITED, FakeClock, running_server
from tests.support.raw_client import Client, player
from tests.support.waiting import eventually


def rooms_of_accounts(data_dir: Path) -> list[str | None]:
    """The rooms the accounts sit in, as the database holds them (read with the
    test's own ``sqlite3``, not the store's code)."""
    conn = sqlite3.connect(data_dir / ACCOUNTS_DB)
    try:
        return [room for (room,) in conn.execute("SELECT room_code FROM accounts")]
    finally:
        conn.close()


async def hello(url: str, **way: Any) -> tuple[Client, dict[str, Any]]:
    """A new connection that says hello one way; its reply (welcome or error)."""
    client = await Client.open(url)
    return client, await client.request("hello", version=2, **way)


async def account(url: str, name: str, handle: str) -> tuple[Client, dict[str, Any]]:
    """A guest who took ``handle``, and the ``account_made`` reply."""
    client = await player(url, name)
    return client, await client.ok("take_handle", handle=handle, label="laptop")


async def test_a_guest_takes_a_handle_mid_room_and_keeps_its_player_and_results() -> None:
    async with running_server() as server:
        ann = await player(server, "Ann")
        guest_token, me = ann.token, ann.player
        code = (await ann.ok("create_room", settings={"deals_per_round": 1}))["room"]["code"]
        await ann.ok("start")
        await ann.event("deal_started")
        assert (await ann.request("move", deal=1, move={"kind": "resign"}))["type"] == "moved"
        await ann.event("round_over")
        made = await ann.ok("take_handle", handle="Annie", label="laptop")
        assert made["type"] == "account_made"
        assert made["account"]["player"] == me and made["account"]["handle"] == "Annie"
        assert len(made["recovery_codes"]) == 10 and made["device_token"].startswith("d.")
        # The same connection goes on as before; the room knows the same player.
        assert (await ann.ok("snapshot"))["room"]["me"] == me
        await ann.close()
        _, refused = await hello(server.url, token=guest_token)
        assert refused["code"] == "unknown_token"  # only device tokens sign in now
        _, welcome = await hello(server.url, device=made["device_token"])
        assert (welcome["player"], welcome["name"], welcome["token"]) == (
            me,
            "Annie",
            made["device_token"],
        )
        assert welcome["account"] == made["account"] and "device_token" not in welcome
        room = welcome["room"]
        assert room["code"] == code and room["state"] == "round_over"
        assert me in room["sheet"]["players"]  # the guest's result is the account's


async def test_a_link_code_signs_in_a_second_device_once_within_ten_minutes() -> None:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        ann, made = await account(server.url, "Ann", "Annie")
        link = await ann.ok("link_code")
        assert link["url"] == f"http://127.0.0.1:{server.port}/#link={link['code']}"
        assert link["qr"].startswith("<svg") and link["expires"] == clock.ms / 1000 + 600
        phone, welcome = await hello(server.url, link=link["code"], label="phone")
        assert welcome["type"] == "welcome" and welcome["player"] == ann.player
        token = welcome["device_token"]
        assert token == welcome["token"] and token != made["device_token"]
        assert welcome["account"]["handle"] == "Annie"
        assert await ann.closed() == CloseCode.RESUMED_ELSEWHERE  # one session per account
        _, again = await hello(server.url, link=link["code"])
        assert again["code"] == "bad_code"  # used
        late = await phone.ok("link_code")
        clock.advance(600_000)
        _, expired = await hello(server.url, link=late["code"])
        assert expired["code"] == "bad_code"  # expired: the same answer
        _, made_up = await hello(server.url, link="AAAAA-BBBBB-CCCCC-DDDDD-EEEEE-F")
        assert made_up["code"] == "bad_code"  # unknown: the same answer again


async def test_a_recovery_code_signs_in_once_and_a_new_set_replaces_the_old() -> None:
    async with running_server() as server:
        _, made = await account(server.url, "Ann", "Annie")
        first, second = made["recovery_codes"][:2]
        typed = first.lower().replace("-", " ")  # as a person might type it
        device, welcome = await hello(server.url, recovery=typed, label="new phone")
        assert welcome["type"] == "welcome" and welcome["account"]["handle"] == "Annie"
        _, used = await hello(server.url, recovery=first)
        assert used["code"] == "bad_code"
        fresh = await device.ok("recovery_codes")
        assert len(fresh["codes"]) == 10 and second not in fresh["codes"]
        _, replaced = await hello(server.url, recovery=second)
        assert replaced["code"] == "bad_code"


async def test_devices_list_their_last_use_and_sign_out_closes_with_4011() -> None:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        ann, made = await account(server.url, "Ann", "Annie")
        link = await ann.ok("link_code")
        clock.advance(1_000)
        phone, welcome = await hello(server.url, link=link["code"], label="phone")
        phone_token = welcome["device_token"]
        clock.advance(5_000)
        await phone.close()
        laptop, _ = await hello(server.url, device=made["device_token"])
        listed = (await laptop.ok("devices"))["devices"]
        assert [(d["label"], d["current"]) for d in listed] == [("laptop", True), ("phone", False)]
        assert listed[0]["last_used"] == clock.ms / 1000  # signed in just now
        assert listed[1]["last_used"] == listed[1]["created"] == clock.ms / 1000 - 5
        # Sign out one other device: its token signs in no more.
        out = await laptop.ok("sign_out", device=listed[1]["device"])
        assert out == {"type": "signed_out", "id": out["id"], "count": 1}
        _, refused = await hello(server.url, device=phone_token)
        assert refused["code"] == "unknown_token"
        assert (await laptop.ok("sign_out", device="dNOBODY"))["count"] == 0
        # Sign out this device: the reply, then 4011 on the live connection.
        assert (await laptop.ok("sign_out"))["count"] == 1
        assert await laptop.closed() == CloseCode.SIGNED_OUT
        _, refused = await hello(server.url, device=made["device_token"])
        assert refused["code"] == "unknown_token"
        _, refused = await hello(server.url, token=made["device_token"])
        assert refused["code"] == "unknown_token"


async def test_sign_out_all_signs_out_every_device() -> None:
    async with running_server() as server:
        ann, made = await account(server.url, "Ann", "Annie")
        link = await ann.ok("link_code")
        phone, welcome = await hello(server.url, link=link["code"], label="phone")
        assert (await phone.ok("sign_out", all=True))["count"] == 2
        assert await phone.closed() == CloseCode.SIGNED_OUT
        for token in (made["device_token"], welcome["device_token"]):
            _, refused = await hello(server.url, device=token)
            assert refused["code"] == "unknown_token"
        # The account is still there: a recovery code signs a device in again.
        _, back = await hello(server.url, recovery=made["recovery_codes"][0])
        assert back["type"] == "welcome" and back["player"] == ann.player


async def test_another_accounts_device_is_not_signed_out_nor_listed() -> None:
    async with running_server() as server:
        ann, made = await account(server.url, "Ann", "Annie")
        annes = await ann.ok("devices")
        bob, _ = await account(server.url, "Bob", "Bobby")
        ann_device = annes["devices"][0]["device"]
        assert (await bob.ok("sign_out", device=ann_device))["count"] == 0
        assert [d["label"] for d in (await bob.ok("devices"))["devices"]] == ["laptop"]
        assert ann_device not in {d["device"] for d in (await bob.ok("devices"))["devices"]}
        await ann.close()
        _, welcome = await hello(server.url, device=made["device_token"])
        assert welcome["type"] == "welcome" and welcome["account"]["handle"] == "Annie"


async def test_handle_rules() -> None:
    async with running_server() as server:
        ann, made = await account(server.url, "Ann", "Zoë")
        assert made["account"]["handle"] == "Zoë"
        again = await ann.request("take_handle", handle="Other")
        assert again["code"] == "already_signed_in"
        bob = await player(server, "Bob")
        decomposed = unicodedata.normalize("NFD", "ZOË")
        assert decomposed != "ZOË"
        for taken in ("zoë", "ZOË", decomposed, " Zoë "):
            assert (await bob.request("take_handle", handle=taken))["code"] == "handle_in_use"
        for bad in ("Admin", "SERVER", "x", "", "   ", "a" * 25, "ab\u202ecd"):
            assert (await bob.request("take_handle", handle=bad))["code"] == "bad_handle", bad
        for guest_only in ("link_code", "devices", "sign_out", "recovery_codes"):
            assert (await bob.request(guest_only))["code"] == "not_signed_in"
        assert (await bob.ok("take_handle", handle="Bo"))["account"]["handle"] == "Bo"


async def test_guessing_link_codes_is_limited_per_address_across_reconnections() -> None:
    limits = replace(UNLIMITED, wrong_link_codes_per_minute=3)
    async with running_server(limits=limits) as server:
        ann, _ = await account(server.url, "Ann", "Annie")
        right = (await ann.ok("link_code"))["code"]
        for n in range(3):
            _, wrong = await hello(server.url, link=f"AAAAA-BBBBB-CCCCC-DDDDD-EEEE{n}-F")
            assert wrong["code"] == "bad_code"
        _, limited = await hello(server.url, recovery="AAAAA-BBBBB-CCCCC-DDDDD-EEEEE-F")
        assert (limited["code"], limited["limit"]) == ("limit_reached", "link_codes")
        # A new connection finds the allowance as it was: even the right code waits.
        _, still = await hello(server.url, link=right)
        assert (still["code"], still["limit"]) == ("limit_reached", "link_codes")


async def test_signing_in_with_wrong_device_tokens_is_limited_too() -> None:
    limits = replace(UNLIMITED, sign_ins_per_minute=2)
    async with running_server(limits=limits) as server:
        for _ in range(2):
            _, wrong = await hello(server.url, device="d.not-a-device-token")
            assert wrong["code"] == "unknown_token"
        _, limited = await hello(server.url, device="d.not-a-device-token")
        assert (limited["code"], limited["limit"]) == ("limit_reached", "sign_ins")


async def test_taking_handles_is_limited_per_address() -> None:
    limits = replace(UNLIMITED, sign_ups_per_minute=1)
    async with running_server(limits=limits) as server:
        await account(server.url, "Ann", "Annie")
        bob = await player(server, "Bob")
        limited = await bob.request("take_handle", handle="Bobby")
        assert (limited["code"], limited["limit"]) == ("limit_reached", "sign_ups")


async def test_no_frame_to_another_player_carries_a_device_token() -> None:
    async with running_server() as server:
        ann = await player(server, "Ann")
        bob = await player(server, "Bob")
        code = (await ann.ok("create_room"))["room"]["code"]
        await bob.ok("join_room", code=code)
        made = await ann.ok("take_handle", handle="Annie")
        link = await ann.ok("link_code")
        await ann.ok("devices")
        phone, welcome = await hello(server.url, link=link["code"], label="phone")
        await bob.event("members")  # Ann's presence moved to her phone meanwhile
        await phone.ok("start")
        await bob.event("deal_started")
        await bob.caught_up()
        secrets = [made["device_token"], welcome["device_token"], link["code"],
                   *made["recovery_codes"]]  # fmt: skip
        for frame in bob.frames:
            raw = frame.raw if isinstance(frame.raw, bytes) else frame.raw.encode()
            assert not any(s.encode() in raw for s in secrets), frame.msg
            assert "account" not in frame.msg or frame.msg["account"] is None


async def test_the_default_server_keeps_accounts_and_devices_across_kill_9(
    embedded: EmbeddedServer,
) -> None:
    ann, made = await account(embedded.url, "Ann", "Annie")
    link = await ann.ok("link_code")
    phone, _ = await hello(embedded.url, link=link["code"], label="phone")
    code = (await phone.ok("create_room"))["room"]["code"]
    spare = made["recovery_codes"][0]
    await eventually(lambda: rooms_of_accounts(embedded.data_dir) == [code], what="the room kept")
    await embedded.kill()
    await embedded.start()
    laptop, back = await hello(embedded.url, device=made["device_token"])
    assert (back["player"], back["account"]["handle"]) == (ann.player, "Annie")
    _, guest = await hello(embedded.url, token=ann.token)
    assert guest["code"] == "unknown_token"  # forgotten when the handle was taken
    assert back["room"]["code"] == code  # the account's room, kept on the account
    listed = (await laptop.ok("devices"))["devices"]
    assert [d["label"] for d in listed] == ["laptop", "phone"]
    _, used = await hello(embedded.url, link=link["code"])
    assert used["code"] == "bad_code"  # taken before the crash: taken for good
    _, recovered = await hello(embedded.url, recovery=spare)
    assert recovered["type"] == "welcome" and recovered["player"] == ann.player
    someone = await player(embedded.url, "Someone")
    assert (await someone.request("take_handle", handle="ANNIE"))["code"] == "handle_in_use"
