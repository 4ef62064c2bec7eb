"""Frames on the wire: the two subprotocols, decoding with limits, typed requests.

Pure, no I/O: the server, the clients and the tests all turn bytes into requests the
same way. Everything a client sends is hostile until proven otherwise, so decoding
never raises anything but :class:`WireError`, whose ``code`` is the protocol's error
code (docs/protocol.md, "Errors") and whose message names the offending field.

Two subprotocols carry the same maps: ``klondike-race.v1.msgpack`` in binary frames
(the default, also for a client that offers neither) and ``klondike-race.v1.json``
in text frames, for browsers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeVar

import msgpack  # type: ignore[import-untyped]

from .messages import ErrorCode, Reaction
from .strategy import Pace

_E = TypeVar("_E", bound=Enum)

__all__ = [
    "JSON",
    "MSGPACK",
    "SUBPROTOCOLS",
    "VERSION",
    "AddBot",
    "CloseRoom",
    "CreateRoom",
    "DealLog",
    "Encoded",
    "Hello",
    "JoinRoom",
    "LeaveRoom",
    "MoveRequest",
    "NextDeal",
    "Ping",
    "React",
    "Rematch",
    "RemovePlayer",
    "Request",
    "Snapshot",
    "Start",
    "UpdateSettings",
    "WireError",
    "decode",
    "encode",
    "encode_value",
    "encode_with",
    "opt_str",
    "parse_request",
    "req_bool",
    "req_choice",
    "req_int",
    "req_map",
    "req_str",
    "request_id",
]

VERSION = 1
MSGPACK = "klondike-race.v1.msgpack"
JSON = "klondike-race.v1.json"
SUBPROTOCOLS = (MSGPACK, JSON)

# A frame is at most 64 KiB, so no honest value comes near these; they bound what a
# hostile frame can make the decoder allocate before any field is looked at.
_MAX_STR = 64 * 1024
_MAX_ARRAY = 1024
_MAX_MAP = 64
_MAX_DEPTH = 16
_MAX_ID_STR = 64
_MAX_SAFE_INT = 2**53  # ids echo back to JavaScript clients; keep them exact there


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
    if isinstance(value, dict):
        for k, v in value.items():
            _sendable(k)
            if isinstance(v, str):
                _sendable(v)
            elif isinstance(v, dict | list):
                _check(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, str):
                _sendable(v)
            elif isinstance(v, dict | list):
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
    if not all(isinstance(k, str) for k in value):
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


# ---------------------------------------------------------------------- fields


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a map"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _missing(msg: Mapping[str, Any], name: str) -> WireError:
    what = msg.get("type", "request")
    return WireError(ErrorCode.BAD_REQUEST, f"{what!s:.32}: field {name!r} is missing")


def _wrong(name: str, want: str, value: Any) -> WireError:
    return WireError(ErrorCode.BAD_REQUEST, f"field {name!r} must be {want}, not {_kind(value)}")


def req_str(msg: Mapping[str, Any], name: str) -> str:
    """A required string field."""
    if name not in msg:
        raise _missing(msg, name)
    value = msg[name]
    if not isinstance(value, str):
        raise _wrong(name, "a string", value)
    return value


def req_choice(msg: Mapping[str, Any], name: str, kind: type[_E], default: _E | None = None) -> _E:
    """A string field naming a member of ``kind`` (``default`` when absent, if given)."""
    if default is not None and name not in msg:
        return default
    value = req_str(msg, name)
    for member in kind:
        if member.value == value:
            return member
    names = ", ".join(f"'{m.value}'" for m in kind)
    raise WireError(ErrorCode.BAD_REQUEST, f"field {name!r} must be one of {names}")


def opt_str(msg: Mapping[str, Any], name: str) -> str | None:
    """An optional string field (absent or null gives None)."""
    value = msg.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _wrong(name, "a string", value)
    return value


def req_int(msg: Mapping[str, Any], name: str) -> int:
    """A required integer field (booleans are not integers here)."""
    if name not in msg:
        raise _missing(msg, name)
    value = msg[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong(name, "an integer", value)
    return value


def req_bool(msg: Mapping[str, Any], name: str) -> bool:
    """A required boolean field."""
    if name not in msg:
        raise _missing(msg, name)
    value = msg[name]
    if not isinstance(value, bool):
        raise _wrong(name, "true or false", value)
    return value


def req_map(msg: Mapping[str, Any], name: str, *, optional: bool = False) -> dict[str, Any]:
    """A map field; an optional one that is absent or null gives an empty map."""
    if name not in msg or (optional and msg[name] is None):
        if optional:
            return {}
        raise _missing(msg, name)
    value = msg[name]
    if not isinstance(value, dict):
        raise _wrong(name, "a map", value)
    return value


def request_id(msg: Mapping[str, Any]) -> int | str | None:
    """The request's ``id`` as it may be echoed, or None when absent or unusable.

    An id is an integer that JavaScript holds exactly, or a short string; anything
    else would not survive the trip back to every client.
    """
    value = msg.get("id")
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
        return value
    if isinstance(value, str) and len(value) <= _MAX_ID_STR:
        return value
    return None


# ---------------------------------------------------------------------- requests


@dataclass(frozen=True, slots=True)
class Request:
    """A parsed request; ``id`` is echoed in its reply."""

    id: int | str | None


@dataclass(frozen=True, slots=True)
class Hello(Request):
    version: int
    name: str | None
    token: str | None


@dataclass(frozen=True, slots=True)
class Ping(Request):
    pass


@dataclass(frozen=True, slots=True)
class CreateRoom(Request):
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class JoinRoom(Request):
    code: str
    role: str


@dataclass(frozen=True, slots=True)
class LeaveRoom(Request):
    pass


@dataclass(frozen=True, slots=True)
class UpdateSettings(Request):
    settings: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Start(Request):
    pass


@dataclass(frozen=True, slots=True)
class NextDeal(Request):
    pass


@dataclass(frozen=True, slots=True)
class RemovePlayer(Request):
    player: str


@dataclass(frozen=True, slots=True)
class AddBot(Request):
    """The host seats a bot player the server plays for, at ``pace``."""

    pace: Pace


def _add_bot(rid: int | str | None, msg: Mapping[str, Any]) -> Request:
    return AddBot(rid, req_choice(msg, "pace", Pace, Pace.STEADY))


@dataclass(frozen=True, slots=True)
class Rematch(Request):
    pass


@dataclass(frozen=True, slots=True)
class CloseRoom(Request):
    pass


@dataclass(frozen=True, slots=True)
class Ready(Request):
    """A player of the round is ready for the next deal (during a break)."""


@dataclass(frozen=True, slots=True)
class RoomInfo(Request):
    """What anyone may know of a room by its code before joining it (its state,
    its players' names, the seats free), for an invite page."""

    code: str


@dataclass(frozen=True, slots=True)
class MoveRequest(Request):
    """``n`` is the move's index in the player's log of ``deal`` (every accepted
    move counts, undos too): what makes a resent move an idempotent retry rather
    than a second move (docs/protocol.md, ``move``)."""

    deal: int
    move: dict[str, Any]
    n: int


@dataclass(frozen=True, slots=True)
class Snapshot(Request):
    pass


@dataclass(frozen=True, slots=True)
class React(Request):
    """A member's reaction, for the room to see (docs/protocol.md, ``react``)."""

    reaction: Reaction


@dataclass(frozen=True, slots=True)
class DealLog(Request):
    """The logs of a deal of the round that is over for everyone: snapshots leave
    them out (docs/protocol.md, ``deal_log``)."""

    deal: int


def _hello(rid: int | str | None, msg: Mapping[str, Any]) -> Request:
    version = req_int(msg, "version")
    name = opt_str(msg, "name")
    token = opt_str(msg, "token")
    if name is None and token is None:
        raise WireError(
            ErrorCode.BAD_REQUEST, "hello needs a 'name' (new session) or a 'token' (resume)"
        )
    return Hello(rid, version, name, token)


def _join(rid: int | str | None, msg: Mapping[str, Any]) -> Request:
    role = req_str(msg, "role") if "role" in msg else "player"
    if role not in ("player", "spectator"):
        raise WireError(
            ErrorCode.BAD_REQUEST, f"field 'role' must be 'player' or 'spectator', not {role!r:.32}"
        )
    return JoinRoom(rid, req_str(msg, "code"), role)


def _move(rid: int | str | None, msg: Mapping[str, Any]) -> Request:
    deal, move, n = req_int(msg, "deal"), req_map(msg, "move"), req_int(msg, "n")
    if not 0 <= n <= _MAX_SAFE_INT:  # and short enough to name in a refusal
        raise WireError(ErrorCode.BAD_REQUEST, "field 'n' must be between 0 and 2**53")
    return MoveRequest(rid, deal, move, n)


_PARSERS: dict[str, Any] = {
    "hello": _hello,
    "ping": lambda rid, msg: Ping(rid),
    "create_room": lambda rid, msg: CreateRoom(rid, req_map(msg, "settings", optional=True)),
    "join_room": _join,
    "leave_room": lambda rid, msg: LeaveRoom(rid),
    "update_settings": lambda rid, msg: UpdateSettings(rid, req_map(msg, "settings")),
    "start": lambda rid, msg: Start(rid),
    "next_deal": lambda rid, msg: NextDeal(rid),
    "remove_player": lambda rid, msg: RemovePlayer(rid, req_str(msg, "player")),
    "add_bot": _add_bot,
    "rematch": lambda rid, msg: Rematch(rid),
    "close_room": lambda rid, msg: CloseRoom(rid),
    "ready": lambda rid, msg: Ready(rid),
    "room_info": lambda rid, msg: RoomInfo(rid, req_str(msg, "code")),
    "move": _move,
    "snapshot": lambda rid, msg: Snapshot(rid),
    "react": lambda rid, msg: React(rid, req_choice(msg, "reaction", Reaction)),
    "deal_log": lambda rid, msg: DealLog(rid, req_int(msg, "deal")),
}

REQUEST_TYPES = frozenset(_PARSERS)


def parse_request(msg: Mapping[str, Any]) -> Request:
    """A decoded map to a typed request.

    Raises :class:`WireError`: ``bad_request`` when ``type`` is not a string or a
    field is missing or mistyped, ``unknown_type`` for a type nobody defined. The
    ``id`` is checked too: a client that cannot have its replies matched should know.
    """
    kind = req_str(msg, "type")
    if "id" in msg and msg["id"] is not None and request_id(msg) is None:
        raise WireError(
            ErrorCode.BAD_REQUEST, "field 'id' must be an integer (|id| <= 2**53) or a short string"
        )
    parser = _PARSERS.get(kind)
    if parser is None:
        raise WireError(ErrorCode.UNKNOWN_TYPE, f"no such request type {kind!r:.40}")
    request: Request = parser(request_id(msg), msg)
    return request
