"""Sessions and request dispatch: who is who, and which room a request goes to.

The service owns the registry of live rooms (their runners,
:class:`~server.rooms.runner.RoomRunner`) and of sessions. A session is an
identity (public player id, name) behind a secret token; it outlives connections —
a client that reconnects with its token gets the same id, role, room and board —
and its current room is kept in the store next to its hashed token. Everything a
room decides goes through its runner; the service only resolves the room and
turns results into replies.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from protocol import messages as M
from protocol import names
from protocol.messages import ErrorCode
from protocol.wire import VERSION, Hello, Ping, Request

from . import ids
from .core import decide as D
from .core import records as R
from .core.durable import DurableLog
from .core.room import Room
from .core.values import Decision, RoomError
from .core.views import snapshot
from .net.clock import Clock
from .net.connection import Limits
from .net.metrics import Metrics
from .net.ratelimit import Allowance, Limiter
from .peer import Peer, SessionState
from .rooms.handlers import ROOM_HANDLERS, Handler
from .rooms.runner import Release, RoomRunner
from .store.base import SessionRecord, Store, StoreUnavailable, unavailable

__all__ = ["IDLE_ROOM_MS", "ClusterHooks", "Service"]

log = logging.getLogger("klondike_race.service")

IDLE_ROOM_MS = 30 * 60_000  # see server/rooms/timer.py
_WHAT = {"sessions": "new sessions", "rooms": "new rooms", "join_codes": "wrong join codes"}


class ClusterHooks(Protocol):
    """Where several nodes share one Redis (server/cluster/), the service asks the
    cluster first; the single-process server has none and never imports it."""

    async def route(self, conn: Peer, req: Request) -> bool:
        """True when the request was sent on to the node that runs its room."""

    def disconnected(self, conn: Peer) -> None: ...

    async def claim(self, code: str) -> bool:
        """True when this node may run the room (it now holds the room's lease)."""


def check_name(raw: str) -> str:
    """The name normalised as people will see it (protocol/names.py), or ``bad_name``."""
    try:
        return names.normalise(raw)
    except names.NameError_ as exc:
        raise RoomError(ErrorCode.BAD_NAME, str(exc)) from None


def _presence(player: str, connected: bool) -> Callable[[Room, D.Ctx], Decision]:
    return lambda room, _ctx: D.decide_presence(room, player, connected)


class Service:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        metrics: Metrics,
        draw_seed: Callable[[], str] = ids.new_seed,
        idle_room_ms: int = IDLE_ROOM_MS,
        limits: Limits | None = None,
    ) -> None:
        self.limits = limits = limits or Limits()
        self.limiter = Limiter(limits.rate, limits.burst, limits.max_strikes, limits.address_factor)
        self._allowances = {
            "sessions": Allowance(limits.sessions_per_minute),
            "rooms": Allowance(limits.rooms_per_minute),
            "join_codes": Allowance(limits.wrong_codes_per_minute),
        }
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self._draw_seed = draw_seed
        self.idle_room_ms = idle_room_ms  # rooms with nobody connected this long close
        self.rooms: dict[str, RoomRunner] = {}
        self.sessions: dict[str, SessionState] = {}  # by player id
        self.connections: set[Peer] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.cluster: ClusterHooks | None = None  # several nodes: server/cluster/

    # ------------------------------------------------------------------ plumbing

    def draw_seed(self) -> str:
        return self._draw_seed()

    def admit(self, what: str, peer: Peer, *, spend: bool = True) -> None:
        """``limit_reached`` when ``peer``'s address has created its ``what``
        (sessions, rooms; or tried its wrong join codes) for this minute.
        ``spend`` false: only check that one is left."""
        allowance = self._allowances[what]
        now = time.monotonic()
        if spend:
            ok = self.limiter.allow(what, peer.address, allowance, now)
        else:
            ok = self.limiter.left(what, peer.address, allowance, now)
        if not ok:
            raise RoomError(
                ErrorCode.LIMIT_REACHED,
                f"too many {_WHAT[what]} from your address: at most "
                f"{allowance.per_minute} a minute; wait a little",
                limit=what,
            )

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def peer_of(self, player: str) -> Peer | None:
        session = self.sessions.get(player)
        return session.peer if session is not None else None

    def role_of(self, conn: Peer) -> str:
        session = conn.session
        if session is None or session.room_code is None:
            return "none"
        runner = self.rooms.get(session.room_code)
        member = runner.room.members.get(session.player) if runner else None
        return member.role.value if member is not None else "none"

    async def recover(self) -> None:
        """Rebuild every open room from its log (after a restart, or a crash of
        another node); with several nodes, only those this node may run."""
        for code in await self.store.open_rooms():
            if code not in self.rooms and (self.cluster is None or await self.cluster.claim(code)):
                await self.adopt_room(code)

    async def adopt_room(self, code: str) -> bool:
        """Rebuild one room from its log and run it here; False when it is closed.

        Nobody is connected to it yet, so whoever the log says is connected is
        marked as dropped, through the normal path (records, events)."""
        records = await self.store.load(code)
        room, durable = DurableLog.fold(code, records)
        if not records or room.state == "closed":
            await self.store.close_room(code)
            return False
        runner = RoomRunner(self, room, durable)
        self.rooms[code] = runner
        for pid in [m.id for m in room.members.values() if m.connected]:
            await runner.run(_presence(pid, False))
        runner.timer.arm()
        log.info("room %s rebuilt (%d records, seq %d)", code, len(records), room.seq)
        return True

    def after_commit(self, runner: RoomRunner, decision: Decision) -> None:
        """Keep sessions in step with membership: who left, who was removed, and
        everyone when the room closes."""
        for record in decision.records:
            kind = record["k"]
            if kind in (R.LEFT, R.REMOVED):
                self._set_room(record["p"], None)
            elif kind == R.CLOSED:
                for pid in list(runner.room.members):
                    self._set_room(pid, None)
                self.rooms.pop(runner.code, None)
                runner.stop()
                self.spawn(self._forget_room(runner.code))

    async def _forget_room(self, code: str) -> None:
        try:
            await self.store.close_room(code)
        except StoreUnavailable:
            log.warning("room %s closed but the store could not forget it", code)

    def _set_room(self, player: str, code: str | None) -> None:
        session = self.sessions.get(player)
        if session is None or session.room_code == code:
            return
        session.room_code = code
        self.spawn(self._save(session))

    async def _save(self, session: SessionState) -> None:
        try:
            await self.store.put_session(
                session.token, SessionRecord(session.player, session.name, session.room_code)
            )
        except StoreUnavailable:
            log.warning("could not save session of %s", session.player)

    async def disconnected(self, conn: Peer) -> None:
        self.connections.discard(conn)
        if self.cluster is not None:
            self.cluster.disconnected(conn)
        session = conn.session
        if session is None or session.peer is not conn:
            return  # never said hello, or resumed elsewhere
        session.peer = None
        runner = self.rooms.get(session.room_code) if session.room_code else None
        if runner is None:
            return
        try:
            await runner.run(_presence(session.player, False))
        except RoomError as exc:
            log.warning("presence of %s not recorded: %s", session.player, exc.message)

    # ------------------------------------------------------------------ requests

    async def handle(self, conn: Peer, req: Request) -> None:
        if self.cluster is not None and await self.cluster.route(conn, req):
            return
        handler = _HANDLERS[type(req)]
        await handler(self, conn, req)

    def attach(self, session: SessionState, conn: Peer) -> None:
        """``conn`` speaks for ``session`` from now on; an older connection of the
        same session is closed (4001)."""
        old, session.peer, conn.session = session.peer, conn, session
        if old is not None and old is not conn:
            old.close(M.CloseCode.RESUMED_ELSEWHERE, "session resumed on another connection")

    async def _hello(self, conn: Peer, req: Hello) -> None:
        if req.version != VERSION:
            raise RoomError(
                ErrorCode.UNSUPPORTED_VERSION,
                f"this server speaks version {VERSION}",
                supported=[VERSION],
            )
        if conn.session is not None:
            raise RoomError(ErrorCode.ALREADY_HELLO, "this connection has said hello already")
        if req.token is not None:
            session = await self.resume_session(req.token)
        else:
            name = check_name(req.name or "")
            self.admit("sessions", conn)
            session = await self._new_session(name)
        self.attach(session, conn)
        runner = self.rooms.get(session.room_code) if session.room_code else None
        if runner is None:
            if session.room_code is not None:
                self._set_room(session.player, None)
            conn.send(self._welcome(req, session, None))
            return

        def welcome(_d: Decision | None = None) -> Release:
            # Built in turn with the room's commands (it may depend on undurable
            # ones), sent when they are durable.
            member = session.player in runner.room.members
            view = snapshot(runner.room, session.player, self.clock.now()) if member else None

            def send() -> None:
                if not member:
                    self._set_room(session.player, None)
                conn.send(self._welcome(req, session, view))

            return send

        try:
            await runner.run(_presence(session.player, True), welcome)
        except RoomError as exc:  # the store is down: welcome anyway, seen as offline
            log.warning("presence of %s not recorded: %s", session.player, exc.message)
            await runner.read(welcome)

    def _welcome(self, req: Hello, session: SessionState, room: Any) -> M.Message:
        return M.welcome(
            req.id,
            version=VERSION,
            token=session.token,
            player=session.player,
            name=session.name,
            room=room,
        )

    async def resume_session(self, token: str) -> SessionState:
        """The session behind ``token`` (``unknown_token`` if none)."""
        try:
            record = await self.store.get_session(token)
        except StoreUnavailable:
            raise unavailable() from None
        if record is None:
            raise RoomError(ErrorCode.UNKNOWN_TOKEN, "this server does not know that token")
        session = self.sessions.get(record.player)
        if session is None:
            session = SessionState(token, record.player, record.name, record.room_code)
            self.sessions[record.player] = session
        return session

    async def _new_session(self, name: str) -> SessionState:
        token = ids.new_token()
        player = "p" + ids.new_id()
        while player in self.sessions:
            player = "p" + ids.new_id()
        session = SessionState(token, player, name)
        try:
            await self.store.put_session(token, SessionRecord(player, name, None))
        except StoreUnavailable:
            raise unavailable() from None
        self.sessions[player] = session
        return session

    async def _ping(self, conn: Peer, req: Ping) -> None:
        conn.send(M.pong(req.id, now=self.clock.now()))

    def session_of(self, peer: Peer) -> SessionState:
        assert peer.session is not None  # the connection checks hello first
        return peer.session

    def room_of(self, peer: Peer) -> tuple[SessionState, RoomRunner]:
        """The requester's session and room, or ``not_in_room``."""
        session = self.session_of(peer)
        runner = self.rooms.get(session.room_code) if session.room_code else None
        if runner is None:
            raise RoomError(ErrorCode.NOT_IN_ROOM, "you are not in a room")
        return session, runner

    def save_session(self, session: SessionState) -> None:
        self.spawn(self._save(session))


_HANDLERS: dict[type[Request], Handler] = {
    Hello: Service._hello,
    Ping: Service._ping,
    **ROOM_HANDLERS,
}
