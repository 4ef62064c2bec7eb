"""Limits that hold: keyed by session and by client address, not by connection,
so reconnecting resets nothing; WebSocket pings pay too; each address has caps
on connections, new sessions, new rooms and wrong join codes. Over real sockets.

The buckets here refill at a rate far below anything a test could notice
(``rate`` 1e-6 frames/s), so no assertion depends on how fast the test runs.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from protocol.messages import CloseCode
from server.net.ratelimit import client_address
from tests.support.inprocess import UNLIMITED, running_server
from tests.support.raw_client import Client, player
from tests.support.reference_race import beside_a_race

RACE = "198.51.100.20"  # the reference race's own address (documentation range)
SLOW = 1e-6  # frames a second: a bucket that does not refill during a test


async def test_resuming_does_not_refill_the_session_bucket() -> None:
    limits = replace(UNLIMITED, rate=SLOW, burst=6.0, address_factor=1e6)
    async with running_server(limits=limits) as server:
        ann = await player(server, "Ann")  # hello is the address's: no session yet
        for _ in range(6):
            assert (await ann.request("ping"))["type"] == "pong"
        assert (await ann.request("ping"))["code"] == "rate_limited"
        await ann.close()
        again = await Client.open(server.url)
        resumed = await again.request("hello", version=2, token=ann.token)
        assert resumed["type"] == "welcome"  # the address pays for a hello
        assert (await again.request("ping"))["code"] == "rate_limited"


async def test_an_address_cannot_cycle_sessions_for_fresh_buckets() -> None:
    limits = replace(UNLIMITED, rate=SLOW, burst=4.0, address_factor=2.0)  # 8 per address
    async with running_server(limits=limits) as server:
        answers = []
        for name in ("A", "B", "C", "D"):
            client = await Client.open(server.url)
            answers.append((await client.request("hello", version=2, name=name))["type"])
            answers.append((await client.request("ping"))["type"])
        assert answers == ["welcome", "pong"] * 4
        late = await Client.open(server.url)
        assert (await late.request("ping"))["code"] == "rate_limited"


async def test_websocket_pings_pay_and_a_ping_flood_is_closed() -> None:
    limits = replace(UNLIMITED, rate=SLOW, burst=3.0, address_factor=1.0, max_strikes=5)
    async with running_server(limits=limits) as server:
        ann = await player(server, "Ann")  # hello paid 1 of 3
        for _ in range(2):
            pong = await ann.ws.ping()
            await pong
        assert (await ann.request("ping"))["code"] == "rate_limited"  # strike 1 of 5
        for _ in range(10):
            await ann.ws.ping()
        assert await ann.closed() == CloseCode.FLOODING


@pytest.mark.parametrize(
    ("cap", "what"),
    [("sessions_per_minute", "sessions"), ("rooms_per_minute", "rooms")],
)
async def test_an_address_creates_so_many_a_minute(cap: str, what: str) -> None:
    limits = replace(UNLIMITED, **{cap: 3}, trusted_proxies=("127.0.0.1",))
    async with running_server(limits=limits) as server, beside_a_race(server, address=RACE):
        if what == "sessions":
            replies = [
                await (await Client.open(server.url)).request("hello", version=2, name=f"P{i}")
                for i in range(4)
            ]
        else:
            replies = []
            for i in range(4):
                client = await player(server, f"P{i}")
                replies.append(await client.request("create_room"))
        assert [r["type"] for r in replies[:3]] != ["error"] * 3
        assert all(r["type"] != "error" for r in replies[:3])
        refused = replies[3]
        assert (refused["code"], refused["limit"]) == ("limit_reached", what)
        assert "at most 3 a minute" in refused["message"]


async def test_wrong_join_codes_run_out_and_then_no_code_is_answered() -> None:
    limits = replace(UNLIMITED, wrong_codes_per_minute=3, trusted_proxies=("127.0.0.1",))
    async with running_server(limits=limits) as server, beside_a_race(server, address=RACE):
        host = await player(server, "Host")
        code = (await host.ok("create_room"))["room"]["code"]
        guesser = await player(server, "Guess")
        wrong = "ZZZZZZ" if code != "ZZZZZZ" else "YYYYYY"
        codes = [
            (await guesser.request("join_room", code=wrong, role="player"))["code"]
            for _ in range(3)
        ]
        assert codes == ["no_such_room"] * 3
        right = await guesser.request("join_room", code=code, role="player")
        assert (right["code"], right["limit"]) == ("limit_reached", "join_codes")
        other = await Client.open(server.url)  # the same address, a new session: no better
        await other.hello("Other")
        assert (await other.request("join_room", code=code, role="player"))["code"] == (
            "limit_reached"
        )


async def test_an_address_opens_so_many_connections() -> None:
    limits = replace(UNLIMITED, connections_per_address=3, trusted_proxies=("127.0.0.1",))
    async with running_server(limits=limits) as server, beside_a_race(server, address=RACE):
        held = [await Client.open(server.url) for _ in range(3)]
        for c in held:  # each connection is being served (the handler counts it)
            assert (await c.request("ping"))["code"] == "hello_first"
        with pytest.raises(InvalidStatus) as refused:
            async with connect(server.url):
                pass
        assert refused.value.response.status_code == 429
        await held[0].close()
        await asyncio.wait_for(_until_accepted(server.url), 10)


async def _until_accepted(url: str) -> None:
    """The freed slot is counted back once the server has seen the close: wait
    for that event (a handshake that succeeds), not for a time."""
    while True:
        try:
            async with connect(url):
                return
        except InvalidStatus:
            await asyncio.sleep(0.01)


def test_the_client_address_comes_from_a_trusted_proxy_only() -> None:
    trusted = ["172.16.0.0/12", "127.0.0.1"]
    assert client_address("172.18.0.5", "203.0.113.9", trusted) == "203.0.113.9"
    assert client_address("172.18.0.5", "1.2.3.4, 203.0.113.9", trusted) == "203.0.113.9"
    assert client_address("198.51.100.7", "203.0.113.9", trusted) == "198.51.100.7"
    assert client_address("127.0.0.1", None, trusted) == "127.0.0.1"
    assert client_address("127.0.0.1", "not an address", trusted) == "127.0.0.1"


async def test_behind_a_trusted_proxy_each_client_has_its_own_caps() -> None:
    limits = replace(UNLIMITED, sessions_per_minute=1, trusted_proxies=("127.0.0.1",))
    async with running_server(limits=limits) as server:
        for client_ip in ("203.0.113.1", "203.0.113.2"):
            client = await Client.open(
                server.url, additional_headers={"X-Forwarded-For": client_ip}
            )
            assert (await client.request("hello", version=2, name="X"))["type"] == "welcome"
        again = await Client.open(server.url, additional_headers={"X-Forwarded-For": "203.0.113.1"})
        assert (await again.request("hello", version=2, name="Y"))["code"] == "limit_reached"
