"""What the service asks of the cluster, where several nodes share one Redis
(server/cluster/); the single-process server has none and never imports it."""

from __future__ import annotations

from typing import Protocol

from protocol.requests import Request

from ..peer import Peer
from ..rooms.runner import Writer

__all__ = ["ClusterHooks"]


class ClusterHooks(Protocol):
    """The service asks the cluster first: to route a request, when a client
    disconnects, and to claim a room before rebuilding it."""

    async def route(self, conn: Peer, req: Request) -> bool:
        """True when the request was sent on to the node that runs its room."""

    def disconnected(self, conn: Peer) -> None: ...

    async def claim(self, code: str) -> bool:
        """True when this node may run the room: it now holds the room's lease,
        under a token new to this claim. Only the single-flight adoption
        (server/service/adoption.py) calls it, for a room not running here."""

    async def release(self, code: str) -> None:
        """Give the room's lease back (an adoption that came to nothing)."""

    def writer(self, code: str) -> Writer:
        """Appends fenced by the token the room's lease holds here now."""
