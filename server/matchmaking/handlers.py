"""The quick-match requests: ``queue``, ``unqueue``, ``accept_bots``
(docs/protocol.md, "Quick match"); the queues are server/matchmaking/queues.py's."""

from __future__ import annotations

from typing import Protocol

from protocol import messages as M
from protocol.quick_requests import AcceptBots, Queue, Unqueue
from protocol.requests import Request

from ..peer import Peer
from ..rooms.handlers import Front, Handler, on
from .queues import QuickMatch

__all__ = ["QUICK_HANDLERS", "QuickDesk"]


class QuickDesk(Front, Protocol):
    quick: QuickMatch


async def _queue(desk: QuickDesk, conn: Peer, req: Queue) -> None:
    await desk.quick.join(req.id, conn, desk.session_of(conn), req.ladder)


async def _unqueue(desk: QuickDesk, conn: Peer, req: Unqueue) -> None:
    await desk.quick.leave(desk.session_of(conn).player)
    conn.send(M.ok(req.id))


async def _accept_bots(desk: QuickDesk, conn: Peer, req: AcceptBots) -> None:
    await desk.quick.accept_bots(desk.session_of(conn).player)
    conn.send(M.ok(req.id))  # ahead of ``matched``: the room is made after


QUICK_HANDLERS: dict[type[Request], Handler[QuickDesk]] = dict(
    [on(Queue, _queue), on(Unqueue, _unqueue), on(AcceptBots, _accept_bots)]
)
