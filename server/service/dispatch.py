"""Which handler a request goes to, and the session requests (``hello``, ``ping``).

With several nodes the cluster sees a request first (it may run on the node of
its room instead); the room requests are server/rooms/handlers.py's. A handler
is ``async (desk, peer, request)``; refusals are raised as
:class:`~server.core.values.RoomError` and become error frames in the connection.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from protocol import messages as M
from protocol import names
from protocol.messages import ErrorCode
from protocol.requests import Hello, Ping, Request
from protocol.wire import VERSION

from ..accounts.friend_handlers import FRIEND_HANDLERS, FriendsDesk
from ..accounts.handlers import ACCOUNT_HANDLERS, AccountDesk
from ..accounts.history_handlers import HISTORY_HANDLERS
from ..accounts.keeping import HistoryKeeper
from ..accounts.service import NewDevice, account_view
from ..accounts.store import AccountStore
from ..challenges.handlers import ChallengeDesk
from ..challenges.requests import CHALLENGE_HANDLERS
from ..core.records import Decision
from ..core.values import RoomError
from ..core.views import room_view
from ..daily.handlers import DAILY_HANDLERS, DailyDesk
from ..daily.run_handlers import RUN_HANDLERS
from ..matchmaking.handlers import QUICK_HANDLERS, QuickDesk
from ..net.allowances import Allowances, Quota
from ..peer import Peer, SessionState
from ..ratings.handlers import RATING_HANDLERS
from ..ratings.keeping import RatingKeeper
from ..rooms.handlers import ROOM_HANDLERS, Handler, on
from ..rooms.runner import Release
from .hooks import ClusterHooks
from .presence import presence
from .sessions import Sessions

__all__ = ["HANDLERS", "Desk", "check_name", "dispatch"]

log = logging.getLogger("klondike_race.service")


class Desk(AccountDesk, FriendsDesk, DailyDesk, ChallengeDesk, QuickDesk, Protocol):
    """What the handlers need of the service (server/service/service.py): the
    room handlers' :class:`~server.rooms.handlers.Front`, the account handlers'
    additions to it, and the sessions."""

    sessions: Sessions
    allowances: Allowances
    cluster: ClusterHooks | None
    accounts: AccountStore
    history: HistoryKeeper
    ratings: RatingKeeper


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
    session, made = await _sign_in(desk, conn, req)
    desk.sessions.attach(session, conn)
    account = None
    if session.account is not None:
        account = account_view(
            made.account if made else await desk.account_service.account(session.account)
        )
    said = Said(session.token, account, made.token if made else None)
    await _enter(desk, conn, req, session, said)


async def _sign_in(desk: Desk, conn: Peer, req: Hello) -> tuple[SessionState, NewDevice | None]:
    """The session ``hello`` asks for, and the device it made (link, recovery,
    passkey). A failed sign-in costs the address one of its allowance, kept
    across reconnections; once none is left, no token or code is even tried."""
    sessions, accounts, allowances = desk.sessions, desk.account_service, desk.allowances
    if req.token is not None:
        return await sessions.resume(req.token), None
    if req.name is not None:
        name = check_name(req.name)
        allowances.admit(Quota.SESSIONS, conn)
        return await sessions.open(name), None
    quota = Quota.SIGN_INS if req.link is None and req.recovery is None else Quota.LINK_CODES
    allowances.admit(quota, conn, spend=False)
    try:
        if req.device is not None:
            account, device = await accounts.sign_in_device(req.device)
            return sessions.signed_in(account, device, req.device), None
        if req.link is not None:
            made = await accounts.sign_in_link(req.link, req.label)
        elif req.recovery is not None:
            made = await accounts.sign_in_recovery(req.recovery, req.label)
        else:
            assert req.passkey is not None
            made = await accounts.sign_in_passkey(conn, req.passkey, req.label)
    except RoomError as exc:
        if exc.code in (ErrorCode.UNKNOWN_TOKEN, ErrorCode.BAD_CODE, ErrorCode.BAD_PASSKEY):
            allowances.admit(quota, conn)
        raise
    return sessions.signed_in(made.account, made.device, made.token), made


@dataclass(frozen=True, slots=True)
class Said:
    """What the welcome tells of the sign-in, fixed at the hello: by the time the
    welcome leaves, another device may speak for the session."""

    token: str
    account: dict[str, Any] | None
    device_token: str | None


async def _enter(desk: Desk, conn: Peer, req: Hello, session: SessionState, said: Said) -> None:
    """Welcome the session back into its room, if it still sits in one here."""
    sessions = desk.sessions
    runner = desk.rooms.get(session.room_code) if session.room_code else None
    if runner is None:
        if session.room_code is not None:
            sessions.set_room(session.player, None)
        conn.send(_welcome(req, session, None, said))
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
            conn.send(_welcome(req, session, view, said))

        return send

    try:
        await runner.run(presence(session.player, True), welcome)
    except RoomError as exc:  # the store is down: welcome anyway, seen as offline
        log.warning("presence of %s not recorded: %s", session.player, exc.message)
        await runner.read(welcome)
    if runner.room.daily is not None:  # a daily run: where its ghosts stand
        await desk.ghosts.seated(runner, session.player)


def _welcome(req: Hello, session: SessionState, room: Any, said: Said) -> M.Message:
    return M.welcome(
        req.id,
        version=VERSION,
        token=said.token,
        player=session.player,
        name=session.name,
        room=room,
        account=said.account,
        device_token=said.device_token,
    )


async def _ping(desk: Desk, conn: Peer, req: Ping) -> None:
    conn.send(M.pong(req.id, now=desk.clock.now()))


HANDLERS: dict[type[Request], Handler[Desk]] = dict(
    [
        on(Hello, _hello),
        on(Ping, _ping),
        *ROOM_HANDLERS.items(),
        *ACCOUNT_HANDLERS.items(),
        *HISTORY_HANDLERS.items(),
        *FRIEND_HANDLERS.items(),
        *RATING_HANDLERS.items(),
        *DAILY_HANDLERS.items(),
        *RUN_HANDLERS.items(),
        *CHALLENGE_HANDLERS.items(),
        *QUICK_HANDLERS.items(),
    ]
)
