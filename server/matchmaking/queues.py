"""The quick-match shell: a queue per ladder, the matchmaker run over it, and
the rooms it forms made, filled and started by the server.

The queues are kept in the *book* (server/matchmaking/book.py): in memory on a
single node, in Redis for a cluster, so that players connected to different
nodes race in one room. Leaving is instant and a player's queue dies with their
connection: a player is in at most one queue or room (``already_queued``,
``already_in_room``). The matchmaker runs when someone queues and every
:data:`PASS_MS` while anyone of this node waits (on the server's clock, so a
test moves it by hand), one node at a time; the node that forms a room makes it
and tells each player through the node that holds their connection. A room
it forms is rated, on the ladder's rules (:func:`quick_settings`), its players
seated by the server; it starts by itself :data:`COUNTDOWN_MS` after,
announced by ``matched`` and a ``countdown`` event. When is in its ``created``
record, and the room's timer starts it (server/rooms/timer.py): a room rebuilt
after its node died, here or on another node, starts on time all the same.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from protocol import messages as M
from protocol.messages import ErrorCode, Role
from protocol.settings import Variant
from protocol.strategy import Pace

from .. import ids
from ..accounts.service import Accounts
from ..accounts.store import AccountStore
from ..core import decide as D
from ..core.values import RoomError
from ..core.views import room_view
from ..peer import Peer, SessionState
from ..ratings.model import Rating, every_ladder, shown
from ..rooms.handlers import Front, open_room
from ..rooms.runner import Release, RoomRunner
from ..store.base import StoreUnavailable
from .book import Entry, LocalBook, QueueBook, Removal, position_of
from .match import BOTS_AFTER_S, Waiter, bots_offered, form_rooms

__all__ = ["COUNTDOWN_MS", "PASS_MS", "QUICK_DEALS", "QuickMatch", "Waiting", "quick_settings"]

log = logging.getLogger("klondike_race.quick")

PASS_MS = 1_000  # the matchmaker's pass while anyone waits: windows widen by the second
COUNTDOWN_MS = 5_000  # from matched to the first deal
QUICK_DEALS = 3  # a quick match is a short round
BOT_RIVALS = 2  # racing bots instead: two of them, unrated


def quick_settings(ladder: str, rated: bool) -> dict[str, Any]:
    """A quick-match room's settings: the ladder's variant and draw, Standard
    scoring (the default), a round of :data:`QUICK_DEALS` deals."""
    variant, _, draw = ladder.partition("-draw")
    return {
        "variant": Variant(variant).value,
        "draw": int(draw),
        "deals_per_round": QUICK_DEALS,
        "rated": rated,
    }


class Spawner(Protocol):
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None: ...


class Home(Front, Protocol):
    """What the quick match needs of the service."""

    @property
    def tasks(self) -> Spawner: ...

    accounts: AccountStore  # the ratings a player queues at
    account_service: Accounts  # where a player's room is kept

    async def tell_room(self, code: str, event: Callable[[int], M.Message]) -> None: ...

    def save_session(self, session: SessionState) -> None: ...


@dataclass(slots=True)
class Waiting:
    """A player of this node in a queue: whom to seat and tell once matched."""

    session: SessionState
    peer: Peer
    entry: Entry
    booked: bool = False  # in the book (a join reserves the place here first)
    offered: bool = False


class QuickMatch:
    def __init__(self, home: Home) -> None:
        self.home = home
        self.book: QueueBook = LocalBook()  # with Redis, the cluster's (one for all nodes)
        # This node's players in a queue, or taken from it for a room they have
        # not been told of yet: either way not free (a room of their own now
        # would make two).
        self.entries: dict[str, Waiting] = {}
        self._passes: asyncio.Task[None] | None = None
        self._pass = asyncio.Lock()

    def queued(self, player: str) -> bool:
        """In a queue, or matched and being seated: either way not free."""
        return player in self.entries

    async def join(self, rid: M.RequestId, conn: Peer, session: SessionState, ladder: str) -> None:
        """Queue ``session`` on ``ladder`` at its shown rating there, answer
        ``queued``, and match at once (``matched`` follows the answer)."""
        if ladder not in every_ladder():
            known = ", ".join(every_ladder())
            raise RoomError(ErrorCode.BAD_REQUEST, f"no ladder is named {ladder!r:.40}: {known}")
        if session.account is None:
            raise RoomError(
                ErrorCode.NOT_SIGNED_IN, "quick match is rated: take a handle first, or add bots"
            )
        self._free(session)
        stored = await self.home.accounts.ratings(ladder, [session.player])
        self._free(session)  # again: a room or a queue may have taken them meanwhile
        rating = shown(stored.get(session.player, Rating()))
        now = self.home.clock.now()
        entry = Entry(
            session.player, session.name, ladder, rating, now, self.book.node, ids.new_id()
        )
        waiting = self.entries[session.player] = Waiting(session, conn, entry)
        try:
            everyone = await self.book.put(entry)
        except BaseException:
            if self.entries.get(session.player) is waiting:
                del self.entries[session.player]
            raise
        conn.send(M.queued(rid, ladder=ladder, position=position_of(everyone, entry), waited=0))
        self.home.tasks.spawn(self.pass_now())  # a rival may be waiting already
        self._passes_running()

    def _free(self, session: SessionState) -> None:
        if session.room_code is not None:
            raise RoomError(ErrorCode.ALREADY_IN_ROOM, "leave your room first")
        if self.queued(session.player):
            raise RoomError(ErrorCode.ALREADY_QUEUED, "you wait in a queue already")

    async def leave(self, player: str) -> None:
        """Out of the queue at once, for every node; nothing to undo. Once
        matched it is too late: the room is being made, and ``matched`` follows."""
        waiting = self.entries.get(player)
        if waiting is None:
            raise RoomError(ErrorCode.NOT_QUEUED, "you wait in no queue")
        if await self.book.remove(player, waiting.entry.ticket) is Removal.MATCHED:
            raise RoomError(ErrorCode.NOT_QUEUED, "you are matched already: your room follows")
        if self.entries.get(player) is waiting:
            del self.entries[player]

    def dropped(self, player: str, conn: Peer) -> None:
        """The connection the player queued from closed: they wait no longer
        (matched already, their room is kept on their account: they resume in it)."""
        waiting = self.entries.get(player)
        if waiting is None or waiting.peer is not conn:
            return
        del self.entries[player]
        self.home.tasks.spawn(self.book.remove(player, waiting.entry.ticket))

    async def accept_bots(self, player: str) -> None:
        """Out of the queue, into a room of bots (unrated) that starts after the
        countdown like any quick match."""
        waiting = self.entries.get(player)
        if waiting is None:
            raise RoomError(ErrorCode.NOT_QUEUED, "you wait in no queue")
        waited = (self.home.clock.now() - waiting.entry.since) / 1000
        if not bots_offered(waited):
            raise RoomError(
                ErrorCode.BOTS_NOT_YET,
                f"bots are offered after {BOTS_AFTER_S:g} s alone in the queue",
                after=BOTS_AFTER_S,
            )
        if not await self.book.take([waiting.entry]):
            raise RoomError(ErrorCode.NOT_QUEUED, "you are matched already: your room follows")
        self._seat(waiting.entry.ladder, [waiting.entry], rated=False)

    # ------------------------------------------------------------------ passes

    def _passes_running(self) -> None:
        if self._passes is None or self._passes.done():
            self._passes = asyncio.get_running_loop().create_task(self._run_passes())

    async def _run_passes(self) -> None:
        """While anyone of this node waits: a pass every :data:`PASS_MS` (each
        node whose players wait takes its turn; one at a time forms rooms)."""
        while self.entries:
            try:
                await self.pass_now()
            except StoreUnavailable as exc:
                log.warning("quick-match pass: %s", exc)
            except RoomError as exc:
                log.warning("quick-match pass: %s", exc.message)
            if not self.entries:
                break
            await self.home.clock.sleep_until(self.home.clock.now() + PASS_MS)

    async def pass_now(self) -> None:
        """One pass of the matchmaker over every ladder's queue, if it is this
        node's turn; this node's players kept in the queue, and offered bots
        once alone long enough."""
        async with self._pass:
            await self._keep_mine()
            if await self.book.lead():
                try:
                    await self._form_rooms()
                finally:
                    await self.book.done_leading()
            now = self.home.clock.now()
            for waiting in list(self.entries.values()):
                entry = waiting.entry
                if not waiting.offered and bots_offered((now - entry.since) / 1000):
                    waiting.offered = True
                    waiting.peer.send(
                        M.bots_offered(ladder=entry.ladder, waited=(now - entry.since) / 1000)
                    )

    async def _keep_mine(self) -> None:
        """Refresh this node's entries (a node that dies leaves the queue: its
        entries lapse). One neither queued nor matched any more lapsed while this
        node could not refresh it, or was told of a room the message for which
        was lost: its connection is closed, and its resume says which (a room,
        or none)."""
        mine = [w.entry for w in self.entries.values() if w.booked]
        if not mine:
            return
        tickets = {e.player: e.ticket for e in mine}
        for player in await self.book.refresh(mine):
            waiting = self.entries.get(player)
            if waiting is not None and waiting.entry.ticket == tickets[player]:
                del self.entries[player]
                waiting.peer.close(M.CloseCode.GOING_AWAY, "the queue lost your place; resume")

    async def _form_rooms(self) -> None:
        now = self.home.clock.now()
        everyone = await self.book.entries()
        for ladder in sorted({e.ladder for e in everyone}):
            queue = {e.player: e for e in everyone if e.ladder == ladder}
            waiters = [Waiter(e.player, e.rating, (now - e.since) / 1000) for e in queue.values()]
            for group in form_rooms(waiters):
                entries = [queue[w.player] for w in group]
                if await self.book.take(entries):
                    self._seat(ladder, entries, rated=True)

    def stop(self) -> None:
        if self._passes is not None:
            self._passes.cancel()

    # ------------------------------------------------------------------ rooms

    def _seat(self, ladder: str, players: list[Entry], rated: bool) -> None:
        async def seat() -> None:
            if await self._make_room(ladder, players, rated):
                return
            # The store failed us: they wait on, where they were; those of this
            # node who left meanwhile leave now.
            await self.book.put_back(players)
            for e in players:
                waiting = self.entries.get(e.player)
                if e.node == self.book.node and (waiting is None or waiting.entry != e):
                    await self.book.remove(e.player, e.ticket)
            self._passes_running()

        self.home.tasks.spawn(seat())

    async def _make_room(self, ladder: str, players: list[Entry], rated: bool) -> bool:
        """Make the room, seat ``players`` (and bots, unrated), tell each (on
        the node that holds their connection), and start it after the
        countdown; False when the room could not be made."""
        home = self.home
        settings = quick_settings(ladder, rated)
        signed = frozenset(e.player for e in players)
        host = players[0]
        starts_at = home.clock.now() + COUNTDOWN_MS

        async def make(runner: RoomRunner) -> RoomRunner:
            await runner.run(
                lambda r, c: D.decide_create(
                    r, host.player, host.name, settings, c, signed, starts_at=starts_at
                )
            )
            for e in players[1:]:
                await runner.run(
                    lambda r, c, e=e: D.decide_join(
                        r, e.player, e.name, Role.PLAYER, c, signed=signed
                    )  # type: ignore[misc]
                )
            if not rated:
                for _ in range(BOT_RIVALS):
                    bot = "b" + ids.new_id()
                    await runner.run(
                        lambda r, c, b=bot: D.decide_add_bot(r, host.player, b, Pace.STEADY, c)  # type: ignore[misc]
                    )
            # Each player's account holds the room before ``matched`` tells them
            # so: a kill -9 after it, a message to their node lost, a dropped
            # connection, and they resume into it all the same.
            for e in players:
                await home.account_service.save_room(e.player, runner.code)
            return runner

        try:
            runner = await open_room(home, make)
        except (RoomError, StoreUnavailable) as exc:
            log.warning("quick-match room not made: %s", exc)
            return False
        code = runner.code

        def tell() -> Release:
            now = home.clock.now()
            sends = []
            for e in players:
                view = room_view(runner.room, e.player, now, runner.seeds.finding)
                msg = M.matched(ladder=ladder, rated=rated, room=view, starts_at=starts_at)
                sends.append((e, msg))

            def send() -> None:
                here = []
                for e, msg in sends:
                    if e.node == self.book.node:
                        self.arrived(e.player, e.ticket, code, self.book.node, msg)
                        here.append(e)
                    else:
                        self.book.tell(e, code, msg)
                home.tasks.spawn(self._told(here))

            return send

        await runner.read(tell)
        home.tasks.spawn(home.tell_room(code, lambda seq: M.countdown(seq, starts_at=starts_at)))
        return True

    def arrived(self, player: str, ticket: str, code: str, node: str, message: M.Message) -> None:
        """``matched`` for a player of this node (queued with ``ticket``), from
        ``node`` (this one, or the node that made the room): they are in room
        ``code`` now, and free of the queue (the book is told by the caller
        for this node's rooms)."""
        waiting = self.entries.get(player)
        if waiting is not None and waiting.entry.ticket == ticket:
            del self.entries[player]
            session, peer = waiting.session, waiting.peer
            session.room_code = code
            self.home.save_session(session)
            if node != self.book.node and peer.session is session and not peer.closing:
                self.book.follow(peer, node)
            peer.send(message)
        elif node == self.book.node:  # gone meanwhile: they resume in the room
            self.home.tasks.spawn(self.home.account_service.save_room(player, code))
        if node != self.book.node:
            self.home.tasks.spawn(self.book.told(player, ticket))

    async def _told(self, entries: list[Entry]) -> None:
        for e in entries:
            await self.book.told(e.player, e.ticket)
