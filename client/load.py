"""The load driver: rooms of bots playing flat out (or at a set rate), measured from
the client side.

One driver for ``klondike-race loadtest`` and the benchmarks (bench/server.py and
bench/redis.py build on it), so there is one definition of what was measured. The
number that matters for the product's promise ("an acknowledged move is never
lost") is the **unacknowledged** moves: sent, and no reply ever came. Refusals are
answers, so they count as errors, not as lost moves.

The moves are the product's bot's (:class:`client.bot.Bot`). The sockets are not
:class:`client.session.Session`\\ s: a session is made for an application (a reader
task per socket, every event folded into a :class:`~client.room.RoomView`, a
wake-up per frame, a future per request, a client-side rate limiter), and with
eight players and a spectator to a room every move brings each socket of the room
an event. On a two-core machine that load spent more CPU per move than the server
did and measured itself. A :class:`Seat` here speaks the protocol inline instead:
one coroutine per socket sends a request and reads frames until its reply, acting
only on the few events a bot needs (``deal_started``, ``round_over``); a player
does not even decode the events it ignores (spectators decode everything, as a
client rendering the room must). It still resumes with its token after a drop,
and asks for a snapshot when it has lost track.

The players of a room are dealt the same layout and the bot is deterministic, so
they play the same game: the room keeps the decisions by view
(:class:`Decisions`), and only the first player to reach a position asks the bot.

Each room's host plays too, and starts a rematch whenever a round ends, so rooms
keep dealing for the whole run.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from protocol.moves import Move
from protocol.outcomes import OutcomeMismatch, apply_outcome, view_digest

from .bot import RESIGN, Bot
from .codec import decode, encode
from .connection import open_socket, with_backoff
from .errors import ServerError
from .session import NO_RESUME, say_hello

__all__ = [
    "DEFAULT_SETTINGS",
    "PROTOCOL_RATE_LIMIT",
    "Decisions",
    "Following",
    "Load",
    "LoadProgress",
    "LoadReport",
    "LoadRoom",
    "LoadStats",
    "Pacer",
    "Player",
    "Seat",
    "Watcher",
    "open_rooms",
    "percentile",
    "run_load",
]

log = logging.getLogger(__name__)

DEFAULT_SETTINGS: dict[str, Any] = {"deals_per_round": 20}
FLAT_OUT: dict[str, Any] = {"break_seconds": 0}
"""Settings every load room has unless told otherwise: flat-out seats do not
look at results, so the next deal follows the last one at once."""
PROTOCOL_RATE_LIMIT = 50.0  # frames a second per connection a server allows by default
_HEADROOM = 0.9  # under a rate limit a seat sends at most 90 % of it
_MOVED_ON = frozenset({"wrong_deal", "deal_over", "wrong_state"})  # not the bot's fault
_RETRY = frozenset({"rate_limited", "storage_unavailable"})  # nothing applied: try again
_BEHIND = "wrong_move_number"  # our board is not the server's: take a snapshot
_QUIET = 5.0  # seconds a seat with nothing to play waits for a frame before a snapshot
_OPENING = 50  # rooms being opened at once
_RESUME_FOR = 30.0  # seconds a dropped seat tries to resume before it gives up
# Events a player has no use for: counted, not decoded (see Player._next).
_IGNORED = frozenset(
    {b"progress", b"deal_over", b"sheet", b"members", b"first_finisher", b"settings", b"events"}
)
_TYPE_KEY = b"\xa4type"  # msgpack "type": what a server frame's map starts with


@dataclass(slots=True)
class LoadStats:
    """What every seat of a load saw, added up.

    Only moves sent at or after ``window[0]`` and acknowledged by ``window[1]``
    (``time.perf_counter()``) count in ``moves`` and ``latencies``, so that a
    benchmark can leave out its warm-up; the default window holds everything.
    """

    window: tuple[float, float] = (-math.inf, math.inf)
    moves: int = 0  # acknowledged, in the window
    latencies: list[float] = field(default_factory=list)  # seconds, move sent to its ack
    errors: Counter[str] = field(default_factory=Counter)  # refusals and failures, by code
    unacknowledged: int = 0  # moves sent whose reply never came
    deals: Counter[str] = field(default_factory=Counter)  # player-deals finished, by status
    disconnects: int = 0  # unexpected socket closes (each seat resumes by itself)
    resyncs: int = 0  # snapshots fetched because a seat lost track of its deal
    events: int = 0  # room events received by all seats

    def ack(self, sent: float, now: float) -> None:
        if self.window[0] <= sent and now <= self.window[1]:
            self.moves += 1
            self.latencies.append(now - sent)


class Pacer:
    """Spaces one seat's moves ``interval`` seconds apart (0: flat out).

    The first move comes at a random phase, so the seats of a load do not tick
    together, and the schedule does not drift with latency; a seat that fell behind
    catches up by one move, not by a burst.
    """

    def __init__(self, interval: float, rng: random.Random) -> None:
        self.interval = interval
        self.next = time.perf_counter() + rng.random() * interval

    async def wait(self) -> None:
        delay = self.next - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        self.next = max(self.next + self.interval, time.perf_counter() - self.interval)


class Decisions:
    """A room's bot decisions, by board view (and deal).

    The key is the whole view, so a decision is only ever reused for the very
    position it was made for: it is a legal move there whoever plays it. A player
    that takes the room's decision skips the bot's bookkeeping of its own game;
    that matters only if its game ever differs from the others', and then it still
    plays legal moves, chosen by its own bot.
    """

    def __init__(self) -> None:
        self._deal = -1
        self._moves: dict[tuple[Any, ...], Move] = {}

    def decide(self, bot: Bot, deal: int, view: dict[str, Any]) -> Move:
        if deal != self._deal:
            self._deal = deal
            self._moves.clear()
        key = (
            view["moves"], view["stock"], view["waste"], view["passes"],
            tuple(view["waste_cards"]), tuple(view["foundations"]),
            tuple([(p["down"], *p["up"]) for p in view["tableau"]]),
            tuple(view.get("stock_cards", ())),
        )  # fmt: skip
        move = self._moves.get(key)
        if move is None:
            move = self._moves[key] = bot.decide(view)
        return move


# ---------------------------------------------------------------------- seats


async def _hello(url: str, **who: Any) -> tuple[ClientConnection, str, dict[str, Any]]:
    """Open a socket and say hello (a new session with ``name``, or ``token``).

    Unlike a session's socket, a seat's keeps every frame that arrives while it is
    not reading (a paced player between moves): with websockets' default bound it
    would stop reading the socket, and its next reply would wait behind that.
    """
    ws, kind = await open_socket(url, open_timeout=30, max_queue=None)
    try:
        welcome = await say_hello(ws, kind, who)
    except BaseException:
        await ws.close()
        raise
    return ws, kind, welcome


class Seat:
    """One socket of a load; :meth:`play` is what it does with it until stopped.

    ``in_flight`` is true from sending a move until its reply: what
    :meth:`Load.stop` waits for, and counts as unacknowledged when it never comes.
    """

    def __init__(
        self, ws: ClientConnection, stats: LoadStats, *, kind: str = "", url: str = "",
        token: str | None = None,
    ) -> None:  # fmt: skip
        self.ws = ws
        self.stats = stats
        self.kind = kind or (ws.subprotocol or "")
        self.url = url
        self.token = token  # to resume with after a drop; None: do not
        self.in_flight = False

    async def play(self, load: Load, pacer: Pacer) -> None:
        raise NotImplementedError

    async def send(self, frame: Mapping[str, Any]) -> None:
        await self.ws.send(encode(frame, self.kind))

    async def recv(self) -> dict[str, Any]:
        frame = decode(await self.ws.recv(), self.kind)
        if "seq" in frame:
            self.stats.events += 1
        elif frame.get("type") == "events":  # docs/protocol.md "Batched events"
            self.stats.events += len(frame.get("events") or ())
        return frame

    async def _dropped(self, load: Load) -> dict[str, Any] | None:
        """The socket closed under us: count it, resume; the welcome, or None to stop."""
        if load.stopping:
            return None
        self.stats.disconnects += 1
        if self.in_flight:  # the reply can never come now
            self.in_flight = False
            self.stats.unacknowledged += 1
        token = self.token
        if token is None or self.ws.close_code in NO_RESUME:
            return None
        try:
            opened = await with_backoff(
                lambda: _hello(self.url, token=token), lasting=_RESUME_FOR,
                stopped=lambda: load.stopping,
            )  # fmt: skip
        except ServerError:  # unknown_token: the server forgot us
            return None
        if opened is None:
            return None
        self.ws, self.kind, welcome = opened
        return welcome


class Watcher(Seat):
    """A spectator: reads and decodes every frame, as a client rendering the room."""

    async def play(self, load: Load, pacer: Pacer) -> None:
        while True:
            try:
                while True:
                    await self.recv()
            except ConnectionClosed:
                if await self._dropped(load) is None:
                    return


class Following:
    """A player seat's view of its room and deal, taken from the frames it gets:
    the one way this load's players and the capacity benchmark's (bench/wsload.py,
    on its own sockets) follow a room."""

    bot: Bot
    host: bool
    state: str
    deal: int
    board: dict[str, Any] | None
    _refused: int

    def _install(self, room: Mapping[str, Any] | None) -> None:
        """Take state from a room view (``joined``, ``snapshot``, a resume)."""
        if not room:
            self.state, self.board = "closed", None
            return
        self.state = str(room.get("state"))
        self.host = room.get("host") == room.get("me")
        self._deal_view(room.get("deal") or {})

    def _deal_view(self, deal: Mapping[str, Any]) -> None:
        number = int(deal.get("number") or 0)
        if number != self.deal:
            self.bot.new_deal()
            self.deal = number
            self._refused = 0
        board = deal.get("board")
        self.board = board if isinstance(board, dict) else None


class Player(Seat, Following):
    """A player: its own board view from the replies and ``deal_started``, moves
    from :class:`~client.bot.Bot`. The host also starts the room and its rematches."""

    def __init__(
        self, ws: ClientConnection, stats: LoadStats, *, decisions: Decisions | None = None,
        **options: Any,
    ) -> None:  # fmt: skip
        super().__init__(ws, stats, **options)
        self.decisions = decisions or Decisions()
        # No search for a winning line: tens of ms at a Thoughtful deal's start would
        # stall every other seat of the process. The preferences are the same.
        self.bot = Bot(search_budget=0)
        self.host = False
        self.state = "lobby"
        self.deal = 0
        self.board: dict[str, Any] | None = None
        self._ids = itertools.count(1)
        self._refused = 0  # engine refusals in a row: our view and the server's differ

    async def play(self, load: Load, pacer: Pacer) -> None:
        await self._lead()
        while not load.stopping and self.state != "closed":
            try:
                await self._turn(load, pacer)
            except ConnectionClosed:
                welcome = await self._dropped(load)
                if welcome is None:
                    return
                self._install(welcome.get("room"))
                await self._lead()

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send a request; read frames, acting on events, until its reply."""
        rid = next(self._ids)
        await self.send({"type": kind, "id": rid, **fields})
        while True:
            frame = await self._next()
            if frame.get("id") == rid:
                return frame
            await self._event(frame)

    async def _next(self) -> dict[str, Any]:
        """The next frame a player may need, decoded; the others only counted."""
        ws, stats = self.ws, self.stats
        while True:
            data = await ws.recv()
            # Server frames are small maps whose first key is "type": peek at its value.
            if isinstance(data, bytes) and len(data) > 6 and data[1:6] == _TYPE_KEY:
                n = data[6] - 0xA0
                if 0 <= n < 32 and data[7 : 7 + n] in _IGNORED:
                    stats.events += 1
                    continue
            frame = decode(data, self.kind)
            if "seq" in frame:
                stats.events += 1
            return frame

    async def _turn(self, load: Load, pacer: Pacer) -> None:
        board = self.board
        if self.state != "playing" or board is None or board.get("status") != "playing":
            await self._wait()
            return
        if pacer.interval:
            await pacer.wait()
            if load.stopping:
                return
        deal = self.deal
        move = self.decisions.decide(self.bot, deal, board) if self._refused < 3 else RESIGN
        self.in_flight = True
        sent = time.perf_counter()
        n = int(board.get("logged", 0))  # our next number in the log (docs/protocol.md)
        reply = await self.request("move", deal=deal, n=n, move=move.to_wire())
        now = time.perf_counter()
        self.in_flight = False
        if reply.get("type") != "moved":
            await self._refused_move(str(reply.get("code")), deal)
            return
        self.stats.ack(sent, now)
        self._refused = 0
        outcome = reply["outcome"]
        status = outcome["status"]
        if status != "playing":
            self.stats.deals[status] += 1
        if deal == self.deal and self.board is board:
            try:
                after = apply_outcome(board, outcome)
            except OutcomeMismatch:
                after = None
            if after is not None and view_digest(after) == reply["digest"]:
                self.board = after
            else:  # our board is not the server's any more
                await self._resync()

    async def _refused_move(self, code: str, deal: int) -> None:
        self.stats.errors[code] += 1
        if code in _MOVED_ON:
            if deal == self.deal:
                self.board = None  # wait for the next deal_started (or resync)
        elif code in _RETRY:
            await asyncio.sleep(0.2)
        elif code == _BEHIND:
            await self._resync()
        else:  # the engine disagreed with our view of the board
            self._refused += 1
            await self._resync()

    async def _wait(self) -> None:
        """Nothing to play: take the next frame, or ask for a snapshot after a quiet
        spell (an event we needed went missing)."""
        try:
            async with asyncio.timeout(_QUIET):
                frame = await self._next()
        except TimeoutError:
            await self._resync()
        else:
            await self._event(frame)

    async def _event(self, frame: dict[str, Any]) -> None:
        """A frame that is not the reply awaited: an event, or the reply to a
        request nobody waits for (the host's ``start`` and ``rematch``)."""
        kind = frame.get("type")
        if kind == "deal_started":
            self.state = "playing"
            self._deal_view(frame["deal"])
        elif kind == "round_over":
            self.state = "round_over"
            await self._lead()
        elif kind == "room_closed":
            self.state = "closed"
        elif kind == "error":
            self.stats.errors[str(frame.get("code"))] += 1

    async def _lead(self) -> None:
        """The host keeps the room dealing: start it, rematch when a round ends."""
        if self.host and self.state in ("lobby", "round_over"):
            kind = "start" if self.state == "lobby" else "rematch"
            await self.send({"type": kind, "id": kind})  # the reply is not waited for

    async def _resync(self) -> None:
        self.stats.resyncs += 1
        reply = await self.request("snapshot")
        if reply.get("type") == "snapshot":
            self._install(reply.get("room"))
            await self._lead()


