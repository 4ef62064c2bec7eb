"""One live room in the shell: its commit pipeline, fan-out and timers.

"Acknowledged means durable": nobody learns anything of a command — its reply,
its events, not even a refusal — before the store holds its records and those of
every command before it. Holding the room from decide until the append returns
would keep that, but caps a room at one command per store round trip (an fsync,
with Redis). So a room **pipelines** its commands; :meth:`RoomRunner.run`:

1. decides (pure, read-only: server/core/decide.py) against the live room, which
   already holds every command decided before, durable or not;
2. commits at once (folds the records in: server/core/room.py), builds the reply and
   the events, and queues them with the records — nothing is sent yet;
3. appends: one append per room is on its way at a time, and the records of
   every command decided meanwhile wait and go together, in order, in the next
   one (group commit within the room; the Redis store also groups across rooms).
   Until the store actually sends an append, more records may join it
   (:meth:`Store.joinable`): one script call, one fate;
4. releases, once an append returns, the commands it made durable and the
   record-free ones queued between them, in decision order: for each, the reply
   to the requester, then the events to every member, all synchronously (no await
   in between), so each connection sees a reply before the events it caused, and
   every event in seq order.

Invariants:

- Decide and commit run without an await between them, so a room's commands are
  strictly serialized: seq order is decision order is log order.
- Appends of one room never overlap (joined ones are one write), so the log
  holds records in decision order, and none is written after one that failed.
- Nothing is visible before it is durable. A refusal, or an answer read from the
  room (a checkpoint request, welcome, timed tick: :meth:`RoomRunner.read`), is queued behind
  the commands before it, since it may depend on them. (With nothing queued, a
  refusal is raised at once, as ever.)
- A failed append (StoreUnavailable, LeaseLost) refuses every command after the
  last durable one with ``storage_unavailable`` and puts the room back in exactly
  its durable state (server/core/durable.py), the state a restart would rebuild; reads
  queued behind are answered from that state. A store fails an append only once it
  knows nothing of it was written, nor ever will be: one whose reply was lost is
  resolved first (server/store/redis.py), however long Redis takes to come back,
  and its commands wait. Should the outcome stay unknown (the store closed first:
  StoreUncertain), its commands hear ``storage_uncertain`` and the runner stops.
- With a store whose appends are done on return (the in-memory store), a command
  is decided, stored, committed and released before the next one is looked at.
- A runner writes only as the incarnation it was made for (:meth:`Venue.writer`).
  With several nodes that is a lease token of its own, checked by the store on
  every append, so a runner that was stopped, replaced or forgotten cannot add a
  record to the log even if something still calls it.

**Compaction.** After a command whose records end a deal or start a round (or
once ``CHECKPOINT_EVERY`` records came since the last one), the runner writes a
checkpoint of the room right behind its records, in the same append
(server/core/records.py): it is the room as those records left it, so it is right
whether or not they become durable, and it goes or stays with them. Once it is
durable, the store is asked to drop every record before it
(:meth:`Store.compact`, which checks that the checkpoint is there); one compaction
at a time, the latest durable checkpoint. A crash between the two leaves a longer
log, folded from its last checkpoint all the same. So a room's log in the store
holds a checkpoint and the records of about one deal, however long it has played,
and taking it over costs that much.

**Beyond the room.** What a command adds to its players' records (a deal over,
a round over: server/accounts/keeping.py) is built right after its commit, from
the room as the command left it (later commands may change the room before it is
durable), and handed over once it is durable, after its events: never for a
command that is rolled back (:meth:`Venue.keeping`).

**Bots.** The runner plays for the room's bot members (server/rooms/bots.py): a
driver per bot, started and stopped as the members change (after each command
released), all stopped with the runner. Their moves are commands like anyone's.

Fan-out only queues bytes on each connection (server/net/connection.py), which writes
them at the next pass of the event loop; a slow reader is cut off there and never
holds the room up.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from protocol.messages import CloseCode
from protocol.settings import DealRules, Deals
from protocol.wire import encode

from ..core import records as R
from ..core.decide import Ctx, decide_tick
from ..core.durable import DurableLog
from ..core.records import Decision, encode_record
from ..core.room import Room
from ..core.values import Fanout, Member, RoomError, RoomState, SeedWanted
from ..net.clock import Clock
from ..peer import Peer
from ..store.base import Store, StoreUnavailable, StoreUncertain, unavailable, uncertain
from .bots import BotSeats
from .memo import ViewMemo
from .seeds import DealSeeds
from .timer import Release, RoomTimer

__all__ = ["Read", "Release", "Reply", "RoomRunner", "Venue", "Writer"]

log = logging.getLogger("klondike_race.room")

CHECKPOINT_EVERY = 2000
"""Records after which a checkpoint is written even in the middle of a deal (a long
deal of many players, or a lobby that sees many comings and goings)."""
_CHECKPOINT_AFTER: frozenset[type] = frozenset((R.DealEnded, R.RoundStarted))
_MOVE_ONLY: frozenset[type] = frozenset((R.MovePlayed,))  # changes no deadline

# Release (from the timer, which needs it too): sends what was prepared; called
# once the command is durable.
Reply = Callable[[Decision], Release]
"""Builds a command's reply right after its commit (the room as the command left
it) and returns how to send it: later commands may have changed the room by the
time it is durable."""
Read = Callable[[], Release]
"""Builds an answer from the room as it stands; see :meth:`RoomRunner.read`."""
Writer = Callable[[Sequence[bytes]], Awaitable[int]]
"""Appends records to one room's log on behalf of one runner (see
:meth:`Venue.writer`): :meth:`Store.append` bound to the room and, with several
nodes, to the lease token of this runner's incarnation."""


