"""Frames on the wire: the two subprotocols, and decoding and encoding with limits.

Pure, no I/O: the server, the clients and the tests all turn bytes into maps the
same way (protocol/requests.py turns maps into typed requests). Everything a client
sends is hostile until proven otherwise, so decoding never raises anything but
:class:`WireError`, whose ``code`` is the protocol's error code (docs/protocol.md,
"Errors") and whose message names the offending field.

Two subprotocols carry the same maps: ``klondike-race.v2.msgpack`` in binary frames
(the default, also for a client that offers none) and ``klondike-race.v2.json``
in text frames, for browsers. Version 2 replaced version 1 (docs/protocol.md,
"Transport"): a handshake that offers only other subprotocols is refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import msgpack  # type: ignore[import-untyped]

from .messages import ErrorCode

__all__ = [
    "JSON",
    "MSGPACK",
    "SUBPROTOCOLS",
    "VERSION",
    "Encoded",
    "WireError",
    "decode",
    "encode",
    "encode_value",
    "encode_with",
    "events_frame",
]

VERSION = 2
MSGPACK = "klondike-race.v2.msgpack"
JSON = "klondike-race.v2.json"
SUBPROTOCOLS = (MSGPACK, JSON)

# A frame is at most 64 KiB, so no honest value comes near these; they bound what a
# hostile frame can make the decoder allocate before any field is looked at.
_MAX_STR = 64 * 1024
_MAX_ARRAY = 1024
_MAX_MAP = 64
_MAX_DEPTH = 16


class WireError(Exception):
    """A frame or request the server refuses; the connection stays open.

    ``code`` is a protocol error code (``bad_frame``, ``bad_request``,
    ``unknown_type`` …), ``extra`` any further fields of the error frame.
    """

    def __init__(self, code: ErrorCode, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra


# ---------------------------------------------------------------------- frames


def _sendable(text: str) -> None:
    """Refuse text that could not be sent back: JSON may carry a lone surrogate
    (``"\\ud800"`` is valid JSON), which no UTF-8 encoder takes. Echoed in a reply
    (an id, a settings key), it would fail the write of every frame batched with
    it, so it never gets past the decoder."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise WireError(
                ErrorCode.BAD_REQUEST, "the frame holds text that is not valid Unicode"
            ) from None