# ---------------------------------------------------------------------- rooms


@dataclass(slots=True)
class LoadRoom:
    """The seats of one room: players (the host first) and spectators."""

    players: list[Seat]
    watchers: list[Seat]

    @property
    def seats(self) -> list[Seat]:
        return [*self.players, *self.watchers]


async def _enter(
    make: Callable[..., Seat], url: str, name: str, stats: LoadStats, kind: str, **fields: Any
) -> tuple[Seat, dict[str, Any]]:
    """A new session at ``url`` that sends ``kind`` (create or join a room)."""
    ws, sub, welcome = await _hello(url, name=name)
    seat = make(ws, stats, kind=sub, url=url, token=str(welcome["token"]))
    try:
        await seat.send({"type": kind, "id": 1, **fields})
        while (reply := await seat.recv()).get("id") != 1:
            pass
        if reply.get("type") == "error":
            raise ServerError.from_frame(reply)
    except BaseException:
        await ws.close()
        raise
    if isinstance(seat, Player):
        seat._install(reply.get("room"))
    return seat, reply


async def open_room(
    urls: Sequence[str], index: int, players: int, spectators: int,
    settings: Mapping[str, Any], stats: LoadStats,
) -> LoadRoom:  # fmt: skip
    """A room created at ``urls[0]``, its player ``i`` at ``urls[i % n]`` and its
    spectator ``i`` at ``urls[(i + 1) % n]`` (several server nodes share rooms)."""
    room = LoadRoom([], [])
    n = len(urls)
    player = functools.partial(Player, decisions=Decisions())
    try:
        host, joined = await _enter(
            player,
            urls[0],
            f"load{index}-p1",
            stats,
            "create_room",
            settings={**FLAT_OUT, **settings},
        )
        room.players.append(host)
        code = joined["room"]["code"]
        for p in range(1, players):
            seat, _ = await _enter(
                player,
                urls[p % n],
                f"load{index}-p{p + 1}",
                stats,
                "join_room",
                code=code,
                role="player",
            )
            room.players.append(seat)
        for s in range(spectators):
            seat, _ = await _enter(
                Watcher,
                urls[(s + 1) % n],
                f"load{index}-s{s + 1}",
                stats,
                "join_room",
                code=code,
                role="spectator",
            )
            room.watchers.append(seat)
    except BaseException:
        await asyncio.gather(*(s.ws.close() for s in room.seats), return_exceptions=True)
        raise
    return room


