"""One WebSocket connection: frames in, frames out, and the limits on both.

In: each frame is rate-limited, decoded (protocol/wire.py) into a typed request
(protocol/requests.py) and dispatched to the service, one at a time, so a client's
requests are answered in order. No client byte can end the loop: every failure
becomes an error frame (``internal_error`` for a bug, which is logged) and the
connection carries on.

Out: frames are never awaited by whoever produces them (the room fan-out runs
under the room's lock and must not wait for a slow reader). They collect until
the next pass of the event loop, then leave in one write per connection (a reply
with the events it caused; under load, the events of several moves), each
distinct payload framed once for all its recipients (server/net/framing.py). While the
socket keeps up that write happens at once; once the socket's buffer backs up,
frames queue and a writer task, started then and gone once the queue is empty,
drains them as the socket allows (no task per connection otherwise: each would be
a few more objects that every one of the collector's passes walks). A connection whose queue grows
past its byte limit, or whose socket stays blocked past the send timeout, is
closed with 4009: a stalled spectator costs the room nothing but a bounded buffer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame as WsFrame
from websockets.frames import Opcode
from websockets.protocol import State

from protocol import messages as M
from protocol.account_requests import PasskeyOptions, PasskeyPurpose
from protocol.messages import CloseCode, Code, ErrorCode
from protocol.requests import Hello, MoveRequest, Request, parse_request, request_id
from protocol.wire import JSON, WireError, decode, encode, events_frame

from ..core.values import RoomError
from ..peer import Peer, SessionState, Site
from .framing import Framer
from .metrics import Metrics
from .ratelimit import Limiter, TokenBucket, client_address

__all__ = ["Connection", "Dispatcher", "Flusher", "HeldEvents", "Limits"]

log = logging.getLogger("klondike_race.connection")

# Below this many bytes waiting in the socket's buffer a frame is written at once;
# above, frames queue for the writer task, which waits for the socket to drain.
_DIRECT_LIMIT = 32 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits of docs/protocol.md "Transport" (settings of ``serve``); tests
    shrink them. Rates are per session and, ``address_factor`` times that, per
    client address (server/net/ratelimit.py)."""

    hello_timeout: float = 10.0
    # how late hello may come after passkey sign-in options (passkeys.py CHALLENGE_MS)
    ceremony_timeout: float = 120.0
    requests_before_hello: int = 3
    rate: float = 50.0
    burst: float = 100.0
    max_strikes: int = 200
    address_factor: float = 4.0
    connections_per_address: int = 32
    sessions_per_minute: int = 20
    rooms_per_minute: int = 10
    wrong_codes_per_minute: int = 20
    reactions_per_minute: int = 60
    sign_ups_per_minute: int = 5
    sign_ins_per_minute: int = 20
    wrong_link_codes_per_minute: int = 10
    friend_asks_per_minute: int = 20
    trusted_proxies: tuple[str, ...] = ()
    queue_bytes: int = 1024 * 1024
    send_timeout: float = 5.0
    # The kernel's send buffer per socket. Left to autotuning it may grow to
    # megabytes per stalled client, hiding them from the checks above; events are
    # small, so a modest fixed buffer costs nothing and bounds memory.
    socket_sndbuf: int | None = 256 * 1024
    # How long a progress event may wait to leave with others (docs/protocol.md
    # "Batched events"); 0: each at once.
    progress_delay: float = 0.5


def _may_precede_hello(request: Request) -> bool:
    """What a connection may ask before its hello besides the hello: the options
    of a passkey sign-in, whose answer that hello carries (server/accounts/passkeys.py)."""
    return isinstance(request, PasskeyOptions) and request.purpose is PasskeyPurpose.SIGN_IN


def _quick_id(frame: bytes | str, binary: bool) -> Any:
    """The id of a refused frame, when it has a usable one, so the client can
    tell which request to retry."""
    try:
        return request_id(decode(frame, binary))
    except WireError:
        return None


class Dispatcher(Protocol):
    """Where a connection's requests go (server/service/ ``Service`` is one)."""

    metrics: Metrics
    connections: set[Peer]
    limiter: Limiter

    async def handle(self, conn: Peer, req: Request) -> None: ...

    async def disconnected(self, conn: Peer) -> None: ...


_LATER_STEP = 0.05  # s between two lets-out of frames sent later, at least


