"""The requests about the daily deal (docs/protocol.md, "Daily deal").

Part of :data:`protocol.requests.REQUESTS`; parsed the same way as every request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .request_fields import Request

__all__ = ["DAILY_REQUESTS", "Daily"]


@dataclass(frozen=True, slots=True)
class Daily(Request):
    """The published days: the commitments of today and the days ahead, the
    seeds and proofs of the days that are over."""

    TYPE: ClassVar[str] = "daily"


DAILY_REQUESTS: tuple[type[Request], ...] = (Daily,)