class Venue(Protocol):
    """What a runner needs of the server around it (server/service/ ``Service``
    is one): a protocol, so that the runner imports nothing above it."""

    store: Store
    clock: Clock
    idle_room_ms: int

    def draw_seed(self) -> str: ...

    async def proven_seed(self, rules: DealRules, dry: Callable[[], None]) -> tuple[str, str]:
        """A seed proven winnable under ``rules`` and its line (server/rooms/proofs.py),
        waiting while the pool is dry: ``dry()`` is called once if it must wait.
        Raises ``storage_unavailable`` (RoomError) when none can be had."""

    def want_proven(self, rules: DealRules) -> None:
        """Keep proven seeds for ``rules`` ready (a room turned winnable on)."""

    def peer_of(self, player: str) -> Peer | None:
        """The connection that speaks for ``player`` now, if any."""

    def writer(self, code: str) -> Writer:
        """How a runner made now appends to the room's log. Asked once, when the
        runner is made, so that it writes as that incarnation for good: once the
        room has been rebuilt again (here or elsewhere) the store refuses it."""

    def after_commit(self, runner: RoomRunner, decision: Decision) -> None:
        """Keep sessions in step with a command now durable (who left, closes)."""

    def keeping(self, room: Room, decision: Decision) -> Release | None:
        """What is kept of a command beyond the room (its players' history),
        built right after its commit, from the room as the command left it; the
        call returned runs once the command is durable (never, if it is not)."""


@dataclass(slots=True, eq=False)
class _Entry:
    """One command (or read) waiting for its records, and those before, to be durable."""

    end: int  # the room's record count once this entry's records are in
    decision: Decision | None = None
    release: Release | None = None  # the reply
    events: list[Fanout] = field(default_factory=list)
    recipients: dict[str, Member] = field(default_factory=dict)
    error: BaseException | None = None
    read: Read | None = None  # for a read: how to answer again after a rollback
    kept: Release | None = None  # see Venue.keeping
    released: bool = False
    # For whoever waits for the entry, made only when it is not released at once
    # (with the in-memory store every entry is released before anyone waits).
    future: asyncio.Future[None] | None = None

    async def wait(self) -> None:
        """Until released; raises the entry's refusal."""
        if not self.released:
            self.future = asyncio.get_running_loop().create_future()
            await self.future
        elif self.error is not None:
            raise self.error


