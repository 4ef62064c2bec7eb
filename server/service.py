"""Sessions and request dispatch: who is who, and which room a request goes to.

The service owns the registry of live rooms (:class:`~server.roomhost.RoomHost`)
and of sessions. A session is an identity (public player id, name) behind a secret
token; it outlives connections — a client that reconnects with its token gets the
same id, role, room and board — and its current room is kept in the store next to
its hashed token. Everything a room decides goes through its RoomHost; the service
only resolves the room and turns results into replies.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import unicodedata
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from protocol.wire import (
    VERSION,
    Hello,
    Ping,
    Request,
)

from . import commands as C
from . import records as R
from .clock import Clock
from .durable import DurableLog
from .metrics import Metrics
from .requests import ROOM_HANDLERS
from .room import Room
from .roomhost import Release, RoomHost
from .roomtypes import Decision, RoomError
from .roomviews import snapshot
from .store import SessionRecord, Store, StoreUnavailable

if TYPE_CHECKING:
    from .connection import Connection

__all__ = ["Service", "Session"]

log = logging.getLogger("klondike_race.service")

ID_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
MAX_NAME = 24
IDLE_ROOM_MS = 30 * 60_000  # see server/roomtimer.py


class ClusterHooks(Protocol):
    """Where several nodes share one Redis (server/cluster.py), the service asks the
    cluster first; the single-process server has none and never imports it."""

    async def route(self, conn: Connection, req: Request) -> bool:
        """True when the request was sent on to the node that runs its room."""

    def disconnected(self, conn: Connection) -> None: ...

    async def claim(self, code: str) -> bool:
        """True when this node may run the room (it now holds the room's lease)."""


@dataclass(slots=True)
class Session:
    token: str
    player: str
    name: str
    room: str | None = None
    conn: Connection | None = None


def default_seed() -> str:
    """128 random bits per deal: the commitment hash cannot be brute-forced."""
    return secrets.token_hex(16)


def check_name(raw: str) -> str:
    name = raw.strip()
    if not 1 <= len(name) <= MAX_NAME:
        raise RoomError("bad_name", f"a name is 1 to {MAX_NAME} characters")
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") for ch in name):
        raise RoomError("bad_name", "a name may not hold control or invisible characters")
    return name


def _presence(player: str, connected: bool) -> Callable[[Room, C.Ctx], Decision]:
    return lambda room, _ctx: C.decide_presence(room, player, connected)


def _store_down() -> RoomError:
    return RoomError("storage_unavailable", "the store is unreachable; try again")


class Service:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        metrics: Metrics,
        draw_seed: Callable[[], str] = default_seed,
        idle_room_ms: int = IDLE_ROOM_MS,
    ) -> None:
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self.draw_seed = draw_seed
        self.idle_room_ms = idle_room_ms  # rooms with nobody connected this long close
        self.rooms: dict[str, RoomHost] = {}
        self.sessions: dict[str, Session] = {}  # by player id
        self.connections: set[Connection] = set()
        self._unflushed: list[Connection] = []  # see want_flush()
        self._flush_scheduled = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self.cluster: ClusterHooks | None = None  # several nodes: server/cluster.py

    # ------------------------------------------------------------------ plumbing

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def want_flush(self, conn: Connection) -> None:
        """``conn`` has frames waiting: send them at the start of the next loop
        iteration, together with whatever else this iteration adds for it.

        Under load, one iteration handles many requests (several moves of one
        room), so each connection gets all its new frames in one write; when idle,
        the wait is one pass of the event loop."""
        self._unflushed.append(conn)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        self._flush_scheduled = False
        conns, self._unflushed = self._unflushed, []
        for conn in conns:
            conn.flush_batch()

    def connection_of(self, player: str) -> Connection | None:
        session = self.sessions.get(player)
        return session.conn if session is not None else None

    def role_of(self, conn: Connection) -> str:
        session = conn.session
        if session is None or session.room is None:
            return "none"
        host = self.rooms.get(session.room)
        member = host.room.members.get(session.player) if host else None
        return member.role if member is not None else "none"

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
        host = RoomHost(self, room, durable)
        self.rooms[code] = host
        for pid in [m.id for m in room.members.values() if m.connected]:
            await host.run(_presence(pid, False))
        host.timer.arm()
        log.info("room %s rebuilt (%d records, seq %d)", code, len(records), room.seq)
        return True

    def after_commit(self, host: RoomHost, decision: Decision) -> None:
        """Keep sessions in step with membership: who left, who was removed, and
        everyone when the room closes."""
        for record in decision.records:
            kind = record["k"]
            if kind in (R.LEFT, R.REMOVED):
                self._set_room(record["p"], None)
            elif kind == R.CLOSED:
                for pid in list(host.room.members):
                    self._set_room(pid, None)
                self.rooms.pop(host.code, None)
                host.stop()
                self.spawn(self._forget_room(host.code))

    async def _forget_room(self, code: str) -> None:
        try:
            await self.store.close_room(code)
        except StoreUnavailable:
            log.warning("room %s closed but the store could not forget it", code)

    def _set_room(self, player: str, code: str | None) -> None:
        session = self.sessions.get(player)
        if session is None or session.room == code:
            return
        session.room = code
        self.spawn(self._save(session))

    async def _save(self, session: Session) -> None:
        try:
            await self.store.put_session(
                session.token, SessionRecord(session.player, session.name, session.room)
            )
        except StoreUnavailable:
            log.warning("could not save session of %s", session.player)

    async def disconnected(self, conn: Connection) -> None:
        self.connections.discard(conn)
        if self.cluster is not None:
            self.cluster.disconnected(conn)
        session = conn.session
        if session is None or session.conn is not conn:
            return  # never said hello, or resumed elsewhere
        session.conn = None
        host = self.rooms.get(session.room) if session.room else None
        if host is None:
            return
        try:
            await host.run(lambda r, _c: C.decide_presence(r, session.player, False))
        except RoomError as exc:
            log.warning("presence of %s not recorded: %s", session.player, exc.message)

    # ------------------------------------------------------------------ requests

    async def handle(self, conn: Connection, req: Request) -> None:
        if self.cluster is not None and await self.cluster.route(conn, req):
            return
        handler = _HANDLERS[type(req)]
        await handler(self, conn, req)

    async def _hello(self, conn: Connection, req: Hello) -> None:
        if req.version != VERSION:
            raise RoomError(
                "unsupported_version",
                f"this server speaks version {VERSION}",
                supported=[VERSION],
            )
        if conn.session is not None:
            raise RoomError("already_hello", "this connection has said hello already")
        if req.token is not None:
            session = await self.resume_session(req.token)
        else:
            session = await self._new_session(check_name(req.name or ""))
        old, session.conn, conn.session = session.conn, conn, session
        if old is not None and old is not conn:
            old.close(4001, "session resumed on another connection")
        host = self.rooms.get(session.room) if session.room else None
        if host is None:
            if session.room is not None:
                self._set_room(session.player, None)
            conn.send(self._welcome(req, session, None))
            return
        room = host

        def welcome(_d: Decision | None = None) -> Release:
            # Built in turn with the room's commands (it may depend on undurable
            # ones), sent when they are durable.
            member = session.player in room.room.members
            view = snapshot(room.room, session.player, self.clock.now()) if member else None

            def send() -> None:
                if not member:
                    self._set_room(session.player, None)
                conn.send(self._welcome(req, session, view))

            return send

        try:
            await host.run(lambda r, _c: C.decide_presence(r, session.player, True), welcome)
        except RoomError as exc:  # the store is down: welcome anyway, seen as offline
            log.warning("presence of %s not recorded: %s", session.player, exc.message)
            await host.read(welcome)

    def _welcome(self, req: Hello, session: Session, room: Any) -> dict[str, Any]:
        return {
            "type": "welcome",
            "id": req.id,
            "version": VERSION,
            "token": session.token,
            "player": session.player,
            "name": session.name,
            "room": room,
        }

    async def resume_session(self, token: str) -> Session:
        """The session behind ``token`` (``unknown_token`` if none)."""
        try:
            record = await self.store.get_session(token)
        except StoreUnavailable:
            raise _store_down() from None
        if record is None:
            raise RoomError("unknown_token", "this server does not know that token")
        session = self.sessions.get(record.player)
        if session is None:
            session = Session(token, record.player, record.name, record.room)
            self.sessions[record.player] = session
        return session

    async def _new_session(self, name: str) -> Session:
        token = secrets.token_urlsafe(24)
        player = "p" + "".join(secrets.choice(ID_ALPHABET) for _ in range(6))
        while player in self.sessions:
            player = "p" + "".join(secrets.choice(ID_ALPHABET) for _ in range(6))
        session = Session(token, player, name)
        try:
            await self.store.put_session(token, SessionRecord(player, name, None))
        except StoreUnavailable:
            raise _store_down() from None
        self.sessions[player] = session
        return session

    async def _ping(self, conn: Connection, req: Ping) -> None:
        conn.send({"type": "pong", "id": req.id, "now": self.clock.now()})

    def session_of(self, conn: Connection) -> Session:
        assert conn.session is not None  # the connection checks hello first
        return conn.session

    def room_of(self, conn: Connection) -> tuple[Session, RoomHost]:
        """The requester's session and room, or ``not_in_room``."""
        session = self.session_of(conn)
        host = self.rooms.get(session.room) if session.room else None
        if host is None:
            raise RoomError("not_in_room", "you are not in a room")
        return session, host

    def save_session(self, session: Session) -> None:
        self.spawn(self._save(session))


_HANDLERS: dict[type, Any] = {Hello: Service._hello, Ping: Service._ping, **ROOM_HANDLERS}
