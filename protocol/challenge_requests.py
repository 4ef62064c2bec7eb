"""The challenge requests: make a challenge of a past deal, list one's challenges.

Part of :data:`protocol.requests.REQUESTS` (docs/protocol.md, "Challenges");
parsed the same way as every request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .messages import ErrorCode, RequestId
from .request_fields import Request, req_str
from .wire import WireError

__all__ = [
    "CHALLENGE_REQUESTS",
    "Challenge",
    "ChallengeInfo",
    "ChallengeStart",
    "Challenges",
    "daily_key",
]


def daily_key(date: str, ladder: str) -> str:
    """The key that names one's run of a daily, as ``challenge`` takes it."""
    return f"daily/{date}/{ladder}"


@dataclass(frozen=True, slots=True)
class Challenge(Request):
    """A challenge of one of one's past deals: ``key`` is a deal's key of one's
    history, or ``daily/DATE/LADDER`` for one's run of a daily that is over."""

    TYPE: ClassVar[str] = "challenge"
    key: str

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        key = req_str(msg, "key")
        if len(key) > 80:
            raise WireError(ErrorCode.BAD_REQUEST, "field 'key' is too long")
        return cls(rid, key)

    def fields(self) -> dict[str, Any]:
        return {"key": self.key}


@dataclass(frozen=True, slots=True)
class Challenges(Request):
    """The challenges one made and took, with both results where they are."""

    TYPE: ClassVar[str] = "challenges"

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid)

    def fields(self) -> dict[str, Any]:
        return {}


def _code(msg: Mapping[str, Any]) -> str:
    code = req_str(msg, "code")
    if len(code) > 64:
        raise WireError(ErrorCode.BAD_REQUEST, "field 'code' is too long")
    return code


@dataclass(frozen=True, slots=True)
class ChallengeInfo(Request):
    """What a challenge link shows before it is played: who challenges, on
    which rules, and (once one's own run of it is over) both results."""

    TYPE: ClassVar[str] = "challenge_info"
    code: str

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, _code(msg))

    def fields(self) -> dict[str, Any]:
        return {"code": self.code}


@dataclass(frozen=True, slots=True)
class ChallengeStart(Request):
    """One's run of a challenge, begun (once) or resumed: a room of one, as a
    daily run's."""

    TYPE: ClassVar[str] = "challenge_start"
    code: str

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, _code(msg))

    def fields(self) -> dict[str, Any]:
        return {"code": self.code}


CHALLENGE_REQUESTS: tuple[type[Request], ...] = (
    Challenge,
    Challenges,
    ChallengeInfo,
    ChallengeStart,
)
