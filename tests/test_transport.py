"""The transport: every bad frame and field of the protocol, through real sockets,
each followed by proof that the connection and the room still work (nothing a
client sends brings either down); the session's refusals; a few of the room's
refusals, to show they reach the client as error frames (every room rule is
tested on the sans-I/O core in tests/test_room_refusals.py); rate limits, slow
readers, a store that fails and an internal error."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Subprotocol

from client.bot import RESIGN, Bot
from protocol.moves import Move, MoveKind
from protocol.wire import JSON, MSGPACK
from server.net.connection import Limits
from tests.support.inprocess import FlakyStore, Seeds, running_server
from tests.support.raw_client import Client, after, player
from tests.support.waiting import eventually


async def alive(client: Client) -> None:
    """The connection still answers."""
    assert (await client.request("ping"))["type"] == "pong"


async def room_of(server: Any, spectator: bool = True) -> tuple[Client, Client, Client | None, str]:
    host = await player(server, "Host")
    guest = await player(server, "Guest", JSON)
    code = (await host.ok("create_room"))["room"]["code"]
    await guest.ok("join_room", code=code, role="player")
    spec = None
    if spectator:
        spec = await player(server, "Spec")
        await spec.ok("join_room", code=code, role="spectator")
    return host, guest, spec, code


@pytest.fixture
async def server() -> AsyncIterator[Any]:
    async with running_server(draw_seed=Seeds("race-27")) as srv:
        yield srv


# ------------------------------------------------------------------ frames


@pytest.mark.parametrize(
    ("proto", "frame", "code"),
    [
        (MSGPACK, b"\xc1", "bad_frame"),  # never-used msgpack byte
        (MSGPACK, b"\x92\x01\x02", "bad_frame"),  # a list, not a map
        (MSGPACK, msgpack.packb(7), "bad_frame"),
        (MSGPACK, msgpack.packb({1: 2}), "bad_frame"),  # non-string key
        (MSGPACK, b"\x91" * 5000 + b"\x80", "bad_frame"),  # absurd nesting
        (MSGPACK, msgpack.packb({"type": "x", "v": msgpack.ExtType(5, b"z")}), "bad_frame"),
        (MSGPACK, "text on a msgpack connection", "bad_frame"),
        (JSON, "{", "bad_frame"),
        (JSON, "[1, 2]", "bad_frame"),
        (JSON, '"ping"', "bad_frame"),
        (JSON, '{"type": "ping", "x": NaN}', "bad_frame"),
        (JSON, '{"a":' + "[" * 20000 + "]" * 20000 + "}", "bad_frame"),
        (JSON, b'{"type": "ping"}', "bad_frame"),  # binary on a JSON connection
        (JSON, '{"id": 1}', "bad_request"),  # no type
        (JSON, '{"type": 5}', "bad_request"),
        (JSON, '{"type": "fly", "id": 99}', "unknown_type"),  # an id no request uses
        (JSON, '{"type": "ping", "id": {"a": 1}}', "bad_request"),
    ],
)
async def test_bad_frames_then_still_working(
    server: Any, proto: str, frame: Any, code: str
) -> None:
    client = await player(server, "Ann", proto)
    await client.send_raw(frame)
    await alive(client)  # frames are answered in order: the error came before the pong
    errors = [f.msg for f in client.frames if f.msg.get("type") == "error"]
    assert len(errors) == 1 and errors[0]["code"] == code, errors
    assert isinstance(errors[0]["message"], str) and errors[0]["message"]
    await client.close()


@pytest.mark.parametrize(
    ("request_", "code", "needle"),
    [
        ({"type": "hello", "version": "1", "name": "x"}, "bad_request", "version"),
        ({"type": "join_room", "code": 5, "role": "player"}, "bad_request", "code"),
        ({"type": "join_room", "code": "ABC", "role": "boss"}, "bad_request", "role"),
        ({"type": "update_settings", "settings": [1]}, "bad_request", "settings"),
        ({"type": "update_settings"}, "bad_request", "settings"),
        ({"type": "move", "deal": "1", "move": {"kind": "draw"}}, "bad_request", "deal"),
        ({"type": "move", "deal": True, "move": {"kind": "draw"}}, "bad_request", "deal"),
        ({"type": "move", "deal": 1, "move": "draw"}, "bad_request", "move"),
        (
            {"type": "move", "deal": 1, "move": {"kind": "draw"}, "unnumbered": 1},
            "bad_request",
            "'n'",
        ),
        ({"type": "move", "deal": 1, "n": "0", "move": {"kind": "draw"}}, "bad_request", "'n'"),
        ({"type": "move", "deal": 1, "n": -1, "move": {"kind": "draw"}}, "bad_request", "'n'"),
        ({"type": "move", "deal": 1, "n": 2**60, "move": {"kind": "draw"}}, "bad_request", "'n'"),
        ({"type": "remove_player", "player": None}, "bad_request", "player"),
        ({"type": "create_room", "settings": "fast"}, "bad_request", "settings"),
    ],
)
async def test_wrong_field_types(
    server: Any, request_: dict[str, Any], code: str, needle: str
) -> None:
    client = await player(server, "Ann")
    client.auto_number = not request_.pop("unnumbered", False)  # a move without its n
    reply = await client.request(request_.pop("type"), **request_)
    assert reply["type"] == "error" and reply["code"] == code
    assert needle in reply["message"]
    await alive(client)


async def test_oversize_frame_closes_1009(server: Any) -> None:
    client = await player(server, "Ann")
    await client.send({"type": "ping", "pad": "x" * (70 * 1024)})
    assert await client.closed() == 1009
    other = await player(server, "Bob")  # the server is fine
    await alive(other)


# ------------------------------------------------------------------ session


async def test_session_errors(server: Any) -> None:
    client = await Client.open(server.url)
    assert (await client.request("ping"))["code"] == "hello_first"
    reply = await client.request("hello", version=1, name="Ann")
    assert reply["code"] == "unsupported_version" and reply["supported"] == [2]
    assert (await client.request("hello", version=2, token="nope"))["code"] == "unknown_token"
    for bad in ("", "   ", "x" * 25, "bad\x07name", "zero\u200bwidth"):
        assert (await client.request("hello", version=2, name=bad))["code"] == "bad_name"
    assert (await client.request("hello", version=2))["code"] == "bad_request"
    await client.hello("  Ann  ")
    assert client.name == "  Ann  "
    assert (await client.request("hello", version=2, name="Ann"))["code"] == "already_hello"
    room = await client.ok("create_room")
    assert room["room"]["players"][0]["name"] == "Ann"  # trimmed
    await alive(client)


async def test_hello_first_limit_and_timeout() -> None:
    async with running_server(limits=Limits(hello_timeout=0.3, rate=1e6, burst=1e6)) as srv:
        eager = await Client.open(srv.url)
        for _ in range(3):
            await eager.send({"type": "ping", "id": 1})
        assert await eager.closed() == 4002
        assert [f.msg["code"] for f in eager.frames] == ["hello_first"] * 3
        silent = await Client.open(srv.url)
        assert await silent.closed() == 4002


async def test_no_subprotocol_gets_msgpack(server: Any) -> None:
    async with connect(server.url, compression=None) as ws:
        assert ws.subprotocol is None
        await ws.send(msgpack.packb({"type": "ping", "id": 1}))
        reply = msgpack.unpackb(await ws.recv())
        assert reply["code"] == "hello_first"
    async with connect(server.url, subprotocols=[Subprotocol("other"), Subprotocol(JSON)]) as ws:
        assert ws.subprotocol == JSON


async def test_a_client_of_version_1_is_refused_at_the_handshake(server: Any) -> None:
    """Version 2 replaced version 1: a handshake offering only version 1's
    subprotocols (or any others) gets HTTP 426 naming the ones spoken, rather
    than a connection whose frames it would misread."""
    for offered in (["klondike-race.v1.msgpack"], ["klondike-race.v1.json", "other"]):
        with pytest.raises(InvalidStatus) as refused:
            await connect(server.url, subprotocols=[Subprotocol(p) for p in offered])
        response = refused.value.response
        assert response.status_code == 426
        assert response.body.decode() == (
            "this server speaks klondike-race.v2.msgpack or klondike-race.v2.json:"
            " update or reload the client\n"
        )
    both = [Subprotocol("klondike-race.v1.msgpack"), Subprotocol(MSGPACK)]
    async with connect(server.url, subprotocols=both) as ws:
        assert ws.subprotocol == MSGPACK


# ------------------------------------------------------------------ rooms


async def test_room_refusals_reach_the_client_as_error_frames(server: Any) -> None:
    """A few of the room's refusals, end to end: each is the error reply to its
    request (code, message and, for a setting, the field), and the room goes on."""
    host, guest, spec, code = await room_of(server)
    assert spec is not None
    outsider = await player(server, "Out")

    async def code_of(client: Client, kind: str, **fields: Any) -> str:
        reply = await client.request(kind, **fields)
        assert reply["type"] == "error", reply
        assert isinstance(reply["message"], str) and reply["message"]
        return str(reply["code"])

    assert await code_of(outsider, "join_room", code="ZZZZZZ", role="player") == "no_such_room"
    assert await code_of(outsider, "snapshot") == "not_in_room"
    assert await code_of(host, "create_room") == "already_in_room"
    assert await code_of(guest, "start") == "not_host"
    bad = await host.request("update_settings", settings={"draw": 2})
    assert bad["code"] == "bad_setting" and bad["field"] == "draw"
    assert await code_of(host, "next_deal") == "wrong_state"

    await host.ok("start")
    await host.event("deal_started")
    assert await code_of(guest, "ready") == "wrong_state"  # ready is for a break
    assert await code_of(spec, "ready") == "wrong_state"
    assert await code_of(spec, "move", deal=1, move={"kind": "draw"}) == "not_a_player"
    assert await code_of(host, "move", deal=2, move={"kind": "draw"}) == "wrong_deal"
    assert await code_of(host, "move", deal=1, move={"kind": "waste_foundation"}) == "waste_empty"
    reply = await host.request("move", deal=1, move={"kind": "draw"})
    assert reply["type"] == "moved"  # still playing after all that

    await outsider.ok("join_room", code=code, role="spectator")
    await host.ok("remove_player", player=outsider.player)
    removed = await outsider.event("removed")
    assert removed["player"] == outsider.player
    assert await code_of(outsider, "snapshot") == "not_in_room"
    await alive(host)
    await alive(guest)


# ------------------------------------------------------------------ limits


async def test_flood_rate_limited_then_4008() -> None:
    async with running_server(limits=Limits(rate=50, burst=100)) as srv:
        flood = await player(srv, "Flood")
        calm = await player(srv, "Calm")
        frame = msgpack.packb({"type": "ping", "id": 1})
        for _ in range(400):
            await flood.send_raw(frame)
        assert await flood.closed() == 4008
        codes = [f.msg.get("code") for f in flood.frames]
        assert codes.count("rate_limited") == 200
        assert flood.frames[1].msg["type"] == "pong"  # after the welcome
        await alive(calm)


async def test_storage_unavailable_move_not_applied() -> None:
    store = FlakyStore()
    async with running_server(store=store) as srv:
        host, guest, _, _code = await room_of(srv, spectator=False)
        await host.ok("start")
        await host.event("deal_started")
        store.down = True
        reply = await host.request("move", deal=1, move={"kind": "draw"})
        assert reply["code"] == "storage_unavailable"
        store.down = False
        snap = (await host.ok("snapshot"))["room"]
        assert snap["deal"]["board"]["moves"] == 0 and snap["deal"]["board"]["stock"] == 24
        reply = await host.ok("move", deal=1, move={"kind": "draw"})
        assert reply["outcome"]["moves"] == 1 and reply["outcome"]["stock"] == 23
        await guest.event("progress")


async def test_internal_error_keeps_connection(server: Any, monkeypatch: Any) -> None:
    from protocol.requests import Ping
    from server.service import dispatch

    client = await player(server, "Ann")

    async def broken(*_a: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setitem(dispatch.HANDLERS, Ping, broken)
    reply = await client.request("ping")
    assert reply["code"] == "internal_error"
    monkeypatch.undo()
    await alive(client)


async def test_stalled_spectator_dropped_room_unaffected() -> None:
    limits = Limits(
        rate=1e6, burst=1e6, queue_bytes=64 * 1024, send_timeout=0.5, socket_sndbuf=16 * 1024
    )
    async with running_server(limits=limits) as srv:
        host, guest, _, code = await room_of(srv, spectator=False)
        # A spectator with a tiny receive buffer that stops reading after joining.
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", srv.port))
        ws = await connect(
            srv.url, sock=sock, max_queue=1, compression=None, subprotocols=[Subprotocol(MSGPACK)]
        )
        await ws.send(msgpack.packb({"type": "hello", "id": 1, "version": 2, "name": "Slow"}))
        await ws.recv()
        await ws.send(
            msgpack.packb({"type": "join_room", "id": 2, "code": code, "role": "spectator"})
        )
        await ws.recv()
        # From here it reads nothing at all: not even the client library's own
        # buffer takes more (it would swallow a quarter of a megabyte in one read,
        # and the server would see no backlog).
        ws.transport.pause_reading()
        for i in range(60):  # and asks for more than it will ever read
            await ws.send(msgpack.packb({"type": "snapshot", "id": 3 + i}))
        await host.ok("start")
        clients = (host, guest)
        boards = [(await c.event("deal_started"))["deal"]["board"] for c in clients]
        bots = [Bot(), Bot()]
        moves = 0
        for _ in range(150):
            for i, client in enumerate(clients):
                if boards[i]["status"] != "playing":
                    continue
                move = bots[i].decide(boards[i])
                if move == RESIGN and (boards[i]["stock"] or boards[i]["waste"]):
                    # Cycle the stock rather than resign: the deal keeps making events.
                    move = Move(MoveKind.DRAW if boards[i]["stock"] else MoveKind.RECYCLE)
                reply = await client.ok("move", deal=1, move=move.to_wire())
                boards[i] = after(boards[i], reply)
                moves += 1
                with contextlib.suppress(ConnectionClosed):  # once it has been dropped
                    # Each move, one more whole room view it will never read.
                    await ws.send(msgpack.packb({"type": "snapshot", "id": 100 + moves}))
        # Every move answered while the spectator stalled (how long they took is
        # bench/server.py's to measure).
        assert moves > 0
        # The stalled client, once it reads again, finds itself closed, and closed
        # as too slow.
        ws.transport.resume_reading()
        try:
            while True:
                await asyncio.wait_for(ws.recv(), 10)
        except Exception:
            pass
        assert ws.close_code in (4009, 1006)
        assert srv.metrics.closed_slow._value.get() == 1
        await alive(host)
        await eventually(lambda: len(srv.service.connections) == 2, what="the spectator gone")
