"""The requests about a player's record: their profile, their deals, a past deal.

Part of :data:`protocol.requests.REQUESTS` (docs/protocol.md, "Profile and
history"); parsed the same way as every request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .messages import ErrorCode, RequestId
from .request_fields import Request, opt_str, req_str
from .wire import WireError

__all__ = ["HISTORY_PAGE", "HISTORY_REQUESTS", "History", "PastDeal", "Profile"]

HISTORY_PAGE = 50
"""The most deals one ``history`` reply lists (``limit`` above it is refused)."""


@dataclass(frozen=True, slots=True)
class Profile(Request):
    """A player's record in numbers: one's own (no ``handle``), or the account
    named by ``handle``, as far as its owner lets others see it."""

    TYPE: ClassVar[str] = "profile"
    handle: str | None = None

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, opt_str(msg, "handle"))

    def fields(self) -> dict[str, Any]:
        return {} if self.handle is None else {"handle": self.handle}


@dataclass(frozen=True, slots=True)
class History(Request):
    """A page of deals, newest first: those that ended strictly before ``before``
    (unix seconds; the ``next`` of the page before), at most ``limit``."""

    TYPE: ClassVar[str] = "history"
    handle: str | None = None
    before: float | None = None
    limit: int = 20

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        before = msg.get("before")
        if before is not None and (isinstance(before, bool) or not isinstance(before, int | float)):
            raise WireError(ErrorCode.BAD_REQUEST, "field 'before' must be a number")
        limit = msg.get("limit", 20)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= HISTORY_PAGE:
            raise WireError(
                ErrorCode.BAD_REQUEST, f"field 'limit' must be an integer from 1 to {HISTORY_PAGE}"
            )
        return cls(rid, opt_str(msg, "handle"), None if before is None else float(before), limit)

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"limit": self.limit}
        if self.handle is not None:
            out["handle"] = self.handle
        if self.before is not None:
            out["before"] = self.before
        return out


@dataclass(frozen=True, slots=True)
class PastDeal(Request):
    """A deal of someone's history, revealed, with every move log: by its key."""

    TYPE: ClassVar[str] = "past_deal"
    key: str

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        key = req_str(msg, "key")
        if len(key) > 80:
            raise WireError(ErrorCode.BAD_REQUEST, "field 'key' is too long")
        return cls(rid, key)

    def fields(self) -> dict[str, Any]:
        return {"key": self.key}


HISTORY_REQUESTS: tuple[type[Request], ...] = (Profile, History, PastDeal)
