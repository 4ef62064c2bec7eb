"""The load test's core: rooms full of flat-out bots, measured from the client side.

Importable on its own so that ``bench/server.py`` and ``klondike-race loadtest``
share one definition of what was measured. The numbers that matter for the
product's promise ("an acknowledged move is never lost") are the
**unacknowledged** moves: sent, and no reply ever came. Refusals are answers, so
they count as errors, not as lost moves.

Each room's host plays too, and starts a rematch whenever a round ends, so rooms
keep dealing for the whole run.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from .errors import ClientError, ServerError
from .players import BotPlayer, BotStats
from .session import Session, connect

__all__ = ["LoadProgress", "LoadReport", "percentile", "run_load"]

DEFAULT_SETTINGS: dict[str, Any] = {"deals_per_round": 20}


@dataclass(frozen=True, slots=True)
class LoadProgress:
    """A tick of a running load test, for a progress display."""

    elapsed: float
    duration: float
    moves: int
    errors: int
    disconnects: int


@dataclass(slots=True)
class LoadReport:
    """The outcome of :func:`run_load`; ``ok`` is false if any move went unanswered."""

    url: str
    rooms: int
    players: int  # per room
    spectators: int  # per room
    duration: float  # asked for, seconds
    elapsed: float  # actually measured, seconds
    moves: int  # acknowledged
    moves_per_s: float
    latency_ms: dict[str, float]  # p50, p95, p99, max: move sent to acknowledgement
    unacknowledged: int
    errors: dict[str, int] = field(default_factory=dict)  # by code
    disconnects: int = 0  # unexpected socket closes (each session resumes by itself)
    resyncs: int = 0  # snapshots fetched after a sequence gap
    events: int = 0  # room events received by all sessions
    deals: dict[str, int] = field(default_factory=dict)  # player-deals finished, by status

    @property
    def ok(self) -> bool:
        return self.unacknowledged == 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"ok": self.ok}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0…100) of unsorted ``values``; 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


class _Room:
    """One room of the test: its host, the other players, the spectators."""

    def __init__(self) -> None:
        self.players: list[Session] = []
        self.spectators: list[Session] = []

    @property
    def sessions(self) -> list[Session]:
        return self.players + self.spectators


async def _open_room(
    url: str, index: int, players: int, spectators: int, settings: Mapping[str, Any]
) -> _Room:
    room = _Room()
    try:
        host = await connect(url, name=f"load{index}-p1")
        room.players.append(host)
        code = (await host.create_room(settings)).code
        for p in range(2, players + 1):
            session = await connect(url, name=f"load{index}-p{p}")
            room.players.append(session)
            await session.join_room(code, "player")
        for s in range(1, spectators + 1):
            session = await connect(url, name=f"load{index}-s{s}")
            room.spectators.append(session)
            await session.join_room(code, "spectator")
        await host.start()
    except BaseException:
        await asyncio.gather(*(s.close() for s in room.sessions), return_exceptions=True)
        raise
    return room


async def _keep_dealing(host: Session, deadline: float, stats: BotStats) -> None:
    """Start a rematch whenever a round ends, until the deadline."""
    while time.monotonic() < deadline and not host.closed:
        room = host.room
        if room is not None and room.state in ("round_over", "lobby") and room.is_host:
            try:
                await (host.rematch() if room.state == "round_over" else host.start())
            except (ServerError, ClientError) as exc:
                stats.errors[getattr(exc, "code", "connection")] += 1
        await host.wait_update(timeout=max(0.05, min(1.0, deadline - time.monotonic())))


async def run_load(
    url: str,
    rooms: int,
    players: int,
    spectators: int,
    duration: float,
    *,
    pace: float = 0.0,
    settings: Mapping[str, Any] | None = None,
    on_progress: Callable[[LoadProgress], None] | None = None,
    tick: float = 0.5,
) -> LoadReport:
    """Open ``rooms`` rooms of ``players`` bots and ``spectators`` watchers each, let
    the bots play flat out (``pace`` 0) for ``duration`` seconds, and report."""
    stats = BotStats()
    setup = await asyncio.gather(
        *(_open_room(url, i + 1, players, spectators, {**DEFAULT_SETTINGS, **(settings or {})})
          for i in range(rooms)),
        return_exceptions=True,
    )
    opened = [r for r in setup if isinstance(r, _Room)]
    for failure in setup:
        if isinstance(failure, BaseException):
            code = failure.code if isinstance(failure, ServerError) else type(failure).__name__
            stats.errors[f"setup:{code}"] += 1
    sessions = [s for r in opened for s in r.sessions]
    began = time.monotonic()
    deadline = began + duration

    def stop(_: object) -> bool:
        return time.monotonic() >= deadline

    elapsed = 0.0
    bots = [BotPlayer(s, pace=pace, stop=stop, stats=stats, seed=i)
            for i, s in enumerate(s for r in opened for s in r.players)]
    tasks = [asyncio.create_task(b.play()) for b in bots]
    tasks += [asyncio.create_task(_keep_dealing(r.players[0], deadline, stats)) for r in opened]
    try:
        while time.monotonic() < deadline and not all(t.done() for t in tasks):
            if on_progress is not None:
                on_progress(_progress(stats, sessions, began, duration))
            await asyncio.sleep(min(tick, max(0.0, deadline - time.monotonic())))
        elapsed = time.monotonic() - began
        # Let moves in flight be answered: that is what "unacknowledged" is about.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 35)
    finally:
        for task in tasks:
            task.cancel()
        # A bot still waiting for its reply after the grace period lost that move.
        stats.unacknowledged += sum(1 for b in bots if b.in_flight)
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
    if on_progress is not None:
        on_progress(_progress(stats, sessions, began, duration))
    return _report(url, rooms, players, spectators, duration, elapsed, stats, sessions)


def _progress(
    stats: BotStats, sessions: list[Session], began: float, duration: float
) -> LoadProgress:
    return LoadProgress(
        elapsed=min(duration, time.monotonic() - began),
        duration=duration,
        moves=stats.moves,
        errors=sum(stats.errors.values()),
        disconnects=sum(s.stats.drops for s in sessions),
    )


def _report(
    url: str,
    rooms: int,
    players: int,
    spectators: int,
    duration: float,
    elapsed: float,
    stats: BotStats,
    sessions: list[Session],
) -> LoadReport:
    errors = Counter(stats.errors)
    for s in sessions:
        errors.update(s.stats.unsolicited_errors)
    lat = [x * 1000 for x in stats.latencies]
    return LoadReport(
        url=url,
        rooms=rooms,
        players=players,
        spectators=spectators,
        duration=duration,
        elapsed=round(elapsed, 3),
        moves=stats.moves,
        moves_per_s=round(stats.moves / elapsed, 1) if elapsed > 0 else 0.0,
        latency_ms={
            "p50": round(percentile(lat, 50), 2),
            "p95": round(percentile(lat, 95), 2),
            "p99": round(percentile(lat, 99), 2),
            "max": round(max(lat, default=0.0), 2),
        },
        unacknowledged=stats.unacknowledged,
        errors=dict(errors),
        disconnects=sum(s.stats.drops for s in sessions),
        resyncs=sum(s.stats.resyncs for s in sessions),
        events=sum(s.stats.events for s in sessions),
        deals=dict(stats.deals),
    )
