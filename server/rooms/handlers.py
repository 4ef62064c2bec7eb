"""The room requests: resolve the requester's room, run the command through its
runner, and say how to reply once the records are stored.

A reply is built right after the command's commit, from the room as the command
left it, and sent only once the command is durable (server/rooms/runner.py): by
then later commands may have changed the room.

Each handler is ``async (front, peer, request)`` for one kind of request, paired
with it by :func:`on`; refusals are raised as
:class:`~server.core.values.RoomError` and become error frames in the connection.
Session requests (``hello``, ``ping``) live in server/service/dispatch.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar, cast

from protocol import messages as M
from protocol.requests import (
    AddBot,
    CloseRoom,
    CreateRoom,
    DealLog,
    JoinRoom,
    LeaveRoom,
    MoveRequest,
    NextDeal,
    React,
    Ready,
    Rematch,
    RemovePlayer,
    Request,
    RoomInfo,
    Snapshot,
    Start,
    UpdateSettings,
)
from protocol.wire import Encoded, encode_with

from .. import ids
from ..core import decide as D
from ..core.records import Decision
from ..core.room import Room
from ..core.values import RoomError
from ..core.views import reaction_event, room_info, room_view
from ..net.allowances import Allowances, Quota
from ..net.metrics import Metrics
from ..peer import Peer, SessionState
from ..store.base import StoreUnavailable, unavailable
from .runner import Release, Reply, RoomRunner, Venue

__all__ = ["ROOM_HANDLERS", "Front", "Handler", "on", "reserve_code"]


class Accounts(Protocol):
    """What a rated room's check reads of the account store."""

    async def account_by_player(self, player: str) -> object | None: ...


class Front(Venue, Protocol):
    """What the room handlers need of the service (server/service/)."""

    rooms: dict[str, RoomRunner]
    metrics: Metrics
    allowances: Allowances
    accounts: Accounts

    def session_of(self, peer: Peer) -> SessionState: ...

    def room_of(self, peer: Peer) -> tuple[SessionState, RoomRunner]: ...

    def save_session(self, session: SessionState) -> None: ...

    def in_queue(self, player: str) -> bool:
        """Whether ``player`` waits in a quick-match queue (server/matchmaking/)."""


_F = TypeVar("_F", bound=Front)
_R = TypeVar("_R", bound=Request)

Handler = Callable[[_F, Peer, Request], Awaitable[None]]
"""What a dispatch table holds: a handler, for the requests its key names."""


def on(
    kind: type[_R], handler: Callable[[_F, Peer, _R], Awaitable[None]]
) -> tuple[type[Request], Handler[_F]]:
    """One entry of a dispatch table: ``handler`` takes requests of ``kind``, which
    mypy checks here. A table is looked up by the request's exact type, so its
    handler never sees another kind: that is what makes the cast sound."""
    return kind, cast(Handler[_F], handler)


def _joined(front: Front, conn: Peer, req: Request, runner: RoomRunner) -> Reply:
    session = front.session_of(conn)

    def reply(_d: Decision) -> Release:
        now = front.clock.now()
        view = room_view(
            runner.room, session.player, now, runner.seeds.finding, revealed=runner.memo.revealed
        )
        msg = M.joined(req.id, room=view)

        def send() -> None:
            session.room_code = runner.code
            conn.send(msg)
            front.save_session(session)

        return send

    return reply


def _own(session: SessionState) -> frozenset[str]:
    """The requester, as a rated room's check counts them: signed in or not."""
    return frozenset({session.player}) if session.account is not None else frozenset()


async def _signed(front: Front, runner: RoomRunner, wanted: bool) -> frozenset[str]:
    """The room's players who hold an account, when a rated room asks (``wanted``):
    the decision checks the players it sees against them, so one who joined
    meanwhile counts as not signed in, and the host asks again."""
    if not wanted:
        return frozenset()
    found = set()
    try:
        for p in runner.room.players():
            if await front.accounts.account_by_player(p) is not None:
                found.add(p)
    except StoreUnavailable:
        raise unavailable("the account store is unreachable") from None
    return frozenset(found)


def _not_in_a_room(front: Front, session: SessionState) -> None:
    if session.room_code is not None:
        raise RoomError(M.ErrorCode.ALREADY_IN_ROOM, "leave your room first")
    if front.in_queue(session.player):
        raise RoomError(M.ErrorCode.ALREADY_QUEUED, "leave the quick-match queue first")


