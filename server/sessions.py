"""Sessions and request dispatch: who is who, and which room a request goes to.

The service owns the registry of live rooms (their runners,
:class:`~server.rooms.runner.RoomRunner`) and of sessions. A session is an
identity (public player id, name) behind a secret token; it outlives connections —
a client that reconnects with its token gets the same id, role, room and board —
and its current room is kept in the store next to its hashed token. Everything a
room decides goes through its runner; the service only resolves the room and
turns results into replies.

**One runner per room.** A room is rebuilt from its log (:meth:`Service.adopt_room`)
after a restart, or when this node takes over a dead node's room, often because
many of its clients resume here at the same moment. Adoption is single-flight per
room code: whoever asks while one is under way waits for that one, so they all get
the same runner. Each adoption is a new incarnation with a writer of its own (with
several nodes, a fresh lease token: server/cluster/leases.py), and a runner that
is replaced or given up is stopped, timer included. Presence after a rebuild is
decided in one step, before anything else can reach the room: a member is online
exactly when a session of theirs is connected to this node now.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Protocol

from protocol import messages as M
from protocol import names
from protocol.messages import ErrorCode
from protocol.settings import DealRules
from protocol.wire import VERSION, Hello, Ping, Request

from . import ids
from .core import decide as D
from .core import records as R
from .core.durable import DurableLog
from .core.records import Decision
from .core.room import Room
from .core.values import RoomError
from .core.views import snapshot
from .net.clock import Clock
from .net.connection import Limits
from .net.metrics import Metrics
from .net.ratelimit import Allowance, Limiter
from .peer import Peer, SessionState
from .rooms.handlers import ROOM_HANDLERS, Handler
from .rooms.proofs import ProvenPools
from .rooms.runner import Release, RoomRunner, Writer
from .store.base import SessionRecord, Store, StoreUnavailable, unavailable

__all__ = ["IDLE_ROOM_MS", "ClusterHooks", "Service"]

log = logging.getLogger("klondike_race.service")

IDLE_ROOM_MS = 30 * 60_000  # see server/rooms/timer.py
_WHAT = {
    "sessions": "new sessions",
    "rooms": "new rooms",
    "join_codes": "wrong join codes",
    "reactions": "reactions",
}


class ClusterHooks(Protocol):
    """Where several nodes share one Redis (server/cluster/), the service asks the
    cluster first; the single-process server has none and never imports it."""

    async def route(self, conn: Peer, req: Request) -> bool:
        """True when the request was sent on to the node that runs its room."""

    def disconnected(self, conn: Peer) -> None: ...

    async def claim(self, code: str) -> bool:
        """True when this node may run the room: it now holds the room's lease,
        under a token new to this claim. Only the service's single-flight
        adoption calls it, for a room not running here."""

    async def release(self, code: str) -> None:
        """Give the room's lease back (an adoption that came to nothing)."""

    def writer(self, code: str) -> Writer:
        """Appends fenced by the token the room's lease holds here now."""


FOLD_SLICE_S = 0.005
"""How long a rebuild folds before it lets the event loop run (other rooms' moves
wait that long at most). The room is not published until the fold is done, so
nothing sees it half-built; see :func:`_fold`."""


async def _fold(code: str, records: Sequence[bytes]) -> tuple[Room, DurableLog]:
    """:meth:`DurableLog.fold`, in slices of ``FOLD_SLICE_S``: a compacted log is
    short, but its snapshot replays every board of the round, and a log that was
    never compacted (or a round of many long deals) may take far longer than the
    few ms a move may wait on the rest of the server."""
    steps = DurableLog.folding(code, records)
    clock = time.perf_counter
    until = clock() + FOLD_SLICE_S
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: tuple[Room, DurableLog] = done.value
            return result
        if clock() >= until:
            await asyncio.sleep(0)
            until = clock() + FOLD_SLICE_S


def check_name(raw: str) -> str:
    """The name normalised as people will see it (protocol/names.py), or ``bad_name``."""
    try:
        return names.normalise(raw)
    except names.NameError_ as exc:
        raise RoomError(ErrorCode.BAD_NAME, str(exc)) from None


def _presence(player: str, connected: bool) -> Callable[[Room, D.Ctx], Decision]:
    return lambda room, _ctx: D.decide_presence(room, player, connected)


