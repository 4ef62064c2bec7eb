"""Friends: who may see whom online, and ask whom to a room.

A friendship is two accounts that agreed: one asked by handle and the other
accepted, or one opened the other's friend link, which is its owner's yes given
ahead (a reusable link; a new one replaces it, so a link shared too widely is
stopped by making another). Nothing of an account reaches anyone who is not its
friend: a request's two sides see each other's handle and no more, and a friend
sees whether you are online, and in which room, only if you let them
(``Account.shows_online``).

**Presence** is whether a session of the friend's player has a connection now:
the sessions of this node (server/service/sessions.py) know it at once and for
free. With several nodes, a player connected to another node is not in this
node's sessions: the cluster's :class:`Reach` (server/cluster/friends.py) keeps
which node each player is connected to in Redis, and sends an invitation there.

**Records against a friend** are computed from the two players' round histories
(``RoundEntry.players`` and ``placing``), not kept as a running tally: a round
would otherwise write a tally for every pair of its players, in every store, to
serve a panel opened now and then; a friend never raced costs no read at all.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from protocol import messages as M
from protocol.messages import ErrorCode, Role

from ..core.values import RoomError
from .model import Account, Friendship, FriendState, RoundEntry, handle_key, secret_hash
from .store import AccountStore

__all__ = ["RECORD_ROUNDS", "Friends", "Invitation", "Reach", "Record", "new_friend_link"]

RECORD_ROUNDS = 1000
"""How many of the latest rounds a record against a friend counts."""


def new_friend_link() -> str:
    """A friend link's secret: 192 random bits, URL-safe; the ``f.`` keeps
    :func:`~server.accounts.model.secret_hash` from folding its case."""
    return "f." + secrets.token_urlsafe(24)


@dataclass(frozen=True, slots=True)
class Invitation:
    """A friend's ``friend_invite`` on its way to player ``to``."""

    to: str
    sender: str  # the inviter's handle
    player: str  # the inviter's player id
    room: str
    role: Role

    def message(self) -> M.Message:
        return M.friend_invite(
            sender=self.sender, player=self.player, room=self.room, role=self.role
        )


class Reach(Protocol):
    """Who is connected, and an invitation handed to them: this node's sessions
    (server/accounts/friend_handlers.py), or the cluster's (server/cluster/friends.py)."""

    async def where(self, friends: Sequence[Account]) -> dict[str, str | None]:
        """Of ``friends``, the players connected now, each with the room they are in."""

    async def invite(self, invitation: Invitation) -> None:
        """Hand ``invitation`` to its addressee's connection, if they have one."""


@dataclass(frozen=True, slots=True)
class Record:
    """Rounds raced together, and who placed ahead in how many (a tie is neither's)."""

    rounds: int = 0
    won: int = 0
    lost: int = 0

    def view(self) -> dict[str, int]:
        return {"rounds": self.rounds, "won": self.won, "lost": self.lost}


def record_against(mine: Sequence[RoundEntry], theirs: Sequence[RoundEntry]) -> Record:
    """The record of ``mine`` against the player whose rounds are ``theirs``, over
    the rounds both raced (the same ``key``)."""
    placings = {entry.key: entry.placing for entry in theirs}
    rounds = won = lost = 0
    for entry in mine:
        theirs_placed = placings.get(entry.key)
        if theirs_placed is None:
            continue
        rounds += 1
        won += entry.placing < theirs_placed
        lost += theirs_placed < entry.placing
    return Record(rounds, won, lost)


