"""Frames on the wire: the two subprotocols, decoding with limits, typed requests.

Pure, no I/O: the server, the clients and the tests all turn bytes into requests the
same way, and the cluster relay turns a request back into its map the same way too
(:func:`request_message`). Everything a client sends is hostile until proven otherwise, so decoding
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
from types import MappingProxyType
from typing import Any, ClassVar, Self, TypeVar

import msgpack  # type: ignore[import-untyped]

from .messages import ErrorCode, Reaction, RequestId, Role
from .moves import Move, UnreadableMove, read_move
from .strategy import Pace

_E = TypeVar("_E", bound=Enum)

__all__ = [
    "JSON",
    "MSGPACK",
    "REQUESTS",
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
    "Ready",
    "Rematch",
    "RemovePlayer",
    "Request",
    "RoomInfo",
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
    "request_message",
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
    """A parsed request; ``id`` is echoed in its reply.

    Each kind says both ways what it looks like on the wire: :meth:`parse` makes
    it from a decoded map (refusing what a client got wrong), :meth:`fields` gives
    its fields back. Both directions sit beside the fields they are about because
    two paths use them: the socket parses a client's frame, and the cluster relay
    (server/cluster/relay.py) hands a parsed request to the node that runs its room
    as the very message the client sent (:func:`request_message`), parsed there
    again by :func:`parse_request`. One codec, so the paths cannot drift apart.
    """

    TYPE: ClassVar[str]
    id: RequestId

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        """The request from its map (``id`` already checked); a kind with fields
        overrides this."""
        return cls(rid)

    def fields(self) -> dict[str, Any]:
        """The request's fields as its map carries them (no ``type``, no ``id``):
        :meth:`parse` of them gives an equal request."""
        return {}


@dataclass(frozen=True, slots=True)
class Hello(Request):
    TYPE: ClassVar[str] = "hello"
    version: int
    name: str | None
    token: str | None

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        version = req_int(msg, "version")
        name = opt_str(msg, "name")
        token = opt_str(msg, "token")
        if name is None and token is None:
            raise WireError(
                ErrorCode.BAD_REQUEST, "hello needs a 'name' (new session) or a 'token' (resume)"
            )
        return cls(rid, version, name, token)

    def fields(self) -> dict[str, Any]:
        given = {"name": self.name, "token": self.token}
        return {"version": self.version} | {k: v for k, v in given.items() if v is not None}


@dataclass(frozen=True, slots=True)
class Ping(Request):
    TYPE: ClassVar[str] = "ping"


@dataclass(frozen=True, slots=True)
class CreateRoom(Request):
    """``settings`` as the client sent them: the room core checks each one and
    names the one it refuses (``bad_setting``)."""

    TYPE: ClassVar[str] = "create_room"
    settings: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_map(msg, "settings", optional=True))

    def fields(self) -> dict[str, Any]:
        return {"settings": self.settings}


@dataclass(frozen=True, slots=True)
class JoinRoom(Request):
    """``role`` may be left out: both clients send it, but a join is a player's
    unless it says otherwise (docs/protocol.md, "Rooms")."""

    TYPE: ClassVar[str] = "join_room"
    code: str
    role: Role = Role.PLAYER

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_str(msg, "code"), req_choice(msg, "role", Role, Role.PLAYER))

    def fields(self) -> dict[str, Any]:
        return {"code": self.code, "role": self.role.value}


@dataclass(frozen=True, slots=True)
class LeaveRoom(Request):
    TYPE: ClassVar[str] = "leave_room"


@dataclass(frozen=True, slots=True)
class UpdateSettings(Request):
    TYPE: ClassVar[str] = "update_settings"
    settings: dict[str, Any]

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_map(msg, "settings"))

    def fields(self) -> dict[str, Any]:
        return {"settings": self.settings}


@dataclass(frozen=True, slots=True)
class Start(Request):
    TYPE: ClassVar[str] = "start"


@dataclass(frozen=True, slots=True)
class NextDeal(Request):
    TYPE: ClassVar[str] = "next_deal"


@dataclass(frozen=True, slots=True)
class RemovePlayer(Request):
    TYPE: ClassVar[str] = "remove_player"
    player: str

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_str(msg, "player"))

    def fields(self) -> dict[str, Any]:
        return {"player": self.player}


@dataclass(frozen=True, slots=True)
class AddBot(Request):
    """The host seats a bot player the server plays for, at ``pace``."""

    TYPE: ClassVar[str] = "add_bot"
    pace: Pace = Pace.STEADY

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_choice(msg, "pace", Pace, Pace.STEADY))

    def fields(self) -> dict[str, Any]:
        return {"pace": self.pace.value}


@dataclass(frozen=True, slots=True)
class Rematch(Request):
    TYPE: ClassVar[str] = "rematch"


@dataclass(frozen=True, slots=True)
class CloseRoom(Request):
    TYPE: ClassVar[str] = "close_room"


@dataclass(frozen=True, slots=True)
class Ready(Request):
    """A player of the round is ready for the next deal (during a break)."""

    TYPE: ClassVar[str] = "ready"


@dataclass(frozen=True, slots=True)
class RoomInfo(Request):
    """What anyone may know of a room by its code before joining it (its state,
    its players' names, the seats free), for an invite page."""

    TYPE: ClassVar[str] = "room_info"
    code: str

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_str(msg, "code"))

    def fields(self) -> dict[str, Any]:
        return {"code": self.code}


