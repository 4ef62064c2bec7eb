"""The friends requests (docs/protocol.md, "Friends"): typed as the room requests
are (protocol/request_fields.py), in protocol/requests.py's ``REQUESTS`` table.

Friends are accounts that agreed to be: one asks by handle and the other answers,
or one opens the other's friend link (the link is its owner's yes, given ahead).
Only signed-in sessions have friends; a handle is the only name a request takes,
since it is what people tell each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from .messages import ErrorCode, RequestId
from .request_fields import ByHandle, Request, opt_str, req_bool, req_str
from .wire import WireError

__all__ = [
    "AT_THE_EDGE",
    "FRIEND_REQUESTS",
    "AnswerFriend",
    "Befriend",
    "FriendLink",
    "Friends",
    "InviteFriend",
    "Unfriend",
]


@dataclass(frozen=True, slots=True)
class Friends(Request):
    """The own friends, asked and asking, as this account may see them."""

    TYPE: ClassVar[str] = "friends"


@dataclass(frozen=True, slots=True)
class Befriend(Request):
    """Ask ``handle`` to be friends, or be friends with the owner of ``link`` at
    once: exactly one of them."""

    TYPE: ClassVar[str] = "befriend"
    handle: str | None = None
    link: str | None = None

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        handle, link = opt_str(msg, "handle"), opt_str(msg, "link")
        if (handle is None) == (link is None):
            raise WireError(ErrorCode.BAD_REQUEST, "befriend needs a 'handle' or a 'link'")
        return cls(rid, handle, link)

    def fields(self) -> dict[str, Any]:
        given = {"handle": self.handle, "link": self.link}
        return {k: v for k, v in given.items() if v is not None}


@dataclass(frozen=True, slots=True)
class AnswerFriend(Request):
    """Accept or decline the request ``handle`` sent."""

    TYPE: ClassVar[str] = "answer_friend"
    handle: str
    accept: bool

    @classmethod
    def parse(cls, rid: RequestId, msg: Mapping[str, Any]) -> Self:
        return cls(rid, req_str(msg, "handle"), req_bool(msg, "accept"))

    def fields(self) -> dict[str, Any]:
        return {"handle": self.handle, "accept": self.accept}


@dataclass(frozen=True, slots=True)
class Unfriend(ByHandle):
    """End a friendship, or take back a request (either side's)."""

    TYPE: ClassVar[str] = "unfriend"


@dataclass(frozen=True, slots=True)
class FriendLink(Request):
    """A new friend link: the old one stops working."""

    TYPE: ClassVar[str] = "friend_link"


@dataclass(frozen=True, slots=True)
class InviteFriend(ByHandle):
    """From inside a room: tell friend ``handle`` where you are, to join in."""

    TYPE: ClassVar[str] = "invite_friend"


FRIEND_REQUESTS: tuple[type[Request], ...] = (
    Friends,
    Befriend,
    AnswerFriend,
    Unfriend,
    FriendLink,
    InviteFriend,
)
"""For protocol/requests.py's ``REQUESTS`` table."""

AT_THE_EDGE: tuple[type[Request], ...] = tuple(k for k in FRIEND_REQUESTS if k is not InviteFriend)
"""Those a cluster answers where the client is connected, as the account
requests: they concern the account, not a room (``invite_friend`` needs the room)."""
