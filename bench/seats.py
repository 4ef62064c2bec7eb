"""The seats every load of bench/capacity.py is made of, and the wheel that paces them.

A seat is one socket (bench/websocket.py); a mover makes a move 2–4 s apart on one
timer wheel shared by every seat of the process. The race server's players
(bench/wsload.py) and the relay's and Colyseus' (:class:`RelayPlayer`,
bench/colyseusload.py) are movers; a spectator only counts its frames. Each load
module builds on these and on nothing of the other's.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import random
import time
from dataclasses import dataclass, field
from typing import Protocol

import msgpack  # type: ignore[import-untyped]

from client.load import LoadStats

from .websocket import Reader, Socket

__all__ = [
    "MOVE_EVERY",
    "Load",
    "Mover",
    "Paced",
    "RelayPlayer",
    "Room",
    "Seat",
    "Spectator",
    "Wheel",
    "events_in",
]

MOVE_EVERY = (2.0, 4.0)  # seconds between one player's moves, uniform
_TICK = 0.01  # the wheel looks at its heap at least this often (s)
_pack = msgpack.packb
# An ``events`` frame (docs/protocol.md "Batched events"): the server writes this
# map header and key order by hand, then the array of its events.
_BATCH = b"\xa4type\xa6events\xa6events"
_COUNT_AT = 1 + len(_BATCH)  # the array's header, from the frame's first byte


def events_in(data: bytes, start: int) -> int:
    """How many room events the server frame at ``data[start:]`` holds: an
    ``events`` frame's count (read from its array header, nothing decoded), else 1."""
    if not data.startswith(_BATCH, start + 1):
        return 1
    head = data[start + _COUNT_AT]
    if head == 0xDC:  # array 16
        return int.from_bytes(data[start + _COUNT_AT + 1 : start + _COUNT_AT + 3], "big")
    if head == 0xDD:  # array 32
        return int.from_bytes(data[start + _COUNT_AT + 1 : start + _COUNT_AT + 5], "big")
    return head - 0x90  # fixarray


class Load(Protocol):
    """What a seat reads of the load it belongs to (bench/wsload.py ``HumanLoad``)."""

    stats: LoadStats
    rng: random.Random
    wheel: Wheel
    reader: Reader
    stopping: bool


# ---------------------------------------------------------------------- the pace


