"""Daily results in this process (``serve --memory``, and tests): the
:class:`~server.daily.results.ResultStore` as dicts and a sorted list per daily,
kept in board order by insertion (bisect), so a rank is a binary search; each
run's line packed (results.py ``line_bytes``) in a dict of its own."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Sequence
from dataclasses import dataclass, field

from .results import (
    GhostChoice,
    RankedRun,
    RunClaim,
    RunResult,
    Streaks,
    TimedEntry,
    line_bytes,
    line_from_bytes,
    ranked,
    streaks_after,
)

__all__ = ["MemoryResults"]


@dataclass(slots=True)
class _Daily:
    claims: dict[str, str] = field(default_factory=dict)  # player -> room
    results: dict[str, RunResult] = field(default_factory=dict)
    lines: dict[str, bytes] = field(default_factory=dict)
    ghosts: dict[str, GhostChoice] = field(default_factory=dict)
    order: list[tuple[int, str]] = field(default_factory=list)  # (board score, player)


class MemoryResults:
    def __init__(self) -> None:
        self._dailies: dict[tuple[str, str], _Daily] = {}
        self._streaks: dict[str, Streaks] = {}

    def _daily(self, date: str, ladder: str) -> _Daily:
        return self._dailies.setdefault((date, ladder), _Daily())

    async def claim(self, date: str, ladder: str, player: str, code: str) -> RunClaim:
        d = self._daily(date, ladder)
        code = d.claims.setdefault(player, code)
        return RunClaim(code, player in d.results)

    async def claimed(self, date: str, ladder: str, player: str) -> RunClaim | None:
        d = self._daily(date, ladder)
        code = d.claims.get(player)
        return None if code is None else RunClaim(code, player in d.results)

    async def keep_ghosts(
        self, date: str, ladder: str, player: str, ghosts: GhostChoice
    ) -> GhostChoice:
        return list(self._daily(date, ladder).ghosts.setdefault(player, list(ghosts)))

    async def kept_ghosts(self, date: str, ladder: str, player: str) -> GhostChoice | None:
        kept = self._daily(date, ladder).ghosts.get(player)
        return None if kept is None else list(kept)

    async def add_result(self, result: RunResult, line: Sequence[TimedEntry]) -> bool:
        d = self._daily(result.date, result.ladder)
        if result.player in d.results or d.claims.get(result.player) != result.code:
            return False
        packed = line_bytes(line)
        d.results[result.player] = result
        d.lines[result.player] = packed
        insort(d.order, (result.board_score, result.player))
        before = self._streaks.get(result.player, Streaks())
        self._streaks[result.player] = streaks_after(before, result.day, result.won)
        return True

    async def rank(self, date: str, ladder: str, player: str) -> RankedRun | None:
        d = self._daily(date, ladder)
        run = d.results.get(player)
        if run is None:
            return None
        return 1 + bisect_left(d.order, (run.board_score, "")), run

    async def board(self, date: str, ladder: str, start: int, limit: int) -> list[RankedRun]:
        d = self._daily(date, ladder)
        runs = [d.results[p] for _, p in d.order[start : start + limit]]
        if not runs:
            return []
        first = 1 + bisect_left(d.order, (runs[0].board_score, ""))
        return ranked(runs, first, start)

    async def results_of(self, date: str, ladder: str, players: Sequence[str]) -> list[RunResult]:
        d = self._daily(date, ladder)
        return [d.results[p] for p in players if p in d.results]

    async def lines(
        self, date: str, ladder: str, players: Sequence[str]
    ) -> dict[str, list[TimedEntry]]:
        d = self._daily(date, ladder)
        return {p: line_from_bytes(d.lines[p]) for p in players if p in d.lines}

    async def runs_of(self, player: str) -> list[RunResult]:
        return [d.results[player] for d in self._dailies.values() if player in d.results]

    async def count(self, date: str, ladder: str) -> int:
        return len(self._daily(date, ladder).results)

    async def streaks(self, player: str) -> Streaks:
        return self._streaks.get(player, Streaks())

    async def close(self) -> None:
        pass
