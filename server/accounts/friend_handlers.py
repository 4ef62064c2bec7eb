"""The friends requests (protocol/friend_requests.py) and their replies.

Every one needs a signed-in session (``not_signed_in`` otherwise). Each request
that changes something replies with the whole list as it now stands, so a page
never patches its copy by guesswork.

With several nodes they are answered where the client is connected, as the
account requests are (server/cluster/leases.py), except ``invite_friend``, which
goes to the node of the inviter's room: that node knows the room.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Protocol, TypeVar

from protocol import messages as M
from protocol.friend_requests import (
    AnswerFriend,
    Befriend,
    FriendLink,
    Friends,
    InviteFriend,
    Unfriend,
)
from protocol.messages import ErrorCode, Role
from protocol.requests import Request

from ..core.values import RoomError
from ..core.views import room_info
from ..net.allowances import Quota
from ..net.http import qr_svg
from ..peer import Peer
from ..rooms.handlers import Front, Handler, on
from ..store.base import StoreUnavailable, unavailable
from .friends import Friends as FriendsLogic
from .friends import Invitation, Reach
from .model import Account
from .service import Accounts
from .store import AccountStore

__all__ = ["FRIEND_HANDLERS", "FriendsDesk", "SessionsReach"]


class PlayerSessions(Protocol):
    """What presence needs of server/service/sessions.py."""

    def peer_of(self, player: str) -> Peer | None: ...

    def room_of_player(self, player: str) -> str | None: ...


class FriendsDesk(Front, Protocol):
    """What the friends handlers need of the service, besides the rooms'."""

    accounts: AccountStore
    account_service: Accounts

    @property
    def reach(self) -> Reach: ...


class SessionsReach:
    """Presence as this node's sessions know it: a player is online while a
    connection speaks for one of their sessions here. The whole truth on a
    single server; a cluster's reach asks it first."""

    def __init__(self, sessions: PlayerSessions) -> None:
        self.sessions = sessions

    def here(self, players: Collection[str]) -> dict[str, str | None]:
        return {
            p: self.sessions.room_of_player(p)
            for p in players
            if self.sessions.peer_of(p) is not None
        }

    async def where(self, friends: Sequence[Account]) -> dict[str, str | None]:
        return self.here([f.player for f in friends])

    def hand_over(self, invitation: Invitation) -> bool:
        """Give ``invitation`` to its addressee's connection here; False when none."""
        peer = self.sessions.peer_of(invitation.to)
        if peer is None:
            return False
        peer.send(invitation.message())
        return True

    async def invite(self, invitation: Invitation) -> None:
        self.hand_over(invitation)


_R = TypeVar("_R", bound=Request)


def _signed_in(
    handler: Callable[[FriendsDesk, Peer, _R, FriendsLogic, Account], Awaitable[None]],
) -> Callable[[FriendsDesk, Peer, _R], Awaitable[None]]:
    """The handler with the requester's account, and the store's outage as the
    protocol's ``storage_unavailable`` (nothing was changed: try again)."""

    async def run(desk: FriendsDesk, conn: Peer, req: _R) -> None:
        me = await desk.account_service.account(desk.session_of(conn).account)
        try:
            await handler(desk, conn, req, FriendsLogic(desk.accounts, desk.reach), me)
        except StoreUnavailable:
            raise unavailable() from None

    return run


def _now(desk: FriendsDesk) -> float:
    return desk.clock.now() / 1000


async def _reply_list(conn: Peer, req: Request, friends: FriendsLogic, me: Account) -> None:
    conn.send(M.friends(req.id, friends=await friends.listing(me)))


async def _friends(
    desk: FriendsDesk, conn: Peer, req: Friends, friends: FriendsLogic, me: Account
) -> None:
    await _reply_list(conn, req, friends, me)


async def _befriend(
    desk: FriendsDesk, conn: Peer, req: Befriend, friends: FriendsLogic, me: Account
) -> None:
    desk.allowances.admit(Quota.FRIEND_ASKS, conn)
    if req.link is not None:
        await friends.use_link(me, req.link, _now(desk))
    else:
        assert req.handle is not None  # the codec takes exactly one
        await friends.ask(me, req.handle, _now(desk))
    await _reply_list(conn, req, friends, me)


async def _answer(
    desk: FriendsDesk, conn: Peer, req: AnswerFriend, friends: FriendsLogic, me: Account
) -> None:
    await friends.answer(me, req.handle, req.accept, _now(desk))
    await _reply_list(conn, req, friends, me)


async def _unfriend(
    desk: FriendsDesk, conn: Peer, req: Unfriend, friends: FriendsLogic, me: Account
) -> None:
    await friends.unfriend(me, req.handle)
    await _reply_list(conn, req, friends, me)


async def _friend_link(
    desk: FriendsDesk, conn: Peer, req: FriendLink, friends: FriendsLogic, me: Account
) -> None:
    link = await friends.new_link(me)
    url = f"{conn.link_base or ''}/#friend={link}"
    conn.send(M.friend_link(req.id, link=link, url=url, qr=qr_svg(url, "Friend link")))


async def _invite(
    desk: FriendsDesk, conn: Peer, req: InviteFriend, friends: FriendsLogic, me: Account
) -> None:
    session = desk.session_of(conn)
    runner = desk.rooms.get(session.room_code) if session.room_code else None
    if runner is None:
        raise RoomError(ErrorCode.NOT_IN_ROOM, "invite a friend from inside a room")
    desk.allowances.admit(Quota.FRIEND_ASKS, conn)
    role = Role.PLAYER if room_info(runner.room)["seats"] > 0 else Role.SPECTATOR
    await friends.invite(me, req.handle, runner.code, role)
    conn.send(M.ok(req.id))


FRIEND_HANDLERS: dict[type[Request], Handler[FriendsDesk]] = dict(
    [
        on(Friends, _signed_in(_friends)),
        on(Befriend, _signed_in(_befriend)),
        on(AnswerFriend, _signed_in(_answer)),
        on(Unfriend, _signed_in(_unfriend)),
        on(FriendLink, _signed_in(_friend_link)),
        on(InviteFriend, _signed_in(_invite)),
    ]
)
