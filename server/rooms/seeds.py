"""A ``deals: winnable`` room's proven seeds, in the shell (docs/rules.md §9).

A decision that would deal such a deal looks for a seed among those in hand
(``Ctx.proven``, here :attr:`DealSeeds.proven`). The pure core cannot wait, so with
none in hand it decides nothing but ``SeedWanted`` (``Decision.wanted``), and the
runner (server/rooms/runner.py ``run``) takes one through :meth:`DealSeeds.take`,
then decides again. The wait is this object's state: :attr:`DealSeeds.gate` is
set while a command takes a seed (the other commands that want one wait on it),
:attr:`DealSeeds.finding` names the deal the room is told it waits for. Three
things make that wait rare and harmless:

- **Ahead of time.** When a deal starts with deals left in the round, the next
  deal's seed is taken at once, while this one is played (:meth:`take_ahead`): the
  move that ends the deal deals the next without waiting, and a dry pool is waited
  for during the deal, unseen. Should the pool stay dry all deal, the move that
  ends it is answered all the same: :attr:`coming` says the seed is on its way
  (``SeedWanted.coming``), and the deal's end begins a break, which the clock
  ends by dealing once the seed is there. A seed taken for rules the host then changes,
  or for a deal the round never reaches, is never dealt: a proven seed spent, no
  secret told.
- **Only what would deal waits.** The runner's other commands are decided while a
  seed is taken (:attr:`gate` tells the ones that would deal too to wait for it).
- **The room is told.** When a decision must wait on a dry pool every member gets
  ``finding_deal`` (:attr:`finding` is the snapshot's field), and a wait that ends
  without the deal says so: the deal's own ``deal_started`` ends it otherwise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from protocol import messages as M
from protocol.settings import DealRules, Deals

from ..core import records as R
from ..core.room import Room
from ..core.values import Fanout, Member, RoomError, SeedWanted
from .timer import Release

__all__ = ["DealSeeds"]


class SeedSource(Protocol):
    """Where proven seeds come from: the server's pools (``Venue.proven_seed``)."""

    async def proven_seed(self, rules: DealRules, dry: Callable[[], None]) -> tuple[str, str]: ...


class Seeded(Protocol):
    """What the seeds need of their room's runner (server/rooms/runner.py)."""

    room: Room

    @property
    def venue(self) -> SeedSource: ...

    @property
    def stopped(self) -> bool: ...

    def queue_read(self, make: Callable[[], Release]) -> object: ...

    def fanout(self, events: list[Fanout], recipients: dict[str, Member]) -> None: ...


class DealSeeds:
    def __init__(self, runner: Seeded) -> None:
        self.runner = runner
        # Taken, not dealt yet: ``Ctx.proven``, read by the decisions (each is
        # dealt once: dealt() drops it).
        self.proven: dict[DealRules, tuple[str, str]] = {}
        self.gate: asyncio.Future[None] | None = None  # set while a decision takes one
        # The next deal's seed on its way (take_ahead), the rule sets whose pool
        # was dry when it was asked, and the deal a decision waits for meanwhile.
        self._ahead: dict[DealRules, asyncio.Task[None]] = {}
        self._ahead_dry: set[DealRules] = set()
        self._waiting: int | None = None
        # The deal this room waits for a proven seed for, the pool being dry
        # (shell state: the snapshot's ``finding_deal``, the notice).
        self.finding: int | None = None

    @property
    def coming(self) -> frozenset[DealRules]:
        """``Ctx.coming``: the rules whose seed taken ahead waits on a dry pool
        (what makes the deal that ends meanwhile begin a break)."""
        return frozenset(self._ahead_dry)

    async def take(self, wanted: SeedWanted) -> tuple[str, str]:
        """Put a proven seed for ``wanted.rules`` in hand: the one taken ahead, if
        it is on its way, else one from the pool, waiting while it is dry (the
        room is told it is finding deal ``wanted.number``)."""
        gate = asyncio.get_running_loop().create_future()
        self.gate = gate
        rules = wanted.rules
        try:
            ahead = self._ahead.get(rules)
            if ahead is not None:
                self._waiting = wanted.number
                if rules in self._ahead_dry:
                    self.tell(wanted.number, True)
                await asyncio.shield(ahead)
                got = self.proven.get(rules)
                if got is not None:
                    return got
            got = await self.runner.venue.proven_seed(rules, lambda: self.tell(wanted.number, True))
            self.proven[rules] = got
            return got
        except BaseException:
            self._found()
            raise
        finally:
            self._waiting = None
            self.gate = None
            gate.set_result(None)

    def settle(self, rules: DealRules, taken: tuple[str, str], undealt: int | None) -> None:
        """After the decision a seed was taken for: a seed it did not deal (it was
        refused, or decided otherwise) is dropped, never dealt later; and the room,
        told it was finding deal ``undealt``, hears the wait is over."""
        if self.proven.get(rules) is taken:
            del self.proven[rules]
        if undealt is not None:
            self.tell(undealt, False)

    def dealt(self, records: list[R.Record]) -> None:
        """A deal was dealt (among ``records``): its seed is spent, the wait, if
        any, is over (its ``deal_started`` says so), and the next deal's seed is
        taken ahead."""
        for record in records:
            if isinstance(record, R.DealStarted) and record.proof is not None:
                spent = [k for k, (seed, _) in self.proven.items() if seed == record.seed]
                for rules in spent:
                    del self.proven[rules]
        self.finding = None
        self.take_ahead()

    def take_ahead(self) -> None:
        """With deals left in the round, take the next deal's seed now."""
        room = self.runner.room
        settings = room.settings
        deal = room.deal
        if (
            self.runner.stopped
            or settings.deals is not Deals.WINNABLE
            or deal is None
            or deal.number >= settings.deals_per_round
        ):
            return
        rules = settings.deal_rules()
        if rules not in self.proven and rules not in self._ahead:
            task = asyncio.get_running_loop().create_task(self._fetch_ahead(rules))
            self._ahead[rules] = task

    async def _fetch_ahead(self, rules: DealRules) -> None:
        def dry() -> None:
            self._ahead_dry.add(rules)
            if self._waiting is not None:  # a deal waits for this very seed: say so
                self.tell(self._waiting, True)

        try:
            got = await self.runner.venue.proven_seed(rules, dry)
        except (RoomError, asyncio.CancelledError):
            # The store is away, the server stops, or the runner did: the deal,
            # when due, takes its own (and says why it cannot). The task ends
            # rather than keep the exception, whose traceback holds the runner.
            return
        finally:
            self._ahead.pop(rules, None)
            self._ahead_dry.discard(rules)
        if not self.runner.stopped:
            self.proven.setdefault(rules, got)

    def tell(self, deal_number: int, finding: bool) -> None:
        """Send ``finding_deal`` to every member, behind the commands before it
        (like a Timed tick it carries the seq of the last event: it is no record)."""
        self.finding = deal_number if finding else None
        runner = self.runner

        def make() -> Release:
            room = runner.room
            event = Fanout(room.seq, M.finding_deal(room.seq, deal=deal_number, finding=finding))
            recipients = dict(room.members)
            return lambda: runner.fanout([event], recipients)

        runner.queue_read(make)

    def _found(self) -> None:
        """The wait is over without a deal (refused, or decided otherwise): say so."""
        if self.finding is not None:
            self.tell(self.finding, False)

    def stop(self) -> None:
        for task in list(self._ahead.values()):
            task.cancel()
