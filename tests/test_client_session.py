"""Session mechanics against a scripted server: gaps, drops, refusals, 4001."""

from __future__ import annotations

import asyncio

import pytest

from client import ConnectionLost, RoomEvent, ServerError, connect
from client.connection import normalize_url
from tests.client_fakeserver import FakeServer


async def _next(events: object, timeout: float = 5.0) -> RoomEvent:
    return await asyncio.wait_for(events.__anext__(), timeout)  # type: ignore[attr-defined]


def test_urls_are_normalized() -> None:
    assert normalize_url("127.0.0.1:8765") == "ws://127.0.0.1:8765/ws"
    assert normalize_url("http://h:1/") == "ws://h:1/ws"
    assert normalize_url("https://h/ws") == "wss://h/ws"


async def test_a_sequence_gap_fetches_a_snapshot_and_skips_what_it_covers() -> None:
    async with FakeServer() as server, connect(server.url, name="Ann", rate=0) as s:
        events = s.events()
        room = await s.create_room()
        assert (await _next(events)).get("reason") == "joined"
        assert room.seq == 1
        await server.event({"type": "members", "players": [], "spectators": [], "host": "p1"})
        assert (await _next(events)).seq == 2
        server.settings = {"draw": 3}  # changed by the events we are about to lose
        await server.event({"type": "settings", "settings": {"draw": 3}}, lose=2)
        resync = await _next(events)
        assert (resync.type, resync.seq, resync["reason"]) == ("snapshot", 5, "gap")
        assert s.room is not None and s.room.settings == {"draw": 3}
        await server.event({"type": "room_closed", "reason": "host"})
        assert (await _next(events)).type == "room_closed"
        assert s.room.state == "closed" and s.stats.resyncs == 1
        assert [r["type"] for r in server.requests].count("snapshot") == 1


async def test_a_drop_resumes_with_the_token_and_fails_what_was_in_flight() -> None:
    async with FakeServer() as server, connect(server.url, name="Ann", rate=0) as s:
        events = s.events()
        await s.create_room()
        await _next(events)
        server.hold.add("start")
        in_flight = asyncio.create_task(s.start())
        await asyncio.sleep(0.1)
        server.hold.clear()
        assert server.conn is not None
        await server.conn.close(1001, "restarting")
        with pytest.raises(ConnectionLost):
            await in_flight
        resumed = await _next(events)
        assert (resumed.type, resumed["reason"]) == ("snapshot", "resume")
        assert server.requests[-1] == {"type": "hello", "id": server.requests[-1]["id"],
                                       "version": 1, "token": "tok"}
        await s.start()  # the session works again
        assert (s.stats.drops, s.stats.reconnects) == (1, 1)


async def test_refusals_carry_code_message_and_field() -> None:
    async with FakeServer() as server, connect(server.url, name="Ann") as s:
        with pytest.raises(ServerError) as info:
            await s.update_settings(draw=2)
        assert (info.value.code, info.value.field) == ("bad_setting", "draw")
        assert "1 or 3" in info.value.message


async def test_resumed_elsewhere_ends_the_session_without_reconnecting() -> None:
    async with FakeServer() as server:
        s = await connect(server.url, name="Ann")
        events = s.events()
        assert server.conn is not None
        await server.conn.close(4001, "resumed elsewhere")
        with pytest.raises(ConnectionLost) as info:
            await _next(events)
        assert info.value.close_code == 4001
        assert s.closed and s.stats.reconnects == 0
        await s.close()


async def test_an_unknown_token_is_refused() -> None:
    async with FakeServer() as server:
        with pytest.raises(ServerError) as info:
            await connect(server.url, token="forged")
        assert info.value.code == "unknown_token"
