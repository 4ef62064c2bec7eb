"""Sessions: who is who, and which connection speaks for them.

A session is an identity (public player id, name) behind a secret token; it
outlives connections — a client that reconnects with its token gets the same
id, role, room and board — and its current room is kept in the store next to
its hashed token. Memory holds only the sessions in use: connected here, or in
a room that runs here.

A connection speaks for a session through :meth:`Sessions.attach` alone, on a
local socket, a relayed client's stand-in and the cluster's edge alike: it is
the one place that closes an older connection of the session (4001).

A signed-in device's token is a session token too: :meth:`Sessions.resume` falls
back to the account store when the session store does not know a token, and
gives the account's player (named by its handle, in its account's room). One
player is one session, whatever the device: signing in on a second device moves
the session there, as resuming on a second connection does.
"""

from __future__ import annotations

import logging
from typing import Protocol

from protocol import messages as M

from .. import ids
from ..accounts.model import Account, Device
from ..accounts.service import Accounts
from ..peer import Peer, SessionState
from ..store.base import SessionRecord, Store, StoreUnavailable, unavailable
from .tasks import Tasks

__all__ = ["Sessions", "Watcher"]

log = logging.getLogger("klondike_race.service")


class Keeper(Protocol):
    """Where sessions are saved (the store may be connected after the service is
    made: server/app.py), and the tasks that save them."""

    store: Store
    tasks: Tasks
    account_service: Accounts


class Watcher(Protocol):
    """Told of every connection that comes to speak for a player's session, and
    of its going (a cluster keeps where each player is connected: server/cluster/
    friends.py)."""

    def attached(self, player: str, conn: Peer) -> None: ...

    def detached(self, player: str, conn: Peer) -> None: ...


class Sessions:
    """The sessions in use on this node, by public player id."""

    def __init__(self, keeper: Keeper) -> None:
        self._keeper = keeper
        self._by_player: dict[str, SessionState] = {}
        self.watcher: Watcher | None = None

    def __contains__(self, player: str) -> bool:
        return player in self._by_player

    def peer_of(self, player: str) -> Peer | None:
        """The connection that speaks for ``player`` now, if any."""
        session = self._by_player.get(player)
        return session.peer if session is not None else None

    def room_of_player(self, player: str) -> str | None:
        """The room ``player``'s session is in, as this node knows it."""
        session = self._by_player.get(player)
        return session.room_code if session is not None else None

    def attach(self, session: SessionState, conn: Peer) -> None:
        """``conn`` speaks for ``session`` from now on; an older connection of the
        same session is closed (4001)."""
        old, session.peer, conn.session = session.peer, conn, session
        if self.watcher is not None:
            self.watcher.attached(session.player, conn)
        if old is not None and old is not conn:
            old.close(M.CloseCode.RESUMED_ELSEWHERE, "session resumed on another connection")

    def detach(self, conn: Peer) -> SessionState | None:
        """``conn`` is gone: the session it spoke for, now spoken for by nobody;
        None if it never said hello or its session was resumed elsewhere."""
        session = conn.session
        if session is None or session.peer is not conn:
            return None
        session.peer = None
        if self.watcher is not None:
            self.watcher.detached(session.player, conn)
        return session

    async def resume(self, token: str) -> SessionState:
        """The session behind ``token``: a guest's session token, or a signed-in
        device's (``unknown_token`` if neither)."""
        try:
            record = await self._keeper.store.get_session(token)
        except StoreUnavailable:
            raise unavailable() from None
        if record is None:
            account, device = await self._keeper.account_service.sign_in_device(token)
            return self.signed_in(account, device, token)
        session = self._by_player.get(record.player)
        if session is None:
            session = SessionState(token, record.player, record.name, record.room_code)
            self._by_player[record.player] = session
        return session

    def signed_in(self, account: Account, device: Device, token: str) -> SessionState:
        """The account's session, spoken for by ``device`` (whose token it now
        carries) from now on; its room is the account's, unless the session is in
        use here already (then its room is the live one)."""
        session = self._by_player.get(account.player)
        if session is None:
            session = SessionState(token, account.player, account.handle, account.room_code)
            self._by_player[account.player] = session
        session.token, session.name = token, account.handle
        session.account, session.device = account.account, device.device
        return session

    async def room_code_of(self, token: str) -> str | None:
        """The room of the session or device behind ``token``, if any (the cluster
        sends a resume to the node that runs it)."""
        try:
            record = await self._keeper.store.get_session(token)
        except StoreUnavailable:
            raise unavailable() from None
        if record is not None:
            return record.room_code
        return await self._keeper.account_service.room_of_device(token)

    async def open(self, name: str) -> SessionState:
        """A new session, stored before it is used."""
        token = ids.new_token()
        player = "p" + ids.new_id()
        while player in self._by_player:
            player = "p" + ids.new_id()
        session = SessionState(token, player, name)
        try:
            await self._keeper.store.put_session(token, SessionRecord(player, name, None))
        except StoreUnavailable:
            raise unavailable() from None
        self._by_player[player] = session
        return session

    def set_room(self, player: str, code: str | None) -> None:
        """``player``'s session is in room ``code`` now (None: in none)."""
        session = self._by_player.get(player)
        if session is None or session.room_code == code:
            return
        session.room_code = code
        self.save(session)
        self.forget_if_idle(session)

    def save(self, session: SessionState) -> None:
        self._keeper.tasks.spawn(self._save(session))

    async def link(self, session: SessionState, code: str) -> None:
        """Store that ``session`` sits in room ``code``, before the room seats it:
        once it is told so (``joined``, ``matched``), a restart or another node
        resumes its token into that room. Should the seat not come (refused, or a
        crash first), a resume finds the room does not seat it and links it to none
        (server/service/dispatch.py); a refusal restores the link at once
        (:meth:`save`). Raises ``storage_unavailable``: nobody is seated unlinked."""
        try:
            await self._put_room(session, code)
        except StoreUnavailable:
            raise unavailable() from None

    async def _save(self, session: SessionState) -> None:
        try:
            await self._put_room(session, session.room_code)
        except StoreUnavailable:
            log.warning("could not save session of %s", session.player)

    async def _put_room(self, session: SessionState, code: str | None) -> None:
        """A signed-in session's room goes on its account; a guest's beside its
        token, unless its player has taken a handle meanwhile (on another node:
        then the guest token is no session any more, and must not become one)."""
        if await self._keeper.account_service.save_room(session.player, code):
            return
        if session.account is None:
            await self._keeper.store.put_session(
                session.token, SessionRecord(session.player, session.name, code)
            )

    def forget_if_idle(self, session: SessionState) -> None:
        """A session with no connection and no room lives on in the store only
        (:meth:`resume` reads it back): memory holds just the sessions in use."""
        if session.peer is None and session.room_code is None:
            self.forget(session)

    def forget(self, session: SessionState) -> None:
        """Keep ``session`` in the store only (the cluster's edge forgets its copy
        of a session whose room runs on another node, once its tunnel is gone)."""
        if self._by_player.get(session.player) is session:
            del self._by_player[session.player]