async def open_rooms(
    urls: Sequence[str], rooms: int, players: int, spectators: int,
    settings: Mapping[str, Any], stats: LoadStats,
) -> list[LoadRoom]:  # fmt: skip
    """Open ``rooms`` rooms (see :func:`open_room`), a few at a time. A room that
    fails to open counts as an error ``setup:CODE`` and is left out."""
    gate = asyncio.Semaphore(_OPENING)

    async def one(i: int) -> LoadRoom:
        async with gate:
            return await open_room(urls, i + 1, players, spectators, settings, stats)

    setup = await asyncio.gather(*(one(i) for i in range(rooms)), return_exceptions=True)
    for failure in setup:
        if isinstance(failure, BaseException):
            code = failure.code if isinstance(failure, ServerError) else type(failure).__name__
            stats.errors[f"setup:{code}"] += 1
    return [r for r in setup if isinstance(r, LoadRoom)]


class Load:
    """The seats of some rooms playing together: :meth:`start`, later :meth:`stop`.

    ``rate`` is the moves a second wanted from all players together (0: as fast as
    the server answers); ``rate_limit`` is the server's frames a second per
    connection, which each player stays under (0: none).
    """

    def __init__(
        self, rooms: Sequence[LoadRoom], stats: LoadStats, *, rate: float = 0.0,
        rate_limit: float = 0.0, seed: int = 0,
    ) -> None:  # fmt: skip
        self.rooms = list(rooms)
        self.stats = stats
        players = sum(len(r.players) for r in self.rooms)
        interval = players / rate if rate > 0 else 0.0
        if rate_limit > 0:
            interval = max(interval, 1.0 / (_HEADROOM * rate_limit))
        self.interval = interval
        self.stopping = False
        self._rng = random.Random(seed)
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def seats(self) -> list[Seat]:
        return [s for r in self.rooms for s in r.seats]

    @property
    def done(self) -> bool:
        """Every seat has stopped by itself (its room closed, it could not resume)."""
        return bool(self._tasks) and all(t.done() for t in self._tasks)

    def start(self) -> None:
        for room in self.rooms:
            for seat in room.players:
                pacer = Pacer(self.interval, self._rng)
                self._tasks.append(asyncio.create_task(seat.play(self, pacer)))
            for seat in room.watchers:
                self._tasks.append(asyncio.create_task(seat.play(self, Pacer(0.0, self._rng))))

    async def stop(self, grace: float = 35.0) -> None:
        """Make no more moves; give those in flight ``grace`` seconds to be answered
        (a seat still waiting then lost its move); close every socket."""
        self.stopping = True
        seats = self.seats
        deadline = time.monotonic() + grace
        while any(s.in_flight for s in seats) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        self.stats.unacknowledged += sum(1 for s in seats if s.in_flight)
        for task in self._tasks:
            task.cancel()
        for result in await asyncio.gather(*self._tasks, return_exceptions=True):
            if isinstance(result, Exception):  # a bug in a seat: report it, loudly
                log.warning("a seat failed", exc_info=result)
                self.stats.errors[f"crashed:{type(result).__name__}"] += 1
        await asyncio.gather(*(s.ws.close() for s in seats), return_exceptions=True)


