"""The ``daily`` request: the published days, to anyone who said hello.

Guests ask too: the commitments are public by design (the point of publishing
them early is that anyone can keep a copy), and a seed is in the reply only
once its day is over (schedule.py ``public_view``).
"""

from __future__ import annotations

from typing import Protocol

from protocol import messages as M
from protocol.daily_requests import Daily
from protocol.requests import Request

from ..peer import Peer
from ..rooms.handlers import Front, Handler, on
from ..store.base import StoreUnavailable, unavailable
from .publisher import DailyDeals

__all__ = ["DAILY_HANDLERS", "DailyDesk"]


class DailyDesk(Front, Protocol):
    """What the daily requests need of the service."""

    daily: DailyDeals


async def _daily(desk: DailyDesk, conn: Peer, req: Daily) -> None:
    try:
        today, days = await desk.daily.listing()
    except StoreUnavailable as exc:
        raise unavailable(f"the daily deals cannot be read: {exc}") from None
    conn.send(M.daily(req.id, today=today.isoformat(), days=days))


DAILY_HANDLERS: dict[type[Request], Handler[DailyDesk]] = dict([on(Daily, _daily)])
