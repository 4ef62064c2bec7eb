"""The client side of docs/protocol.md: one session, its room, its events.

A :class:`Session` owns one WebSocket at a time and hides three things a caller
should not have to think about:

- **Correlation.** Every request gets a fresh ``id``; the reader task routes each
  reply to the coroutine awaiting it, so many requests may be in flight. A refusal
  raises :class:`~client.errors.ServerError` with the server's ``code``.
- **Sequence numbers.** Room events are folded into :attr:`Session.room` (a
  :class:`~client.room.RoomView`) in ``seq`` order. A gap means an event was lost
  (the server may drop under load), so the session asks for a ``snapshot``,
  buffers what arrives meanwhile, and replays only the events newer than it.
- **Drops.** When the socket closes unexpectedly the session reconnects with its
  token (``hello`` resume); the ``welcome`` carries a fresh room view. Requests that
  were in flight fail with :class:`~client.errors.ConnectionLost` because the client
  cannot know whether they were applied; the caller resyncs from :attr:`room`.
  Moves are the exception: each carries its number in the player's log, so
  :meth:`~client.session_api.RoomRequests.move` sends the same one again after the
  resume and the server plays it once (docs/protocol.md, ``move``).

Whenever the state is replaced wholesale (joined, snapshot, resync, resume) the
event stream yields a synthetic ``snapshot`` event whose ``reason`` says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from protocol import wire
from protocol.messages import CloseCode

from .account_api import AccountRequests
from .codec import FrameError, decode, encode
from .connection import RateLimiter, open_socket, with_backoff
from .errors import ClientError, ConnectionLost, RequestTimeout, ServerError, SessionClosed
from .events import EventHub
from .room import RoomEvent, RoomView
from .session_api import RoomRequests

__all__ = ["NO_RESUME", "PROTOCOL_VERSION", "Session", "SessionStats", "connect", "say_hello"]

log = logging.getLogger(__name__)

PROTOCOL_VERSION = wire.VERSION
# Close codes after which resuming would be wrong: the session lives on another
# connection, its device was signed out, or we broke the protocol (bad input: broken
# framing, text that is not UTF-8, a frame too large, no hello) and would again.
NO_RESUME = frozenset(
    {
        CloseCode.RESUMED_ELSEWHERE,
        CloseCode.SIGNED_OUT,
        CloseCode.HELLO_FIRST,
        CloseCode.PROTOCOL_ERROR,
        CloseCode.INVALID_DATA,
        CloseCode.TOO_BIG,
    }
)
SIGN_IN = ("name", "token", "device", "link", "recovery")  # a hello carries one of them
_ROOM_REPLIES = frozenset({"joined", "snapshot"})


async def say_hello(
    ws: ClientConnection, subprotocol: str, who: Mapping[str, Any], rid: int = 0,
    timeout: float = 30.0,
) -> dict[str, Any]:  # fmt: skip
    """Send ``hello`` (``who``: a ``name``, a ``token`` to resume, or a way of
    signing in to an account, docs/protocol.md "Accounts") on a socket
    nobody else reads yet; return the welcome, or raise ``ServerError`` if refused."""
    frame = {"type": "hello", "id": rid, "version": PROTOCOL_VERSION, **who}
    await ws.send(encode(frame, subprotocol))
    async with asyncio.timeout(timeout):
        while True:
            reply = decode(await ws.recv(), subprotocol)
            if reply.get("id") == rid:
                break
    if reply.get("type") == "error":
        raise ServerError.from_frame(reply)
    return reply


@dataclass(slots=True)
class SessionStats:
    """Counters a load test or a status line may report."""

    drops: int = 0  # unexpected closes of the socket
    reconnects: int = 0  # successful resumes after a drop
    resyncs: int = 0  # snapshots asked for because of a sequence gap
    mismatches: int = 0  # snapshots asked for because a board did not match its digest
    events: int = 0  # room events folded in
    unsolicited_errors: list[str] = field(default_factory=list)  # errors for no waiting request


class Session(EventHub, RoomRequests, AccountRequests):
    """One player's or spectator's session. Build it with :func:`connect`."""

    def __init__(
        self,
        url: str,
        *,
        kind: str = "msgpack",
        reconnect: bool = True,
        reconnect_for: float = 30.0,
        request_timeout: float = 30.0,
        rate: float = 40.0,
        burst: int = 40,
    ) -> None:
        self.url = url
        self.kind = kind
        self.reconnect = reconnect
        self.reconnect_for = reconnect_for
        self.request_timeout = request_timeout
        self.stats = SessionStats()
        self.token: str | None = None
        self.player: str | None = None
        self.name: str | None = None
        self.account: dict[str, Any] | None = None  # the own-account view, when signed in
        self.device_token: str | None = None  # this device's, when a sign-in made it
        self.room: RoomView | None = None
        self.queued: str | None = None  # the ladder whose quick-match queue we wait in
        self.bots_offered = False  # waited long enough: accept_bots is open
        self.close_code: int | None = None
        self._limiter = RateLimiter(rate, burst)
        self._ws: ClientConnection | None = None
        self._subprotocol = ""
        self._ids = itertools.count(1)
        # id → (request type, its fields, the future its reply completes)
        self._pending: dict[int, tuple[str, dict[str, Any], asyncio.Future[dict[str, Any]]]] = {}
        EventHub.__init__(self)
        self._ready = asyncio.Event()
        self._moving = asyncio.Lock()
        self._resyncing = False
        self._buffer: list[dict[str, Any]] = []
        self._closing = False
        self._reader: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------ lifecycle

    async def _start(self, who: dict[str, Any]) -> None:
        """Open the socket, say hello (new, resumed or signed in), start the reader."""
        self._ws = await self._open(who)
        self._ready.set()
        self._reader = asyncio.create_task(self._run(), name=f"session-reader-{self.player}")

    async def _open(self, who: dict[str, Any]) -> ClientConnection:
        """A new socket that has said hello; closed again if the hello fails."""
        ws, self._subprotocol = await open_socket(self.url, self.kind)
        try:
            await self._hello(ws, who)
        except BaseException:
            await ws.close()
            raise
        return ws

    async def _hello(self, ws: ClientConnection, who: dict[str, Any]) -> None:
        """Say ``hello`` on a socket the reader does not own; take in the welcome."""
        reply = await say_hello(ws, self._subprotocol, who, next(self._ids), self.request_timeout)
        self.token = str(reply["token"])
        self.player = str(reply["player"])
        self.name = str(reply.get("name", self.name))
        account = reply.get("account")
        self.account = dict(account) if isinstance(account, Mapping) else None
        if isinstance(reply.get("device_token"), str):
            self.device_token = str(reply["device_token"])
        room = reply.get("room")
        if isinstance(room, Mapping):
            self._install(room, "joined" if "name" in who else "resume")
        elif self.room is not None:
            self.room = None
            self._publish(
                RoomEvent("snapshot", None, {"type": "snapshot", "room": None, "reason": "resume"})
            )

    async def close(self) -> None:
        """Close the socket (code 1000) and end the event streams. Idempotent."""
        self._closing = True
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 5)
        for task in list(self._tasks):
            task.cancel()
        self._finish(None)

    async def leave(self) -> None:
        """Leave the room, then close: how a program that is done goes. Closing
        alone is a drop, and the server holds a dropped member's place for their
        return: a player stays seated (away, and dealt in by a rematch), a
        spectator stays listed. The ``leave_room`` goes even when no room is held:
        a join cut short (by a signal) may have seated us without our hearing it;
        the server then says ``not_in_room``, which is as good."""
        room = self.room
        gone = room is not None and (room.state == "closed" or room.removed)
        if self._connected() and not gone:
            with contextlib.suppress(ClientError, ServerError):
                await self.leave_room()
        await self.close()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._finished

    async def wait_closed(self) -> None:
        """Return once the session has ended for good (closed, or could not resume)."""
        while not self._finished:
            await self.wait_update()

    def _finish(self, failure: ClientError | None) -> None:
        if self._finished:
            return
        self._finished = True
        self._failure = failure
        self._ready.clear()
        self._fail_pending(failure or SessionClosed("the session is closed"))
        self._end_streams()

    # ------------------------------------------------------------ the reader

    async def _run(self) -> None:
        failure: ClientError | None = None
        try:
            while True:
                ws = self._ws
                assert ws is not None
                with contextlib.suppress(ConnectionClosed):
                    async for data in ws:
                        self._receive(data)
                self.close_code = ws.close_code
                lost = ConnectionLost(f"connection closed ({ws.close_code})", ws.close_code)
                self._fail_pending(lost)
                if self._closing:
                    break
                self.stats.drops += 1
                if not self.reconnect or ws.close_code in NO_RESUME:
                    failure = lost
                    break
                failure = await self._resume()
                if failure is not None:
                    break
        finally:
            self._finish(failure)

    async def _resume(self) -> ClientError | None:
        """Reconnect with the token, with backoff, for up to ``reconnect_for`` s."""
        self._ready.clear()
        try:
            ws = await with_backoff(
                lambda: self._open({"token": self.token}),
                lasting=self.reconnect_for,
                stopped=lambda: self._closing,
            )
        except ServerError as exc:  # unknown_token: the server forgot us
            return ConnectionLost(f"cannot resume: {exc}", self.close_code)
        if ws is None:
            return None if self._closing else ConnectionLost("could not reconnect", self.close_code)
        self._ws = ws
        self.stats.reconnects += 1
        self._ready.set()
        self._notify()  # for whoever waits to send again (see _reconnected)
        return None

    async def _reconnected(self) -> bool:
        """Wait until the session is on an open connection (again, after a drop)
        or has ended for good; whether it is connected. A request that failed with
        ``ConnectionLost`` may see the dead socket still in place: the reader has
        not taken the close in yet, so wait for a socket that is open."""
        try:
            async with asyncio.timeout(self.reconnect_for + self.request_timeout):
                while not self._finished and not self._connected():
                    await self.wait_update()
        except TimeoutError:
            return False
        return not self._finished

    def _connected(self) -> bool:
        ws = self._ws
        return self._ready.is_set() and ws is not None and ws.state is State.OPEN

    def _receive(self, data: bytes | str) -> None:
        try:
            frame = decode(data, self._subprotocol)
        except FrameError as exc:
            log.warning("dropped a frame: %s", exc)
            return
        rid = frame.get("id")
        pending = self._pending.pop(rid, None) if isinstance(rid, int) else None
        if pending is not None:
            kind, fields, future = pending
            if frame.get("type") == "error":
                if not future.done():
                    future.set_exception(ServerError.from_frame(frame))
                return
            self._on_reply(kind, fields, frame)
            if not future.done():
                future.set_result(frame)
        elif frame.get("type") == "error":
            self._on_unsolicited_error(frame)
        elif isinstance(frame.get("seq"), int):
            self._on_event(frame)
        elif frame.get("type") == "events" and isinstance(frame.get("events"), list):
            # Room events batched (docs/protocol.md "Batched events"): each in turn.
            for event in frame["events"]:
                if isinstance(event, dict) and isinstance(event.get("seq"), int):
                    self._on_event(event)
        elif frame.get("type") == "matched" and isinstance(frame.get("room"), Mapping):
            self.queued = None  # the server seated us: the room is ours now
            self._install(frame["room"], "matched")
            if self.room is not None:
                self.room.starts_at = frame.get("starts_at")
        elif frame.get("type") == "bots_offered":
            self.bots_offered = True
            self._notify()

    def _on_unsolicited_error(self, frame: dict[str, Any]) -> None:
        """An error that answers no waiting request: one for a request that already
        timed out, or one without an ``id`` (every frame we send has one, so only a
        frame the server could not read). Refusals, ``rate_limited`` included, echo
        the request's ``id`` and reach it in :meth:`_receive`; nothing here can be
        matched to a request, so it is counted and logged."""
        code = str(frame.get("code"))
        self.stats.unsolicited_errors.append(code)
        log.warning("server error: %s %s", code, frame.get("message"))

    def _on_reply(self, kind: str, fields: dict[str, Any], frame: dict[str, Any]) -> None:
        """Replies that change the room: handled here, in frame order, not by callers
        (a ``moved`` reply's outcome is applied before any later frame is read)."""
        if frame.get("type") in _ROOM_REPLIES and isinstance(frame.get("room"), Mapping):
            reason = "gap" if kind == "snapshot" and self._resyncing else str(frame["type"])
            self._install(frame["room"], reason)
        elif frame.get("type") == "moved" and self.room is not None:
            self.room.apply_moved(frame, int(fields.get("n", -1)))
            self._lost_track()
            self._notify()
        elif kind == "leave_room":
            self.room = None
            self._notify()

    def _on_event(self, frame: dict[str, Any]) -> None:
        room = self.room
        if room is None:
            return  # a straggler from a room we have left
        if self._resyncing:
            self._buffer.append(frame)
            return
        seq: int = frame["seq"]
        if frame.get("aside") is True and seq == room.seq:
            # Not the room's history (a Timed tick, a reaction, a ghost, ...): it keeps
            # the seq of the last event (docs/protocol.md "Events that keep the seq").
            room.apply(frame)
            self._publish(RoomEvent(str(frame.get("type")), seq, frame))
            return
        if seq <= room.seq:
            return  # already in the room view we hold
        if seq > room.seq + 1:
            log.info("sequence gap: have %d, got %d; resyncing", room.seq, seq)
            self._buffer.append(frame)
            self._resyncing = True
            self.stats.resyncs += 1
            self._spawn(self._resync())
            return
        seen = room.settings.get("spectators")
        room.apply(frame)
        self.stats.events += 1
        self._publish(RoomEvent(str(frame.get("type")), seq, frame))
        if room.stale:
            self._lost_track()
        elif room.role == "spectator" and room.settings.get("spectators") != seen:
            # What spectators may see changed: the boards come with a snapshot.
            self._resyncing = True
            self._spawn(self._resync())

    def _lost_track(self) -> None:
        """A board kept by outcomes no longer matches the server's digest (the
        room view is :attr:`~client.room.RoomView.stale`): take a snapshot, once."""
        room = self.room
        if room is None or not room.stale or self._resyncing:
            return
        log.info("a board does not match its digest at seq %d; taking a snapshot", room.seq)
        self.stats.mismatches += 1
        self._resyncing = True
        self._spawn(self._resync())

    async def _settled(self) -> None:
        """Wait for the snapshot a stale board asked for, if one is on its way:
        a move is numbered from the board, so none goes out from a stale one."""
        while self._resyncing and self.room is not None and self.room.stale:
            if self._finished:
                return
            await self.wait_update()

    async def _resync(self) -> None:
        try:
            await self.request("snapshot")  # _on_reply installs it and replays the buffer
        except (ClientError, ServerError) as exc:
            log.info("resync failed: %s", exc)
            self._resyncing = False
            self._buffer.clear()

    def _install(self, view: Mapping[str, Any], reason: str) -> None:
        """Replace the room with a fresh room view, then replay buffered newer events."""
        self.room = RoomView.from_wire(view)
        self._resyncing = False
        buffered, self._buffer = sorted(self._buffer, key=lambda f: int(f["seq"])), []
        frame = {"type": "snapshot", "seq": self.room.seq, "room": dict(view), "reason": reason}
        self._publish(RoomEvent("snapshot", self.room.seq, frame))
        for event in buffered:
            self._on_event(event)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------ requests

    async def request(
        self, kind: str, /, timeout: float | None = None, **fields: Any
    ) -> dict[str, Any]:
        """Send one request and return its reply frame; raise ``ServerError`` if refused.

        A ``rate_limited`` refusal (it echoes the request's ``id``) is retried after a
        pause: nothing was applied.
        """
        reply, _ = await self.timed_request(kind, timeout, **fields)
        return reply

    async def timed_request(
        self, kind: str, timeout: float | None = None, /, **fields: Any
    ) -> tuple[dict[str, Any], float]:
        """As :meth:`request`, also returning seconds from sending to the reply."""
        for attempt in range(4):
            try:
                return await self._call(kind, fields, timeout or self.request_timeout)
            except ServerError as exc:
                if exc.code != "rate_limited" or attempt == 3:
                    raise
                await asyncio.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _call(
        self, kind: str, fields: dict[str, Any], timeout: float
    ) -> tuple[dict[str, Any], float]:
        if self._finished:
            raise self._failure or SessionClosed("the session is closed")
        if not self._ready.is_set():
            try:
                async with asyncio.timeout(self.reconnect_for + timeout):
                    while not self._ready.is_set() and not self._finished:
                        await self.wait_update()
            except TimeoutError:
                raise RequestTimeout(f"{kind}: no connection") from None
            if self._finished:
                raise self._failure or SessionClosed("the session is closed")
        await self._limiter.acquire()
        ws = self._ws
        assert ws is not None
        rid = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = (kind, fields, future)
        sent = time.perf_counter()
        try:
            await ws.send(encode({"type": kind, "id": rid, **fields}, self._subprotocol))
            async with asyncio.timeout(timeout):
                reply = await future
        except ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd is not None else None
            raise ConnectionLost(f"{kind}: connection closed", code) from None
        except TimeoutError:
            raise RequestTimeout(f"{kind}: no reply in {timeout:g} s") from None
        finally:
            self._pending.pop(rid, None)
        return reply, time.perf_counter() - sent

    def _fail_pending(self, exc: ClientError) -> None:
        pending, self._pending = self._pending, {}
        for _, _, future in pending.values():
            if not future.done():
                future.set_exception(exc)


class _Connecting:
    """What :func:`connect` returns: await it, or use it as ``async with``."""

    def __init__(self, session: Session, who: dict[str, Any]) -> None:
        self._session = session
        self._who = who

    async def _open(self) -> Session:
        await self._session._start(self._who)
        return self._session

    def __await__(self) -> Generator[Any, None, Session]:
        return self._open().__await__()

    async def __aenter__(self) -> Session:
        return await self._open()

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._session.close()


def connect(
    url: str,
    *,
    name: str | None = None,
    token: str | None = None,
    device: str | None = None,
    link: str | None = None,
    recovery: str | None = None,
    label: str | None = None,
    **options: Any,
) -> _Connecting:
    """Open a session: a new one with ``name``, resume one with ``token``, or sign
    in to an account with a ``device`` token, a one-time ``link`` code or a
    ``recovery`` code (the last two make a new device, named ``label``; its token
    is then ``session.device_token``: keep it, see :mod:`client.device_file`).

    ``url`` is ``ws://host:port/ws`` (``http://host:port`` and ``host:port`` work
    too). ``options`` go to :class:`Session` (``kind="json"``, ``reconnect=False``,
    ``rate=0`` to stop pacing, ``request_timeout=…``).
    """
    ways = {"name": name, "token": token, "device": device, "link": link, "recovery": recovery}
    who: dict[str, Any] = {k: v for k, v in ways.items() if v is not None}
    if len(who) != 1:
        raise ValueError(f"give exactly one of {', '.join(SIGN_IN)}")
    if label is not None:
        who["label"] = label
    return _Connecting(Session(url, **options), who)