class Wheel:
    """Every player's next move time in one heap, served by one task.

    An entry is ``(when, order, generation, player)``; a player that reschedules
    bumps its generation, which makes its older entries stale (skipped).
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, Paced]] = []
        self._order = itertools.count()
        self._task: asyncio.Task[None] | None = None

    def at(self, when: float, player: Paced) -> None:
        heapq.heappush(self._heap, (when, next(self._order), player.generation, player))

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        heap, pop, clock = self._heap, heapq.heappop, time.perf_counter
        while True:
            now = clock()
            while heap and heap[0][0] <= now:
                when, _, generation, player = pop(heap)
                if generation == player.generation:
                    player.due(when, now)
            delay = heap[0][0] - now if heap else _TICK
            await asyncio.sleep(min(delay, _TICK))

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


class Paced:
    """A seat with a schedule: :meth:`due` when its next move falls due."""

    generation = 0

    def due(self, when: float, now: float) -> None:
        raise NotImplementedError


# ---------------------------------------------------------------------- seats


class Seat(Paced):
    """One socket of the load."""

    def __init__(self, sock: Socket, load: Load) -> None:
        self.sock = sock
        self.load = load
        self.stats = load.stats
        self.in_flight = False
        self.sent = 0.0  # when the move in flight was sent
        sock.on_close = self._closed

    def _closed(self, code: int) -> None:
        if self.load.stopping:
            return
        self.stats.disconnects += 1
        self.stats.errors[f"closed:{code}"] += 1
        if self.in_flight:
            self.in_flight = False
            self.stats.unacknowledged += 1

    def play(self) -> None:
        """Take the frames from now on (the seat is set up)."""
        self.load.reader.add(self.sock, stamped=isinstance(self, Mover))


class Spectator(Seat):
    """A spectator: counts its room events (a frame, or the events of a batch),
    decoding none."""

    def play(self) -> None:
        self.sock.on_frame = self._frame
        super().play()

    def _frame(self, data: bytes, start: int, end: int) -> None:
        self.stats.events += events_in(data, start)


class Mover(Seat):
    """A seat that moves on :class:`Wheel`'s schedule: 2–4 s apart, from a random phase."""

    def __init__(self, sock: Socket, load: Load) -> None:
        super().__init__(sock, load)
        self.next = 0.0
        self.pending = False  # a move fell due that could not be made yet

    def schedule(self, now: float) -> None:
        self.next = now + self.load.rng.random() * sum(MOVE_EVERY) / 2
        self.load.wheel.at(self.next, self)

    def due(self, when: float, now: float) -> None:
        if self.load.stopping:
            return
        generation = self.generation
        self.load.reader.drain(self.sock)  # what came since: a new deal, a rematch to lead
        if self.generation != generation:  # what came let an overdue move go already
            return
        if self.ready():
            self.move(now)
        else:
            self.pending = True
            self.waiting(now)

    def ready(self) -> bool:
        return not self.in_flight

    def waiting(self, now: float) -> None:
        """A move fell due while :meth:`ready` was false."""

    def move(self, now: float) -> None:
        """Send the move, and schedule the next."""
        rng = self.load.rng
        self.pending = False
        self.generation += 1
        self.next = max(self.next, now - MOVE_EVERY[1]) + rng.uniform(*MOVE_EVERY)
        self.load.wheel.at(self.next, self)
        self.in_flight = True
        self.sock.eager = True  # its reply is due
        self.sent = time.perf_counter()
        self.send_move()

    def send_move(self) -> None:
        raise NotImplementedError

    def answered(self) -> None:
        """The move in flight was answered: a move overdue goes now."""
        self.in_flight = False
        if self.pending and self.ready() and not self.load.stopping:
            self.move(time.perf_counter())


class RelayPlayer(Mover):
    """A player against the relay: a move-sized frame, acknowledged by its echo.

    ``HEADER`` goes before the move's bytes: none on the bare relay; Colyseus' players
    (bench/colyseusload.py) put its message envelope there, which its relay room
    sends back as it came."""

    HEADER = b""

    def __init__(self, sock: Socket, load: Load, me: int) -> None:
        super().__init__(sock, load)
        self.me = me
        self.rid = 0
        self.frame = b""

    def play(self) -> None:
        self.sock.on_frame = self._frame
        super().play()
        self.schedule(time.perf_counter())

    def send_move(self) -> None:
        self.rid += 1
        move = {"kind": "tableau_tableau", "from": 6, "to": 2, "count": 1}
        msg = {"type": "move", "id": self.rid, "p": self.me, "deal": 1, "n": self.rid, "move": move}
        self.frame = self.HEADER + _pack(msg)
        self.sock.send(self.frame)

    def _frame(self, data: bytes, start: int, end: int) -> None:
        self.stats.events += 1
        frame = self.frame
        if self.in_flight and end - start == len(frame) and data.startswith(frame, start):
            self.stats.ack(self.sent, max(self.sent, self.sock.arrived()))
            self.sock.eager = False
            self.answered()


# ---------------------------------------------------------------------- rooms


@dataclass(slots=True)
class Room:
    """The seats of one room: players (the host first) and spectators."""

    players: list[Mover] = field(default_factory=list)
    watchers: list[Seat] = field(default_factory=list)

    @property
    def seats(self) -> list[Seat]:
        return [*self.players, *self.watchers]

    def abort(self) -> None:
        """Drop every socket opened so far (a room that could not be seated)."""
        for seat in self.seats:
            seat.sock.abort()
