"""A flooder, as an attacker would write one: raw sockets, no WebSocket library,
frames sent as fast as the kernel takes them and never stopped for a close frame.

Run as a process of its own (``python -m tests.support.flooder``), so that what it
costs the server is measured from outside: it opens ``--connections`` WebSockets
from ``--source`` (an address of 127.0.0.0/8 of its own), says hello on each and
sends its ``--opening`` (nothing more, or bad input: see :data:`OPENINGS`), then
streams pings, requests or both, reading what comes back, until the server has
dropped every connection or ``--give-up`` seconds have passed. A ``--deaf``
flooder does not stop at the end of the server's stream either: it sends on until
the server drops the connection. It prints a line ``flooding`` when its
connections are open, then one JSON object: per connection, the close code
received, the pongs received in all and after the close frame, and how the
connection ended (``eof``, ``reset`` or ``open`` if it was still open when the
flooder gave up; a deaf flooder's ``eof`` is one it gave up on after the end of
the server's stream).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import select
import socket
import struct
import time
from dataclasses import dataclass, field

from protocol.wire import JSON

OP_TEXT, OP_CLOSE, OP_PING, OP_PONG = 0x1, 0x8, 0x9, 0xA


def frame(opcode: int, payload: bytes = b"") -> bytes:
    """One masked client frame (payloads under 126 bytes)."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + masked


def request(rid: int, kind: str, **fields: object) -> bytes:
    return frame(OP_TEXT, json.dumps({"type": kind, "id": rid, **fields}).encode())


# What each connection sends before its flood: nothing more than its hello, or bad
# input that gets it closed: a frame announcing more than the server's 64 KiB limit
# (1009), a reserved opcode (1002), a text frame that is not UTF-8 (1007), three
# requests and no hello (4002), or its own close frame (1000, echoed).
OPENINGS = {
    "hello": b"",
    "too_big": bytes([0x80 | OP_TEXT, 0x80 | 127]) + struct.pack("!Q", 100_000) + os.urandom(4),
    "bad_opcode": frame(0x3, b"x"),
    "bad_utf8": frame(OP_TEXT, b"\xff\xfe"),
    "before_hello": b"".join(request(rid, "ping") for rid in (1, 2, 3)),
    "close": frame(OP_CLOSE, struct.pack("!H", 1000)),
}


def chunk(mode: str) -> bytes:
    """About 8 KiB of flood, written at once whenever the socket takes it."""
    ping, data = frame(OP_PING, b"x"), request(1, "ping")
    unit = {"ping": ping, "data": data, "both": ping + data}[mode]
    return unit * (8192 // len(unit))


@dataclass
class Flood:
    sock: socket.socket
    close: int | None = None
    pongs: int = 0
    pongs_after_close: int = 0
    ended: str = "open"
    sent: int = 0
    started: float = field(default_factory=time.monotonic)
    closed_after: float | None = None  # seconds from the hello to the close frame
    eof_after: float | None = None  # to the end of the server's stream
    ended_after: float | None = None  # to the end of the connection
    inbox: bytearray = field(default_factory=bytearray)

    def fileno(self) -> int:
        return self.sock.fileno()

    def report(self) -> dict[str, object]:
        return {
            "close": self.close,
            "pongs": self.pongs,
            "pongs_after_close": self.pongs_after_close,
            "ended": self.ended,
            "sent": self.sent,
            "closed_after": self.closed_after,
            "eof_after": self.eof_after,
            "ended_after": self.ended_after,
        }

    def end(self, how: str) -> None:
        self.ended = how
        self.ended_after = time.monotonic() - self.started

    def read(self) -> None:
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return
        except ConnectionResetError:
            self.end("reset")
            return
        if not data:
            self.end("eof")
            self.eof_after = self.ended_after
            return
        self.inbox += data
        while (parsed := self._frame()) is not None:
            opcode, payload = parsed
            if opcode == OP_PONG:
                self.pongs += 1
                if self.close is not None:
                    self.pongs_after_close += 1
            elif opcode == OP_CLOSE and self.close is None:
                self.close = struct.unpack("!H", payload[:2])[0] if payload else 1005
                self.closed_after = time.monotonic() - self.started

    def _frame(self) -> tuple[int, bytes] | None:
        buf = self.inbox
        if len(buf) < 2:
            return None
        opcode, n, at = buf[0] & 0x0F, buf[1] & 0x7F, 2
        if n == 126:
            if len(buf) < 4:
                return None
            n, at = struct.unpack("!H", buf[2:4])[0], 4
        elif n == 127:
            if len(buf) < 10:
                return None
            n, at = struct.unpack("!Q", buf[2:10])[0], 10
        if len(buf) < at + n:
            return None
        payload = bytes(buf[at : at + n])
        del buf[: at + n]
        return opcode, payload

    def write(self, data: bytes) -> None:
        try:
            self.sent += self.sock.send(data)
        except BlockingIOError:
            pass
        except (ConnectionResetError, BrokenPipeError):
            self.end("reset")


def open_flood(port: int, source: str, opening: str) -> Flood:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {JSON}\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        got = sock.recv(4096)
        if not got:
            raise ConnectionError("closed during the handshake")
        head += got
    if not head.startswith(b"HTTP/1.1 101"):
        raise ConnectionError(head.split(b"\r\n")[0].decode())
    flood = Flood(sock)
    flood.inbox += head.split(b"\r\n\r\n", 1)[1]
    hello = b"" if opening == "before_hello" else request(0, "hello", version=2, name="Flood")
    sock.sendall(hello + OPENINGS[opening])
    sock.setblocking(False)
    return flood


def run(
    port: int,
    source: str,
    connections: int,
    mode: str,
    give_up: float,
    opening: str = "hello",
    deaf: bool = False,
) -> list[Flood]:
    floods = [open_flood(port, source, opening) for _ in range(connections)]
    print("flooding", flush=True)  # the flood starts now (the test reads this line)
    data = chunk(mode)
    going = ("open", "eof") if deaf else ("open",)
    deadline = time.monotonic() + give_up
    while time.monotonic() < deadline:
        live = [f for f in floods if f.ended in going]
        if not live:
            break
        listening = [f for f in live if f.ended == "open"]  # at EOF a socket is always readable
        readable, writable, _ = select.select(listening, live, [], 0.5)
        for f in readable:
            f.read()
        for f in writable:
            if f.ended in going:
                f.write(data)
    for f in floods:
        f.sock.close()
    return floods


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--source", default="127.0.0.2")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--mode", choices=("ping", "data", "both"), default="ping")
    parser.add_argument("--give-up", type=float, default=20.0)
    parser.add_argument("--opening", choices=tuple(OPENINGS), default="hello")
    parser.add_argument("--deaf", action="store_true", help="send on past the server's EOF")
    args = parser.parse_args()
    # An attacker's machine is not the server's: here they share two cores, and
    # the flooder's own CPU (it never waits) must not pass for the server's delay.
    os.nice(19)
    floods = run(
        args.port,
        args.source,
        args.connections,
        args.mode,
        args.give_up,
        args.opening,
        args.deaf,
    )
    print(json.dumps([f.report() for f in floods]))


if __name__ == "__main__":
    main()