# ---------------------------------------------------------------------- the load test


@dataclass(frozen=True, slots=True)
class LoadProgress:
    """A tick of a running load test, for a progress display."""

    elapsed: float
    duration: float
    moves: int
    errors: int
    disconnects: int


@dataclass(slots=True)
class LoadReport:
    """The outcome of :func:`run_load`; ``ok`` is false if any move went unanswered."""

    url: str
    rooms: int
    players: int  # per room
    spectators: int  # per room
    duration: float  # asked for, seconds
    elapsed: float  # actually measured, seconds
    moves: int  # acknowledged
    moves_per_s: float
    latency_ms: dict[str, float]  # p50, p95, p99, max: move sent to acknowledgement
    unacknowledged: int
    errors: dict[str, int] = field(default_factory=dict)  # by code
    disconnects: int = 0  # unexpected socket closes (each seat resumes by itself)
    resyncs: int = 0  # snapshots fetched after losing track of the deal
    events: int = 0  # room events received by all seats
    deals: dict[str, int] = field(default_factory=dict)  # player-deals finished, by status

    @property
    def ok(self) -> bool:
        return self.unacknowledged == 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"ok": self.ok}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0…100) of unsorted ``values``; 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


async def run_load(
    url: str,
    rooms: int,
    players: int,
    spectators: int,
    duration: float,
    *,
    rate: float = 0.0,
    rate_limit: float = PROTOCOL_RATE_LIMIT,
    settings: Mapping[str, Any] | None = None,
    on_progress: Callable[[LoadProgress], None] | None = None,
    tick: float = 0.5,
) -> LoadReport:
    """Open ``rooms`` rooms of ``players`` bots and ``spectators`` watchers each, let
    the bots play for ``duration`` seconds (see :class:`Load` for ``rate`` and
    ``rate_limit``: by default as fast as a server with the protocol's rate limit
    lets them), and report."""
    stats = LoadStats()
    opened = await open_rooms(
        [url], rooms, players, spectators, {**DEFAULT_SETTINGS, **(settings or {})}, stats
    )
    load = Load(opened, stats, rate=rate, rate_limit=rate_limit)
    began = time.monotonic()
    deadline = began + duration
    elapsed = 0.0
    load.start()
    try:
        while time.monotonic() < deadline and not load.done:
            if on_progress is not None:
                on_progress(_progress(stats, began, duration))
            await asyncio.sleep(min(tick, max(0.0, deadline - time.monotonic())))
        elapsed = time.monotonic() - began
    finally:
        await load.stop()
    if on_progress is not None:
        on_progress(_progress(stats, began, duration))
    lat = [x * 1000 for x in stats.latencies]
    return LoadReport(
        url=url,
        rooms=rooms,
        players=players,
        spectators=spectators,
        duration=duration,
        elapsed=round(elapsed, 3),
        moves=stats.moves,
        moves_per_s=round(stats.moves / elapsed, 1) if elapsed > 0 else 0.0,
        latency_ms={
            "p50": round(percentile(lat, 50), 2),
            "p95": round(percentile(lat, 95), 2),
            "p99": round(percentile(lat, 99), 2),
            "max": round(max(lat, default=0.0), 2),
        },
        unacknowledged=stats.unacknowledged,
        errors=dict(stats.errors),
        disconnects=stats.disconnects,
        resyncs=stats.resyncs,
        events=stats.events,
        deals=dict(stats.deals),
    )


def _progress(stats: LoadStats, began: float, duration: float) -> LoadProgress:
    return LoadProgress(
        elapsed=min(duration, time.monotonic() - began),
        duration=duration,
        moves=stats.moves,
        errors=sum(stats.errors.values()),
        disconnects=stats.disconnects,
    )