async def _create(front: Front, conn: Peer, req: CreateRoom) -> None:
    session = front.session_of(conn)
    _not_in_a_room(front, session)
    D.validate_settings(req.settings)  # before a code is reserved for nothing
    front.allowances.admit(Quota.ROOMS, conn)
    code = await reserve_code(front)
    runner = RoomRunner(front, Room(code))
    front.rooms[code] = runner
    try:
        await runner.run(
            lambda r, c: D.decide_create(
                r, session.player, session.name, req.settings, c, _own(session)
            ),
            _joined(front, conn, req, runner),
        )
    except BaseException:
        front.rooms.pop(code, None)
        runner.stop()  # with its timer: a room never created must not close itself later
        raise


async def reserve_code(front: Front) -> str:
    """A free room code, reserved in the store."""
    for _ in range(100):
        code = ids.new_id()
        try:
            if code not in front.rooms and await front.store.reserve_room(code):
                return code
        except StoreUnavailable:
            raise unavailable() from None
    raise RoomError(
        M.ErrorCode.INTERNAL_ERROR, "could not find a free room code"
    )  # pragma: no cover


def _room_by_code(front: Front, conn: Peer, code: str) -> RoomRunner:
    """The room a join code names. A wrong code spends one of the address's
    guesses, and once they are spent no code is answered, right or wrong."""
    front.allowances.admit(Quota.JOIN_CODES, conn, spend=False)  # once out of guesses, no answers
    runner = front.rooms.get(code.strip().upper())
    if runner is None:
        front.allowances.admit(Quota.JOIN_CODES, conn)
        raise RoomError(M.ErrorCode.NO_SUCH_ROOM, "no open room has that code")
    return runner


async def _join(front: Front, conn: Peer, req: JoinRoom) -> None:
    session = front.session_of(conn)
    _not_in_a_room(front, session)
    runner = _room_by_code(front, conn, req.code)
    await runner.run(
        lambda r, c: D.decide_join(
            r, session.player, session.name, req.role, c, signed=_own(session)
        ),
        _joined(front, conn, req, runner),
    )


def _ok(conn: Peer, req: Request) -> Reply:
    return lambda _d: lambda: conn.send(M.ok(req.id))


async def _leave(front: Front, conn: Peer, req: LeaveRoom) -> None:
    session, runner = front.room_of(conn)
    await runner.run(lambda r, c: D.decide_leave(r, session.player, c), _ok(conn, req))


async def _settings(front: Front, conn: Peer, req: UpdateSettings) -> None:
    session, runner = front.room_of(conn)
    signed = await _signed(front, runner, req.settings.get("rated") is True)
    await runner.run(
        lambda r, c: D.decide_settings(r, session.player, req.settings, c, signed), _ok(conn, req)
    )


async def _start(front: Front, conn: Peer, req: Start) -> None:
    session, runner = front.room_of(conn)
    signed = await _signed(front, runner, runner.room.settings.rated)
    await runner.run(lambda r, c: D.decide_start(r, session.player, c, signed), _ok(conn, req))


async def _next_deal(front: Front, conn: Peer, req: NextDeal) -> None:
    session, runner = front.room_of(conn)
    await runner.run(lambda r, c: D.decide_next_deal(r, session.player, c), _ok(conn, req))


async def _remove(front: Front, conn: Peer, req: RemovePlayer) -> None:
    session, runner = front.room_of(conn)
    await runner.run(lambda r, c: D.decide_remove(r, session.player, req.player, c), _ok(conn, req))


async def _add_bot(front: Front, conn: Peer, req: AddBot) -> None:
    """Seat a bot: its id is made here, like a person's session id, and the
    server plays for it from then on (server/rooms/bots.py)."""
    session, runner = front.room_of(conn)
    bot = "b" + ids.new_id()
    while bot in runner.room.members:
        bot = "b" + ids.new_id()
    await runner.run(
        lambda r, c: D.decide_add_bot(r, session.player, bot, req.pace, c), _ok(conn, req)
    )


async def _rematch(front: Front, conn: Peer, req: Rematch) -> None:
    session, runner = front.room_of(conn)
    signed = await _signed(front, runner, runner.room.settings.rated)
    await runner.run(lambda r, c: D.decide_rematch(r, session.player, c, signed), _ok(conn, req))


async def _close(front: Front, conn: Peer, req: CloseRoom) -> None:
    session, runner = front.room_of(conn)
    await runner.run(lambda r, c: D.decide_close(r, session.player, c), _ok(conn, req))


async def _room_info(front: Front, conn: Peer, req: RoomInfo) -> None:
    """An invite page asks before it joins: no seat is taken, nothing recorded."""
    runner = _room_by_code(front, conn, req.code)

    def make() -> Release:
        msg = M.room_info(req.id, info=room_info(runner.room))
        return lambda: conn.send(msg)

    await runner.read(make)


