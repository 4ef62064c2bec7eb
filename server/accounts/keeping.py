"""Keeping history as rooms play: the shell around server/accounts/history.py.

The room's log is the truth; a player's history is written from it, after it.
A deal's entries are built right after the commit of the record that ended it
(from the room as that decision left it: later commands may change the room,
a rematch drops its deals) and written once that record is durable, so no
history tells of a deal the room may yet roll back. The write is awaited by a
task of its own, and a request for the player's history waits for their writes
under way first (:meth:`HistoryKeeper.settled`): whoever saw ``deal_over`` finds
the deal in their history.

A crash between the room's record and the history write loses nothing: when the
room is rebuilt from its log (server/service/adoption.py) every deal over in
its state and every round its series lists are written again
(:meth:`HistoryKeeper.recovered`), and the store keeps each key once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Protocol

from ..core.records import Decision
from ..store.base import StoreUnavailable
from .history import (
    REPLAY_DAYS,
    DealOver,
    KeptRoom,
    deals_over,
    every_deal_over,
    every_round,
    rounds_over,
)
from .model import DealEntry, RoundEntry
from .store import AccountStore

__all__ = ["HistoryKeeper"]

log = logging.getLogger("klondike_race.accounts")

_RETRY_S = (0.5, 2.0, 10.0, 60.0)
"""Waits between attempts while the account store is away; after the last one
the entries are written when the room is next rebuilt."""


WAIT_S = 5.0
"""How long a history request waits for the player's writes under way, and a
shutdown for every write under way."""


class Keeper(Protocol):
    """What keeping needs of the service: where accounts live."""

    accounts: AccountStore


class HistoryKeeper:
    def __init__(self, home: Keeper) -> None:
        self._home = home
        self._pending: dict[str, set[asyncio.Task[None]]] = {}  # player -> writes under way

    def built(self, room: KeptRoom, decision: Decision) -> Callable[[], None] | None:
        """What a decision adds to history, built now (right after its commit);
        the returned call writes it, once the decision is durable. A daily
        run's room keeps none: its replay would tell the day's deal before the
        day is over (its result is the daily's: server/daily/runs.py)."""
        if room.daily is not None:
            return None
        deals = deals_over(room, decision.records)
        rounds = rounds_over(room, decision.records)
        if not deals and not rounds:
            return None
        return lambda: self.keep(deals, [rounds] if rounds else [])

    def keep(self, deals: list[DealOver], rounds: list[dict[str, RoundEntry]]) -> None:
        """Write in a task; the players' history requests wait for it."""
        players = {p for d in deals for p in d.entries} | {p for r in rounds for p in r}
        task = asyncio.get_running_loop().create_task(self._write(deals, rounds))
        for p in players:
            self._pending.setdefault(p, set()).add(task)
        task.add_done_callback(lambda done: self._done(done, players))

    def _done(self, task: asyncio.Task[None], players: Iterable[str]) -> None:
        for p in players:
            under_way = self._pending.get(p)
            if under_way is not None:
                under_way.discard(task)
                if not under_way:
                    del self._pending[p]
        if task.cancelled():
            log.warning("history write given up at shutdown (the room's rebuild writes it)")
        elif (exc := task.exception()) is not None:
            log.error("history not written", exc_info=exc)

    async def settled(self, player: str) -> None:
        """Once the writes under way for ``player`` are done, or a few seconds
        have passed (the account store is away: what it reads then is what it
        has)."""
        under_way = list(self._pending.get(player, ()))
        if under_way:
            await asyncio.wait(under_way, timeout=WAIT_S)

    async def stop(self) -> None:
        """At shutdown: the writes under way end, for a few seconds at most; one
        still waiting then (the account store away) is given up: the room's log
        has it, and the room's rebuild writes it."""
        under_way = {t for tasks in self._pending.values() for t in tasks}
        if not under_way:
            return
        _, late = await asyncio.wait(under_way, timeout=WAIT_S)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)

    async def recovered(self, room: KeptRoom) -> None:
        """A room rebuilt from its log: write again what its state holds (the
        store keeps each entry once). Awaited by the rebuild, so a history
        request after it sees every entry."""
        if room.daily is not None:
            return
        rounds = every_round(room)
        deals = every_deal_over(room)
        if not deals and not rounds:
            return
        try:
            await self._write_once(deals, rounds)
        except StoreUnavailable as exc:  # the room plays on; its next rebuild writes them
            log.warning("room %s: history not written again: %s", room.code, exc)

    async def _write(self, deals: list[DealOver], rounds: list[dict[str, RoundEntry]]) -> None:
        for wait in (*_RETRY_S, None):
            try:
                await self._write_once(deals, rounds)
                return
            except StoreUnavailable as exc:
                if wait is None:
                    log.warning("history not written (kept by the room's log): %s", exc)
                    return
                log.info("history not written yet: %s; again in %.1f s", exc, wait)
                await asyncio.sleep(wait)

    async def _write_once(self, deals: list[DealOver], rounds: list[dict[str, RoundEntry]]) -> None:
        accounts = self._home.accounts
        by_player: dict[str, tuple[list[DealEntry], list[RoundEntry]]] = {}
        for deal in deals:
            await accounts.put_replay(deal.key, deal.replay, deal.t + REPLAY_DAYS * 86_400)
            for p, entry in deal.entries.items():
                by_player.setdefault(p, ([], []))[0].append(entry)
        for entries in rounds:
            for p, round_entry in entries.items():
                by_player.setdefault(p, ([], []))[1].append(round_entry)
        for p, (deal_entries, round_entries) in by_player.items():
            await accounts.add_history(p, deal_entries, round_entries)
