"""A scripted stand-in for the server, for what a real one will not do on cue.

The real server is tested against in tests/test_client_live.py. This fake exists to
make the rare paths happen deterministically: a lost event (sequence gap), a dropped
connection, a session resumed elsewhere. It speaks just enough of docs/protocol.md.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.typing import Subprotocol

MSGPACK = Subprotocol("klondike-race.v1.msgpack")


class FakeServer:
    def __init__(self) -> None:
        self.seq = 0
        self.in_room = False
        self.settings: dict[str, Any] = {"draw": 1}
        self.requests: list[dict[str, Any]] = []
        self.conn: ServerConnection | None = None
        self.connected = asyncio.Event()
        self.hold: set[str] = set()  # request types to leave unanswered
        self.server: Server | None = None
        self.url = ""

    async def __aenter__(self) -> FakeServer:
        self.server = await serve(self._handle, "127.0.0.1", 0, subprotocols=[MSGPACK])
        port = next(iter(self.server.sockets)).getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/ws"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    def snapshot(self) -> dict[str, Any]:
        return {"code": "ABCDEF", "seq": self.seq, "state": "lobby", "host": "p1", "me": "p1",
                "role": "player", "settings": dict(self.settings),
                "players": [{"id": "p1", "name": "Ann", "connected": True}],
                "spectators": [], "round": 0, "round_started_at": None,
                "round_ends_at": None, "deal": None, "sheet": None, "history": []}

    async def send(self, frame: dict[str, Any]) -> None:
        assert self.conn is not None
        await self.conn.send(msgpack.packb(frame, use_bin_type=True))

    async def event(self, frame: dict[str, Any], *, lose: int = 0) -> None:
        """Send the room's next event, after ``lose`` events that never arrive."""
        self.seq += 1 + lose
        await self.send({**frame, "seq": self.seq})

    async def _handle(self, ws: ServerConnection) -> None:
        self.conn = ws
        self.connected.set()
        async for raw in ws:
            msg = msgpack.unpackb(raw, raw=False)
            self.requests.append(msg)
            kind, rid = msg["type"], msg.get("id")
            if kind in self.hold:
                continue
            if kind == "hello":
                if msg.get("token") not in (None, "tok"):
                    await self.send({"type": "error", "id": rid, "code": "unknown_token",
                                     "message": "who?"})
                    continue
                await self.send({"type": "welcome", "id": rid, "version": 1, "token": "tok",
                                 "player": "p1", "name": "Ann",
                                 "room": self.snapshot() if self.in_room else None})
            elif kind == "create_room":
                self.in_room = True
                self.seq = 1
                await self.send({"type": "joined", "id": rid, "room": self.snapshot()})
            elif kind == "snapshot":
                await self.send({"type": "snapshot", "id": rid, "room": self.snapshot()})
            elif kind == "update_settings":
                await self.send({"type": "error", "id": rid, "code": "bad_setting",
                                 "message": "draw must be 1 or 3", "field": "draw"})
            else:
                await self.send({"type": "ok", "id": rid})
