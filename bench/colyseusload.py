"""bench/capacity.py's load on Colyseus: the relay's seats, behind Colyseus' client protocol.

The Colyseus baseline (bench/colyseus/server.js, a relay room) is driven by the same
seats, wheel and reader as the bare relay (bench/seats.py); only getting into a room
and the frames' envelope differ. What the pinned Colyseus (0.18: @colyseus/core's
Protocol.ts, Room.ts, MatchMaker.ts and ws-transport's WebSocketTransport.ts; the
official client is @colyseus/sdk's Client.ts and Room.ts) expects:

- **A seat is reserved over HTTP**: ``POST /matchmake/create/relay`` (the room's first
  seat) or ``POST /matchmake/joinById/ROOMID`` (the others), a JSON body of join
  options, answered by a JSON seat reservation: ``name``, ``sessionId``,
  ``roomId``, ``processId``. An error is an HTTP error with ``{"code", "error"}``.
- **The seat is taken over a WebSocket** at ``/PROCESSID/ROOMID?sessionId=SID``. The
  server speaks first: ``JOIN_ROOM`` (byte 10, then the reconnection token and the
  serializer's id, each a length byte and UTF-8, then the state handshake's length, a
  varint: 0 here, the room has no state), or ``ERROR`` (byte 11, a msgpack-style
  number and string) and a close. The client acknowledges with the byte 10 alone; the
  server counts the seat joined from then on.
- **Room messages**: the relay room takes ``ROOM_DATA_BYTES`` (byte 17, then the
  message type as a msgpack string, then the payload's raw bytes: here the same
  msgpack move as the bare relay's) and broadcasts it to the room in the same
  envelope, unchanged: a player's own copy is byte for byte what it sent, so
  :class:`~bench.seats.RelayPlayer`'s echo check serves as is.

The reservation is a fresh HTTP/1.1 connection a request (``Connection: close``), as
a browser's first request would be; rooms open before any is measured, so its cost
is outside the steps.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

import msgpack  # type: ignore[import-untyped]

from .seats import Load, RelayPlayer, Room, Spectator
from .websocket import Socket, _ignore, open_socket

ROOM_NAME = "relay"  # bench/colyseus/server.js's room type
JOIN_ROOM, ERROR, ROOM_DATA_BYTES = 10, 11, 17  # @colyseus/shared-types Protocol
MESSAGE_TYPE = "move"  # the relay room's one message type


class ColyseusError(RuntimeError):
    """Colyseus refused a seat: its error code (HTTP matchmaking or ERROR frame)."""

    def __init__(self, code: Any, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = f"colyseus:{code}"


class ColyseusPlayer(RelayPlayer):
    """A player of the Colyseus relay room: the relay's move, in a ROOM_DATA_BYTES
    envelope (see the module docstring)."""

    HEADER = bytes([ROOM_DATA_BYTES]) + msgpack.packb(MESSAGE_TYPE)


async def reserve(url: str, method: str, target: str, timeout: float = 30) -> dict[str, Any]:
    """A seat reservation from Colyseus' matchmaker (``POST /matchmake/METHOD/TARGET``)."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    body = b"{}"  # no join options
    request = (
        f"POST /matchmake/{method}/{target} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Type: application/json\r\nAccept: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    try:
        writer.write(request)
        raw = await asyncio.wait_for(reader.read(), timeout)  # to the server's close
    finally:
        writer.close()
    head, _, payload = raw.partition(b"\r\n\r\n")
    status = head.split(b" ", 2)[1] if head.count(b" ") >= 2 else b"?"
    try:
        reply: dict[str, Any] = json.loads(payload) if payload else {}
    except ValueError:
        reply = {}
    if status != b"200" or "sessionId" not in reply:
        raise ColyseusError(reply.get("code", status.decode()), str(reply.get("error", "")))
    return reply


async def take_seat(url: str, seat: dict[str, Any], timeout: float = 30) -> Socket:
    """The WebSocket of a reserved seat, once the server's JOIN_ROOM is acknowledged."""
    parts = urlsplit(url)
    path = f"/{seat['processId']}/{seat['roomId']}?sessionId={seat['sessionId']}"
    joined: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    def first(data: bytes, start: int, end: int) -> None:
        if not joined.done():
            joined.set_result(data[start:end])

    sock = await open_socket(f"ws://{parts.netloc}{path}", None, timeout, on_frame=first)
    try:
        frame = await asyncio.wait_for(joined, timeout)
        if frame[:1] != bytes([JOIN_ROOM]):
            raise ColyseusError(*_error(frame))
        sock.on_frame = _ignore
        sock.send(bytes([JOIN_ROOM]))
    except BaseException:
        sock.abort()
        raise
    return sock


def _error(frame: bytes) -> tuple[Any, str]:
    """An ERROR frame's code and message (msgpack-style number, then string)."""
    if frame[:1] != bytes([ERROR]):
        return f"frame {frame[:1].hex()}", ""
    unpacker = msgpack.Unpacker()
    unpacker.feed(frame[1:])
    values = list(unpacker)
    return (values[0] if values else "?"), str(values[1] if len(values) > 1 else "")


async def open_colyseus_room(load: Load, url: str, players: int) -> Room:
    """A room of ``players`` players and a spectator on the Colyseus relay
    (``url``: ``ws://HOST:PORT``, where its matchmaker answers too)."""
    room = Room()
    try:
        first = await reserve(url, "create", ROOM_NAME)
        room.players.append(ColyseusPlayer(await take_seat(url, first), load, 0))
        for p in range(1, players + 1):
            seat = await reserve(url, "joinById", first["roomId"])
            sock = await take_seat(url, seat)
            if p < players:
                room.players.append(ColyseusPlayer(sock, load, p))
            else:
                room.watchers.append(Spectator(sock, load))
    except BaseException:
        room.abort()
        raise
    return room
