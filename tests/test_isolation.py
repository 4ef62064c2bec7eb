"""No client can silence another: text that could not be sent back is refused at
decode time, and a write that fails closes that one connection only.

Each test runs a reference race beside the attacker (two players and a spectator
in one room) and asserts that every move of it is answered and seen.
"""

from __future__ import annotations

from typing import Any

import pytest

from protocol.messages import CloseCode
from protocol.wire import JSON
from server.app import RaceServer
from server.net.connection import Connection
from tests.support.inprocess import running_server
from tests.support.raw_client import Client, player
from tests.support.reference_race import seat_race

SURROGATE_ID = '{"type": "ping", "id": "\\ud800"}'


async def reference_race(server: RaceServer) -> tuple[Client, Client, Client]:
    ann, bob, sam = [await player(server, n) for n in ("Ann", "Bob", "Sam")]
    await seat_race(ann, bob, sam)
    return ann, bob, sam


async def race_goes_on(ann: Client, bob: Client, sam: Client, moves: int = 3) -> None:
    """Every move of the reference race is answered, and its rival and spectator see it."""
    for _ in range(moves):
        reply = await ann.ok("move", deal=1, move={"kind": "draw"})
        assert reply["type"] == "moved"
        for watcher in (bob, sam):
            seen = await watcher.event("progress", player=ann.player)
            assert seen["progress"]["moves"] == reply["outcome"]["moves"]


@pytest.mark.parametrize(
    "frame",
    [
        SURROGATE_ID,
        '{"type": "create_room", "id": 1, "settings": {"\\udc00": 1}}',
        '{"type": "move", "id": "\\ud83d", "deal": 1, "move": {"kind": "draw"}}',
        '{"type": "hello", "id": 2, "version": 2, "name": "Eve\\udfff"}',
    ],
)
async def test_unencodable_text_is_refused_and_nobody_else_notices(frame: str) -> None:
    async with running_server() as server:
        ann, bob, sam = await reference_race(server)
        eve = await player(server, "Eve", JSON)
        before = len(eve.frames)
        await eve.send_raw(frame)
        await ann.ok("ping")  # the server has read Eve's frame before Ann's next one
        refusal = await eve.request("ping")  # Eve's connection works: replies in order
        assert next(f.msg for f in eve.frames[before:]) == {
            "type": "error",
            "id": None,
            "code": "bad_request",
            "message": "the frame holds text that is not valid Unicode",
        }
        assert refusal["type"] == "pong"
        await race_goes_on(ann, bob, sam)


async def test_a_failed_write_closes_only_that_connection(monkeypatch: Any) -> None:
    """Whatever goes wrong writing to one connection (here its socket's transport
    raises) closes it with 1011; the frames of everyone batched with it go out."""
    async with running_server() as server:
        ann, bob, sam = await reference_race(server)
        eve = await player(server, "Eve", JSON)
        code = (await ann.ok("snapshot"))["room"]["code"]
        await eve.ok("join_room", code=code, role="spectator")
        (conn,) = [
            c
            for c in server.service.connections
            if isinstance(c, Connection)
            and c.session is not None
            and c.session.player == eve.player
        ]

        ws = conn.ws
        transport = ws.transport

        class Broken:
            """The socket's transport, failing its next write."""

            def __getattr__(self, name: str) -> Any:
                return getattr(transport, name)

            def write(self, data: bytes) -> None:
                monkeypatch.setattr(ws, "transport", transport)  # once: the close goes out
                raise RuntimeError("the socket broke")

        # The write path hands the batch's frames to the socket's transport
        # (server/net/connection.py).
        monkeypatch.setattr(ws, "transport", Broken())
        reply = await ann.ok("move", deal=1, move={"kind": "draw"})  # Eve is in the batch
        assert reply["type"] == "moved"
        assert await eve.closed() == CloseCode.SERVER_ERROR
        for watcher in (bob, sam):  # the move Eve's write failed on reached them
            assert (await watcher.event("progress", player=ann.player))["progress"]["moves"] == 1
        await race_goes_on(ann, bob, sam)
