"""A server's WebSocket data frame, built once and written to every recipient.

A room event goes to up to nine connections in the same loop pass, as the very
same payload object (server/rooms/runner.py ``fanout`` encodes each distinct
message once). A server's frames are never masked and this server negotiates no
extension (``compression=None``), so the bytes of a frame, header and payload,
are the same for every recipient: the :class:`Framer` of one flush builds them
once per distinct payload, where websockets' ``send_binary`` would build a
``Frame`` object and serialize it per recipient (about a third of the cost of
writing a move's frames).

The frames are RFC 6455 section 5.2 exactly as websockets serializes them for a
server: FIN set, no RSV bits, opcode 0x1 (text, UTF-8) or 0x2 (binary), no mask,
the 7-bit, 16-bit or 64-bit length. websockets' state machine is untouched by
them: a data frame changes no protocol state (only a fragmented message would,
and this server never fragments), and the connection writes them only while the
protocol is OPEN, after whatever websockets itself has queued (server/net/
connection.py ``Connection._send_frames``).
"""

from __future__ import annotations

import struct

__all__ = ["Framer", "frame"]

_FIN_TEXT = 0x81
_FIN_BINARY = 0x82
_SHORT = struct.Struct("!BB")
_MEDIUM = struct.Struct("!BBH")
_LONG = struct.Struct("!BBQ")


def frame(data: bytes | str) -> bytes:
    """One unmasked, unfragmented data frame: text for ``str``, binary for bytes."""
    if isinstance(data, str):
        payload = data.encode()
        head = _FIN_TEXT
    else:
        payload = data
        head = _FIN_BINARY
    n = len(payload)
    if n < 126:
        header = _SHORT.pack(head, n)
    elif n < 65536:
        header = _MEDIUM.pack(head, 126, n)
    else:
        header = _LONG.pack(head, 127, n)
    return header + payload


class Framer:
    """The frames of one flush, each distinct payload framed once.

    Keyed by the payload's identity (a fan-out queues one object on every member),
    and holding the payload itself so that no id is reused while the framer lives:
    it lives for one flush, so it costs nothing beyond the frames of that pass."""

    __slots__ = ("_built",)

    def __init__(self) -> None:
        self._built: dict[int, tuple[bytes | str, bytes]] = {}

    def __call__(self, data: bytes | str) -> bytes:
        built = self._built.get(id(data))
        if built is not None:
            return built[1]
        wire = frame(data)
        self._built[id(data)] = (data, wire)
        return wire
