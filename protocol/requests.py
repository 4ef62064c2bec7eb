"""Typed requests: a decoded map (protocol/wire.py) to the request it is, and back.

One codec for both directions and every path: the server parses what a socket
sends with :func:`parse_request`, and the cluster relay sends a request on to the
room's node as :func:`request_message` makes it and parses it there the same way.
:data:`REQUESTS` is its one table (the account requests, protocol/account_requests.py,
the friends requests, protocol/friend_requests.py, and the daily deal's,
protocol/daily_requests.py, are in it too). A malformed
field is a :class:`WireError` (``bad_request``) naming the field
(protocol/request_fields.py reads them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Self

from .account_requests import ACCOUNT_REQUESTS, opt_label
from .challenge_requests import CHALLENGE_REQUESTS
from .daily_requests import DAILY_REQUESTS
from .friend_requests import FRIEND_REQUESTS
from .frozen import quick_init
from .history_requests import HISTORY_REQUESTS
from .messages import ErrorCode, Reaction, RequestId, Role
from .moves import Move, UnreadableMove, read_move
from .quick_requests import QUICK_REQUESTS
from .rating_requests import RATING_REQUESTS
from .request_fields import (
    _MAX_SAFE_INT,
    Request,
    opt_str,
    req_bool,
    req_choice,
    req_int,
    req_map,
    req_str,
    request_id,
)
from .strategy import Pace
from .wire import WireError

__all__ = [
    "REQUESTS",
    "SIGN_IN_WAYS",
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

SIGN_IN_WAYS = ("name", "token", "device", "link", "recovery", "passkey")
"""The fields of ``hello`` of which it carries exactly one."""


# ---------------------------------------------------------------------- requests


@dataclass(frozen=True, slots=True)
class Hello(Request):
    """Exactly one way in (docs/protocol.md, ``hello`` and "Accounts"): a ``name``
    (a new guest), a session ``token`` (resume), a ``device`` token (sign in), a
    one-time ``link`` or ``recovery`` code, or a ``passkey`` assertion (each of
    the last three makes a new device, which ``label`` may name)."""

    TYPE: ClassVar[str] = "hello"
    version: int
    name: str | None = None
    token: str | None = None
    device: str | None = None
    link: str | None = None
    recovery: str | None = None
    passkey: dict[str, Any] | None = None
    label: str | None = None

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        version = req_int(msg, "version")
        ways = {name: opt_str(msg, name) for name in SIGN_IN_WAYS if name != "passkey"}
        passkey = req_map(msg, "passkey", optional=True) or None
        given = [name for name, value in ways.items() if value is not None]
        given += ["passkey"] if passkey is not None else []
        if len(given) != 1:
            raise WireError(
                ErrorCode.BAD_REQUEST,
                "hello needs exactly one of 'name' (new session), 'token' (resume), "
                "'device', 'link', 'recovery' or 'passkey' (sign in)",
            )
        return cls(rid, version, **ways, passkey=passkey, label=opt_label(msg))

    def fields(self) -> dict[str, Any]:
        given = {
            "name": self.name,
            "token": self.token,
            "device": self.device,
            "link": self.link,
            "recovery": self.recovery,
            "passkey": self.passkey,
            "label": self.label,
        }
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


@quick_init
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


_ROOM_REQUESTS: tuple[type[Request], ...] = (
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

REQUESTS: Mapping[str, type[Request]] = MappingProxyType(
    {
        kind.TYPE: kind
        for kind in (
            *_ROOM_REQUESTS,
            *ACCOUNT_REQUESTS,
            *HISTORY_REQUESTS,
            *FRIEND_REQUESTS,
            *RATING_REQUESTS,
            *DAILY_REQUESTS,
            *CHALLENGE_REQUESTS,
            *QUICK_REQUESTS,
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
    rid = request_id(msg)
    if rid is None and msg.get("id") is not None:
        raise WireError(
            ErrorCode.BAD_REQUEST, "field 'id' must be an integer (|id| <= 2**53) or a short string"
        )
    request = REQUESTS.get(kind)
    if request is None:
        raise WireError(ErrorCode.UNKNOWN_TYPE, f"no such request type {kind!r:.40}")
    return request.parse(rid, msg)


def request_message(request: Request) -> dict[str, Any]:
    """A typed request back to the map a client sends for it: what
    :func:`parse_request` makes an equal request of."""
    head: dict[str, Any] = {"type": request.TYPE}
    if request.id is not None:
        head["id"] = request.id
    return head | request.fields()