def _presence_of_all(connected: Callable[[str], bool]) -> Callable[[Room, D.Ctx], Decision]:
    """Every member's presence as ``connected`` says it is, in one decision."""

    def decide(room: Room, _ctx: D.Ctx) -> Decision:
        records = []
        for pid in room.members:
            records += D.decide_presence(room, pid, connected(pid)).records
        return Decision(records)

    return decide


def _rules_label(rules: DealRules) -> str:
    f2t = "" if rules.foundation_to_tableau else "/no_f2t"
    return f"{rules.variant.value}/draw{rules.draw}/passes{rules.pass_limit}{f2t}"


class Service:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        metrics: Metrics,
        draw_seed: Callable[[], str] = ids.new_seed,
        idle_room_ms: int = IDLE_ROOM_MS,
        limits: Limits | None = None,
        proofs: ProvenPools | None = None,
    ) -> None:
        self.limits = limits = limits or Limits()
        self.limiter = Limiter(limits.rate, limits.burst, limits.max_strikes, limits.address_factor)
        self._allowances = {
            "sessions": Allowance(limits.sessions_per_minute),
            "rooms": Allowance(limits.rooms_per_minute),
            "join_codes": Allowance(limits.wrong_codes_per_minute),
            "reactions": Allowance(limits.reactions_per_minute),
        }
        self.store = store
        proofs = proofs or ProvenPools()
        proofs.use(store)  # the proven seeds live in the store (shared, with Redis)
        self.clock = clock
        self.metrics = metrics
        self._draw_seed = draw_seed
        self.proofs = proofs
        self.proofs.report_to(
            counted=lambda v: metrics.winnable_layouts.labels(v.value).inc(),
            sized=lambda rules, n: metrics.winnable_pool.labels(_rules_label(rules)).set(n),
        )
        self.idle_room_ms = idle_room_ms  # rooms with nobody connected this long close
        self.rooms: dict[str, RoomRunner] = {}
        self.sessions: dict[str, SessionState] = {}  # by player id
        self.connections: set[Peer] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._adoptions: dict[str, asyncio.Task[bool]] = {}  # rebuilds under way, by code
        self.cluster: ClusterHooks | None = None  # several nodes: server/cluster/

    # ------------------------------------------------------------------ plumbing

    def draw_seed(self) -> str:
        return self._draw_seed()

    # ``deals: winnable`` (server/rooms/proofs.py): proven seeds, from the pools.

    async def proven_seed(self, rules: DealRules, dry: Callable[[], None]) -> tuple[str, str]:
        def waiting() -> None:
            self.metrics.winnable_waits.inc()
            dry()

        return await self.proofs.take(rules, waiting)

    def want_proven(self, rules: DealRules) -> None:
        self.proofs.want(rules)

    def admit(self, what: str, peer: Peer, *, spend: bool = True) -> None:
        """``limit_reached`` when ``peer``'s address has created its ``what``
        (sessions, rooms; or tried its wrong join codes, or sent its reactions)
        for this minute.
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
        task.add_done_callback(self._spawned)

    def _spawned(self, task: asyncio.Task[Any]) -> None:
        """Nobody awaits a spawned task: its failure is logged here, once (a
        WARNING for the store being away, which is expected), instead of at
        garbage collection as 'Task exception was never retrieved'."""
        self._tasks.discard(task)
        if task.cancelled() or (exc := task.exception()) is None:
            return
        what = getattr(task.get_coro(), "__qualname__", task.get_name())
        if isinstance(exc, StoreUnavailable) or (
            isinstance(exc, RoomError) and exc.code == ErrorCode.STORAGE_UNAVAILABLE
        ):
            log.warning("%s: %s", what, exc)
        else:
            log.error("%s failed", what, exc_info=exc)

    def writer(self, code: str) -> Writer:
        """How a runner made now appends to ``code``'s log: with several nodes,
        fenced by this incarnation's lease token (the cluster's); alone, plainly."""
        if self.cluster is not None:
            return self.cluster.writer(code)
        store = self.store

        def append(records: Sequence[bytes]) -> Awaitable[int]:
            return store.append(code, records)

        return append

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
            if code not in self.rooms:
                await self.adopt_room(code)

    def adopting(self, code: str) -> bool:
        """A rebuild of the room is under way here (the cluster keeps its lease)."""
        return code in self._adoptions

    async def adopt_room(self, code: str) -> bool:
        """Run the room here, rebuilt from its log unless it runs here already;
        False when it cannot: it is closed, or (several nodes) another node runs it.

        Single-flight: every caller for one code while a rebuild is under way
        (eight clients resuming at once, the cluster's scan) shares that rebuild
        and its runner. A waiter that gives up (its connection closed) does not
        cancel it for the others."""
        if code in self.rooms:
            return True
        task = self._adoptions.get(code)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._adopt(code))
            self._adoptions[code] = task
            task.add_done_callback(lambda done: self._adopted(code, done))
        return await asyncio.shield(task)

    def _adopted(self, code: str, task: asyncio.Task[bool]) -> None:
        """The rebuild is over; its failure is logged once here (waiters get it
        too, or none is left to retrieve it): the store being away is expected."""
        if self._adoptions.get(code) is task:
            del self._adoptions[code]
        if task.cancelled() or (exc := task.exception()) is None:
            return
        if isinstance(exc, StoreUnavailable):
            log.warning("room %s not rebuilt: %s", code, exc)
        else:
            log.error("room %s not rebuilt", code, exc_info=exc)

    async def _adopt(self, code: str) -> bool:
        """Claim (with several nodes), load, fold, then publish the runner with
        every member's presence decided in the same step.

        The presence decision and the runner's publication have no await between
        them, so nothing can decide on the room before it: a client that resumes
        meanwhile is either connected now (marked online here) or arrives after
        (and its own hello marks it online). Whoever the log says is connected but
        is not connected here now is marked offline. If those records cannot be
        stored the rebuild is given up: the runner is withdrawn and stopped, and
        the lease handed back for whoever tries next."""
        if code in self.rooms:
            return True
        cluster = self.cluster
        if cluster is not None and not await cluster.claim(code):
            return False
        runner: RoomRunner | None = None
        try:
            records = await self.store.load(code)
            room, durable = await _fold(code, records)
            if not records or room.state == "closed":
                await self.store.close_room(code)
                if cluster is not None:
                    await cluster.release(code)
                return False
            runner = RoomRunner(self, room, durable)
            old = self.rooms.get(code)
            if old is not None:  # cannot happen (single-flight); never leave two running
                log.error("room %s was running while it was rebuilt; the old runner stops", code)
                old.stop()
            self.rooms[code] = runner
            self.metrics.room_adoptions.inc()
            try:
                await runner.run(_presence_of_all(lambda pid: self.peer_of(pid) is not None))
            except RoomError as exc:
                why = f"presence after the rebuild not stored: {exc.message}"
                raise StoreUnavailable(why) from None
        except BaseException:
            if runner is not None:
                if self.rooms.get(code) is runner:
                    del self.rooms[code]
                runner.stop()
            if cluster is not None:
                await cluster.release(code)
            raise
        runner.timer.arm()
        log.info("room %s rebuilt (%d records, seq %d)", code, len(records), runner.room.seq)
        return True

    async def stop(self) -> None:
        """At shutdown: give up rebuilds under way and stop every runner."""
        for task in list(self._adoptions.values()):
            task.cancel()
        for task in list(self._adoptions.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for runner in self.rooms.values():
            runner.stop()
        await self.proofs.close()

    def after_commit(self, runner: RoomRunner, decision: Decision) -> None:
        """Keep sessions in step with membership: who left, who was removed, and
        everyone when the room closes."""
        for record in decision.records:
            if isinstance(record, (R.Left, R.Removed)):
                self._set_room(record.player, None)
            elif isinstance(record, R.Closed):
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
        self._forget_if_idle(session)

    def _forget_if_idle(self, session: SessionState) -> None:
        """A session with no connection and no room lives on in the store only
        (``resume_session`` reads it back): memory holds just the sessions in use."""
        unused = session.peer is None and session.room_code is None
        if unused and self.sessions.get(session.player) is session:
            del self.sessions[session.player]

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
            self._forget_if_idle(session)
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
            view = (
                snapshot(runner.room, session.player, self.clock.now(), runner.seeds.finding)
                if member
                else None
            )

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