def _check(value: Any, depth: int = 0) -> None:
    """Refuse absurd nesting (JSON and msgpack would otherwise recurse deeply)
    and text that could not be encoded again, keys included."""
    if depth > _MAX_DEPTH:
        raise WireError(ErrorCode.BAD_FRAME, f"frame nested deeper than {_MAX_DEPTH} levels")
    # Every frame read passes here: ASCII text (nearly all) is told apart before
    # a call, and a tuple of types is quicker to test than a union in 3.11.
    if isinstance(value, dict):
        for k, v in value.items():
            if not k.isascii():
                _sendable(k)
            if isinstance(v, str):
                if not v.isascii():
                    _sendable(v)
            elif isinstance(v, (dict, list)):
                _check(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, str):
                if not v.isascii():
                    _sendable(v)
            elif isinstance(v, (dict, list)):
                _check(v, depth + 1)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode(frame: bytes | str, binary: bool) -> dict[str, Any]:
    """One frame to one map; ``binary`` is the negotiated kind (msgpack, else JSON).

    Raises :class:`WireError` ``bad_frame`` for the wrong kind of frame, bytes that
    do not decode, or anything but a map with string keys at the top;
    ``bad_request`` for text that could not be encoded again (a lone surrogate).
    """
    if binary:
        if not isinstance(frame, bytes | bytearray | memoryview):
            raise WireError(
                ErrorCode.BAD_FRAME, "this connection speaks msgpack: send binary frames"
            )
        try:
            value = msgpack.unpackb(
                frame,
                raw=False,
                strict_map_key=True,
                max_str_len=_MAX_STR,
                max_bin_len=_MAX_STR,
                max_array_len=_MAX_ARRAY,
                max_map_len=_MAX_MAP,
                max_ext_len=0,
            )
        except Exception as exc:  # msgpack raises several types, all mean "not msgpack"
            raise WireError(
                ErrorCode.BAD_FRAME, f"not a msgpack value: {type(exc).__name__}"
            ) from None
    else:
        if not isinstance(frame, str):
            raise WireError(ErrorCode.BAD_FRAME, "this connection speaks JSON: send text frames")
        try:
            value = json.loads(frame, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            raise WireError(ErrorCode.BAD_FRAME, "not a JSON value") from None
    if not isinstance(value, dict):
        raise WireError(ErrorCode.BAD_FRAME, "a frame must be one map (object) with a 'type'")
    for k in value:  # a loop, not all() over a generator: every frame read
        if not isinstance(k, str):
            raise WireError(ErrorCode.BAD_FRAME, "map keys must be strings")
    _check(value)
    return value


# One packer for every frame: ``msgpack.packb`` builds (and frees) a packer and
# its buffer per call, half the cost of packing a small event. It resets itself
# after each value, a failed one included (each process packs from one thread).
_PACKER = msgpack.Packer(use_bin_type=True)


def encode(message: Mapping[str, Any], binary: bool) -> bytes | str:
    """One map to one frame of the negotiated kind."""
    if binary:
        data: bytes = _PACKER.pack(message)
        return data
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Encoded:
    """A field's value already encoded for one subprotocol (msgpack bytes, or JSON
    text), for :func:`encode_with`: a large value that many frames carry (a past
    deal's logs) is encoded once, not once per frame."""

    data: bytes | str


_EVENTS_HEAD = b"\x82\xa4type\xa6events\xa6events"  # {"type": "events", "events": …}


def events_frame(frames: Sequence[bytes | str], binary: bool) -> bytes | str:
    """One ``events`` frame holding ``frames`` (room events, each encoded as it
    would be sent alone) in order: docs/protocol.md "Batched events". Spliced,
    not re-encoded: the very frame :func:`encode` would make of the decoded
    ``{"type": "events", "events": [...]}``."""
    if binary:
        n = len(frames)
        if n < 16:
            head = bytes((0x90 | n,))
        elif n < 0x10000:
            head = b"\xdc" + n.to_bytes(2, "big")
        else:
            head = b"\xdd" + n.to_bytes(4, "big")
        return b"".join([_EVENTS_HEAD, head, *cast("Sequence[bytes]", frames)])
    return '{"type":"events","events":[' + ",".join(cast("Sequence[str]", frames)) + "]}"


def encode_value(value: Any, binary: bool) -> Encoded:
    """One value encoded as :func:`encode` would encode it inside a frame."""
    if binary:
        return Encoded(msgpack.packb(value, use_bin_type=True))
    return Encoded(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def encode_with(message: Mapping[str, Any], binary: bool) -> bytes | str:
    """:func:`encode`, for a message some of whose values are :class:`Encoded`
    (for this subprotocol): those are spliced in as they are. The frame is the
    very one :func:`encode` would make of the decoded values."""
    if binary:
        packer = msgpack.Packer(use_bin_type=True)
        parts = [packer.pack_map_header(len(message))]
        for k, v in message.items():
            parts.append(packer.pack(k))
            parts.append(_spliced(v, bytes) if isinstance(v, Encoded) else packer.pack(v))
        return b"".join(parts)
    items = []
    for k, v in message.items():
        text = (
            _spliced(v, str)
            if isinstance(v, Encoded)
            else json.dumps(v, ensure_ascii=False, separators=(",", ":"))
        )
        items.append(json.dumps(k, ensure_ascii=False) + ":" + text)
    return "{" + ",".join(items) + "}"


def _spliced(value: Encoded, kind: type[Any]) -> Any:
    if not isinstance(value.data, kind):
        raise TypeError("an Encoded value for the other subprotocol")
    return value.data
