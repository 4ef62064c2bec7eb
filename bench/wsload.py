"""bench/capacity.py's load: human-pace players on a lean WebSocket client.

The capacity benchmark must drive 10,000 players (11,250 sockets, ~3,333 moves a
second, each fanning out to 9 frames: ~30,000 frames a second in) from a third
of one core, or it measures itself. client/load.py cannot (a websockets
connection per seat, a coroutine per seat, every frame a wake-up). Here:

- **The sockets** are bench/websocket.py's: framed by hand, read in batches, a
  round trip ending at the kernel's arrival stamp of its reply.
- **The seats** decode only what a player needs: its own ``moved`` reply (the
  move's OUTCOME, applied to the board view it keeps: protocol/outcomes.py
  ``apply_outcome``, a few list copies; not checked by its digest, which would
  cost more than applying it: a board gone wrong shows as a refused move, which
  takes a snapshot), ``deal_started``, ``round_over``, snapshots and errors.
  ``progress`` events, alone or batched in an ``events`` frame, are recognized by
  their first bytes and counted, never decoded; a spectator only counts its
  events the same way.
- **The moves** are still real and legal, and the player's own: the product's bot
  (:class:`client.bot.Bot`) decides from the player's board view, the latest
  ``moved`` reply or ``deal_started``. The players of a room are dealt the same
  layout and the bot is deterministic, so the room shares its decisions by view
  (:class:`client.load.Decisions`): only the first player at a position asks the
  bot, the others look the decision up.
- **The pace** is one timer wheel (:class:`~bench.seats.Wheel`): a heap of every player's next
  move time, served by one task, instead of a sleeping coroutine per player. Each
  player moves every 2–4 s (uniform) from a random phase; a player whose move
  falls due while it cannot move (its deal is over, its last move unanswered)
  moves as soon as it can, catching up by one move, not a burst.

The seats, the wheel and the relay's players are bench/seats.py's: the relay's
players (:class:`~bench.seats.RelayPlayer`) send a move-sized frame and wait for its
echo, found by comparing bytes, as bench/server.py's do; so do Colyseus'
(bench/colyseusload.py: the same seats, behind its matchmaker and envelope).

A dropped socket is counted (``disconnects``, and an error ``closed:CODE``) and its
seat stops: no resume, since a benchmark step with a drop has failed anyway.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgpack  # type: ignore[import-untyped]

from client.bot import RESIGN, Bot
from client.codec import MSGPACK
from client.load import Decisions, Following, LoadStats
from client.session import PROTOCOL_VERSION
from protocol.outcomes import OutcomeMismatch, apply_outcome
from server.collector import collect_garbage

from .colyseusload import open_colyseus_room
from .seats import Mover, RelayPlayer, Room, Seat, Spectator, Wheel, events_in
from .websocket import Reader, Socket, _ignore, open_socket

_QUIET = 5.0  # s a player with nothing to play waits before asking for a snapshot
_OPENING = 50  # rooms being opened at once
_MOVED_ON = frozenset({"wrong_deal", "deal_over", "wrong_state"})  # not the bot's fault
_RETRY = frozenset({"rate_limited", "storage_unavailable"})  # nothing applied
_BEHIND = "wrong_move_number"  # our board is not the server's: take a snapshot
# A server frame is a msgpack map whose first key is "type": the bytes after the
# map's header byte name its kind.
_PROGRESS = b"\xa4type\xa8progress"
_EVENTS = b"\xa4type\xa6events"  # a batch of progress events (bench/seats.py events_in)
_TYPE_KEY = b"\xa4type"
_IGNORED = frozenset(
    {b"progress", b"deal_over", b"sheet", b"members", b"first_finisher", b"settings"}
)
_unpack = msgpack.unpackb
_pack = msgpack.packb


class RacePlayer(Mover, Following):
    """A race player: its board view from its replies and ``deal_started``, its moves
    from the bot; the host also starts the room and its rematches."""

    def __init__(self, sock: Socket, load: HumanLoad, decisions: Decisions) -> None:
        super().__init__(sock, load)
        self.decisions = decisions
        # No search for a winning line: tens of ms at a Thoughtful deal's start would
        # stall every other seat of the process. The preferences are the same.
        self.bot = Bot(search_budget=0)
        self.host = False
        self.state = "lobby"
        self.deal = 0
        self.board: dict[str, Any] | None = None
        self.rid = 0  # the id of the move in flight
        self._ids = itertools.count(1)
        self._refused = 0  # engine refusals in a row: our view and the server's differ
        self._waiting_since: float | None = None  # with nothing to play, since
        self._asked = 0  # the id of the snapshot asked for, 0: none

    def play(self) -> None:
        self.sock.on_frame = self._frame
        super().play()
        self.schedule(time.perf_counter())
        self._lead()
        self._waits()

    def ready(self) -> bool:
        board = self.board
        return (
            not self.in_flight
            and self.state == "playing"
            and board is not None
            and board.get("status") == "playing"
        )

    def _waits(self) -> None:
        """Whether this seat waits on its socket now (``Socket.eager``: read at once)."""
        self.sock.eager = not self.ready() or bool(self._asked)

    def waiting(self, now: float) -> None:
        """Nothing to play when a move fell due: after a quiet spell, a snapshot (an
        event we needed may have gone missing)."""
        if self.in_flight:
            return
        if self._waiting_since is None:
            self._waiting_since = now
        elif now - self._waiting_since >= _QUIET and not self._asked:
            self._waiting_since = now
            self._resync()
        self.load.wheel.at(now + _QUIET, self)

    def send_move(self) -> None:
        self._waiting_since = None
        board = self.board
        assert board is not None
        move = self.decisions.decide(self.bot, self.deal, board) if self._refused < 3 else RESIGN
        self.rid = next(self._ids)
        n = board.get("logged", 0)  # our next number in the log (docs/protocol.md)
        request = {"type": "move", "id": self.rid, "deal": self.deal, "n": n}
        request["move"] = move.to_wire()
        self.sock.send(_pack(request))

    def _frame(self, data: bytes, start: int, end: int) -> None:
        stats = self.stats
        if data.startswith(_PROGRESS, start + 1):  # most frames: another player moved
            stats.events += 1
            return
        if data.startswith(_EVENTS, start + 1):  # progress events, batched
            stats.events += events_in(data, start)
            return
        if data.startswith(_TYPE_KEY, start + 1):
            n = data[start + 6] - 0xA0
            if data[start + 7 : start + 7 + n] in _IGNORED:
                stats.events += 1
                return
        frame = _unpack(data[start:end])
        if "seq" in frame:
            stats.events += 1
        kind = frame.get("type")
        if frame.get("id") == self.rid and self.in_flight:
            self._reply(frame, kind)
        elif self._asked and frame.get("id") == self._asked:
            self._asked = 0
            if kind == "snapshot":
                self._install(frame.get("room"))
                self._lead()
            self._unblocked()
        elif kind == "deal_started":
            self.state = "playing"
            self._deal_view(frame["deal"])
            self._unblocked()
        elif kind == "round_over":
            self.state = "round_over"
            self._lead()
        elif kind == "room_closed":
            self.state = "closed"
        elif kind == "error":  # the reply to a start or rematch, or unsolicited
            stats.errors[str(frame.get("code"))] += 1
        self._waits()

    def _reply(self, frame: dict[str, Any], kind: Any) -> None:
        if kind != "moved":
            self.in_flight = False
            self._refused_move(str(frame.get("code")))
            self._unblocked()
            return
        self.stats.ack(self.sent, max(self.sent, self.sock.arrived()))
        self._refused = 0
        outcome = frame["outcome"]
        status = outcome["status"]
        if status != "playing":
            self.stats.deals[status] += 1
        board = self.board
        if frame.get("deal") == self.deal and board is not None:
            # Not checked by the digest: that would cost more than applying. A
            # board gone wrong shows as a refused move, which takes a snapshot.
            try:
                self.board = apply_outcome(board, outcome)
            except OutcomeMismatch:  # our board is not the server's any more
                self.board = None
                self._resync()
        self.answered()

    def _unblocked(self) -> None:
        """Something changed that may let an overdue move go."""
        if self.pending and self.ready() and not self.load.stopping:
            self.move(time.perf_counter())

    def _refused_move(self, code: str) -> None:
        self.stats.errors[code] += 1
        if code in _MOVED_ON:
            self.board = None  # wait for the next deal_started (or resync)
        elif code in _RETRY:
            pass  # nothing was applied: the next move is this one again
        elif code == _BEHIND:
            self._resync()
        else:  # the engine disagreed with our view of the board
            self._refused += 1
            self._resync()

    def _lead(self) -> None:
        """The host keeps the room dealing: start it, rematch when a round ends."""
        if self.host and self.state in ("lobby", "round_over"):
            kind = "start" if self.state == "lobby" else "rematch"
            self.sock.send(_pack({"type": kind, "id": kind}))  # the reply is not waited for

    def _resync(self) -> None:
        self.stats.resyncs += 1
        self._asked = next(self._ids)
        self.sock.eager = True
        self.sock.send(_pack({"type": "snapshot", "id": self._asked}))


# ---------------------------------------------------------------------- rooms


class _Setup:
    """A socket's frames before it plays: decoded, the reply to ``id`` awaited."""

    def __init__(self, sock: Socket) -> None:
        self.sock = sock
        self.waiting: asyncio.Future[dict[str, Any]] | None = None
        self.rid: Any = None
        sock.on_frame = self._frame

    def _frame(self, data: bytes, start: int, end: int) -> None:
        frame = _unpack(data[start:end])
        if self.waiting is not None and not self.waiting.done() and frame.get("id") == self.rid:
            self.waiting.set_result(frame)

    async def call(self, frame: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        self.rid = frame["id"]
        self.waiting = asyncio.get_running_loop().create_future()
        self.sock.send(_pack(frame))
        reply = await asyncio.wait_for(self.waiting, timeout)
        if reply.get("type") == "error":
            raise SetupError(str(reply.get("code")))
        return reply


class SetupError(RuntimeError):
    """A room could not be opened: the server refused a request (its code)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


async def _enter(url: str, name: str, request: dict[str, Any]) -> tuple[Socket, dict[str, Any]]:
    """A new session at ``url`` that sends ``request`` (create or join a room)."""
    sock = await open_socket(url, MSGPACK)
    try:
        setup = _Setup(sock)
        await setup.call({"type": "hello", "id": 0, "version": PROTOCOL_VERSION, "name": name})
        reply = await setup.call({"id": 1, **request})
    except BaseException:
        sock.abort()
        raise
    sock.on_frame = _ignore
    return sock, reply


async def open_race_room(
    load: HumanLoad, urls: Sequence[str], index: int, players: int, settings: dict[str, Any]
) -> Room:
    """A room of ``players`` players and a spectator on the race server.

    ``urls``: where each seat connects, the creator first and the spectator last
    (several nodes of one cluster: the creator's node runs the room, and a seat on
    another node is tunnelled to it)."""
    room = Room()
    decisions = Decisions()

    def player(sock: Socket, reply: dict[str, Any]) -> None:
        seat = RacePlayer(sock, load, decisions)
        seat._install(reply.get("room"))
        room.players.append(seat)

    try:
        create = {"type": "create_room", "settings": settings}
        sock, joined = await _enter(urls[0], f"load{index}-p1", create)
        player(sock, joined)
        join = {"type": "join_room", "code": joined["room"]["code"], "role": "player"}
        for p in range(1, players):
            player(*await _enter(urls[p], f"load{index}-p{p + 1}", join))
        spectate = {**join, "role": "spectator"}
        sock, _ = await _enter(urls[players], f"load{index}-s1", spectate)
        room.watchers.append(Spectator(sock, load))
    except BaseException:
        room.abort()
        raise
    return room


async def open_relay_room(load: HumanLoad, url: str, index: int, players: int) -> Room:
    """A room of ``players`` players and a spectator on the bare relay."""
    room_url = f"{url}?room={index}"
    room = Room()
    try:
        for p in range(players):
            room.players.append(RelayPlayer(await open_socket(room_url, None), load, p))
        room.watchers.append(Spectator(await open_socket(room_url, None), load))
    except BaseException:
        room.abort()
        raise
    return room


class HumanLoad:
    """The rooms of one benchmark run, paced by one :class:`Wheel`.

    :meth:`add_rooms` opens rooms (on the race server, the relay or Colyseus,
    ``kind``) and sets them playing at once; :meth:`stop` stops them all.
    """

    def __init__(
        self,
        kind: str,
        url: str,
        settings: dict[str, Any],
        players: int = 8,
        placement: Callable[[int], Sequence[str]] | None = None,
    ) -> None:
        """``placement``: for the race server, where room ``i``'s seats connect
        (:func:`open_race_room`'s ``urls``); by default all of them at ``url``."""
        self.kind = kind
        self.url = url
        self.placement = placement
        self.settings = settings
        self.players = players
        self.stats = LoadStats()
        self.rng = random.Random(0)
        self.wheel = Wheel()
        self.reader = Reader()
        self.rooms: list[Room] = []
        self.stopping = False
        self.wheel.start()
        # The server's collector policy (server/collector.py): what is alive frozen
        # ten times a second, so a young pass sees only the last tenth of a
        # second's objects. Left to a raised threshold, a board view kept per seat
        # until its next move made young passes of 30-60 ms: the load's own stalls.
        self.collector = asyncio.get_running_loop().create_task(collect_garbage())

    async def add_rooms(self, count: int) -> None:
        """Open ``count`` more rooms, a few at a time, and set them playing."""
        gate = asyncio.Semaphore(_OPENING)
        first = len(self.rooms)

        async def one(i: int) -> Room:
            async with gate:
                if self.kind == "race":
                    urls = self.placement(i) if self.placement else [self.url] * (self.players + 1)
                    return await open_race_room(self, urls, i, self.players, self.settings)
                if self.kind == "colyseus":
                    return await open_colyseus_room(self, self.url, self.players)
                return await open_relay_room(self, self.url, i, self.players)

        made = await asyncio.gather(
            *(one(i) for i in range(first, first + count)), return_exceptions=True
        )
        failed = [r for r in made if isinstance(r, BaseException)]
        rooms = [r for r in made if isinstance(r, Room)]
        self.rooms.extend(rooms)
        # The seats live for the whole run: out of the collector's passes at once
        # (a full pass over 11,250 seats' objects stalled the load for tens of ms).
        gc.freeze()
        for room in rooms:
            for seat in room.seats:
                seat.play()
        if failed:
            codes = [getattr(f, "code", type(f).__name__) for f in failed]
            raise RuntimeError(f"only {len(rooms)} of {count} rooms opened: {codes[:5]}")

    @property
    def seats(self) -> Sequence[Seat]:
        return [s for r in self.rooms for s in r.seats]

    async def stop(self, grace: float = 5.0) -> None:
        """Make no more moves; give those in flight ``grace`` seconds to be answered
        (a seat still waiting then lost its move); close every socket."""
        self.stopping = True
        self.wheel.stop()
        self.collector.cancel()
        seats = self.seats
        deadline = time.monotonic() + grace
        while any(s.in_flight for s in seats) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        self.stats.unacknowledged += sum(1 for s in seats if s.in_flight)
        for seat in seats:
            seat.sock.close()
        deadline = time.monotonic() + 2.0
        while any(s.sock.transport for s in seats) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        for seat in seats:
            seat.sock.abort()
        self.reader.stop()