class RoomRunner:
    """Runs one room in this process: the only object that changes its
    :class:`Room`, one command at a time; see the module docstring."""

    def __init__(self, venue: Venue, room: Room, durable: DurableLog | None = None) -> None:
        self.venue = venue
        self.room = room  # live: every command decided so far, durable or not
        self.durable = durable if durable is not None else DurableLog.empty(room.code)
        self.memo = ViewMemo()  # what its views built, kept for the next time
        self.appends = 0  # batches sent to the store (the batching test counts them)
        self._queue: deque[_Entry] = deque()
        self._unsent: list[bytes] = []  # records committed, waiting for the next append
        self._sending: list[list[bytes]] = []  # appends in flight: one, or joined
        self._epoch = 0  # bumped by a rollback: appends sent before it are moot
        self._paused = False  # see _release
        self._stopped = False
        self._write = venue.writer(room.code)  # this incarnation's, for good
        # Checkpoints written and not compacted to yet: (epoch, index in the log, bytes).
        self._checkpoints: list[tuple[int, int, bytes]] = []
        self._last_checkpoint = self.durable.head or 0  # index of the last one, about
        self._compacting = False
        self.compactions = 0  # done (the tests count them)
        # They hold this runner weakly: a strong reference back would make the
        # room's whole graph a cycle, kept once it closes until a full collection
        # (every half hour: server/collector.py), where reference counts free it.
        me = weakref.proxy(self)
        self.timer = RoomTimer(me)
        self.bots = BotSeats(me)  # started by the first command released (a rebuild's too)
        self.seeds = DealSeeds(me)  # deals: winnable

    @property
    def code(self) -> str:
        return self.room.code

    @property
    def clock(self) -> Clock:
        return self.venue.clock

    @property
    def idle_room_ms(self) -> int:
        return self.venue.idle_room_ms

    def ctx(self) -> Ctx:
        seeds = self.seeds
        return Ctx(self.venue.clock.now(), self.venue.draw_seed, seeds.proven, seeds.coming)

    @property
    def pending(self) -> int:
        """Commands (and reads) decided but not released yet: waiting for the store."""
        return len(self._queue)

    # ------------------------------------------------------------------ commands

    async def run(
        self, decide: Callable[[Room, Ctx], Decision], reply: Reply | None = None
    ) -> Decision:
        """Decide, commit, append, release: see the module docstring. Returns once
        the command is released; raises its refusal (RoomError) likewise.

        A decision that would deal a ``deals: winnable`` deal with no proven seed
        in hand (``Decision.wanted``) commits nothing: the command waits for one
        (the seeds' wait, :class:`DealSeeds`, told to the room while the pool is
        dry) and is decided again on the room as it is then, in this loop. Only
        decisions that would deal wait; a late friend's join, a member's presence,
        the host's settings are decided meanwhile, so the deal, decided after
        them, deals the friend in."""
        taken: list[tuple[SeedWanted, tuple[str, str], int | None]] = []
        dealt = False
        try:
            while True:
                ctx = self.ctx()
                if self.room.due(ctx.now):  # the timer may be late: time runs out first
                    # A tick that wants a seed commits nothing: the timer's own
                    # tick waits for it, and the command is not held behind it.
                    self._submit(decide_tick, None, ctx)
                entry = self._submit(decide, reply, ctx)
                if not isinstance(entry, SeedWanted):
                    break
                if self.seeds.gate is not None:  # another command takes one: then again
                    await asyncio.shield(self.seeds.gate)
                    continue
                got = await self.seeds.take(entry)
                taken.append((entry, got, self.seeds.finding))
            settings = self.room.settings
            # Warm the pool before the room deals (a daily run's one deal is the day's).
            if settings.deals is Deals.WINNABLE and self.room.daily is None:
                self.venue.want_proven(settings.deal_rules())
            await entry.wait()
            assert entry.decision is not None
            dealt = any(isinstance(r, R.DealStarted) for r in entry.decision.records)
            return entry.decision
        finally:
            for wanted, got, told in taken:
                self.seeds.settle(wanted.rules, got, None if dealt else told)

    async def read(self, make: Read) -> None:
        """Answer from the room as of every command decided so far, once those are
        durable: ``make`` builds the answer now, its result sends it then. Never
        refused: after a failed append ``make`` runs again on the durable room."""
        entry = self.queue_read(make)
        if entry is not None:
            await entry.wait()

    def queue_read(self, make: Read) -> _Entry | None:
        """:meth:`read` without waiting for it: the entry queued, or None if sent."""
        if not self._queue:
            make()()
            return None
        entry = _Entry(self.room.n_records, read=make)
        entry.release = make()
        self._queue.append(entry)
        return entry

    def _submit(
        self, decide: Callable[[Room, Ctx], Decision], reply: Reply | None, ctx: Ctx
    ) -> _Entry | SeedWanted:
        """Decide and commit a command, queued behind those before it; or, when
        it waits for a proven seed, nothing but what it wants."""
        if self._stopped:
            # Someone still holds this runner (a request that began before the
            # room moved or closed). The store would refuse its records anyway
            # (its writer's fence is stale); say so before deciding anything.
            raise unavailable("this room is not run here any more")
        room = self.room
        try:
            decision = decide(room, ctx)
        except RoomError as exc:
            if not self._queue:
                raise
            entry = _Entry(room.n_records, error=exc)  # decided on undurable state
            self._queue.append(entry)
            return entry
        if decision.wanted is not None:
            return decision.wanted
        entry = _Entry(room.n_records, decision)
        kinds = {type(r) for r in decision.records}  # one pass, for the checks below
        if decision.records:
            data = [encode_record(r) for r in decision.records]
            entry.recipients = dict(room.members)  # removed members learn of it too
            entry.events = self._commit(decision)
            entry.kept = self.venue.keeping(self.room, decision)
            if R.DealStarted in kinds:
                self.seeds.dealt(decision.records)
            data += self._checkpoint_after(kinds)
            entry.recipients.update(self.room.members)
            entry.end = self.room.n_records
            self._unsent.extend(data)
        if reply is not None:
            try:
                entry.release = reply(decision)
            except Exception as exc:  # a bug: the records stand, the requester hears of it
                log.exception("room %s: building a reply failed", self.code)
                entry.error = exc
        self._queue.append(entry)
        self._pump()
        if kinds - _MOVE_ONLY:
            self.timer.arm()  # a move alone changes no deadline; what comes with it may
        return entry

    def _commit(self, decision: Decision) -> list[Fanout]:
        try:
            return self.room.commit(decision, self.durable.round_started)
        except Exception:
            # A bug in the fold left the room half-changed: rebuild it from the
            # durable state and the records still on their way to the store.
            log.exception("room %s: commit failed; rebuilding the room", self.code)
            pending = [r for data in self._sending for r in data]
            self.room = self.durable.restore([*pending, *self._unsent])
            raise

    def _checkpoint_after(self, kinds: set[type]) -> list[bytes]:
        """The checkpoint to append after a decision's records (of ``kinds``), if
        one is due: see "Compaction" in the module docstring."""
        room = self.room
        if room.state == RoomState.CLOSED:
            return []
        due = not kinds.isdisjoint(_CHECKPOINT_AFTER)
        if not due and room.n_records - self._last_checkpoint < CHECKPOINT_EVERY:
            return []
        index = room.n_records
        data = room.take_checkpoint()
        self._last_checkpoint = index
        self._checkpoints.append((self._epoch, index, data))
        return [data]

    def _compact(self) -> None:
        """Ask the store to drop what the latest durable checkpoint covers, unless a
        compaction is on its way (its end asks again) or the store's first record
        is not known any more (a compaction failed: whether it took place is the
        store's to sort out, and the next rebuild counts afresh)."""
        if self._compacting:
            return
        durable = self.durable.length
        # A checkpoint from before a rollback was never durable: its index is reused.
        checkpoints = [s for s in self._checkpoints if s[0] == self._epoch]
        ready = [s for s in checkpoints if s[1] < durable]
        self._checkpoints = [s for s in checkpoints if s[1] >= durable]
        head = self.durable.head
        if not ready or self._stopped or head is None or ready[-1][1] <= head:
            return
        _, index, data = ready[-1]
        self._compacting = True
        future: asyncio.Future[None]
        try:
            future = asyncio.ensure_future(self.venue.store.compact(self.code, index - head, data))
        except Exception as exc:
            future = asyncio.get_running_loop().create_future()
            future.set_exception(exc)
        future.add_done_callback(lambda f: self._compacted(f, index))

    def _compacted(self, future: asyncio.Future[None], index: int) -> None:
        self._compacting = False
        exc = StoreUnavailable("compaction cancelled") if future.cancelled() else future.exception()
        if exc is not None:
            self.durable.head = None
            level = logging.WARNING if isinstance(exc, StoreUnavailable) else logging.ERROR
            log.log(level, "room %s: log not compacted: %s", self.code, exc)
            return
        self.durable.head = index
        self.compactions += 1
        self._compact()  # a later checkpoint may be durable by now

    # ------------------------------------------------------------------ appends

    def _pump(self) -> None:
        """Send the waiting records, unless an append is on its way to the store
        (they go in the next one); release what needs nothing more.

        An append the store has not sent yet still takes more records: they join
        it in the same group commit (:meth:`Store.joinable`), so they share its
        fate and the log stays in order whatever happens."""
        store = self.venue.store
        if self._sending and not store.joinable(self.code):
            return
        if not self._unsent:
            if not self._sending:
                self._release()
            return
        data, self._unsent = self._unsent, []
        if not self._sending:
            self.appends += 1  # a new batch, not one more part of the waiting one
        self._sending.append(data)
        future: asyncio.Future[int]
        try:
            future = asyncio.ensure_future(self._write(data))
        except Exception as exc:  # a store that fails before it returns
            future = asyncio.get_running_loop().create_future()
            future.set_exception(exc)
        epoch = self._epoch
        if future.done():
            self._appended(epoch, future)
        else:
            future.add_done_callback(lambda f: self._appended(epoch, f))

    def _appended(self, epoch: int, future: asyncio.Future[int]) -> None:
        # Retrieved first, whatever happens next: the appends joined into one
        # group commit fail together, the first one rolls back, and the rest
        # would otherwise end as "Future exception was never retrieved" (an
        # ERROR with a traceback, for what is an expected outage).
        exc = StoreUnavailable("append cancelled") if future.cancelled() else future.exception()
        if epoch != self._epoch:
            return  # sent before a rollback, which refused its commands already
        data = self._sending.pop(0)
        if exc is not None:
            if not isinstance(exc, StoreUnavailable):
                log.error("room %s: append failed", self.code, exc_info=exc)
                exc = StoreUncertain(f"append failed: {exc}")  # we cannot tell
            sent = len(data) + sum(len(d) for d in self._sending)  # one fate
            self._fail(exc, self.durable.length + sent)
            return
        self.durable.extend(data)
        self._release()
        self._pump()
        self._compact()

    def _release(self, *, pause: bool = True) -> None:
        """Release, in order, the queued entries that are durable now.

        After a refusal the rest waits one pass of the event loop: its requester
        sends the error frame when it wakes, and that wake-up was scheduled first,
        so the error still goes out before anything decided after it. (``pause``
        false: everything at once, for a rollback.)"""
        if self._paused and pause:
            return
        self._paused = False
        durable = self.durable.length
        queue = self._queue
        while queue and queue[0].end <= durable:
            refused = self._deliver(queue.popleft())
            if pause and refused and queue:
                self._paused = True
                asyncio.get_running_loop().call_soon(self._resume)
                return

    def _resume(self) -> None:
        self._paused = False
        self._release()

    def _deliver(self, entry: _Entry) -> bool:
        """Send one entry's reply and events; True when it woke a refused requester."""
        try:
            if entry.release is not None:
                entry.release()
            if entry.events:
                self.fanout(entry.events, entry.recipients)
            if entry.decision is not None and entry.decision.records:
                self.venue.after_commit(self, entry.decision)
            if entry.kept is not None:
                entry.kept()
            if entry.decision is not None:
                self.bots.sync()  # bots seated or removed; the others look again
        except Exception as exc:
            log.exception("room %s: releasing a command failed", self.code)
            entry.error = entry.error or exc
        entry.released = True
        future = entry.future
        if future is None or future.done():
            return False
        if entry.error is not None:
            future.set_exception(entry.error)
            return True
        future.set_result(None)
        return False

    def _fail(self, exc: BaseException, sent: int) -> None:
        """An append failed: refuse everything not durable, back to the durable room.

        The store says StoreUnavailable only when the records are not written and
        never will be (server/store/redis.py resolves an unknown outcome first), so
        ``storage_unavailable`` is true. StoreUncertain (the store closed before it
        could tell) is said as ``storage_uncertain`` to the commands whose records
        went out (those ending at or before record ``sent``); the ones after them
        were never sent, so they are refused. The room's durable state is unknown
        then, so this runner decides nothing more: the room is rebuilt from the log
        wherever it runs next."""
        self._release(pause=False)  # what was durable before still goes out
        queued, self._queue = self._queue, deque()
        self._unsent, self._sending = [], []
        self._epoch += 1
        self.room = self.durable.restore()
        unknown = isinstance(exc, StoreUncertain)
        if unknown:
            self.stop()
        log.warning(
            "room %s: append failed (%s); %d queued refused, back to record %d",
            self.code,
            exc,
            len(queued),
            self.durable.length,
        )
        for entry in queued:
            if entry.read is not None:
                try:
                    entry.release = entry.read()
                except Exception as err:
                    log.exception("room %s: a read failed", self.code)
                    entry.release, entry.error = None, err
            else:
                decision = entry.decision
                maybe = unknown and decision is not None and bool(decision.records)
                maybe = maybe and entry.end <= sent
                entry.release, entry.events, entry.decision, entry.kept = None, [], None, None
                entry.error = uncertain() if maybe else unavailable()
            self._deliver(entry)
        self.timer.arm()
        self.bots.sync()  # back to the durable room: its bots, and only those

    # ------------------------------------------------------------------ fan-out

    def fanout(self, events: list[Fanout], recipients: dict[str, Member]) -> None:
        """Queue each event on each recipient's connection, every distinct map
        encoded once per frame kind. ``recipients`` are the members before and
        after the command: members it removed still get its events, which is how
        they learn they were removed."""
        conns = []
        for pid, member in recipients.items():
            conn = self.venue.peer_of(pid)
            if conn is not None:
                conns.append((member, conn))
        if not conns:
            return
        # Encoded once per distinct map and subprotocol: by the map's identity
        # (``events`` holds every map alive meanwhile), one table per subprotocol.
        by_kind: tuple[dict[int, bytes | str], dict[int, bytes | str]] = ({}, {})
        for fan in events:
            # A move's progress need not reach anyone at once (the mover has its
            # reply): it may wait to leave with others (docs/protocol.md "Batched
            # events"). Every other event goes now, and takes those waiting along.
            later = fan.everyone.get("type") == "progress"
            for member, conn in conns:
                msg = fan.for_member(member)
                cache = by_kind[conn.binary]
                data = cache.get(id(msg))
                if data is None:
                    try:
                        data = cache[id(msg)] = encode(msg, conn.binary)
                    except Exception:
                        log.exception("room %s: an event could not be encoded", self.code)
                        conn.close(CloseCode.SERVER_ERROR, "the server failed to send to you")
                        continue
                if later:
                    conn.send_later(data)
                else:
                    conn.send_data(data)

    def stop(self) -> None:
        """This runner is done: its room closed, moved to another node, or was
        rebuilt again. Its timer stops (an orphan's idle timer would otherwise
        close the room under its players) and it decides nothing more."""
        self._stopped = True
        self.timer.stop()
        self.bots.stop()
        self.seeds.stop()

    @property
    def stopped(self) -> bool:
        return self._stopped

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<RoomRunner {self.code} {self.room.state} seq={self.room.seq}>"
