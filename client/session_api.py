"""The requests of docs/protocol.md "Rooms" as typed methods of a session.

A mixin so that :mod:`client.session` holds only the machinery (correlation,
sequencing, reconnects) and this file reads like the protocol's table of requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from protocol.moves import Move, MoveKind

from .room import RoomState

__all__ = ["MoveLike", "Moved", "RoomRequests"]

MoveLike = Move | Mapping[str, Any] | str  # an engine Move, a wire map, or a bare kind


@dataclass(frozen=True, slots=True)
class Moved:
    """An accepted move: the ``moved`` reply, and how long it took to come back."""

    deal: int
    t: int  # ms since the deal started, by the server's clock
    result: dict[str, Any]  # cards, turned, events, pass_started, status, undone
    board: dict[str, Any]  # the mover's new board view
    score: int  # the mover's score for this deal so far
    latency: float  # seconds from sending the move to its acknowledgement

    @property
    def status(self) -> str:
        return str(self.result.get("status", self.board.get("status", "playing")))


def move_to_wire(move: MoveLike) -> dict[str, Any]:
    if isinstance(move, Move):
        return move.to_wire()
    if isinstance(move, str):
        return {"kind": MoveKind(move).value}
    return dict(move)


class RoomRequests:
    """Room requests on top of :meth:`request`; :class:`client.session.Session` uses it."""

    room: RoomState | None

    async def request(
        self, kind: str, /, timeout: float | None = None, **fields: Any
    ) -> dict[str, Any]:
        raise NotImplementedError

    async def timed_request(
        self, kind: str, timeout: float | None = None, /, **fields: Any
    ) -> tuple[dict[str, Any], float]:
        raise NotImplementedError

    def _joined(self) -> RoomState:
        # The reader installed the room from the reply before the caller resumed.
        assert self.room is not None
        return self.room

    async def create_room(self, settings: Mapping[str, Any] | None = None) -> RoomState:
        """Create a room (we become its host) with optional partial settings."""
        fields: dict[str, Any] = {"settings": dict(settings)} if settings else {}
        await self.request("create_room", **fields)
        return self._joined()

    async def join_room(self, code: str, role: str = "player") -> RoomState:
        """Join by code as ``"player"`` or ``"spectator"``."""
        await self.request("join_room", code=code, role=role)
        return self._joined()

    async def leave_room(self) -> None:
        await self.request("leave_room")

    async def update_settings(
        self, settings: Mapping[str, Any] | None = None, **changes: Any
    ) -> None:
        """Host: change settings; ``ServerError("bad_setting")`` names the ``field``."""
        await self.request("update_settings", settings={**(settings or {}), **changes})

    async def start(self) -> None:
        """Host: start the first round from the lobby."""
        await self.request("start")

    async def next_deal(self) -> None:
        """Host: end the running deal for everyone and deal the next."""
        await self.request("next_deal")

    async def rematch(self) -> None:
        """Host: start another round once the last is over."""
        await self.request("rematch")

    async def remove_player(self, player: str) -> None:
        await self.request("remove_player", player=player)

    async def close_room(self) -> None:
        await self.request("close_room")

    async def snapshot(self) -> RoomState:
        """Ask for the whole room again (the session does this itself on a gap)."""
        await self.request("snapshot")
        return self._joined()

    async def ping(self) -> int:
        """The server's clock, in ms since the epoch."""
        return int((await self.request("ping"))["now"])

    async def move(self, move: MoveLike, *, deal: int | None = None) -> Moved:
        """Play a move in the running deal (or ``deal``, when given).

        Raises ``ServerError`` with the engine's reason (e.g. ``not_one_lower``) or
        ``wrong_deal``/``deal_over`` when the deal has moved on.
        """
        if deal is None:
            deal = self.room.deal_number if self.room is not None else None
        reply, latency = await self.timed_request(
            "move", None, move=move_to_wire(move), deal=deal or 0
        )
        return Moved(
            deal=int(reply.get("deal", deal or 0)),
            t=int(reply.get("t", 0)),
            result=dict(reply.get("result") or {}),
            board=dict(reply.get("board") or {}),
            score=int(reply.get("score", 0)),
            latency=latency,
        )

    async def draw(self) -> Moved:
        return await self.move("draw")

    async def undo(self) -> Moved:
        """Take back the last move (house rule; only if it exposed nothing)."""
        return await self.move("undo")

    async def resign(self) -> Moved:
        """Give up this deal: it ends for us and scores where it stands."""
        return await self.move("resign")

    async def auto_complete(self) -> Moved:
        """Play every remaining card home (stock and waste empty, all face up)."""
        return await self.move("auto_complete")
