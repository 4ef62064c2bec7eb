"""A daily run is a room: a room of one, made by the server with the daily's
settings and dealt the daily's seed, so that everything a room promises holds
for it as it is (moves applied exactly once, a durable log, a resume after a
drop or a reload with the clock running, a rebuild after ``kill -9``, nothing
hidden sent). What is the daily's own is here:

- the run's room settings (:func:`run_settings`): the ladder's, with no race
  bonus (nobody to race), no break, and nobody watching;
- its result and line (:func:`result_of`), read off the room once its deal is over: won
  or not, the moves, the score, the cards home and when the last went home,
  and the time **from the first move** to the move that ended it (or to the
  step that stopped it: leaving, closing, the room going idle), so the time
  spent looking at the deal before starting does not count, however the run
  was resumed meanwhile;
- :class:`RunKeeper`, which writes that result as server/accounts/keeping.py
  writes history: built right after the commit of the record that ended the
  run, written once that record is durable, again after a rebuild (the store
  keeps it once), and before the room's log is forgotten.

A take of a challenge (server/challenges/) is such a run too, its room made
alike; its result is written to the challenge's store instead of the daily's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any, Protocol

from protocol.moves import Status
from protocol.settings import Settings

from ..challenges.store import ChallengeStore
from ..core import records as R
from ..core.records import Decision
from ..core.room import Room
from ..store.base import StoreUnavailable
from .results import Finished, ResultStore, RunResult
from .schedule import LADDERS

__all__ = ["RunKeeper", "export_runs", "result_of", "run_settings"]

log = logging.getLogger("klondike_race.daily")

_RETRY_S = (0.5, 2.0, 10.0, 60.0)
"""Waits between attempts while the store is away; after the last one the
result is written when the room is next rebuilt."""

WAIT_S = 5.0
"""How long a leaderboard read (or the room's end) waits for a write under way."""


def run_settings(ladder: str) -> Settings:
    """A run's room: the ladder's deal under its settings, with no race bonus,
    no break, nobody watching, the deal proven winnable (it is the day's)."""
    return LADDERS[ladder].settings.updated(
        {"race_bonus": 0, "break_seconds": 0, "spectators": "none", "deals": "winnable"}
    )


_RESULT = {Status.WON: "won", Status.RESIGNED: "resigned", Status.DEAD: "dead"}


def result_of(room: Room) -> Finished | None:
    """The run's result and its line (timed from its first move), once its deal
    is over (None before, or for a room that is no daily run)."""
    deal = room.deal
    if room.daily is None or deal is None or deal.ended_at is None:
        return None
    date, ladder = room.daily
    for player, replay in deal.replays.items():
        log_ = deal.logs[player]
        status = replay.board.status
        if status is Status.PLAYING:
            end = deal.end_t.get(player, deal.t(deal.ended_at))
        else:
            end = log_.last_t
        first = log_[0][0] if len(log_) else end
        member = room.members.get(player)
        name = member.name if member is not None else room.series.names.get(player, "")
        result = RunResult(
            date=date,
            ladder=ladder,
            player=player,
            name=name,
            result=_RESULT.get(status, "stopped"),
            ms=max(0, end - first),
            moves=replay.board.moves,
            score=room.score(deal, player, deal.ended_at),
            home=replay.board.home,
            home_ms=max(0, replay.home_at - first) if replay.home_at else 0,
            ended=deal.ended_at / 1000,
            code=room.code,
        )
        return result, [(t - first, kind, a, b, n) for t, kind, a, b, n in log_]
    return None


async def export_runs(store: ResultStore, player: str) -> dict[str, Any]:
    """A player's daily runs (each with its line: ``[t, kind, from, to, count]``
    a move) and streaks, as their data export holds them."""
    runs = sorted(await store.runs_of(player), key=lambda r: (r.date, r.ladder))
    out = []
    for run in runs:
        line = (await store.lines(run.date, run.ladder, [player])).get(player, [])
        out.append({**run.to_json(), "line": [list(move) for move in line]})
    streaks = await store.streaks(player)
    return {"runs": out, "streaks": dataclasses.asdict(streaks)}


class Keeping(Protocol):
    """What keeping needs of the service: where results live."""

    daily_results: ResultStore
    challenges: ChallengeStore


class RunKeeper:
    def __init__(self, home: Keeping) -> None:
        self._home = home
        self._pending: dict[str, asyncio.Task[None]] = {}  # room -> its result's write
        self._players: dict[str, str] = {}  # player -> room of their write under way
        self._unwritten: set[str] = set()  # rooms whose result could not be written
        self._challenges: dict[str, str] = {}  # room -> the challenge its run takes

    def built(self, room: Room, decision: Decision) -> Finished | None:
        """The result and line a decision ends a run with (built right after its commit)."""
        if room.daily is None or not any(isinstance(r, R.DealEnded) for r in decision.records):
            return None
        if room.challenge is not None:
            self._challenges[room.code] = room.challenge
        return result_of(room)

    def keep(self, finished: Finished) -> None:
        """Write in a task, once the run's end is durable."""
        result = finished[0]
        task = asyncio.get_running_loop().create_task(self._write(finished))
        self._pending[result.code] = task
        self._players[result.player] = result.code
        task.add_done_callback(lambda done: self._done(result, done))

    def _done(self, result: RunResult, task: asyncio.Task[None]) -> None:
        code = result.code
        if self._pending.get(code) is task:
            del self._pending[code]
            self._challenges.pop(code, None)
        if self._players.get(result.player) == code:
            del self._players[result.player]
        if task.cancelled():
            log.warning("daily result given up at shutdown (the room's rebuild writes it)")
        elif (exc := task.exception()) is not None:
            log.error("daily result not written", exc_info=exc)

    async def settled(self, code: str) -> None:
        """Once the result write of room ``code`` under way is done (or a few
        seconds passed: the store is away, and the room's rebuild writes it)."""
        task = self._pending.get(code)
        if task is not None:
            await asyncio.wait([task], timeout=WAIT_S)

    async def settled_player(self, player: str) -> None:
        """:meth:`settled` for the player's run whose write is under way: whoever
        saw their run end finds it on the board."""
        code = self._players.get(player)
        if code is not None:
            await self.settled(code)

    def written(self, code: str) -> bool:
        """Whether room ``code``'s result is in the store, as far as this
        process knows (False: the write failed, and the room's log must stay
        for its rebuild to write it)."""
        return code not in self._unwritten and code not in self._pending

    async def stop(self) -> None:
        """At shutdown: the writes under way end, for a few seconds at most."""
        tasks = list(self._pending.values())
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=WAIT_S)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)

    async def recovered(self, room: Room) -> None:
        """A room rebuilt from its log: its run's result written again, if it
        is over (the store counts it once). Awaited by the rebuild."""
        finished = result_of(room)
        if finished is None:
            return
        try:
            await self._add(finished, room.challenge)
        except StoreUnavailable as exc:
            log.warning("room %s: daily result not written again: %s", room.code, exc)

    async def _add(self, finished: Finished, challenge: str | None) -> None:
        result, line = finished
        if challenge is None:
            await self._home.daily_results.add_result(result, line)
        else:  # a take's line is read by nothing: its result alone is kept
            await self._home.challenges.add_result(challenge, result)

    async def _write(self, finished: Finished) -> None:
        result = finished[0]
        for wait in (*_RETRY_S, None):
            try:
                await self._add(finished, self._challenges.get(result.code))
                return
            except StoreUnavailable as exc:
                if wait is None:
                    log.warning("daily result not written (kept by the room's log): %s", exc)
                    self._unwritten.add(result.code)
                    return
                log.info("daily result not written yet: %s; again in %.1f s", exc, wait)
                await asyncio.sleep(wait)
