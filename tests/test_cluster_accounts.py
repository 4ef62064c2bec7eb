"""Accounts on several ``serve --redis`` nodes sharing one private redis-server:
an account made on one node signs in on another, a one-time code works once
whichever nodes race for it, and a kill -9 of Redis keeps every account and
device it acknowledged."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.support.processes import RedisServer, ServerProcess, running_servers
from tests.support.raw_client import Client, player
from tests.support.waiting import eventually


async def hello(url: str, **sign_in: Any) -> tuple[Client, dict[str, Any]]:
    """A new connection's hello with ``sign_in`` (device, link, recovery, ...):
    the client and its reply, welcome or error."""
    client = await Client.open(url)
    return client, await client.request("hello", version=2, **sign_in)


async def test_an_account_made_on_one_node_signs_in_on_every_node(
    redis: RedisServer, tmp_path: Path
) -> None:
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann = await player(a.url, "Ann")
        made = await ann.ok("take_handle", handle="Ann", label="laptop")
        assert made["account"]["player"] == ann.player
        laptop = made["device_token"]

        # The handle is taken for every node, in any case.
        bob = await player(b.url, "Bob")
        refused = await bob.request("take_handle", handle="aNN")
        assert refused["code"] == "handle_in_use", refused

        # The laptop's token signs in on B.
        on_b, welcome = await hello(b.url, device=laptop)
        assert welcome["type"] == "welcome", welcome
        assert (welcome["player"], welcome["account"]["handle"]) == (ann.player, "Ann")
        assert "device_token" not in welcome  # no new device

        # A link code made on B signs a phone in on A, once: two nodes race for it.
        code = (await on_b.ok("link_code"))["code"]
        (_, r1), (_, r2) = await asyncio.gather(
            hello(a.url, link=code, label="phone"), hello(b.url, link=code, label="phone")
        )
        replies = sorted([r1, r2], key=lambda r: r["type"])
        assert [r["type"] for r in replies] == ["error", "welcome"], replies
        assert replies[0]["code"] == "bad_code"
        phone = replies[1]["device_token"]
        assert replies[1]["player"] == ann.player

        # A recovery code works once too, whichever node it reaches.
        (tablet_client, tablet), (_, again) = [
            await hello(b.url, recovery=made["recovery_codes"][0], label="tablet"),
            await hello(a.url, recovery=made["recovery_codes"][0], label="tablet"),
        ]
        assert tablet["type"] == "welcome", tablet
        assert again["code"] == "bad_code", again
        listed = (await tablet_client.ok("devices"))["devices"]
        assert sorted(d["label"] for d in listed) == ["laptop", "phone", "tablet"]

        # The phone is signed out from B; its token works on no node.
        phone_id = next(d["device"] for d in listed if d["label"] == "phone")
        assert (await tablet_client.ok("sign_out", device=phone_id))["count"] == 1
        for node in (a, b):
            _, refused = await hello(node.url, device=phone)
            assert refused["code"] == "unknown_token", refused

        # Redis dies at once and comes back: the account and devices it
        # acknowledged are all there.
        redis.kill()
        redis.start()

        async def signs_in() -> bool:
            _, reply = await hello(a.url, device=laptop)
            return reply["type"] == "welcome"

        await eventually(signs_in, what="the laptop to sign in after the restart")
        _, tablet_again = await hello(b.url, device=tablet["device_token"])
        assert tablet_again["account"]["handle"] == "Ann", tablet_again
        _, phone_again = await hello(b.url, device=phone)
        assert phone_again["code"] == "unknown_token"


async def test_accounts_live_under_the_prefix_of_serve_redis(
    redis: RedisServer, tmp_path: Path
) -> None:
    node = ServerProcess(f"{redis.url}?prefix=elsewhere:", tmp_path / "node.log")
    try:
        node.start()
        ann = await player(node.url, "Ann")
        await ann.ok("take_handle", handle="Ann")
    finally:
        node.kill()
    keys = redis("KEYS", "*")
    assert b"elsewhere:accounts:handle:ann" in keys
    assert all(k.startswith(b"elsewhere:") for k in keys), keys
