"""Ghosts in a daily run, the shell: which runs race the player, and their
progress sent as the run's clock reaches each of their moves.

A take of a challenge (server/challenges/) races the challenger's run alone.

A run's ghosts are chosen when its player is first seated in it on this node
(``daily_start``, or a resume's ``welcome``): the runs of their friends over
by then, the day's leader and its median run (the one with half the board
ahead of it), each once (a friend first, then the leader, then the median),
at most :data:`MOST_FRIENDS` friends, the best ranked. The choice is kept
with the run (server/daily/results.py ``keep_ghosts``): a restart, or a resume
on another node, finds the same ghosts, however the board changed since. The
engine replays each (server/daily/ghosts.py) into frames holding only what a
live rival's progress holds.

One task a run, not one a ghost or a move: it sleeps on the server's clock
until the earliest frame due (the run's first move plus the frame's time),
sends every frame due by then in time order, and sleeps again. Frames go out
through the runner's reads, so never ahead of a command not yet durable. The
task ends with the run's deal (or the runner); the ``ghosts`` event tells a
player seated again where each ghost stands.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from protocol import messages as M
from protocol.names import DELETED_PLAYER

from ..accounts.model import FriendState
from ..accounts.store import AccountStore
from ..challenges.store import ChallengeStore
from ..core import records as R
from ..core.records import Decision
from ..core.room import Room
from ..net.clock import Clock
from ..peer import Peer
from ..rooms.runner import Release, RoomRunner
from .ghosts import GhostFrame, frames, start_progress
from .publisher import DailyDeals
from .results import GhostChoice, ResultStore, RunResult

__all__ = ["MOST_FRIENDS", "GhostRace", "Ghosts", "first_move_at", "friends_of", "names_now"]

log = logging.getLogger("klondike_race.daily")

MOST_FRIENDS = 4
"""Friends' ghosts in one run at most (the best ranked), beside the leader and median."""


class GhostHome(Protocol):
    """What the ghosts need of the service."""

    clock: Clock
    daily: DailyDeals
    daily_results: ResultStore
    accounts: AccountStore
    challenges: ChallengeStore
    rooms: dict[str, RoomRunner]

    def peer_of(self, player: str) -> Peer | None: ...


async def friends_of(accounts: AccountStore, player: str) -> list[str]:
    """The players of one's friends (accounts only: a guest has none)."""
    me = await accounts.account_by_player(player)
    if me is None:
        return []
    out = []
    for friendship in await accounts.friendships(me.account):
        if friendship.state is not FriendState.FRIENDS:
            continue
        other = await accounts.account(friendship.b if friendship.a == me.account else friendship.a)
        if other is not None:
            out.append(other.player)
    return out


async def names_now(accounts: AccountStore, runs: Sequence[RunResult]) -> dict[str, str]:
    """The names runs show now: an account's current handle (a run is kept
    under the name it was played as), a deleted account's as the deleted
    player it is, a guest's as kept."""

    async def name(run: RunResult) -> tuple[str, str]:
        if await accounts.is_deleted(run.player):
            return run.player, DELETED_PLAYER
        account = await accounts.account_by_player(run.player)
        return run.player, run.name if account is None else account.handle

    return dict(await asyncio.gather(*(name(r) for r in {r.player: r for r in runs}.values())))


def first_move_at(room: Room) -> int | None:
    """When a run's clock started (its first move, server time), if it has."""
    deal = room.deal
    log_ = None if deal is None else next(iter(deal.logs.values()), None)
    return None if deal is None or not log_ else deal.started_at + log_[0][0]


@dataclass(slots=True)
class _Ghost:
    number: int
    kind: str  # friend, leader, median
    name: str
    frames: list[GhostFrame]
    sent: int = 0  # frames sent as they came due

    def at(self, t: int | None) -> dict[str, Any]:
        """Its progress ``t`` ms into the race (None: not started)."""
        seen = start_progress()
        if t is not None:
            for frame in self.frames:
                if frame.t > t:
                    break
                seen = frame.progress
        return seen

    def view(self, t: int | None) -> dict[str, Any]:
        return {"ghost": self.number, "name": self.name, "kind": self.kind, "progress": self.at(t)}


