"""A lean WebSocket client for bench/capacity.py's load (bench/wsload.py).

At 10,000 players the load takes ~30,000 frames a second; on websockets each costs
a task wake-up, a ``Frame`` and a few futures, and the load would measure itself.
Two things make this client cheap:

- **Framing by hand.** :class:`Socket` is an :class:`asyncio.Protocol` that speaks
  just enough RFC 6455: the opening handshake (one GET; the 101 and its
  ``Sec-WebSocket-Accept`` checked), then frames parsed straight out of the bytes
  read (a header and a length; server frames are unmasked). Each data frame goes
  to ``on_frame(data, start, end)``, so a seat can look at its first bytes with
  ``bytes.startswith(…, start)`` without copying it. Pings get their pong, a close
  frame its echo. Client frames are masked, as they must be, with a fresh random
  mask per frame applied as one big-integer XOR. (RFC 6455 wants the mask from a
  strong source of entropy, against cache poisoning through intermediaries;
  loopback to our own server has none, so ``random`` does.)
- **Reading in batches.** Measured, most of the load's CPU was not Python but
  wake-ups: at human pace each socket gets a frame now and then, so the event
  loop woke for nearly every frame (epoll, a read, back to sleep). Once a socket
  is set up, :class:`Reader` takes its reading over from the event loop: it
  sleeps ``every`` seconds (2 ms), then takes every socket that has data (one
  edge-triggered ``epoll`` for all), so one wake-up serves tens of frames; a
  socket nobody waits on is read later still, several frames a read. Writes still go
  through the loop's transport, at once. Reading late must not make the server
  look slow, so a player's socket has ``SO_TIMESTAMPNS`` on: the kernel stamps
  when the bytes arrived, and a round trip ends at that stamp, not when the load
  got round to reading it.

Linux only (epoll, SO_TIMESTAMPNS), like the benchmark's ``taskset``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import random
import select
import socket
import struct
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
SO_TIMESTAMPNS = 35  # Linux <asm-generic/socket.h>; also the cmsg type (SCM_TIMESTAMPNS)
_TIMESPEC = struct.Struct("qq")
_READ = 262_144  # bytes a read takes at most
_PASS_BUDGET = 300  # sockets a Reader's pass takes from the epoll's reports at most
_SWEEP_BUDGET = 64  # sockets a Reader's pass reads for its sweep at most (~25,000 a second)
_randbytes = random.randbytes


@dataclass(slots=True)
class Wire:
    """What crossed the load's sockets once a :class:`Reader` reads them: bytes
    and WebSocket frames each way (headers included, TCP's not), for a figure
    of bytes on the wire per move that any server of the benchmark shares."""

    bytes_in: int = 0
    frames_in: int = 0
    bytes_out: int = 0
    frames_out: int = 0


WIRE = Wire()


def _ignore(data: bytes, start: int, end: int) -> None:
    pass


def _ignore_close(code: int) -> None:
    pass


def _clock_offset() -> float:
    """``time.time() - time.perf_counter()``: the kernel stamps in wall-clock time."""
    best = (1.0, 0.0)
    for _ in range(5):  # the closest pair of readings
        a = time.perf_counter()
        wall = time.time()
        b = time.perf_counter()
        best = min(best, (b - a, wall - (a + b) / 2))
    return best[1]


_CLOCKS = _clock_offset()


class HandshakeError(ConnectionError):
    """The server did not switch protocols."""


class Socket(asyncio.Protocol):
    """A WebSocket client connection framed by hand (see the module docstring).

    ``on_frame(data, start, end)`` gets each data frame's payload as
    ``data[start:end]``; ``on_close(code)`` the close, once.
    """

    def __init__(self, host: str, path: str, subprotocol: str | None) -> None:
        key = base64.b64encode(os.urandom(16))
        self._accept = base64.b64encode(hashlib.sha1(key + _GUID).digest())
        head = [
            f"GET {path} HTTP/1.1",
            f"Host: {host}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key.decode()}",
            "Sec-WebSocket-Version: 13",
        ]
        if subprotocol:
            head.append(f"Sec-WebSocket-Protocol: {subprotocol}")
        self._request = ("\r\n".join(head) + "\r\n\r\n").encode()
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None
        self.on_frame: Callable[[bytes, int, int], None] = _ignore
        self.on_close: Callable[[int], None] = _ignore_close
        self.close_code = 0
        self._handshaking = True
        self._closing = False  # we sent a close frame
        self._buf = bytearray()
        self._need = 0  # bytes the buffered frame needs before it can be parsed
        self.raw: socket.socket | None = None  # the socket, once a Reader reads it
        self._stamp: bytes = b""  # the kernel's arrival stamp of the last read
        self.eager = False  # its owner waits on it: a Reader reads it at once

    # asyncio's side

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not subclass asyncio's, so no isinstance check
        self.transport = transport  # type: ignore[assignment]
        transport.write(self._request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        buf = self._buf
        if buf:
            buf += data
            if len(buf) < self._need:
                return
            data = bytes(buf)
            buf.clear()
        if self._handshaking:
            data = self._handshake(data)
            if not data:
                return
        i, end = 0, len(data)
        on_frame = self.on_frame
        while end - i >= 2:
            b0 = data[i]
            n = data[i + 1]
            h = 2
            if n >= 126:
                h = 4 if n == 126 else 10
                if end - i < h:
                    break
                n = int.from_bytes(data[i + 2 : i + h], "big")
            j = i + h + n
            if j > end:
                break
            if b0 == 0x82 or b0 == 0x81:  # FIN + binary or text: the only kinds we get
                WIRE.frames_in += 1
                on_frame(data, i + h, j)
            else:
                self._control(b0, data[i + h : j])
            i = j
        if i < end:
            buf += data[i:]
            self._need = len(buf) + 1
            if len(buf) >= 2:
                n = buf[1] & 0x7F
                h = 2 if n < 126 else 4 if n == 126 else 10
                if len(buf) >= h:
                    n = n if h == 2 else int.from_bytes(buf[2:h], "big")
                    self._need = h + n
                else:
                    self._need = h

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("closed during the handshake"))
        self.transport = None
        self.on_close(self.close_code or 1006)
        self.on_close = _ignore_close

    # ours

    def _handshake(self, data: bytes) -> bytes:
        """Parse the 101 response; what follows it is frames."""
        end = data.find(b"\r\n\r\n")
        if end < 0:
            self._buf += data
            self._need = len(self._buf) + 1
            return b""
        head, data = data[:end].lower(), data[end + 4 :]
        if (
            not head.startswith(b"http/1.1 101")
            or b"\r\nsec-websocket-accept: " + (self._accept.lower()) not in head
        ):
            self.opened.set_exception(HandshakeError(head.decode()))
            self.abort()
            return b""
        self._handshaking = False
        self.opened.set_result(None)
        return data

    def _control(self, b0: int, payload: bytes) -> None:
        opcode = b0 & 0x0F
        if opcode == 0x9:  # ping
            self.send(payload, 0x8A)
        elif opcode == 0x8:  # close: echo it, the server closes the TCP connection
            self.close_code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
            if not self._closing:
                self._closing = True
                self.send(payload[:2], 0x88)
        elif opcode != 0xA:  # not a pong: a fragment or a reserved opcode we never expect
            self.close_code = 1002
            self.abort()

    def send(self, payload: bytes, opcode: int = 0x82) -> None:
        """One masked frame (FIN set)."""
        transport = self.transport
        if transport is None:
            return
        n = len(payload)
        if n < 126:
            head = bytes((opcode, 0x80 | n))
        elif n < 65536:
            head = bytes((opcode, 0xFE)) + n.to_bytes(2, "big")
        else:
            head = bytes((opcode, 0xFF)) + n.to_bytes(8, "big")
        mask = _randbytes(4)
        WIRE.frames_out += 1
        WIRE.bytes_out += len(head) + 4 + n
        if n:
            key = (mask * ((n >> 2) + 1))[:n]
            masked = (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(
                n, "big"
            )
            transport.write(head + mask + masked)
        else:
            transport.write(head + mask)

    def close(self) -> None:
        """Start the closing handshake (1000)."""
        if not self._closing:
            self._closing = True
            self.send(b"\x03\xe8", 0x88)

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    # the Reader's side

    def readable(self, raw: socket.socket) -> bool:
        """Read what the socket holds (the :class:`Reader` saw it ready); false
        once the server has closed the connection."""
        while True:  # to the end: the epoll is edge-triggered
            try:
                data, anc, _, _ = raw.recvmsg(_READ, 64)
            except (BlockingIOError, InterruptedError):
                return True
            except OSError:
                return False
            if not data:
                return False
            WIRE.bytes_in += len(data)
            if anc:
                self._stamp = anc[-1][2]
            self.data_received(data)
            if len(data) < _READ:
                return True

    def arrived(self) -> float:
        """When the bytes of the last read reached this host, as ``time.perf_counter()``;
        now if the kernel gave no stamp."""
        stamp = self._stamp
        if len(stamp) < 16:
            return time.perf_counter()
        sec, nsec = _TIMESPEC.unpack_from(stamp)
        return float(sec + nsec * 1e-9 - _CLOCKS)


async def open_socket(
    url: str,
    subprotocol: str | None,
    timeout: float = 30,
    on_frame: Callable[[bytes, int, int], None] | None = None,
) -> Socket:
    """A :class:`Socket` open at ``url`` (``ws://HOST:PORT/PATH``), offering
    ``subprotocol`` (None: none). ``on_frame``, when given, is in place before the
    handshake: a server that speaks first (Colyseus' JOIN_ROOM) may send its first
    frame in the same read as its 101, which would otherwise go to no one."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    loop = asyncio.get_running_loop()

    def made() -> Socket:
        sock = Socket(f"{host}:{port}", path, subprotocol)
        if on_frame is not None:
            sock.on_frame = on_frame
        return sock

    _, sock = await asyncio.wait_for(loop.create_connection(made, host, port), timeout)
    try:
        await asyncio.wait_for(sock.opened, timeout)
    except BaseException:
        sock.abort()
        raise
    return sock


class Reader:
    """Reads the load's sockets in batches: a wake-up every ``every`` seconds.

    One task of the event loop: it sleeps ``every`` (blocking the loop: nothing
    else is due that could not wait that long), then takes the sockets its
    ``epoll`` (edge-triggered) saw data arrive on, then yields to the loop for
    its timers and writes. A socket whose owner is waiting on it (``eager``
    true: a reply due, a deal awaited) is read at once; any other is only marked,
    and read when its owner asks (:meth:`drain`, before it moves) or at the next
    ``sweep`` (3 s), so one read takes several frames: the server's side is the
    same (the kernel has the bytes either way), the load's reads are fewer.
    ``stamped`` sockets get the kernel's arrival stamp of each read (see
    :meth:`Socket.arrived`).
    """

    def __init__(self, every: float = 0.002, sweep: float = 3.0) -> None:
        self.every = every
        self.sweep = sweep
        self._epoll = select.epoll()
        self._sockets: dict[int, Socket] = {}
        self._marked: dict[int, Socket] = {}  # data arrived, not read yet
        self._queue: deque[tuple[float, int]] = deque()  # (when marked, fd), oldest first
        self._task: asyncio.Task[None] | None = None

    def add(self, sock: Socket, stamped: bool) -> None:
        """Take the socket's reading over from the event loop."""
        transport = sock.transport
        if transport is None:
            return
        transport.pause_reading()
        # The transport's own descriptor (no dup: 11,250 sockets are near the limit),
        # detached again before the transport closes it.
        raw = socket.socket(fileno=transport.get_extra_info("socket").fileno())
        if stamped:
            raw.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.raw = raw
        fd = raw.fileno()
        self._sockets[fd] = sock
        self._mark(fd, sock, time.perf_counter())  # what came before the epoll knew of it
        self._epoll.register(fd, select.EPOLLIN | select.EPOLLET)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    def drain(self, sock: Socket) -> None:
        """Read ``sock`` now if data is waiting on it."""
        raw = sock.raw
        if raw is not None and self._marked.pop(raw.fileno(), None) is not None:
            self._read(raw.fileno(), sock)

    def _mark(self, fd: int, sock: Socket, now: float) -> None:
        if fd not in self._marked:
            self._marked[fd] = sock
            self._queue.append((now, fd))

    def _read(self, fd: int, sock: Socket) -> None:
        raw = sock.raw
        if raw is not None and not sock.readable(raw):
            self._drop(fd, sock)

    async def _run(self) -> None:
        poll, sockets, marked, queue = self._epoll.poll, self._sockets, self._marked, self._queue
        sleep, every, clock, mark = time.sleep, self.every, time.perf_counter, self._mark
        # Sockets the epoll reported, in order, taken a few hundred a pass: when the
        # server lets out at once what it held in a stall, the load answers over a
        # few passes instead of stalling in one (the round trips end at the kernel's
        # stamps, so taking a socket a pass later does not lengthen them).
        ready: deque[int] = deque()
        while True:
            sleep(every)
            now = clock()
            ready.extend(fd for fd, _ in poll(0))
            budget = _PASS_BUDGET
            while ready and budget:
                budget -= 1
                fd = ready.popleft()
                sock = sockets.get(fd)
                if sock is None:
                    continue
                if sock.eager:
                    marked.pop(fd, None)
                    self._read(fd, sock)
                else:
                    mark(fd, sock, now)
            # the sweep, spread out: each socket marked `sweep` ago (if not read since),
            # 64 a pass at most, so that a burst marked at once (the server
            # let out frames it had held) is not read in one stall a second later
            due, budget = now - self.sweep, _SWEEP_BUDGET
            while queue and queue[0][0] <= due and budget:
                budget -= 1
                fd = queue.popleft()[1]
                waiting = marked.pop(fd, None)
                if waiting is not None:
                    self._read(fd, waiting)
            await asyncio.sleep(0)

    def _drop(self, fd: int, sock: Socket) -> None:
        """The server closed ``sock``: stop reading it, and let the loop close it."""
        self._sockets.pop(fd, None)
        self._marked.pop(fd, None)
        self._epoll.unregister(fd)
        if sock.raw is not None:
            sock.raw.detach()
            sock.raw = None
        sock.abort()

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        for sock in self._sockets.values():
            if sock.raw is not None:
                sock.raw.detach()
                sock.raw = None
        self._sockets.clear()
        self._marked.clear()
        self._queue.clear()
        self._epoll.close()
