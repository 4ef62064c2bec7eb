"""Applying a rated round's result once: the shell around server/ratings/model.py.

The room's log is the truth here as for history (server/accounts/keeping.py):
a rated round is over once its ``round_over`` record is durable, and its
result (placings, the ladder, who left mid-way: server/core/series.py) is in
the room's series, rebuilt from the log after any crash. The rating change is
**applied exactly once from it**, by round key, rather than written into the
log: ratings are read from the account store (another room, on another node,
may have just moved them), and a room's decision reads no store. So the round
is rated after its record is durable, from the ratings stored at that moment,
and the store's ``apply_rated_round`` logs it under its key in the same step as
it writes the ratings: a second attempt (the room rebuilt after a ``kill -9``
between the record and the write, a Redis reply lost) finds the key and writes
nothing. Whoever applies it reads the round's figures back from the players'
charts, so what the podium shows is what was applied, by whichever attempt.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, Protocol

from protocol import messages as M

from ..accounts.history import KeptRoom, room_key, round_key
from ..accounts.store import AccountStore
from ..core.records import Decision, RoundOver
from ..core.series import RoundResult
from ..net.metrics import Metrics
from ..peer import Peer
from ..store.base import StoreUnavailable
from .model import PROVISIONAL_ROUNDS, Applied, RatedRound, Rating, rate_round, shown

__all__ = ["RatingKeeper", "rated_round"]

log = logging.getLogger("klondike_race.ratings")

_RETRY_S = (0.5, 2.0, 10.0, 60.0)
"""Waits between attempts while the account store is away; after the last one
the round is rated when the room is next rebuilt."""


class Rater(Protocol):
    """What rating needs of the service: where ratings live, and the rooms, to
    tell their members."""

    accounts: AccountStore
    metrics: Metrics

    def peer_of(self, player: str) -> Peer | None: ...

    async def tell_room(self, code: str, event: Callable[[int], M.Message]) -> None:
        """Send the room's members an event that comes from no record (it
        carries the room's last seq), in turn after what is durable."""


def rated_round(code: str, created_at: int, result: RoundResult) -> RatedRound | None:
    """A round result as its ladder's log keeps it; None when it was not rated,
    or when everyone dealt in left it: nobody finished it, and rated as the draw
    its placings would read (all placed last together, so first) it would raise
    the shown rating of players who all quit."""
    if result.ladder is None or not result.players:
        return None
    key = round_key(room_key(code, created_at), result.number)
    return RatedRound(key, result.ladder, result.ended_at / 1000, result.rated_places())


REPEATS = 3  # a pair's rated rounds from one address, from which it counts as repeated
_PAIRS_KEPT = 10_000  # pairs remembered for that; forgotten all at once beyond


SETTLE_S = 5.0  # how long a reading waits for the rounds being applied (a store away)