@dataclass(slots=True)
class GhostRace:
    """One run's ghosts, and the one task that sends their progress."""

    runner: RoomRunner
    player: str
    ghosts: list[_Ghost]
    task: asyncio.Task[None] | None = None
    done: bool = False

    def elapsed(self, now: int) -> int | None:
        first = first_move_at(self.runner.room)
        return None if first is None else max(0, now - first)

    def listing(self, now: int) -> list[dict[str, Any]]:
        """Where each ghost stands now; what it shows counts as sent."""
        t = self.elapsed(now)
        if t is not None:
            for ghost in self.ghosts:
                ghost.sent = max(ghost.sent, sum(1 for f in ghost.frames if f.t <= t))
        return [g.view(t) for g in self.ghosts]


def _over(room: Room) -> bool:
    deal = room.deal
    return deal is None or deal.over


class Ghosts:
    """Every run's ghost race on this node, by room code."""

    def __init__(self, home: GhostHome) -> None:
        self._home = home
        self._races: dict[str, GhostRace] = {}
        self._building: dict[str, asyncio.Task[GhostRace | None]] = {}

    # ------------------------------------------------------------------ hooks

    async def seated(self, runner: RoomRunner, player: str) -> None:
        """The player sits in their run (again): its ghosts, where they stand now
        (chosen the first time), then their moves as they come due."""
        if runner.room.daily is None or _over(runner.room):
            return
        race = await self._race(runner, player)
        if race is None or race.runner is not runner or runner.stopped:
            return
        home = self._home

        def make() -> Release:
            room = runner.room
            deal = room.deal
            if deal is None or deal.over:
                return lambda: None
            msg = M.ghosts(room.seq, deal=deal.number, ghosts=race.listing(home.clock.now()))
            peer = home.peer_of(player)
            return (lambda: peer.send(msg)) if peer is not None else (lambda: None)

        await runner.read(make)
        self._start(race)

    def after_commit(self, runner: RoomRunner, decision: Decision) -> None:
        """A run's first move starts its ghosts; its end, or its room's, stops them."""
        code = runner.code
        race = self._races.get(code)
        for record in decision.records:
            if isinstance(record, (R.DealEnded, R.Closed)):
                self._forget(code)
                return
        if race is not None and race.runner is runner:
            self._start(race)

    def stop(self) -> None:
        for code in list(self._races):
            self._forget(code)
        for task in self._building.values():
            task.cancel()

    # ------------------------------------------------------------------ races

    def _forget(self, code: str) -> None:
        race = self._races.pop(code, None)
        if race is not None:
            race.done = True
            if race.task is not None and race.task is not asyncio.current_task():
                race.task.cancel()

    async def _race(self, runner: RoomRunner, player: str) -> GhostRace | None:
        code = runner.code
        race = self._races.get(code)
        if race is not None and race.runner is runner:
            return race
        building = self._building.get(code)
        if building is None:
            building = asyncio.get_running_loop().create_task(self._build(runner, player))
            self._building[code] = building
            building.add_done_callback(lambda _t: self._building.pop(code, None))
        try:
            race = await asyncio.shield(building)
        except Exception:
            log.exception("room %s: the run's ghosts could not be chosen", code)
            return None
        kept = self._races.get(code)
        if race is not None and not race.done and (kept is None or kept.runner is not runner):
            if kept is not None:  # the room's former runner (rebuilt here since)
                self._forget(code)
            self._races[code] = kept = race
        return kept

    async def _build(self, runner: RoomRunner, player: str) -> GhostRace | None:
        room = runner.room
        assert room.daily is not None
        if room.challenge is not None:
            return await self._challenger(runner, room.challenge, player)
        date, ladder = room.daily
        home = self._home
        deal = await home.daily.deal(dt.date.fromisoformat(date), ladder)
        if deal is None:
            return None
        results = home.daily_results
        kept = await results.kept_ghosts(date, ladder, player)
        if kept is None:
            kept = await results.keep_ghosts(date, ladder, player, await self._choose(room, player))
        runs = {r.player: r for r in await results.results_of(date, ladder, [p for _, p in kept])}
        chosen = [(kind, runs[p]) for kind, p in kept if p in runs]
        names = await names_now(home.accounts, [run for _, run in chosen])
        lines = await results.lines(date, ladder, [run.player for _, run in chosen])
        ghosts = []
        for number, (kind, run) in enumerate(chosen, start=1):
            try:
                line = frames(deal.seed, deal.rules, run, lines[run.player])
            except Exception:  # a line missing, or one the engine refuses: that ghost stays home
                log.exception("daily %s %s: a run could not be replayed", date, ladder)
                continue
            ghosts.append(_Ghost(number, kind, names.get(run.player, run.name), line))
        return GhostRace(runner, player, ghosts)

    async def _choose(self, room: Room, player: str) -> GhostChoice:
        """A run's ghosts, chosen now: its player's friends' runs over (the best
        ranked), the day's leader's and its median run, each once."""
        assert room.daily is not None
        date, ladder = room.daily
        home = self._home
        results = home.daily_results
        chosen: GhostChoice = []
        taken = {player}
        friends = await friends_of(home.accounts, player)
        theirs = await results.results_of(date, ladder, friends)
        theirs.sort(key=lambda r: (r.board_score, r.player))
        for run in theirs[:MOST_FRIENDS]:
            chosen.append(("friend", run.player))
            taken.add(run.player)
        count = await results.count(date, ladder)
        for kind, position in (("leader", 0), ("median", count // 2)):
            if count == 0:
                break
            page = await results.board(date, ladder, position, 1)
            if page and page[0][1].player not in taken:
                chosen.append((kind, page[0][1].player))
                taken.add(page[0][1].player)
        return chosen

    async def _challenger(
        self, runner: RoomRunner, challenge: str, player: str
    ) -> GhostRace | None:
        """A take of a challenge races one ghost: the challenger's run."""
        home = self._home
        found = await home.challenges.get(challenge)
        if found is None:
            return None
        names = await names_now(home.accounts, [found.run])
        line = frames(found.seed, found.deal_rules, found.run, found.line)
        name = names.get(found.run.player, found.run.name)
        return GhostRace(runner, player, [_Ghost(1, "challenger", name, line)])

    def _start(self, race: GhostRace) -> None:
        """Its task, once the run's clock runs (its first move) and while it does."""
        if race.task is not None or race.done or not race.ghosts:
            return
        if first_move_at(race.runner.room) is None:
            return
        race.task = asyncio.get_running_loop().create_task(self._run(race))

    async def _run(self, race: GhostRace) -> None:
        home = self._home
        runner = race.runner
        clock = home.clock
        try:
            while not race.done and not runner.stopped:
                first = first_move_at(runner.room)
                waiting = [g for g in race.ghosts if g.sent < len(g.frames)]
                if first is None or not waiting or _over(runner.room):
                    return
                due = min(first + g.frames[g.sent].t for g in waiting)
                await clock.sleep_until(due)
                if race.done or runner.stopped or _over(runner.room):
                    return
                await runner.read(lambda: self._due(race, clock.now()))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("room %s: the ghosts stopped", runner.code)

    def _due(self, race: GhostRace, now: int) -> Release:
        """The frames due by ``now``, in time order, built in turn with the room."""
        runner = race.runner
        room = runner.room
        deal = room.deal
        t = race.elapsed(now)
        if deal is None or deal.over or t is None:
            return lambda: None
        due: list[tuple[int, int, dict[str, Any]]] = []
        for ghost in race.ghosts:
            while ghost.sent < len(ghost.frames) and ghost.frames[ghost.sent].t <= t:
                frame = ghost.frames[ghost.sent]
                due.append((frame.t, ghost.number, frame.progress))
                ghost.sent += 1
        due.sort(key=lambda d: (d[0], d[1]))
        msgs = [
            M.ghost_progress(room.seq, deal=deal.number, ghost=number, progress=seen)
            for _, number, seen in due
        ]
        peer = self._home.peer_of(race.player)

        def send() -> None:
            if peer is not None:
                for msg in msgs:
                    peer.send(msg)

        return send