class Friends:
    """Decides the friends requests for the signed-in account ``me``."""

    def __init__(self, store: AccountStore, reach: Reach) -> None:
        self.store = store
        self.reach = reach

    # ---------------------------------------------------------------- reading

    async def _other(self, handle: str) -> Account:
        found = await self.store.account_by_handle(handle_key(" ".join(handle.split())))
        if found is None:
            raise RoomError(ErrorCode.UNKNOWN_HANDLE, "nobody has that handle")
        return found

    async def _between(self, me: Account, other: Account) -> Friendship | None:
        for friendship in await self.store.friendships(me.account):
            if other.account in (friendship.a, friendship.b):
                return friendship
        return None

    async def listing(self, me: Account) -> list[dict[str, Any]]:
        """Every friend and open request of ``me``, as ``me`` may see them: the
        handle, and for friends who allow it whether they are online and where."""
        rows: list[tuple[Friendship, Account]] = []
        for friendship in await self.store.friendships(me.account):
            other_id = friendship.b if friendship.a == me.account else friendship.a
            other = await self.store.account(other_id)
            if other is not None:
                rows.append((friendship, other))
        friends = [o for f, o in rows if f.state == FriendState.FRIENDS]
        seen = await self.reach.where([o for o in friends if o.shows_online])
        records = await self._records(me, friends)
        listing = []
        for friendship, other in rows:
            entry: dict[str, Any] = {
                "handle": other.handle,
                "player": other.player,
                "state": _state(friendship, me),
                "since": friendship.since,
            }
            if friendship.state == FriendState.FRIENDS:
                entry["record"] = records[other.account].view()
                if other.shows_online:
                    entry["online"] = other.player in seen
                    room = seen.get(other.player)
                    if room is not None:
                        entry["room"] = room
            listing.append(entry)
        listing.sort(key=lambda e: (_ORDER[e["state"]], handle_key(e["handle"])))
        return listing

    async def _records(self, me: Account, friends: Sequence[Account]) -> dict[str, Record]:
        if not friends:
            return {}
        mine = await self.store.round_history(me.player, None, RECORD_ROUNDS)
        raced = {p for entry in mine for p in entry.players}
        records: dict[str, Record] = {}
        for friend in friends:
            if friend.player in raced:
                theirs = await self.store.round_history(friend.player, None, RECORD_ROUNDS)
                records[friend.account] = record_against(mine, theirs)
            else:
                records[friend.account] = Record()
        return records

    # ---------------------------------------------------------------- changing

    async def ask(self, me: Account, handle: str, now: float) -> None:
        """Ask ``handle`` to be friends; a request of theirs to ``me`` is accepted
        instead, and asking again or a friend changes nothing."""
        other = await self._other(handle)
        await self._befriend(me, other, now, at_once=False)

    async def use_link(self, me: Account, link: str, now: float) -> None:
        """Friends with the link's owner at once; an unknown link is ``bad_code``
        (the one answer for every secret that does not work)."""
        owner_id = await self.store.friend_link(secret_hash(link))
        owner = await self.store.account(owner_id) if owner_id is not None else None
        if owner is None:
            raise RoomError(ErrorCode.BAD_CODE, "that friend link does not work (any more)")
        await self._befriend(me, owner, now, at_once=True)

    async def _befriend(self, me: Account, other: Account, now: float, *, at_once: bool) -> None:
        if other.account == me.account:
            raise RoomError(ErrorCode.BAD_REQUEST, "you cannot befriend yourself")
        existing = await self._between(me, other)
        if existing is not None and existing.state == FriendState.FRIENDS:
            return
        if existing is not None and (existing.a == other.account or at_once):
            await self.store.set_friendship(
                Friendship(existing.a, existing.b, FriendState.FRIENDS, now)
            )
        elif at_once:
            await self.store.set_friendship(
                Friendship(other.account, me.account, FriendState.FRIENDS, now)
            )
        elif existing is None:
            await self.store.set_friendship(
                Friendship(me.account, other.account, FriendState.ASKED, now)
            )

    async def answer(self, me: Account, handle: str, accept: bool, now: float) -> None:
        other = await self._other(handle)
        existing = await self._between(me, other)
        if existing is None or existing.state != FriendState.ASKED or existing.a != other.account:
            raise RoomError(ErrorCode.NOT_FRIENDS, f"{other.handle} has not asked you")
        if accept:
            await self.store.set_friendship(
                Friendship(existing.a, existing.b, FriendState.FRIENDS, now)
            )
        else:
            await self.store.remove_friendship(existing.a, existing.b)

    async def unfriend(self, me: Account, handle: str) -> None:
        other = await self._other(handle)
        existing = await self._between(me, other)
        if existing is None:
            raise RoomError(ErrorCode.NOT_FRIENDS, f"you and {other.handle} are not friends")
        await self.store.remove_friendship(existing.a, existing.b)

    async def new_link(self, me: Account) -> str:
        link = new_friend_link()
        await self.store.set_friend_link(me.account, secret_hash(link))
        return link

    async def invite(self, me: Account, handle: str, room: str, role: Role) -> None:
        """Tell the friend where ``me`` is. Whether it reached them is not said:
        that would tell their online status, which they may keep to themselves."""
        other = await self._other(handle)
        existing = await self._between(me, other)
        if existing is None or existing.state != FriendState.FRIENDS:
            raise RoomError(ErrorCode.NOT_FRIENDS, f"you and {other.handle} are not friends")
        await self.reach.invite(Invitation(other.player, me.handle, me.player, room, role))


_ORDER = {"asking": 0, "asked": 1, "friends": 2}  # what wants an answer first


def _state(friendship: Friendship, me: Account) -> str:
    if friendship.state == FriendState.FRIENDS:
        return "friends"
    return "asked" if friendship.a == me.account else "asking"
