"""The quick-match shell on one node: a queue per ladder, the matchmaker run
over it, and the rooms it forms made, filled and started by the server.

Each ladder's queue lives here (not in the store), so leaving is instant and a
player's queue dies with their connection: a player is in at most one queue or
room (``already_queued``, ``already_in_room``). The matchmaker runs when someone
queues and every :data:`PASS_MS` while anyone waits (on the server's clock, so a
test moves it by hand). A room it forms is rated, on the ladder's rules
(:func:`quick_settings`), its players seated by the server; it starts by itself
:data:`COUNTDOWN_MS` after, announced by ``matched`` and a ``countdown`` event.
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
from ..accounts.store import AccountStore
from ..core import decide as D
from ..core.room import Room
from ..core.values import RoomError
from ..core.views import room_view
from ..peer import Peer, SessionState
from ..ratings.model import Rating, every_ladder, shown
from ..rooms.handlers import Front, reserve_code
from ..rooms.runner import Release, RoomRunner
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

    async def tell_room(self, code: str, event: Callable[[int], M.Message]) -> None: ...

    def save_session(self, session: SessionState) -> None: ...


@dataclass(slots=True)
class Waiting:
    """A player's place in a queue: whom to seat and tell once matched."""

    session: SessionState
    peer: Peer
    ladder: str
    rating: int
    since: int  # server ms
    offered: bool = False


