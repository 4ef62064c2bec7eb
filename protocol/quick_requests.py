"""The quick-match requests (docs/protocol.md, "Quick match").

Part of :data:`protocol.requests.REQUESTS`; parsed the same way as every request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .messages import ErrorCode, RequestId
from .request_fields import Request, req_str
from .wire import WireError

__all__ = ["QUICK_REQUESTS", "AcceptBots", "Queue", "Unqueue"]


@dataclass(frozen=True, slots=True)
class Queue(Request):
    """ "Race now" on ``ladder``: wait for rivals of close rating."""

    TYPE: ClassVar[str] = "queue"
    ladder: str

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        ladder = req_str(msg, "ladder")
        if len(ladder) > 40:
            raise WireError(ErrorCode.BAD_REQUEST, "field 'ladder' is 40 characters at most")
        return cls(rid, ladder)

    def fields(self) -> dict[str, Any]:
        return {"ladder": self.ladder}


@dataclass(frozen=True, slots=True)
class Unqueue(Request):
    """Stop waiting: leaving the queue is at once."""

    TYPE: ClassVar[str] = "unqueue"

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid)

    def fields(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True, slots=True)
class AcceptBots(Request):
    """Race bots now instead of waiting on (offered after 30 s; unrated)."""

    TYPE: ClassVar[str] = "accept_bots"

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid)

    def fields(self) -> dict[str, Any]:
        return {}


QUICK_REQUESTS: tuple[type[Request], ...] = (Queue, Unqueue, AcceptBots)
