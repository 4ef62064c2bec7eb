"""Typed requests: a decoded map (protocol/wire.py) to the request it is, and back.

One codec for both directions and every path: the server parses what a socket
sends with :func:`parse_request`, and the cluster relay sends a request on to the
room's node as :func:`request_message` makes it and parses it there the same way.
:data:`REQUESTS` is its one table. A malformed field is a :class:`WireError`
(``bad_request``) naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any, ClassVar, Self, TypeVar

from .messages import ErrorCode, Reaction, RequestId, Role
from .moves import Move, UnreadableMove, read_move
from .strategy import Pace
from .wire import WireError

_E = TypeVar("_E", bound=Enum)

__all__ = [
    "REQUESTS",
    "AddBot",
    "CloseRoom",
    "CreateRoom",
    "DealLog",
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

_MAX_ID_STR = 64
_MAX_SAFE_INT = 2**53  # ids echo back to JavaScript clients; keep them exact there


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


# The friends requests build on Request and the field readers above.
from .friend_requests import FRIEND_REQUESTS  # noqa: E402

_KINDS: tuple[type[Request], ...] = (
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
    *FRIEND_REQUESTS,
)

REQUESTS: Mapping[str, type[Request]] = MappingProxyType({kind.TYPE: kind for kind in _KINDS})
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
