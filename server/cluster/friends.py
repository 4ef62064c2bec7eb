"""Friends across nodes: who is connected where, and an invitation carried there.

A node knows the sessions connected to it (server/accounts/friend_handlers.py
``SessionsReach``); a friend connected to another node is not among them. So
each node keeps, in Redis, which node each of its clients' sockets is on:
``P here:PLAYER`` holds the node's id, set when a socket comes to speak for the
player (``Sessions.attach``) and removed when it goes, unless another node has
taken it over meanwhile (a compare-and-delete). That is two small writes per
connection, none per frame or per move.

Honest about crashes without a heartbeat per player: a node that dies leaves
its keys behind, so a key counts only while its node still listens on its
channel (``PUBSUB NUMSUB``, the liveness every node already goes by:
server/cluster/tunnels.py), asked once per node per ``friends`` request. Keys
carry a TTL like every key here, renewed for the players still connected while
the node lives.

Only the socket's node (the *edge*) writes: a client tunnelled to the node of
its room has a stand-in there too (a ``RemoteConn``), which is no connection of
its own. A friend's room is the one their account holds (``Account.room_code``,
kept by every node for its signed-in sessions).

An invitation for a player connected elsewhere goes to that node as one relay
entry (``invite``, server/cluster/relay.py), which hands it to the socket there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

from ..accounts.friend_handlers import SessionsReach
from ..accounts.friends import Invitation
from ..accounts.model import Account
from ..peer import Peer
from ..service.service import Service
from ..store.base import StoreUnavailable
from ..store.redis import RedisStore
from ..store.redis_conn import Script, guard
from .relay import INVITE, RemoteConn
from .tunnels import Tunnels

__all__ = ["ClusterReach"]

log = logging.getLogger("klondike_race.cluster")

HERE_TTL_MS = 30 * 60_000  # a key's life; renewed every RENEW_S while its player stays
RENEW_S = 10 * 60.0

# KEYS: here. ARGV: node. Forget the key only if it still names this node.
_GONE = Script(
    "here_gone",
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
)


class ClusterReach:
    """The cluster's :class:`~server.accounts.friends.Reach`, and the sessions'
    watcher that keeps ``here:PLAYER`` (see the module docstring)."""

    def __init__(self, service: Service, store: RedisStore, tunnels: Tunnels) -> None:
        self.service = service
        self.store = store
        self.tunnels = tunnels
        self.node = tunnels.node_id
        self.local = SessionsReach(service.sessions)
        self._here: dict[str, Peer] = {}  # players whose socket is here
        self._renewer: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.service.sessions.watcher = self
        self.service.reach = self
        self._renewer = asyncio.get_running_loop().create_task(self._renew())

    async def stop(self) -> None:
        self.service.sessions.watcher = None
        self.service.reach = self.local
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer

    def _key(self, player: str) -> bytes:
        return f"{self.store.keys.prefix}here:{player}".encode()

    # -- the sessions' watcher ---------------------------------------------------

    def attached(self, player: str, conn: Peer) -> None:
        if isinstance(conn, RemoteConn):
            return
        self._here[player] = conn
        self.service.tasks.spawn(self._set([player]))

    def detached(self, player: str, conn: Peer) -> None:
        if isinstance(conn, RemoteConn) or self._here.get(player) is not conn:
            return
        del self._here[player]
        self.service.tasks.spawn(self._gone(player))

    async def _set(self, players: list[str]) -> None:
        try:
            async with guard("here", self.store.pool.timeout):
                for player in players:
                    await self.store.pool.protocol().set(
                        self._key(player), self.node.encode(), pexpire=HERE_TTL_MS
                    )
        except StoreUnavailable:
            log.warning("could not note where %d player(s) are connected", len(players))

    async def _gone(self, player: str) -> None:
        try:
            async with guard("here_gone", self.store.pool.timeout):
                await self.store.pool.script(_GONE, [self._key(player)], [self.node.encode()])
        except StoreUnavailable:
            log.warning("could not note that %s left this node", player)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            await self._set(list(self._here))

    # -- the reach ---------------------------------------------------------------

    async def _nodes(self, players: Sequence[str]) -> dict[str, str]:
        """Of ``players``, those connected to a live node other than this one,
        with that node."""
        if not players:
            return {}
        async with guard("here", self.store.pool.timeout):
            values = await self.store.pool.protocol().mget_aslist([self._key(p) for p in players])
        nodes = {p: v.decode() for p, v in zip(players, values, strict=True) if v}
        others = {n for n in nodes.values() if n != self.node}
        alive = {n for n in others if await self.tunnels.subscribers(n)}
        return {p: n for p, n in nodes.items() if n in alive}

    async def where(self, friends: Sequence[Account]) -> dict[str, str | None]:
        seen = self.local.here([f.player for f in friends])
        elsewhere = [f for f in friends if f.player not in seen]
        nodes = await self._nodes([f.player for f in elsewhere])
        seen.update({f.player: f.room_code for f in elsewhere if f.player in nodes})
        return seen

    async def invite(self, invitation: Invitation) -> None:
        if self.local.hand_over(invitation):
            return
        node = (await self._nodes([invitation.to])).get(invitation.to)
        if node is not None:
            i = invitation
            entry = [i.to, i.sender, i.player, i.room, i.role.value]
            self.tunnels.outbox.put(node, [INVITE, self.node, 0, 0, entry])
