"""The pieces every request is made of: the base :class:`Request` and the readers
of its fields, each refusing a malformed field with a :class:`WireError`
(``bad_request``) that names it. The request kinds live in protocol/requests.py
(rooms, sessions) and protocol/account_requests.py (accounts)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar, Self, TypeVar

from .messages import ErrorCode, RequestId
from .wire import WireError

_E = TypeVar("_E", bound=Enum)

__all__ = [
    "ByHandle",
    "Request",
    "opt_bool",
    "opt_str",
    "req_bool",
    "req_choice",
    "req_int",
    "req_map",
    "req_str",
    "request_id",
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


def opt_bool(msg: Mapping[str, Any], name: str) -> bool | None:
    """An optional boolean field (None: left out, or null)."""
    value = msg.get(name)
    if value is not None and not isinstance(value, bool):
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
class ByHandle(Request):
    """A request about one account, named by its ``handle`` alone (a friend to
    remove or invite; one's own, typed again or new). Each such kind is this with
    its ``TYPE``: one codec for all of them."""

    handle: str

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_str(msg, "handle"))

    def fields(self) -> dict[str, Any]:
        return {"handle": self.handle}