class QuickMatch:
    def __init__(self, home: Home) -> None:
        self.home = home
        self.entries: dict[str, Waiting] = {}  # player -> their place in a queue
        # Taken from the queue for a room not made yet: still in no room, but
        # neither free (a room of their own now would make two).
        self.seating: set[str] = set()
        self._passes: asyncio.Task[None] | None = None

    def queued(self, player: str) -> bool:
        """In a queue, or matched and being seated: either way not free."""
        return player in self.entries or player in self.seating

    def _waiters(self, ladder: str, now: int) -> list[Waiter]:
        return [
            Waiter(p, e.rating, (now - e.since) / 1000)
            for p, e in self.entries.items()
            if e.ladder == ladder
        ]

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
        self.entries[session.player] = Waiting(session, conn, ladder, rating, now)
        conn.send(self.queued_reply(rid, session.player))
        self.pass_now()  # a rival may be waiting already
        self._passes_running()

    def _free(self, session: SessionState) -> None:
        if session.room_code is not None:
            raise RoomError(ErrorCode.ALREADY_IN_ROOM, "leave your room first")
        if self.queued(session.player):
            raise RoomError(ErrorCode.ALREADY_QUEUED, "you wait in a queue already")

    def queued_reply(self, rid: M.RequestId, player: str) -> M.Message:
        entry = self.entries[player]
        now = self.home.clock.now()
        order = sorted(self._waiters(entry.ladder, now), key=lambda w: (-w.waited, w.player))
        position = 1 + [w.player for w in order].index(player)
        return M.queued(
            rid, ladder=entry.ladder, position=position, waited=(now - entry.since) / 1000
        )

    def leave(self, player: str) -> None:
        """Out of the queue at once; nothing to undo. Once matched it is too
        late: the room is being made, and ``matched`` follows."""
        if player in self.seating:
            raise RoomError(ErrorCode.NOT_QUEUED, "you are matched already: your room follows")
        if self.entries.pop(player, None) is None:
            raise RoomError(ErrorCode.NOT_QUEUED, "you wait in no queue")

    def dropped(self, player: str, conn: Peer) -> None:
        """The connection the player queued from closed: they wait no longer."""
        entry = self.entries.get(player)
        if entry is not None and entry.peer is conn:
            del self.entries[player]

    def accept_bots(self, player: str) -> None:
        """Out of the queue, into a room of bots (unrated) that starts after the
        countdown like any quick match."""
        entry = self.entries.get(player)
        if entry is None:
            raise RoomError(ErrorCode.NOT_QUEUED, "you wait in no queue")
        waited = (self.home.clock.now() - entry.since) / 1000
        if not bots_offered(waited):
            raise RoomError(
                ErrorCode.BOTS_NOT_YET,
                f"bots are offered after {BOTS_AFTER_S:g} s alone in the queue",
                after=BOTS_AFTER_S,
            )
        del self.entries[player]
        self._seat(entry.ladder, [entry], rated=False)

    # ------------------------------------------------------------------ passes

    def _passes_running(self) -> None:
        if self._passes is None or self._passes.done():
            self._passes = asyncio.get_running_loop().create_task(self._run_passes())

    async def _run_passes(self) -> None:
        while self.entries:
            self.pass_now()
            if not self.entries:
                break
            await self.home.clock.sleep_until(self.home.clock.now() + PASS_MS)

    def pass_now(self) -> None:
        """One pass of the matchmaker over every ladder's queue."""
        now = self.home.clock.now()
        for ladder in sorted({e.ladder for e in self.entries.values()}):
            for group in form_rooms(self._waiters(ladder, now)):
                self._seat(ladder, [self.entries.pop(w.player) for w in group], rated=True)
        for entry in self.entries.values():
            if not entry.offered and bots_offered((now - entry.since) / 1000):
                entry.offered = True
                entry.peer.send(
                    M.bots_offered(ladder=entry.ladder, waited=(now - entry.since) / 1000)
                )

    def stop(self) -> None:
        if self._passes is not None:
            self._passes.cancel()

    # ------------------------------------------------------------------ rooms

    def _seat(self, ladder: str, players: list[Waiting], rated: bool) -> None:
        who = {e.session.player for e in players}
        self.seating |= who

        async def seat() -> None:
            try:
                made = await self._make_room(ladder, players, rated)
            finally:
                self.seating -= who
            if not made:  # the store failed us: they wait on, where they were
                for e in players:
                    if e.peer.session is e.session and not e.peer.closing:
                        self.entries[e.session.player] = e
                self._passes_running()

        self.home.tasks.spawn(seat())

    async def _make_room(self, ladder: str, players: list[Waiting], rated: bool) -> bool:
        """Make the room, seat ``players`` (and bots, unrated), tell each, and
        start it after the countdown; False when the room could not be made."""
        home = self.home
        settings = quick_settings(ladder, rated)
        signed = frozenset(e.session.player for e in players)
        try:
            code = await reserve_code(home)
        except RoomError as exc:
            log.warning("quick-match room not made: %s", exc.message)
            return False
        runner = RoomRunner(home, Room(code))
        home.rooms[code] = runner
        host = players[0].session
        try:
            await runner.run(
                lambda r, c: D.decide_create(r, host.player, host.name, settings, c, signed)
            )
            for e in players[1:]:
                s = e.session
                await runner.run(
                    lambda r, c, s=s: D.decide_join(
                        r, s.player, s.name, Role.PLAYER, c, signed=signed
                    )  # type: ignore[misc]
                )
            if not rated:
                for _ in range(BOT_RIVALS):
                    bot = "b" + ids.new_id()
                    await runner.run(
                        lambda r, c, b=bot: D.decide_add_bot(r, host.player, b, Pace.STEADY, c)  # type: ignore[misc]
                    )
        except RoomError as exc:
            log.warning("quick-match room %s not made: %s", code, exc.message)
            home.rooms.pop(code, None)
            runner.stop()
            return False
        starts_at = home.clock.now() + COUNTDOWN_MS

        def tell() -> Release:
            now = home.clock.now()
            sends = []
            for e in players:
                view = room_view(runner.room, e.session.player, now, runner.seeds.finding)
                msg = M.matched(ladder=ladder, rated=rated, room=view, starts_at=starts_at)
                sends.append((e, msg))

            def send() -> None:
                for e, msg in sends:
                    e.session.room_code = code
                    home.save_session(e.session)
                    e.peer.send(msg)

            return send

        await runner.read(tell)
        self.seating -= {e.session.player for e in players}  # in the room now
        home.tasks.spawn(self._count_down(runner, host.player, signed, starts_at))
        return True

    async def _count_down(
        self, runner: RoomRunner, host: str, signed: frozenset[str], starts_at: int
    ) -> None:
        home, code = self.home, runner.code
        await home.tell_room(code, lambda seq: M.countdown(seq, starts_at=starts_at))
        await home.clock.sleep_until(starts_at)
        try:
            await runner.run(lambda r, c: D.decide_start(r, r.host or host, c, signed))
        except RoomError as exc:  # everyone left meanwhile, or the store is down
            log.warning("quick-match room %s not started: %s", code, exc.message)
