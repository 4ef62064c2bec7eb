"""The room requests: resolve the requester's room, run the command through
its RoomHost, and say how to reply once the records are stored.

A reply is built right after the command's commit, from the room as the command
left it, and sent only once the command is durable (server/roomhost.py): by then
later commands may have changed the room.

Each handler is ``async (service, connection, request)``; refusals are raised as
:class:`~server.room.RoomError` and become error frames in the connection.
Session requests (``hello``, ``ping``) live in server/service.py.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from protocol.views import outcome_view
from protocol.wire import (
    CloseRoom,
    CreateRoom,
    JoinRoom,
    LeaveRoom,
    MoveRequest,
    NextDeal,
    Rematch,
    RemovePlayer,
    Request,
    Snapshot,
    Start,
    UpdateSettings,
)

from . import commands as C
from .room import Room
from .roomhost import Release, Reply, RoomHost
from .roomtypes import Decision, RoomError
from .roomviews import board_view, snapshot
from .store import StoreUnavailable

if TYPE_CHECKING:
    from .connection import Connection
    from .service import Service

__all__ = ["CODE_ALPHABET", "ROOM_HANDLERS"]

CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"


def _store_down() -> RoomError:
    return RoomError("storage_unavailable", "the store is unreachable; try again")


def _joined(service: Service, conn: Connection, req: Request, host: RoomHost) -> Reply:
    session = service.session_of(conn)

    def reply(_d: Decision) -> Release:
        msg = {
            "type": "joined",
            "id": req.id,
            "room": snapshot(host.room, session.player, service.clock.now()),
        }

        def send() -> None:
            session.room = host.code
            conn.send(msg)
            service.save_session(session)

        return send

    return reply


async def _create(service: Service, conn: Connection, req: CreateRoom) -> None:
    session = service.session_of(conn)
    if session.room is not None:
        raise RoomError("already_in_room", "leave your room first")
    C.validate_settings(req.settings)  # before a code is reserved for nothing
    code = await _reserve_code(service)
    host = RoomHost(service, Room(code))
    service.rooms[code] = host
    try:
        await host.run(
            lambda r, c: C.decide_create(r, session.player, session.name, req.settings, c),
            _joined(service, conn, req, host),
        )
    except BaseException:
        service.rooms.pop(code, None)
        raise


async def _reserve_code(service: Service) -> str:
    for _ in range(100):
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))
        try:
            if code not in service.rooms and await service.store.reserve_room(code):
                return code
        except StoreUnavailable:
            raise _store_down() from None
    raise RoomError("internal_error", "could not find a free room code")  # pragma: no cover


async def _join(service: Service, conn: Connection, req: JoinRoom) -> None:
    session = service.session_of(conn)
    if session.room is not None:
        raise RoomError("already_in_room", "leave your room first")
    host = service.rooms.get(req.code.strip().upper())
    if host is None:
        raise RoomError("no_such_room", "no open room has that code")
    await host.run(
        lambda r, _c: C.decide_join(r, session.player, session.name, req.role),
        _joined(service, conn, req, host),
    )


def _ok(conn: Connection, req: Request) -> Reply:
    return lambda _d: lambda: conn.send({"type": "ok", "id": req.id})


async def _leave(service: Service, conn: Connection, req: LeaveRoom) -> None:
    session, host = service.room_of(conn)
    await host.run(lambda r, c: C.decide_leave(r, session.player, c), _ok(conn, req))


async def _settings(service: Service, conn: Connection, req: UpdateSettings) -> None:
    session, host = service.room_of(conn)
    await host.run(
        lambda r, c: C.decide_settings(r, session.player, req.settings, c), _ok(conn, req)
    )


async def _start(service: Service, conn: Connection, req: Start) -> None:
    session, host = service.room_of(conn)
    await host.run(lambda r, c: C.decide_start(r, session.player, c), _ok(conn, req))


async def _next_deal(service: Service, conn: Connection, req: NextDeal) -> None:
    session, host = service.room_of(conn)
    await host.run(lambda r, c: C.decide_next_deal(r, session.player, c), _ok(conn, req))


async def _remove(service: Service, conn: Connection, req: RemovePlayer) -> None:
    session, host = service.room_of(conn)
    await host.run(lambda r, c: C.decide_remove(r, session.player, req.player, c), _ok(conn, req))


async def _rematch(service: Service, conn: Connection, req: Rematch) -> None:
    session, host = service.room_of(conn)
    await host.run(lambda r, c: C.decide_rematch(r, session.player, c), _ok(conn, req))


async def _close(service: Service, conn: Connection, req: CloseRoom) -> None:
    session, host = service.room_of(conn)
    await host.run(lambda r, _c: C.decide_close(r, session.player), _ok(conn, req))


async def _snapshot(service: Service, conn: Connection, req: Snapshot) -> None:
    session, host = service.room_of(conn)

    def make() -> Release:
        msg = {
            "type": "snapshot",
            "id": req.id,
            "room": snapshot(host.room, session.player, service.clock.now()),
        }
        return lambda: conn.send(msg)

    await host.read(make)  # never shows a command before it is durable


async def _move(service: Service, conn: Connection, req: MoveRequest) -> None:
    session, host = service.room_of(conn)
    player = session.player

    def reply(d: Decision) -> Release:
        room = host.room
        deal = room.deals[d.deal - 1]
        outcome = d.outcome
        assert outcome is not None
        t = deal.logs[player][-1][0]
        now = deal.started_at + t
        msg = {
            "type": "moved",
            "id": req.id,
            "deal": d.deal,
            "t": t,
            "result": outcome_view(outcome),
            "board": board_view(deal, player),
            "score": room.score(deal, player, now),
        }

        def send() -> None:
            conn.send(msg)
            service.metrics.moves_accepted.inc()

        return send

    try:
        await host.run(lambda r, c: C.decide_move(r, player, req.deal, req.move, c), reply)
    except RoomError as exc:
        service.metrics.moves_rejected.labels(exc.code).inc()
        raise


ROOM_HANDLERS: dict[type, Any] = {
    CreateRoom: _create,
    JoinRoom: _join,
    LeaveRoom: _leave,
    UpdateSettings: _settings,
    Start: _start,
    NextDeal: _next_deal,
    RemovePlayer: _remove,
    Rematch: _rematch,
    CloseRoom: _close,
    Snapshot: _snapshot,
    MoveRequest: _move,
}
