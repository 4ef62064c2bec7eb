"""The requests of docs/protocol.md "Rooms" as typed methods of a session.

A mixin so that :mod:`client.session` holds only the machinery (correlation,
sequencing, reconnects) and this file reads like the protocol's table of requests.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from protocol.messages import Role
from protocol.moves import Move, MoveKind

from .errors import ClientError, ConnectionLost, ServerError
from .room import RoomView

__all__ = ["MoveLike", "Moved", "RoomRequests"]

MoveLike = Move | Mapping[str, Any] | str  # an engine Move, a wire map, or a bare kind


@dataclass(frozen=True, slots=True)
class Moved:
    """An accepted move: the ``moved`` reply, and how long it took to come back."""

    deal: int
    t: int  # ms since the deal started, by the server's clock
    outcome: dict[str, Any]  # the engine's OUTCOME (docs/protocol.md, ``move``)
    board: dict[str, Any]  # the mover's board view after it, as the session keeps it
    score: int  # the mover's score for this deal so far
    latency: float  # seconds from sending the move to its acknowledgement

    @property
    def status(self) -> str:
        return str(self.outcome.get("status", "playing"))


def move_to_wire(move: MoveLike) -> dict[str, Any]:
    if isinstance(move, Move):
        return move.to_wire()
    if isinstance(move, str):
        return {"kind": MoveKind(move).value}
    return dict(move)


MOVE_ATTEMPTS = 4
"""How many times one move is sent in all, when connections keep dropping under it."""


class RoomRequests:
    """Room requests on top of :meth:`request`; :class:`client.session.Session` uses it."""

    room: RoomView | None
    queued: str | None  # the ladder whose quick-match queue we wait in
    bots_offered: bool
    _moving: asyncio.Lock  # one move at a time: each takes its number from the last reply

    async def wait_update(self, timeout: float | None = None) -> bool:
        raise NotImplementedError

    async def _settled(self) -> None:
        """Wait for the snapshot a stale board asked for (if one is on its way)."""
        raise NotImplementedError

    async def _reconnected(self) -> bool:
        """Wait until the session is on an open connection again (resumed after a
        drop) or has ended for good; whether it is connected."""
        raise NotImplementedError

    async def request(
        self, kind: str, /, timeout: float | None = None, **fields: Any
    ) -> dict[str, Any]:
        raise NotImplementedError

    async def timed_request(
        self, kind: str, timeout: float | None = None, /, **fields: Any
    ) -> tuple[dict[str, Any], float]:
        raise NotImplementedError

    def _joined(self) -> RoomView:
        # The reader installed the room from the reply before the caller resumed.
        assert self.room is not None
        return self.room

    async def create_room(self, settings: Mapping[str, Any] | None = None) -> RoomView:
        """Create a room (we become its host) with optional partial settings."""
        fields: dict[str, Any] = {"settings": dict(settings)} if settings else {}
        await self.request("create_room", **fields)
        return self._joined()

    async def join_room(self, code: str, role: Role = Role.PLAYER) -> RoomView:
        """Join by code as a player or a spectator."""
        await self.request("join_room", code=code, role=Role(role).value)
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
        """Host: end the running deal for everyone (the break follows, or the
        next deal with ``break_seconds`` 0); during the break, deal the next now."""
        await self.request("next_deal")

    async def ready(self) -> None:
        """Player: ready for the next deal, during the break between deals."""
        await self.request("ready")

    async def react(self, reaction: str) -> None:
        """A reaction for the room to see: ``clap``, ``wow``, ``laugh``, ``fire``,
        ``wave`` or ``gg`` (each member gets a ``reaction`` event)."""
        await self.request("react", reaction=reaction)

    async def room_info(self, code: str) -> dict[str, Any]:
        """What a room is doing (state, players' names, seats free), without joining."""
        reply = await self.request("room_info", code=code)
        return {k: v for k, v in reply.items() if k not in ("type", "id")}

    async def forecast(self) -> dict[str, Any]:
        """The room's players on its ladder: ``ladder`` and per player ``rating``,
        ``rounds``, ``provisional`` and ``predicted`` (the placing the rating
        model expects; a rated room shows it before each round)."""
        reply = await self.request("forecast")
        return {k: v for k, v in reply.items() if k not in ("type", "id")}

    async def ladder(self, ladder: str, friends: bool = False) -> dict[str, Any]:
        """A ladder's ``top`` 100, our ``position`` with the rows ``around`` it,
        our rating ``chart``; with ``friends``, the friends-only table too."""
        fields: dict[str, Any] = {"ladder": ladder} | ({"friends": True} if friends else {})
        reply = await self.request("ladder", **fields)
        return {k: v for k, v in reply.items() if k not in ("type", "id")}

    async def queue(self, ladder: str = "classic-draw1") -> dict[str, Any]:
        """ "Race now" on ``ladder`` (signed in): wait for rivals of close rating.
        The reply's ``position`` and ``waited``; once matched the server seats us
        and :attr:`room` is the room (:meth:`matched` waits for it), rated, its
        first deal starting by itself at ``room.starts_at``."""
        reply = await self.request("queue", ladder=ladder)
        self.queued, self.bots_offered = ladder, False
        return {k: v for k, v in reply.items() if k not in ("type", "id")}

    async def unqueue(self) -> None:
        """Leave the queue (at once)."""
        await self.request("unqueue")
        self.queued = None

    async def accept_bots(self) -> None:
        """After 30 s in the queue: race two bots instead, unrated."""
        await self.request("accept_bots")

    async def matched(self, timeout: float | None = None) -> RoomView:
        """The room the queue seated us in, once it has."""
        async with asyncio.timeout(timeout):
            while self.room is None:
                await self.wait_update()
        return self.room

    async def rematch(self) -> None:
        """Host: start another round once the last is over."""
        await self.request("rematch")

    async def remove_player(self, player: str) -> None:
        await self.request("remove_player", player=player)

    async def close_room(self) -> None:
        await self.request("close_room")

    async def snapshot(self) -> RoomView:
        """Ask for the whole room again (the session does this itself on a gap)."""
        await self.request("snapshot")
        return self._joined()

    async def deal_log(self, deal: int) -> dict[str, list[dict[str, Any]]]:
        """Every player's move log of a past deal of the round (each move with its
        ``result``), which room views leave out; the entry of ``history`` keeps it,
        so a second call asks nothing. ``ServerError("wrong_deal")`` for a deal
        not over for everyone."""
        room = self.room
        past = next((h for h in room.history if h.get("number") == deal), None) if room else None
        if past is not None and isinstance(past.get("logs"), dict):
            logs: dict[str, list[dict[str, Any]]] = past["logs"]
            return logs
        reply = await self.request("deal_log", deal=deal)
        logs = reply.get("logs") or {}
        if self.room is not None:
            for entry in self.room.history:
                if entry.get("number") == deal:
                    entry["logs"] = logs
        return logs

    async def ping(self) -> int:
        """The server's clock, in ms since the epoch."""
        return int((await self.request("ping"))["now"])

    async def move(self, move: MoveLike, *, deal: int | None = None, n: int | None = None) -> Moved:
        """Play a move in the running deal (or ``deal``, when given), exactly once.

        ``n`` is the move's number in our log of the deal (docs/protocol.md, ``move``):
        by default the ``logged`` of our board view. Moves go one at a time, so that
        each one's number is read from the board the previous reply left.

        When the connection drops before the reply, or the server answers
        ``storage_uncertain`` (its store's answer was lost), the session resumes
        or re-syncs and the very same request goes again: the server answers a number it has logged
        with the original reply, so the move is played once whether the first one
        got through or not. It is not sent again in another room or round (deal
        numbers start over each round), nor more than :data:`MOVE_ATTEMPTS` times
        in all; then ``ConnectionLost`` is raised and :attr:`room` tells.

        Raises ``ServerError`` with the engine's reason (e.g. ``not_one_lower``),
        ``wrong_deal``/``deal_over`` when the deal has moved on, or
        ``wrong_move_number`` (its ``frame["expected"]`` is our log's length) when
        our board was not the server's: the session has fetched a snapshot by then,
        so :attr:`room` is current and the caller may decide again.
        """
        async with self._moving:
            room = self.room
            if deal is None:
                deal = room.deal_number if room is not None else None
            if n is None:
                n = _logged(room, deal)
            where = (room.code, room.round) if room is not None else None
            fields = {"move": move_to_wire(move), "deal": deal or 0, "n": n}
            for attempt in range(1, MOVE_ATTEMPTS + 1):
                try:
                    reply, latency = await self.timed_request("move", None, **fields)
                    break
                except ConnectionLost:
                    if attempt == MOVE_ATTEMPTS or not await self._reconnected():
                        raise
                    now = self.room
                    if now is None or (now.code, now.round) != where:
                        raise  # the move's deal numbering is gone with its round
                except ServerError as exc:
                    if exc.code == "storage_uncertain" and attempt < MOVE_ATTEMPTS:
                        # Maybe applied, maybe not: the same n settles it (the
                        # original reply, or applied once), as after a lost reply.
                        with contextlib.suppress(ClientError, ServerError):
                            await self.snapshot()
                        now = self.room
                        if now is not None and (now.code, now.round) == where:
                            continue
                    if exc.code == "wrong_move_number":
                        with contextlib.suppress(ClientError, ServerError):
                            await self.snapshot()
                    raise
            # The reply's outcome is applied to our board by now (in frame
            # order, as it came); one that left it stale is taken again before
            # the next move takes its number from it.
            await self._settled()
            board = self.room.my_board if self.room is not None else None
        return Moved(
            deal=int(reply.get("deal", deal or 0)),
            t=int(reply.get("t", 0)),
            outcome=dict(reply.get("outcome") or {}),
            board=dict(board or {}),
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


def _logged(room: RoomView | None, deal: int | None) -> int:
    """Our next move's number in ``deal``: the ``logged`` of our board view of it,
    or for a deal over for everyone the length of our log in its summary.
    A guess would be worse than useless: a number the log holds, with the move
    logged there, is taken for a retry of it (0 only when we hold nothing)."""
    if room is None:
        return 0
    board = room.my_board if room.deal_number == deal else None
    if board is not None and isinstance(board.get("logged"), int):
        return int(board["logged"])
    for past in room.history:
        if past.get("number") == deal:
            # The summary says it without the log (a room view carries none).
            summary = past.get("summary")
            mine = summary.get(room.me) if isinstance(summary, dict) else None
            if isinstance(mine, dict) and isinstance(mine.get("logged"), int):
                return int(mine["logged"])
            logs = past.get("logs")
            log = logs.get(room.me) if isinstance(logs, dict) else None
            return len(log) if isinstance(log, list) else 0
    return 0