async def _ready(front: Front, conn: Peer, req: Ready) -> None:
    session, runner = front.room_of(conn)
    await runner.run(lambda r, c: D.decide_ready(r, session.player, c), _ok(conn, req))


async def _snapshot(front: Front, conn: Peer, req: Snapshot) -> None:
    session, runner = front.room_of(conn)

    def make() -> Release:
        now = front.clock.now()
        view = room_view(
            runner.room, session.player, now, runner.seeds.finding, revealed=runner.memo.revealed
        )
        msg = M.snapshot(req.id, room=view)
        return lambda: conn.send(msg)

    await runner.read(make)  # never shows a command before it is durable


async def _react(front: Front, conn: Peer, req: React) -> None:
    """A reaction is the room's moment, not its history: nothing is recorded, so
    nothing waits for the store but what is before it (it is a read, released in
    turn, never ahead of a command not yet durable). An address has so many a
    minute (``limit_reached``), kept across reconnects like every allowance."""
    session, runner = front.room_of(conn)
    front.allowances.admit(Quota.REACTIONS, conn)
    player = session.player

    def make() -> Release:
        room = runner.room
        if player not in room.members:  # removed meanwhile: nobody is told
            return lambda: conn.error(req.id, M.ErrorCode.NOT_IN_ROOM, "you are not in a room")
        event, recipients = reaction_event(room, player, req.reaction)

        def send() -> None:
            conn.send(M.ok(req.id))
            runner.fanout([event], recipients)

        return send

    await runner.read(make)


async def _deal_log(front: Front, conn: Peer, req: DealLog) -> None:
    """A past deal's logs, which snapshots leave out.

    The replay that gives each move its result, and the encoding, are work in
    the length of the logs, and every member may ask (again after each resume):
    so each deal's logs are encoded once per subprotocol and kept by the runner
    (server/rooms/memo.py), and a request costs a copy of those bytes."""
    _session, runner = front.room_of(conn)

    def make() -> Release:
        room = runner.room
        deal = room.deals[req.deal - 1] if 1 <= req.deal <= len(room.deals) else None
        if deal is None or not deal.over:
            # Released in turn like any answer of a read, never ahead of it.
            text = f"deal {req.deal} of this round is not over for everyone: no log to show"
            return lambda: conn.error(req.id, M.ErrorCode.WRONG_DEAL, text)
        logs = Encoded(runner.memo.deal_logs(deal, conn.binary))
        data = encode_with(M.deal_log(req.id, deal=deal.number, logs=logs), conn.binary)
        return lambda: conn.send_data(data)

    await runner.read(make)  # like a snapshot: never ahead of what is durable


async def _move(front: Front, conn: Peer, req: MoveRequest) -> None:
    session, runner = front.room_of(conn)
    player = session.player

    def reply(d: Decision) -> Release:
        room = runner.room
        deal = room.deals[d.deal_number - 1]
        if d.retry is not None:
            # A move the log holds already: its original reply, rebuilt. It is
            # queued behind the commands before it like any reply, so it leaves
            # only once the move it repeats is durable.
            t, (outcome, digest), score = runner.memo.replayed_move(room, deal, player, d.retry)
        else:
            assert d.told is not None  # its commit built it
            t = deal.logs[player].last_t
            outcome, digest = d.told
            score = room.score(deal, player, deal.started_at + t)
        msg = M.moved(req.id, deal=d.deal_number, t=t, outcome=outcome, digest=digest, score=score)
        counter = (
            front.metrics.moves_retried if d.retry is not None else front.metrics.moves_accepted
        )

        def send() -> None:
            conn.send(msg)
            counter.inc()

        return send

    try:
        await runner.run(lambda r, c: D.decide_move(r, player, req.deal, req.n, req.move, c), reply)
    except RoomError as exc:
        front.metrics.moves_rejected.labels(exc.code.value).inc()
        raise


ROOM_HANDLERS: dict[type[Request], Handler[Front]] = dict(
    [
        on(CreateRoom, _create),
        on(JoinRoom, _join),
        on(LeaveRoom, _leave),
        on(UpdateSettings, _settings),
        on(Start, _start),
        on(NextDeal, _next_deal),
        on(RemovePlayer, _remove),
        on(AddBot, _add_bot),
        on(Rematch, _rematch),
        on(CloseRoom, _close),
        on(Ready, _ready),
        on(RoomInfo, _room_info),
        on(Snapshot, _snapshot),
        on(React, _react),
        on(DealLog, _deal_log),
        on(MoveRequest, _move),
    ]
)
