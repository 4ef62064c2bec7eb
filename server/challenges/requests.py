"""The challenge requests' handlers, as the dispatch layer merges them."""

from __future__ import annotations

from protocol.challenge_requests import Challenge, ChallengeInfo, Challenges, ChallengeStart
from protocol.requests import Request

from ..rooms.handlers import Handler, on
from .handlers import ChallengeDesk, listed, made
from .takes import challenge_info, challenge_start

__all__ = ["CHALLENGE_HANDLERS"]

CHALLENGE_HANDLERS: dict[type[Request], Handler[ChallengeDesk]] = dict(
    [
        on(Challenge, made),
        on(Challenges, listed),
        on(ChallengeInfo, challenge_info),
        on(ChallengeStart, challenge_start),
    ]
)