class Flusher:
    """Writes every connection's waiting frames at the start of the next pass of
    the event loop, together with whatever else that pass adds for it.

    Under load, one pass handles many requests (several moves of one room), so
    each connection gets all its new frames in one write; when idle, the wait is
    one pass of the event loop.

    Frames a person need not get at once (:meth:`HeldEvents.send_later`: the
    ``progress`` events) wait longer: ``live`` seconds from the first of them,
    then a connection's go as one ``events`` frame (docs/protocol.md "Batched
    events"). At a person's pace a player gets a few rivals' moves a second and a
    spectator the moves of a whole room: held for half a second they leave in
    fewer writes, and a chip or a board on a wall moves at most twice a second,
    still well within "live". The connections wait in one queue, in the order
    their wait began, let out by one timer in steps of ``_LATER_STEP``: each
    connection when its wait is over, not all at one tick (at 10,000 players
    one tick would be thousands of writes in one pass of the loop, which every
    move arriving meanwhile would wait through)."""

    def __init__(self, live: float = 0.0) -> None:
        self.live = live
        self._unflushed: list[Connection] = []
        self._scheduled = False
        self._waiting: deque[tuple[float, HeldEvents]] = deque()  # (due, conn), by due
        self._timer: asyncio.TimerHandle | None = None

    def want(self, conn: Connection) -> None:
        self._unflushed.append(conn)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def later(self, conn: HeldEvents) -> float:
        """``conn`` has frames to send within ``live`` seconds: when they are due
        (the connection keeps it; one let out sooner no longer matches it)."""
        loop = asyncio.get_running_loop()
        due = loop.time() + self.live
        self._waiting.append((due, conn))
        if self._timer is None:
            self._timer = loop.call_at(due, self._due)
        return due

    def _due(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        waiting = self._waiting
        while waiting and waiting[0][0] <= now:
            due, conn = waiting.popleft()
            if conn.later_due == due:
                try:
                    conn.bring_later()
                except Exception:  # one connection's failure is that connection's alone
                    conn.failed()
        if waiting:
            self._timer = loop.call_at(max(waiting[0][0], now + _LATER_STEP), self._due)

    def flush(self) -> None:
        self._scheduled = False
        conns, self._unflushed = self._unflushed, []
        framer = Framer()  # an event's frame is built once for all its recipients
        for conn in conns:
            try:
                conn.flush_batch(framer)
            except Exception:  # one connection's failure is that connection's alone
                conn.failed()


class HeldEvents:
    """The frames a peer holds back to leave together (:meth:`send_later`), kept
    alike by a local socket's :class:`Connection` and by a relayed client's
    stand-in on its room's node (server/cluster/relay.py ``RemoteConn``): a client
    gets the same frames, batched the same way, wherever its socket is, and a
    tunnel carries one frame for the events of half a second, not one for each."""

    flusher: Flusher
    binary: bool
    closing: bool
    later_due: float | None  # when the frames held are due (Flusher.later)
    _later: list[bytes | str]  # the frames held, in the order sent

    def _enqueue(self, data: bytes | str) -> None:
        """Send one frame on its way now (it leaves with the next flush)."""
        raise NotImplementedError

    def failed(self) -> None:
        """Sending failed (a bug): close this peer alone."""
        raise NotImplementedError

    def send_later(self, data: bytes | str) -> None:
        """Send a room event a person need not see at once (a ``progress``): it
        waits up to the flusher's ``live`` seconds, and leaves sooner with the
        first frame sent to this peer meanwhile, ahead of it, so that every
        frame still arrives in the order it was sent. The frames waiting leave
        together, as one ``events`` frame (one alone leaves as itself)."""
        if self.closing:
            return
        if self.flusher.live <= 0:
            self._enqueue(data)
            return
        if not self._later:
            self.later_due = self.flusher.later(self)
        self._later.append(data)

    def bring_later(self) -> None:
        """The frames waiting (:meth:`send_later`) go with the next flush."""
        later = self._later
        self.later_due = None
        if not later or self.closing:
            later.clear()
            return
        data = later[0] if len(later) == 1 else events_frame(later, self.binary)
        later.clear()
        self._enqueue(data)


# What a connection the server is closing may still send before it is dropped:
# enough for requests already in flight and the peer's close frame, not a flood.
REFUSED_BYTES = 4096
_TURN = 2048  # bytes of a connection's input parsed in one pass of the event loop
_PONG_HEAD = bytes([0x80 | Opcode.PONG])  # a server's pong frame starts so (FIN, unmasked)


def _nothing() -> None:
    pass


class GameSocket(ServerConnection):
    """websockets' server connection, telling us of the control frames it answers
    by itself (a ping costs a pong, so pings and pongs pay for frames too), and
    costing bounded work once the server has decided to close it (:meth:`refuse`).

    Left to itself, websockets answers every ping until the closing handshake
    ends, and a peer that never answers our close frame keeps it going for the
    whole close timeout: a flooder closed with 4008 went on being served pongs
    by the hundred thousand, on the event loop everyone shares."""

    on_control: Callable[[], None] | None = None
    refusing = False  # the server is closing this connection
    _refused = 0  # bytes received since
    _refused_all = False  # past REFUSED_BYTES: nothing more is read
    _reading = False  # within data_received: writes wait until its frames are paid for
    _held = b""  # the rest of a read, parsed once websockets' queue of messages has room
    _drop: asyncio.TimerHandle | None = None  # drops the transport at the close timeout

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        # websockets pauses reading when its queue of messages is full, but only
        # after parsing the whole read in hand (a read of 90 KiB of requests
        # was some 2,600 messages, 120 ms of the loop everyone shares). Reads
        # are parsed a slice at a time, and the rest held while the queue is
        # full; its resuming goes through here to hand the rest on.
        self.recv_messages.resume = self._resume

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.recv_messages.resume = _nothing  # the hook held this socket: a cycle
        self._held = b""
        if self._drop is not None:
            self._drop.cancel()
            self._drop = None

    def _resume(self) -> None:
        """websockets' queue has room again: the held rest of a read goes first."""
        if self._held:
            asyncio.get_running_loop().call_soon(self._parse_held)
        else:
            self.transport.resume_reading()

    def _parse_held(self) -> None:
        data, self._held = self._held, b""
        if data:
            self.data_received(data)
        if self.refusing:
            self._read_while_refusing()
        elif not self._held and not self.recv_messages.paused:
            self.transport.resume_reading()

    def refuse(self) -> None:
        """From now on nothing the peer sends is answered or handed on (its
        requests, pings and pongs go unread). Reading stops until our close
        frame has left; then the peer's close frame ends the handshake, and a
        peer that sends more than :data:`REFUSED_BYTES` instead is read no more."""
        self.refusing = True
        self._held = b""  # unread, and never to be read
        self._read_while_refusing()

    def _ended(self) -> None:
        """Our side of the stream has ended: websockets failed the connection
        for bad input (1002, 1007, 1009), answered the peer's own close frame,
        or we stopped reading a refused peer. Nothing the peer sends counts any
        more: it is refused, and the transport is dropped at the close timeout.
        When websockets fails a connection while parsing, nobody else waits on
        that timeout: it would go on reading, and discarding, whatever the peer
        sends for as long as it sends."""
        if not self.refusing:
            self.refuse()
        timeout = self.close_timeout
        if self._drop is None and timeout is not None and not self.transport.is_closing():
            self._drop = asyncio.get_running_loop().call_later(timeout, self.transport.abort)

    def _read_while_refusing(self) -> None:
        closing_sent = self.protocol.close_sent is not None
        if self._refused_all:
            return
        if closing_sent and not self.transport.is_reading():
            self.transport.resume_reading()  # paused by us, or by websockets' full queue
        elif not closing_sent:
            self.transport.pause_reading()

    def data_received(self, data: bytes) -> None:
        """One read from the socket: up to 256 KiB, tens of thousands of pings at
        some 13 µs each in websockets. No connection has more than :data:`_TURN`
        bytes parsed in one pass of the event loop; the rest is held for the next
        pass, after every other connection's turn, and read no further meanwhile.
        Once the server is closing the connection, a read is counted, not parsed,
        until our close frame has left, and past :data:`REFUSED_BYTES` it ends
        the connection."""
        if self._held:  # an earlier read waits its turn: this one goes after it
            self._held += data
            self.transport.pause_reading()
            return
        if self.refusing:
            if self.protocol.close_sent is None:
                return  # read before our close frame left: not even parsed
            self._refused += len(data)
            if self._refused > REFUSED_BYTES:
                # Read no more. Our close frame still leaves, then the end of
                # our stream; the close timeout drops the connection. Closing
                # the socket now would reset it, and a reset throws away what
                # the peer has not read yet: our close frame with its code.
                self._refused_all = True
                self.transport.pause_reading()
                if self.transport.can_write_eof():  # TLS cannot half-close: the timeout ends it
                    self.transport.write_eof()
                self._ended()
                return
        elif self.recv_messages.paused:  # websockets' queue of messages is full
            self._held = data  # parsed once it has room (_resume)
            return
        piece, rest = data[:_TURN], data[_TURN:]
        # websockets writes its answers (pongs) before it hands the frames they
        # answer to process_event, where they are paid for: the writing waits
        # until this turn's frames are paid for, so the pongs of a turn in which
        # the server decides to close are never sent.
        self._reading = True
        try:
            super().data_received(piece)
        finally:
            self._reading = False
        try:
            self.send_data()
        except Exception as exc:  # as websockets' own data_received does
            self.set_connection_exc(exc)
        if rest and not self.refusing:
            self._held = rest
            self.transport.pause_reading()
            asyncio.get_running_loop().call_soon(self._parse_held)

    def send_data(self) -> None:
        if self._reading:
            return
        protocol = self.protocol
        if self.refusing:  # no pong to a connection being closed
            protocol.writes = [w for w in protocol.writes if not w.startswith(_PONG_HEAD)]
        if len(protocol.writes) > 1 and b"" not in protocol.writes:
            # A turn's pongs in one write, not a system call each (b"" is the
            # end of the stream, which websockets writes on its own).
            protocol.writes = [b"".join(protocol.writes)]
        super().send_data()
        if self.protocol.eof_sent:
            self._ended()
        if self.refusing:  # our close frame may have just left
            self._read_while_refusing()

    def process_event(self, event: Any) -> None:
        if self.refusing:
            return
        control = isinstance(event, WsFrame) and event.opcode in (Opcode.PING, Opcode.PONG)
        if control and self.on_control is not None:
            self.on_control()
        super().process_event(event)

    async def keepalive(self) -> None:
        """websockets pings every ``ping_interval`` from the connection's opening,
        so connections opened together (every client of a restarted server, a
        load test's thousands) ping together for ever after: thousands of pings
        and pongs in one loop pass, a stall for everyone every interval. A random
        first wait spreads them over the interval."""
        assert self.ping_interval is not None
        await asyncio.sleep(random.random() * self.ping_interval)
        await super().keepalive()


def address_of(ws: ServerConnection, limits: Limits) -> str:
    peer = ws.remote_address
    host = str(peer[0]) if peer else "unknown"
    forwarded = ws.request.headers.get("X-Forwarded-For") if ws.request is not None else None
    return client_address(host, forwarded, limits.trusted_proxies)


class Connection(HeldEvents):
    """One client's WebSocket; a :class:`~server.peer.Peer`."""

    def __init__(
        self,
        service: Dispatcher,
        ws: ServerConnection,
        limits: Limits,
        flusher: Flusher,
        site: Site | None = None,
    ) -> None:
        self.service = service
        self.site = site
        self.ws = ws
        self.limits = limits
        self.flusher = flusher
        self.binary = ws.subprotocol != JSON
        self.session: SessionState | None = None
        self.address = address_of(ws, limits)
        self.link_base = site.origins[0] if site is not None else None
        self._queue: deque[bytes | str] = deque()
        self._queued = 0
        self._before_hello = 0
        self._hello_timer: asyncio.TimerHandle | None = None
        self._writer: asyncio.Task[None] | None = None  # draining the queue, while it has frames
        self._batch: list[bytes | str] = []  # frames waiting for the next flush
        self._later: list[bytes | str] = []  # frames that may wait longer (send_later)
        self.later_due: float | None = None  # when they are due (Flusher.later)
        self.closing = False
        self._close_args: tuple[CloseCode, str] | None = None

    # ------------------------------------------------------------------ in

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        self._hello_timer = loop.call_later(self.limits.hello_timeout, self._hello_timeout)
        self.service.connections.add(self)
        if isinstance(self.ws, GameSocket):
            self.ws.on_control = self._control_frame
        # websockets' serve() hands the subprotocol selector to the protocol as a
        # closure over the connection: a reference cycle (connection, protocol,
        # selector) that would keep a closed connection's whole graph, some fifty
        # objects, alive until a full collection. The handshake is over: drop it.
        vars(self.ws.protocol).pop("select_subprotocol", None)
        sock = self.ws.transport.get_extra_info("socket")
        if self.limits.socket_sndbuf and sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.limits.socket_sndbuf)
        try:
            async for frame in self.ws:
                if self.closing:
                    break
                await self._frame(frame)
        except ConnectionClosed:
            pass
        finally:
            self._stop_hello_timer()
            if isinstance(self.ws, GameSocket):
                self.ws.on_control = None  # a cycle too: the socket and this connection
            writer = self._writer
            if writer is not None and self.closing:  # let it flush and send our close code
                limit = self.limits.send_timeout + 5.0
                try:
                    await asyncio.wait_for(asyncio.shield(writer), limit)
                except (TimeoutError, Exception):
                    writer.cancel()
            elif writer is not None:
                writer.cancel()
            await self.service.disconnected(self)

    def _paid(self) -> bool:
        """Pay for one frame from the session's bucket (once there is a session)
        and the address's; False when over either (a strike on each)."""
        now = time.monotonic()
        limiter = self.service.limiter
        limiter.prune(now)
        # The buckets of _buckets, looked up here without its generator (a frame's
        # every read): every bucket pays, or strikes.
        paid = limiter.frames(self.address, address=True).take(now)
        if self.session is not None:
            paid = limiter.frames(self.session.player, address=False).take(now) and paid
        return paid

    def _buckets(self) -> Iterator[TokenBucket]:
        """The address's frame bucket, then the session's once there is one: looked
        up for every frame, never kept (a pruned bucket was as good as new), and no
        list of them made, which would live on the connection until its next frame,
        young for the collector's passes to scan over and over."""
        limiter = self.service.limiter
        yield limiter.frames(self.address, address=True)
        if self.session is not None:
            yield limiter.frames(self.session.player, address=False)

    def _flooding(self) -> None:
        """Close, 4008, once the strikes of this session or address run out."""
        if any(b.exhausted for b in self._buckets()):
            self.close(CloseCode.FLOODING, "rate limit exceeded repeatedly")

    def _control_frame(self) -> None:
        if not self._paid():
            self._flooding()

    async def _frame(self, frame: bytes | str) -> None:
        metrics = self.service.metrics
        metrics.frames_in.inc()
        started = time.perf_counter()
        if not self._paid():
            self.error(
                _quick_id(frame, self.binary), ErrorCode.RATE_LIMITED, "too many frames: slow down"
            )
            self._flooding()
            return
        msg: dict[str, Any] | None = None
        rid: Any = None
        is_move = False
        try:
            msg = decode(frame, self.binary)
            rid = request_id(msg)
            request = parse_request(msg)
            rid = request.id
            if self.session is None and not isinstance(request, Hello):
                # Sign-in options count too: asking again and again is no way to
                # hold a connection open without a hello.
                self._before_hello += 1
                spent = self._before_hello >= self.limits.requests_before_hello
                if spent or not _may_precede_hello(request):
                    self.error(rid, ErrorCode.HELLO_FIRST, "say hello first")
                    if spent:
                        self.close(CloseCode.HELLO_FIRST, "hello first")
                    return
            is_move = isinstance(request, MoveRequest)
            await self.service.handle(self, request)
            if self.session is None and isinstance(request, PasskeyOptions):
                # a person is picking a passkey: hello may come as late as its challenge
                self._restart_hello_timer(self.limits.ceremony_timeout)
            if self.session is not None:  # said hello: the timer has nothing left to do
                self._stop_hello_timer()
        except (WireError, RoomError) as exc:
            self.error(rid, exc.code, exc.message, **exc.extra)
        except Exception:
            log.exception("request failed: %.200r", msg)
            self.error(
                rid, ErrorCode.INTERNAL_ERROR, "the server failed on this request; it was logged"
            )
        if is_move:
            metrics.move_latency.observe(time.perf_counter() - started)

    def _restart_hello_timer(self, seconds: float) -> None:
        self._stop_hello_timer()
        self._hello_timer = asyncio.get_running_loop().call_later(seconds, self._hello_timeout)

    def _stop_hello_timer(self) -> None:
        if self._hello_timer is not None:
            self._hello_timer.cancel()
            self._hello_timer = None

    def _hello_timeout(self) -> None:
        if self.session is None:
            self.close(CloseCode.HELLO_FIRST, "hello first")

    # ------------------------------------------------------------------ out

    def error(self, rid: Any, code: Code, message: str, **extra: Any) -> None:
        self.send(M.error(rid, code, message, **extra))

    def send(self, msg: M.Message) -> None:
        try:
            data = encode(msg, self.binary)
        except Exception:
            self.failed()
            return
        self.send_data(data)

    def failed(self) -> None:
        """Writing to this connection failed (a bug: the decoder lets through no
        text that cannot be encoded): log it and close this connection alone, so
        no other connection's frames wait or go missing because of it."""
        log.exception("sending to a connection failed; closing it")
        self._batch.clear()
        self._later.clear()
        self.close(CloseCode.SERVER_ERROR, "the server failed to send to you; resume", flush=False)

    def send_data(self, data: bytes | str) -> None:
        """Send one frame, without ever blocking; see the module docstring.

        Frames collect until the service flushes them (next loop iteration), so
        a reply and the events it caused, or the events of several moves, leave
        in one write, in the order they were sent."""
        if self.closing:
            return
        if self._later:
            self.bring_later()
        self._enqueue(data)

    def _enqueue(self, data: bytes | str) -> None:
        if not self._batch:
            self.flusher.want(self)
        self._batch.append(data)

    def flush_batch(self, framer: Framer) -> None:
        # Emptied in place: a new list would live until the connection's next frame.
        batch = self._batch
        if batch and not self.closing:
            self._send_frames(batch, framer)
        batch.clear()

    def _send_frames(self, frames: Sequence[bytes | str], framer: Framer) -> None:
        ws = self.ws
        transport = ws.transport
        if self._writer is None and transport.get_write_buffer_size() < _DIRECT_LIMIT:
            # The socket keeps up: write now, in one system call, as websockets'
            # broadcast does, without a task switch or a timer per frame. The
            # frames are built by the flush's framer, once per distinct event
            # (server/net/framing.py), after anything websockets queued itself.
            protocol = ws.protocol
            if protocol.state is not State.OPEN:
                return
            if protocol.writes or len(frames) > 1:
                writes = protocol.data_to_send()
                writes.extend([framer(data) for data in frames])
                transport.write(b"".join(writes))
            else:
                # The usual case at a person's pace: one frame, and websockets has
                # nothing queued (it writes its own frames as it makes them). No
                # list and no join, the frame's bytes as the framer built them.
                transport.write(framer(frames[0]))
            return
        for data in frames:
            self._queue.append(data)
            self._queued += len(data)
        # The socket's own buffer stays near _DIRECT_LIMIT (frames queue beyond
        # it), so the queue is the backlog. One big frame (a long round's
        # snapshot) is not a backlog by itself: a stuck socket is caught by the
        # writer's send timeout instead.
        if self._queued > self.limits.queue_bytes and len(self._queue) > 1:
            self._too_slow()
            return
        self._write()

    def _write(self) -> None:
        """Have the writer task drain the queue (and close, once closing), starting
        it unless it runs."""
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write_loop())

    async def _write_loop(self) -> None:
        """Drain the queue into the socket, then end; on :meth:`close`, flush what
        is queued (an error saying why, typically) and close with the code."""
        ws = self.ws
        queue = self._queue
        timeout = self.limits.send_timeout
        try:
            while queue:
                data = queue.popleft()
                self._queued -= len(data)
                async with asyncio.timeout(timeout):
                    await ws.send(data)
            if self._close_args is not None:
                await ws.close(*self._close_args)
        except TimeoutError:
            self._too_slow()
            await ws.close(CloseCode.TOO_SLOW, "too slow: fell behind reading events")
        except ConnectionClosed:
            pass
        except Exception:
            self.failed()
            await ws.close(CloseCode.SERVER_ERROR, "the server failed to send to you; resume")
        finally:
            if self._writer is asyncio.current_task():
                self._writer = None

    def _too_slow(self) -> None:
        if self._close_args is None:
            self.service.metrics.closed_slow.inc()
        self.close(CloseCode.TOO_SLOW, "too slow: fell behind reading events", flush=False)

    def close(self, code: CloseCode, reason: str, *, flush: bool = True) -> None:
        """Close with ``code`` once, after the frames already queued unless
        ``flush`` is false; the reader loop then ends and cleans up. From this
        moment the peer costs bounded work (``GameSocket.refuse``)."""
        if isinstance(self.ws, GameSocket):
            self.ws.refuse()
        if self._close_args is None:
            self._close_args = (code, reason)
        if not self.closing:  # frames not flushed yet go before the close
            self.bring_later()
            for data in self._batch:
                self._queue.append(data)
                self._queued += len(data)
            self._batch = []
        self.closing = True
        if not flush:
            self._queue.clear()
            self._queued = 0
        self._write()
