"""The interface every challenge store implements.

Like every store, a write is durable when its coroutine returns, and one that
cannot write raises StoreUnavailable having written nothing. A take is claimed
atomically (of two takes racing, one is kept and the other finds it), and its
result is kept once, and only from the room its take names: a run counted once.

Deleting an account withdraws the challenges it made (:meth:`withdraw`): each
is removed, its seed and the challenger's run with it, and only its id is
kept, among the withdrawn ones, so that its link is answered as withdrawn
rather than as a wrong code. Its takes stay: they are their takers' runs.
"""

from __future__ import annotations

from typing import Protocol

from ..daily.results import RunResult
from .model import Challenge, Take

__all__ = ["ChallengeStore"]


class ChallengeStore(Protocol):
    async def add(self, challenge: Challenge) -> None: ...

    async def get(self, challenge: str) -> Challenge | None: ...

    async def take(self, challenge: str, player: str, code: str, now: float) -> Take:
        """The player's take of the challenge: the one taken already, or, if
        none, one in room ``code``, taken now (atomically: of two, one wins)."""

    async def add_result(self, challenge: str, result: RunResult) -> bool:
        """Keep a take's result: True if kept now, False if it was already or
        its room is not the one the take names."""

    async def made_by(self, player: str) -> list[Challenge]: ...

    async def made_from(self, source: str) -> list[Challenge]:
        """The challenges made of one deal (by its key)."""

    async def takes_of(self, challenge: str) -> list[Take]: ...

    async def withdraw(self, challenger: str) -> None:
        """Remove every challenge ``challenger`` made, keeping their ids as
        withdrawn (done again, it changes nothing)."""

    async def withdrawn(self, challenge: str) -> bool:
        """Whether the challenge of this id was withdrawn."""

    async def taken_by(self, player: str) -> list[Take]: ...

    async def close(self) -> None: ...
