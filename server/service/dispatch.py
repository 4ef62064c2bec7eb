"""Which handler a request goes to, and the session requests (``hello``, ``ping``).

With several nodes the cluster sees a request first (it may run on the node of
its room instead); the room requests are server/rooms/handlers.py's. A handler
is ``async (desk, peer, request)``; refusals are raised as
:class:`~server.core.values.RoomError` and become error frames in the connection.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from protocol import messages as M
from protocol import names
from protocol.messages import ErrorCode
from protocol.requests import Hello, Ping, Request
from protocol.wire import VERSION

from ..accounts.passkey_handlers import PASSKEY_HANDLERS
from ..accounts.passkeys import Ceremonies
from ..accounts.store import AccountStore
from ..core.records import Decision
from ..core.values import RoomError
from ..core.views import room_view
from ..net.allowances import Allowances, Quota
from ..peer import Peer, SessionState
from ..rooms.handlers import ROOM_HANDLERS, Front, Handler, on
from ..rooms.runner import Release
from .hooks import ClusterHooks
from .presence import presence
from .sessions import Sessions

__all__ = ["HANDLERS", "Desk", "check_name", "dispatch"]

log = logging.getLogger("klondike_race.service")


class Desk(Front, Protocol):
    """What the handlers need of the service (server/service/service.py): the
    room handlers' :class:`~server.rooms.handlers.Front`, and the sessions."""

    sessions: Sessions
    allowances: Allowances
    cluster: ClusterHooks | None
    accounts: AccountStore
    passkeys: Ceremonies


async def dispatch(desk: Desk, conn: Peer, req: Request) -> None:
    if desk.cluster is not None and await desk.cluster.route(conn, req):
        return
    await HANDLERS[type(req)](desk, conn, req)


def check_name(raw: str) -> str:
    """The name normalised as people will see it (protocol/names.py), or ``bad_name``."""
    try:
        return names.normalise(raw)
    except names.NameError_ as exc:
        raise RoomError(ErrorCode.BAD_NAME, str(exc)) from None


async def _hello(desk: Desk, conn: Peer, req: Hello) -> None:
    if req.version != VERSION:
        raise RoomError(
            ErrorCode.UNSUPPORTED_VERSION,
            f"this server speaks version {VERSION}",
            supported=[VERSION],
        )
    if conn.session is not None:
        raise RoomError(ErrorCode.ALREADY_HELLO, "this connection has said hello already")
    sessions = desk.sessions
    if req.token is not None:
        session = await sessions.resume(req.token)
    else:
        name = check_name(req.name or "")
        desk.allowances.admit(Quota.SESSIONS, conn)
        session = await sessions.open(name)
    sessions.attach(session, conn)
    runner = desk.rooms.get(session.room_code) if session.room_code else None
    if runner is None:
        if session.room_code is not None:
            sessions.set_room(session.player, None)
        conn.send(_welcome(req, session, None))
        return

    def welcome(_d: Decision | None = None) -> Release:
        # Built in turn with the room's commands (it may depend on undurable
        # ones), sent when they are durable.
        member = session.player in runner.room.members
        view = (
            room_view(
                runner.room,
                session.player,
                desk.clock.now(),
                runner.seeds.finding,
                revealed=runner.memo.revealed,
            )
            if member
            else None
        )

        def send() -> None:
            if not member:
                sessions.set_room(session.player, None)
            conn.send(_welcome(req, session, view))

        return send

    try:
        await runner.run(presence(session.player, True), welcome)
    except RoomError as exc:  # the store is down: welcome anyway, seen as offline
        log.warning("presence of %s not recorded: %s", session.player, exc.message)
        await runner.read(welcome)


def _welcome(req: Hello, session: SessionState, room: Any) -> M.Message:
    return M.welcome(
        req.id,
        version=VERSION,
        token=session.token,
        player=session.player,
        name=session.name,
        room=room,
    )


async def _ping(desk: Desk, conn: Peer, req: Ping) -> None:
    conn.send(M.pong(req.id, now=desk.clock.now()))


HANDLERS: dict[type[Request], Handler[Desk]] = dict(
    [on(Hello, _hello), on(Ping, _ping), *ROOM_HANDLERS.items(), *PASSKEY_HANDLERS.items()]
)