@dataclass(frozen=True, slots=True)
class MoveRequest(Request):
    """``n`` is the move's index in the player's log of ``deal`` (every accepted
    move counts, undos too): what makes a resent move an idempotent retry rather
    than a second move (docs/protocol.md, ``move``).

    The move map is read here, once: ``move`` is a :class:`~protocol.moves.Move`,
    or an :class:`~protocol.moves.UnreadableMove` that the room refuses
    ``bad_move`` in the order docs/protocol.md gives (after its own refusals)."""

    TYPE: ClassVar[str] = "move"
    deal: int
    move: Move | UnreadableMove
    n: int

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        deal, data, n = req_int(msg, "deal"), req_map(msg, "move"), req_int(msg, "n")
        if not 0 <= n <= _MAX_SAFE_INT:  # and short enough to name in a refusal
            raise WireError(ErrorCode.BAD_REQUEST, "field 'n' must be between 0 and 2**53")
        return cls(rid, deal, read_move(data), n)

    def fields(self) -> dict[str, Any]:
        return {"deal": self.deal, "move": self.move.to_wire(), "n": self.n}


@dataclass(frozen=True, slots=True)
class Snapshot(Request):
    TYPE: ClassVar[str] = "snapshot"


@dataclass(frozen=True, slots=True)
class React(Request):
    """A member's reaction, for the room to see (docs/protocol.md, ``react``)."""

    TYPE: ClassVar[str] = "react"
    reaction: Reaction

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_choice(msg, "reaction", Reaction))

    def fields(self) -> dict[str, Any]:
        return {"reaction": self.reaction.value}


@dataclass(frozen=True, slots=True)
class DealLog(Request):
    """The logs of a deal of the round that is over for everyone: snapshots leave
    them out (docs/protocol.md, ``deal_log``)."""

    TYPE: ClassVar[str] = "deal_log"
    deal: int

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_int(msg, "deal"))

    def fields(self) -> dict[str, Any]:
        return {"deal": self.deal}


REQUESTS: Mapping[str, type[Request]] = MappingProxyType(
    {
        kind.TYPE: kind
        for kind in (
            Hello,
            Ping,
            CreateRoom,
            JoinRoom,
            LeaveRoom,
            UpdateSettings,
            Start,
            NextDeal,
            RemovePlayer,
            AddBot,
            Rematch,
            CloseRoom,
            Ready,
            RoomInfo,
            MoveRequest,
            Snapshot,
            React,
            DealLog,
        )
    }
)
"""Every request a client may send, by its ``type``: the one table of the codec."""


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
    request = REQUESTS.get(kind)
    if request is None:
        raise WireError(ErrorCode.UNKNOWN_TYPE, f"no such request type {kind!r:.40}")
    return request.parse(request_id(msg), msg)


def request_message(request: Request) -> dict[str, Any]:
    """A typed request back to the map a client sends for it: what
    :func:`parse_request` makes an equal request of."""
    head: dict[str, Any] = {"type": request.TYPE}
    if request.id is not None:
        head["id"] = request.id
    return head | request.fields()
