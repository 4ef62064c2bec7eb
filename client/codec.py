"""Frames to bytes and back, for the two subprotocols of docs/protocol.md.

Encoding is the shared :func:`protocol.wire.encode`. Decoding is the client's own:
:func:`protocol.wire.decode` is built for hostile input and caps arrays at 1,024
items and maps at 64 keys, which a legitimate server frame can exceed (a revealed
deal's move log of a long game). The server is not hostile to its clients, and
the socket's ``max_size`` already bounds a frame.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import msgpack  # type: ignore[import-untyped]

from protocol import wire

__all__ = ["JSON", "MSGPACK", "SUBPROTOCOLS", "FrameError", "decode", "encode"]

MSGPACK = wire.MSGPACK
JSON = wire.JSON
SUBPROTOCOLS = {"msgpack": MSGPACK, "json": JSON}


class FrameError(ValueError):
    """A frame from the server that is not a map (a server bug, or the wrong kind)."""


def encode(frame: Mapping[str, Any], subprotocol: str) -> bytes | str:
    """Binary msgpack for the msgpack subprotocol, a text frame for JSON."""
    return wire.encode(frame, subprotocol != JSON)


def decode(data: bytes | str, subprotocol: str) -> dict[str, Any]:
    """One frame to a dict; raises :class:`FrameError` for anything but a map."""
    try:
        if isinstance(data, str):
            value = json.loads(data)
        elif subprotocol == JSON:
            value = json.loads(data.decode("utf-8"))
        else:
            value = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as exc:
        raise FrameError(f"undecodable frame: {exc}") from None
    if not isinstance(value, dict):
        raise FrameError(f"a frame must be a map, not {type(value).__name__}")
    return value