class RatingKeeper:
    def __init__(self, home: Rater) -> None:
        self._home = home
        self._tasks: set[asyncio.Task[None]] = set()
        # The rounds being applied now (their tasks), by the players they rate.
        self._rating: dict[asyncio.Task[None], frozenset[str]] = {}
        self._pairs: dict[tuple[str, str], int] = {}  # same-address pair -> rated rounds

    def _same_address(self, players: list[str]) -> None:
        """Fair play's counter: each pair of the round's players connected from
        one address now (the round's end) counts once."""
        by_address: dict[str, list[str]] = {}
        for p in sorted(players):
            peer = self._home.peer_of(p)
            if peer is not None:
                by_address.setdefault(peer.address, []).append(p)
        metrics = self._home.metrics
        for group in by_address.values():
            for i, a in enumerate(group):
                for b in group[i + 1 :]:
                    metrics.rated_same_address.inc()
                    if len(self._pairs) >= _PAIRS_KEPT:
                        self._pairs.clear()
                    seen = self._pairs[a, b] = self._pairs.get((a, b), 0) + 1
                    if seen >= REPEATS:
                        metrics.rated_same_address_repeats.inc()

    def built(self, room: KeptRoom, decision: Decision) -> Callable[[], None] | None:
        """The rated round a decision ended, if any; the returned call rates it
        once the decision is durable."""
        if not any(isinstance(r, RoundOver) for r in decision.records):
            return None
        result = next((r for r in room.series.rounds if r.number == room.round), None)
        rnd = None if result is None else rated_round(room.code, room.created_at, result)
        if rnd is None:
            return None
        code, number = room.code, room.round

        def durable() -> None:
            self._same_address([*rnd.places])
            task = self._spawn(self._rate_retrying(code, number, rnd))
            self._rating[task] = frozenset(rnd.places)

        return durable

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._rating.pop(task, None)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("rated round not applied", exc_info=exc)

    async def recovered(self, room: KeptRoom) -> None:
        """A room rebuilt from its log: every rated round its series lists is
        applied, once (a round applied before the crash is found by its key)."""
        for result in room.series.rounds:
            rnd = rated_round(room.code, room.created_at, result)
            if rnd is None:
                continue
            try:
                await self.apply(rnd)
            except StoreUnavailable as exc:  # the room plays on; its next rebuild rates it
                log.warning("room %s: rated round %s not applied: %s", room.code, rnd.key, exc)

    async def settled(self) -> None:
        """Once the rounds being rated now are applied, or a few seconds have
        passed (the account store is away): whoever saw ``rating_changes`` finds
        the round in the ladder."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=SETTLE_S)

    async def settled_for(self, players: Iterable[str]) -> bool:
        """Once every round this node is applying that rates any of
        ``players`` is applied (a forecast read before would show their
        ratings from before it); False when one still is after
        :data:`SETTLE_S` (the account store is away)."""
        wanted = set(players)
        pending = {t for t, rated in self._rating.items() if rated & wanted}
        if pending:
            _, late = await asyncio.wait(pending, timeout=SETTLE_S)
            return not late
        return True

    async def stop(self) -> None:
        """At shutdown: the applications under way end, for a few seconds at
        most; one given up is applied when the room is next rebuilt."""
        if not self._tasks:
            return
        _, late = await asyncio.wait(set(self._tasks), timeout=5.0)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)

    async def _rate_retrying(self, code: str, number: int, rnd: RatedRound) -> None:
        for wait in (*_RETRY_S, None):
            try:
                changes = await self.apply(rnd)
                break
            except StoreUnavailable as exc:
                if wait is None:
                    log.warning("rated round %s not applied (the room's log has it)", rnd.key)
                    return
                log.info("rated round %s not applied yet: %s; again in %.1f s", rnd.key, exc, wait)
                await asyncio.sleep(wait)
        wire = dict(changes)
        await self._home.tell_room(
            code,
            lambda seq: M.rating_changes(seq, round=number, ladder=rnd.ladder, changes=wire),
        )

    async def apply(self, rnd: RatedRound) -> dict[str, dict[str, object]]:
        """Apply the round once (read, rate, write; again if a rating moved
        meanwhile) and answer its changes as the charts hold them."""
        store = self._home.accounts
        while True:
            before = await store.ratings(rnd.ladder, rnd.places)
            after = rate_round(before, rnd.places, rnd.t)
            seen = {p: r.rounds for p, r in before.items()}
            applied = await store.apply_rated_round(rnd, seen, after)
            if applied is not Applied.STALE:
                break
        return {p: await self._change(rnd, p) for p in rnd.places}

    async def _change(self, rnd: RatedRound, player: str) -> dict[str, object]:
        chart = await self._home.accounts.rating_chart(rnd.ladder, player)
        at = next((i for i, pt in enumerate(chart) if pt.key == rnd.key), None)
        if at is None:  # removed by the operator meanwhile: no change stands
            return {"before": None, "after": None, "change": 0, "rounds": 0, "provisional": True}
        before = chart[at - 1].rating if at > 0 else shown(Rating())
        after = chart[at].rating
        return {
            "before": before,
            "after": after,
            "change": after - before,
            "rounds": at + 1,
            "provisional": at + 1 < PROVISIONAL_ROUNDS,
        }
