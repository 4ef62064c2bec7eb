"""Challenges in memory: for tests and a server without a data directory."""

from __future__ import annotations

import dataclasses

from ..daily.results import RunResult
from .model import Challenge, Take

__all__ = ["MemoryChallenges"]


class MemoryChallenges:
    def __init__(self) -> None:
        self._challenges: dict[str, Challenge] = {}
        self._takes: dict[str, dict[str, Take]] = {}  # challenge -> player -> take
        self._withdrawn: set[str] = set()

    async def add(self, challenge: Challenge) -> None:
        self._challenges.setdefault(challenge.id, challenge)

    async def get(self, challenge: str) -> Challenge | None:
        return self._challenges.get(challenge)

    async def take(self, challenge: str, player: str, code: str, now: float) -> Take:
        takes = self._takes.setdefault(challenge, {})
        return takes.setdefault(player, Take(challenge, player, code, now))

    async def add_result(self, challenge: str, result: RunResult) -> bool:
        take = self._takes.get(challenge, {}).get(result.player)
        if take is None or take.code != result.code or take.result is not None:
            return False
        self._takes[challenge][result.player] = dataclasses.replace(take, result=result)
        return True

    async def made_by(self, player: str) -> list[Challenge]:
        return [c for c in self._challenges.values() if c.challenger == player]

    async def made_from(self, source: str) -> list[Challenge]:
        return [c for c in self._challenges.values() if c.source == source]

    async def takes_of(self, challenge: str) -> list[Take]:
        return list(self._takes.get(challenge, {}).values())

    async def taken_by(self, player: str) -> list[Take]:
        return [t for takes in self._takes.values() if (t := takes.get(player)) is not None]

    async def withdraw(self, challenger: str) -> None:
        for c in [c for c in self._challenges.values() if c.challenger == challenger]:
            del self._challenges[c.id]
            self._withdrawn.add(c.id)

    async def withdrawn(self, challenge: str) -> bool:
        return challenge in self._withdrawn

    async def close(self) -> None:
        return None
