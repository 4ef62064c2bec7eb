"""The requests about ratings: a ladder's tables, a rated room's forecast.

Part of :data:`protocol.requests.REQUESTS` (docs/protocol.md, "Ratings");
parsed the same way as every request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .messages import ErrorCode, RequestId
from .request_fields import Request, opt_bool, req_str
from .wire import WireError

__all__ = ["RATING_REQUESTS", "Forecast", "LadderRequest"]


@dataclass(frozen=True, slots=True)
class LadderRequest(Request):
    """A ladder's top 100, the requester's position with the ten around it, and
    their rating chart; with ``friends``, the friends-only table too."""

    TYPE: ClassVar[str] = "ladder"
    ladder: str
    friends: bool = False

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        ladder = req_str(msg, "ladder")
        if len(ladder) > 40:
            raise WireError(ErrorCode.BAD_REQUEST, "field 'ladder' is 40 characters at most")
        return cls(rid, ladder, bool(opt_bool(msg, "friends")))

    def fields(self) -> dict[str, Any]:
        return {"ladder": self.ladder} | ({"friends": True} if self.friends else {})


@dataclass(frozen=True, slots=True)
class Forecast(Request):
    """A rated room's players' ratings on its ladder and their predicted placings."""

    TYPE: ClassVar[str] = "forecast"

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid)

    def fields(self) -> dict[str, Any]:
        return {}


RATING_REQUESTS: tuple[type[Request], ...] = (LadderRequest, Forecast)
