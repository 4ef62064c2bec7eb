"""The service: the pieces of this package wired together.

It owns the registry of live rooms (their runners,
:class:`~server.rooms.runner.RoomRunner`) and is what every piece is handed: the
runners' :class:`~server.rooms.runner.Venue`, the handlers'
:class:`~server.service.dispatch.Desk`, the connections'
:class:`~server.net.connection.Dispatcher`. Everything a room decides goes
through its runner; the service only resolves the room and turns results into
replies, and keeps sessions in step with what the rooms record.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from protocol.messages import ErrorCode, Message
from protocol.requests import Request
from protocol.settings import DealRules

from .. import ids
from ..accounts.friend_handlers import SessionsReach
from ..accounts.friends import Reach
from ..accounts.keeping import HistoryKeeper
from ..accounts.memory import MemoryAccounts
from ..accounts.service import Accounts
from ..accounts.store import AccountStore
from ..challenges.memory import MemoryChallenges
from ..challenges.store import ChallengeStore
from ..core import records as R
from ..core.durable import DurableLog
from ..core.records import Decision
from ..core.room import Room
from ..core.values import Fanout, RoomError
from ..daily.ghost_race import Ghosts
from ..daily.memory_results import MemoryResults
from ..daily.publisher import DailyDeals
from ..daily.results import ResultStore
from ..daily.runs import RunKeeper
from ..daily.store import DailyStore
from ..matchmaking.queues import QuickMatch
from ..net.allowances import Allowances
from ..net.clock import Clock
from ..net.connection import Limits
from ..net.metrics import Metrics
from ..net.ratelimit import Limiter
from ..peer import Peer, SessionState
from ..ratings.keeping import RatingKeeper
from ..rooms.proofs import ProvenPools
from ..rooms.runner import Release, RoomRunner, Writer
from ..store.base import Store, StoreUnavailable
from .adoption import Adoption
from .dispatch import dispatch
from .hooks import ClusterHooks
from .presence import presence
from .seeding import Seeding
from .sessions import Sessions
from .tasks import Tasks

__all__ = ["IDLE_ROOM_MS", "Service"]

log = logging.getLogger("klondike_race.service")

IDLE_ROOM_MS = 30 * 60_000  # see server/rooms/timer.py


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
        accounts: AccountStore | None = None,
        daily: DailyStore | None = None,
        daily_results: ResultStore | None = None,
    ) -> None:
        limits = limits or Limits()
        self.limiter = Limiter(limits.rate, limits.burst, limits.max_strikes, limits.address_factor)
        self.allowances = Allowances(self.limiter, limits)
        self.store = store
        self.clock = clock
        self.accounts: AccountStore = accounts if accounts is not None else MemoryAccounts()
        self.account_service = Accounts(self.accounts, clock)
        self.metrics = metrics
        self.seeding = Seeding(draw_seed, proofs or ProvenPools(), store, metrics)
        self.idle_room_ms = idle_room_ms  # rooms with nobody connected this long close
        self.tasks = Tasks()
        self.sessions = Sessions(self)
        self.reach: Reach = SessionsReach(self.sessions)  # who is online: this node's sessions
        self.rooms: dict[str, RoomRunner] = {}
        self.adoption = Adoption(self)
        self.connections: set[Peer] = set()
        self.cluster: ClusterHooks | None = None  # several nodes: server/cluster/
        self.history = HistoryKeeper(self)
        self.ratings = RatingKeeper(self)
        self.daily = DailyDeals(clock, self.seeding.proofs, daily)
        self.daily_results: ResultStore = (
            daily_results if daily_results is not None else MemoryResults()
        )
        self.runs = RunKeeper(self)  # daily runs' results, written from their rooms
        self.ghosts = Ghosts(self)  # daily runs' ghost races
        self.challenges: ChallengeStore = MemoryChallenges()
        self.quick = QuickMatch(self)  # "Race now": the ladders' queues

    def use_store(self, store: Store) -> None:
        """The store, connected once the event loop runs (server/app.py): the
        proven seeds live there too."""
        self.store = store
        self.seeding.proofs.use(store)

    def use_accounts(self, accounts: AccountStore) -> None:
        """The account store, connected once the event loop runs (server/app.py)."""
        self.accounts = self.account_service.store = accounts

    def use_daily(self, daily: DailyStore) -> None:
        """The daily store, connected once the event loop runs (server/app.py)."""
        self.daily.use(daily)

    def use_daily_results(self, results: ResultStore) -> None:
        """The daily runs' results, connected once the event loop runs."""
        self.daily_results = results

    # ------------------------------------------------------------------ runners

    def draw_seed(self) -> str:
        return self.seeding.draw()

    async def proven_seed(self, rules: DealRules, dry: Callable[[], None]) -> tuple[str, str]:
        return await self.seeding.proven(rules, dry)

    def want_proven(self, rules: DealRules) -> None:
        self.seeding.proofs.want(rules)

    def peer_of(self, player: str) -> Peer | None:
        return self.sessions.peer_of(player)

    def connected(self, player: str) -> bool:
        return self.sessions.peer_of(player) is not None

    def writer(self, code: str) -> Writer:
        """How a runner made now appends to ``code``'s log: with several nodes,
        fenced by this incarnation's lease token (the cluster's); alone, plainly."""
        if self.cluster is not None:
            return self.cluster.writer(code)
        store = self.store

        def append(records: Sequence[bytes]) -> Awaitable[int]:
            return store.append(code, records)

        return append

    def runner(self, room: Room, durable: DurableLog) -> RoomRunner:
        return RoomRunner(self, room, durable)

    def after_commit(self, runner: RoomRunner, decision: Decision) -> None:
        """Keep sessions in step with membership: who left, who was removed, and
        everyone when the room closes; a daily run's ghosts start and stop."""
        if runner.room.daily is not None:
            self.ghosts.after_commit(runner, decision)
        for record in decision.records:
            if isinstance(record, (R.Left, R.Removed)):
                self.sessions.set_room(record.player, None)
            elif isinstance(record, R.Closed):
                for pid in list(runner.room.members):
                    self.sessions.set_room(pid, None)
                self.rooms.pop(runner.code, None)
                runner.stop()
                self.tasks.spawn(self._forget_room(runner.code))

    def keeping(self, room: Room, decision: Decision) -> Release | None:
        """A deal over for everyone, or a round over, joins its players' history;
        a daily run over, its daily's results; a rated round over changes its
        players' ratings."""
        kept: list[Release] = []
        try:
            history = self.history.built(room, decision)
            if history is not None:
                kept.append(history)
            result = self.runs.built(room, decision)
            if result is not None:
                kept.append(lambda: self.runs.keep(result))
        except Exception:  # a bug: the room goes on, its rebuild writes it again
            log.exception("room %s: history not built", room.code)
        try:
            rated = self.ratings.built(room, decision)
            if rated is not None:
                kept.append(rated)
        except Exception:  # a bug: the room goes on, its rebuild rates it again
            log.exception("room %s: rated round not built", room.code)
        if not kept:
            return None

        def release() -> None:
            for r in kept:
                r()

        return release

    async def tell_room(self, code: str, event: Callable[[int], Message]) -> None:
        runner = self.rooms.get(code)
        if runner is None:
            return

        def make() -> Release:
            room = runner.room
            fan = Fanout(room.seq, event(room.seq))
            members = dict(room.members)
            return lambda: runner.fanout([fan], members)

        await runner.read(make)

    async def _forget_room(self, code: str) -> None:
        # A daily run's log is kept until its result is written: a rebuild of
        # the closed room writes it then (server/service/adoption.py).
        await self.runs.settled(code)
        if not self.runs.written(code):
            log.warning("room %s closed; its log is kept until its daily result is written", code)
            return
        try:
            await self.store.close_room(code)
        except StoreUnavailable:
            log.warning("room %s closed but the store could not forget it", code)

    # ------------------------------------------------------------------ rooms

    async def recover(self) -> None:
        """Rebuild every open room from its log (after a restart, or a crash of
        another node); with several nodes, only those this node may run."""
        for code in await self.store.open_rooms():
            if code not in self.rooms:
                await self.adoption.adopt(code)

    async def stop(self) -> None:
        """At shutdown: give up rebuilds under way, stop every runner, and let
        the history writes under way end before the account store closes."""
        await self.adoption.stop()
        self.quick.stop()
        await self.daily.stop()
        self.ghosts.stop()
        for runner in self.rooms.values():
            runner.stop()
        await self.seeding.proofs.close()
        await self.history.stop()
        await self.ratings.stop()
        await self.runs.stop()

    def role_of(self, conn: Peer) -> str:
        session = conn.session
        if session is None or session.room_code is None:
            return "none"
        runner = self.rooms.get(session.room_code)
        member = runner.room.members.get(session.player) if runner else None
        return member.role.value if member is not None else "none"

    # ------------------------------------------------------------------ connections

    async def handle(self, conn: Peer, req: Request) -> None:
        await dispatch(self, conn, req)

    async def disconnected(self, conn: Peer) -> None:
        self.connections.discard(conn)
        if self.cluster is not None:
            self.cluster.disconnected(conn)
        session = self.sessions.detach(conn)
        if session is None:
            return  # never said hello, or resumed elsewhere
        self.quick.dropped(session.player, conn)
        runner = self.rooms.get(session.room_code) if session.room_code else None
        if runner is None:
            self.sessions.forget_if_idle(session)
            return
        try:
            await runner.run(presence(session.player, False))
        except RoomError as exc:
            log.warning("presence of %s not recorded: %s", session.player, exc.message)

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

    def in_queue(self, player: str) -> bool:
        return self.quick.queued(player)

    async def link_session(self, session: SessionState, code: str) -> None:
        await self.sessions.link(session, code)

    def save_session(self, session: SessionState) -> None:
        self.sessions.save(session)
