"""Memory bounded by the caps: sessions nobody uses and rooms never started go away."""

from __future__ import annotations

from typing import Any

from server.core.values import LOBBY_MS
from server.store.base import SessionRecord
from server.store.memory import MemoryStore
from tests.support.inprocess import FakeClock, running_server
from tests.support.raw_client import Client, player


async def test_a_session_without_connection_or_room_lives_on_in_the_store_only() -> None:
    async with running_server() as server:
        ann = await player(server, "Ann")
        assert ann.player in server.service.sessions
        await ann.close()
        # Ann's handler task records the disconnect; each answered ping of
        # another client is a pass of the server's loop in which it may have run.
        probe = await player(server, "Probe")
        while ann.player in server.service.sessions:
            await probe.ok("ping")
        back = await Client.open(server.url)
        welcome = await back.ok("hello", version=2, token=ann.token)
        assert (welcome["player"], welcome["name"], welcome["room"]) == (ann.player, "Ann", None)
        assert ann.player in server.service.sessions


async def test_the_memory_store_drops_sessions_unused_for_its_ttl(monkeypatch: Any) -> None:
    now = [1000.0]
    monkeypatch.setattr("server.store.memory.time.monotonic", lambda: now[0])
    store = MemoryStore(session_ttl=60.0)
    await store.put_session("old", SessionRecord("p1", "Old", None))
    now[0] += 30
    await store.put_session("kept", SessionRecord("p2", "Kept", None))
    now[0] += 31  # "old" unused for 61 s, "kept" for 31 s
    await store.put_session("new", SessionRecord("p3", "New", None))
    assert await store.get_session("old") is None
    assert await store.get_session("kept") == SessionRecord("p2", "Kept", None)
    now[0] += 45  # "kept" was read 45 s ago (a use), "new" written 45 s ago
    await store.put_session("newer", SessionRecord("p4", "Newer", None))
    assert await store.get_session("kept") is not None
    assert await store.get_session("new") is not None


async def test_a_room_never_started_expires_with_its_members_in_it() -> None:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        ann = await player(server, "Ann")
        code = (await ann.ok("create_room"))["room"]["code"]
        clock.advance(LOBBY_MS - 1)
        await ann.ok("ping")
        assert code in server.service.rooms
        clock.advance(1)
        closed = await ann.event("room_closed")
        assert closed["reason"] == "expired"
        started = await player(server, "Bob")  # a started room does not expire
        code = (await started.ok("create_room"))["room"]["code"]
        await started.ok("start")
        clock.advance(LOBBY_MS + 1)
        await started.ok("move", deal=1, move={"kind": "draw"})
        assert code in server.service.rooms
