"""This node's side of the relay (server/cluster/relay.py): its channel, its tunnels to
other nodes' rooms, the stand-ins it runs for other nodes' clients, and which
peers are alive.

Liveness is a subscription: each node subscribes to its own channel, so
``PUBSUB NUMSUB`` of that channel drops to 0 as soon as the node's process is gone
(the kernel closes its socket). A peer is declared dead after two checks in a row
find no subscriber, which rides out a reconnect; a message from it revives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import msgpack  # type: ignore[import-untyped, unused-ignore]

from protocol import messages as M
from protocol.messages import CloseCode, Role
from protocol.requests import Request, parse_request, request_message

from ..accounts.friend_handlers import SessionsReach
from ..accounts.friends import Invitation
from ..core.values import RoomError
from ..net.connection import Flusher
from ..peer import Peer
from ..service.service import Service
from ..store.base import StoreUnavailable, unavailable
from ..store.redis import RedisStore
from ..store.redis_conn import Link, guard
from .relay import (
    BYE,
    INVITE,
    LIVE,
    MATCHED,
    MOVE,
    OPEN,
    OUT,
    REQ,
    SHUT,
    Outbox,
    RemoteConn,
    decode_batch,
)

__all__ = ["Tunnels"]

log = logging.getLogger("klondike_race.relay")


class Tunnels:
    def __init__(self, service: Service, store: RedisStore, node_id: str, flusher: Flusher) -> None:
        self.service = service
        self.store = store
        self.node_id = node_id
        self.flusher = flusher  # the stand-ins hold events on it, as this node's sockets do
        self.outbox = Outbox(self._publish, self._undelivered)
        self._tunnels: dict[int, tuple[str, Peer]] = {}  # edge: conn id → (owner, conn)
        self._next_in: dict[int, int] = {}  # edge: next frame number per tunnel
        self._remotes: dict[tuple[str, int], RemoteConn] = {}  # owner: (edge, conn id)
        self._strikes: dict[str, int] = {}  # peers found without a subscriber
        self._dead: set[str] = set()
        self._heard: dict[str, float] = {}  # peer → when its last message came
        self._outage = False
        self._link: Link | None = None
        self._listener: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Listen on our channel, and wait until Redis counts us as a subscriber:
        from then on other nodes see us alive."""
        self._link = link = self.store.pool.link(pubsub=True)
        await link.connect(self.store.pool.timeout)
        sub = await link.protocol.start_subscribe()
        await sub.subscribe([self.store.keys.node(self.node_id)])
        self._listener = asyncio.get_running_loop().create_task(self._listen(sub))
        for _ in range(250):
            if await self.subscribers(self.node_id):
                return
            await asyncio.sleep(0.02)
        raise StoreUnavailable("could not subscribe to this node's channel")

    async def stop(self) -> None:
        for remote in list(self._remotes.values()):
            remote.close(CloseCode.GOING_AWAY, "server shutting down")
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.outbox.drain(), 2.0)
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        if self._link is not None:
            await self._link.close()

    # -- peers -------------------------------------------------------------------

    async def subscribers(self, node: str) -> int:
        channel = self.store.keys.node(node)
        async with guard("numsub", self.store.pool.timeout):
            reply = await self.store.pool.protocol().pubsub_numsub_asdict([channel])
        return int(reply.get(channel, 0))

    async def is_dead(self, node: str) -> bool:
        """No subscriber now, and still none after a reconnect interval (or it was
        declared dead before and still has none)."""
        if node == self.node_id:
            return False
        if await self.subscribers(node):
            self._dead.discard(node)
            return False
        if node not in self._dead:
            await asyncio.sleep(0.6)  # longer than a Link's reconnection interval
            if await self.subscribers(node):
                return False
            self._dead.add(node)
        return True

    async def check_peers(self, period: float) -> None:
        """Every ``period`` s: who is gone; and tell each live peer which tunnels we
        still have with it. That list is the anti-entropy for lost bye/shut
        messages, and a heartbeat: a peer that says nothing for three periods while
        we relay for it is frozen or cut off even if Redis still counts it."""
        try:
            await self.subscribers(self.node_id)
        except StoreUnavailable:
            self._outage = True  # nobody could hear anybody: silence means nothing
            raise
        now = time.monotonic()
        if self._outage:
            self._outage = False
            self._heard = dict.fromkeys(self._heard, now)
        peers = {node for node, _ in self._tunnels.values()} | {n for n, _ in self._remotes}
        for node in peers:
            if now - self._heard.setdefault(node, now) > 3 * period + 0.5:
                self._node_gone(node, "silent")
            elif await self.subscribers(node):
                self._strikes.pop(node, None)
            else:
                self._strikes[node] = self._strikes.get(node, 0) + 1
                if self._strikes[node] >= 2:
                    self._node_gone(node, "unsubscribed")
        for node in peers - self._dead:
            mine = [cid for cid, (n, _) in self._tunnels.items() if n == node]
            theirs = [cid for (n, cid) in self._remotes if n == node]
            self.outbox.put(node, [LIVE, self.node_id, 0, 0, [mine, theirs]])

    def _node_gone(self, node: str, why: str) -> None:
        if node not in self._dead:
            log.warning("node %s is gone (%s)", node, why)
        self._dead.add(node)
        self._heard.pop(node, None)
        for owner, conn in list(self._tunnels.values()):
            if owner == node:
                conn.close(CloseCode.GOING_AWAY, "the room's server went away; resume")
        for (src, _cid), remote in list(self._remotes.items()):
            if src == node:
                remote.end()

    # -- edge side -----------------------------------------------------------------

    def owner_of(self, conn: Peer) -> str | None:
        tunnel = self._tunnels.get(id(conn))
        return tunnel[0] if tunnel is not None else None

    def open(self, node: str, conn: Peer, token: str | None) -> None:
        """Tunnel ``conn`` to ``node``. ``token``: attach the session there first
        (the client said hello here); None when the relayed request is the hello."""
        self._tunnels[id(conn)] = (node, conn)
        self._next_in[id(conn)] = 1
        self._heard.setdefault(node, time.monotonic())
        self.outbox.put(node, [OPEN, self.node_id, id(conn), 0, [conn.binary, token, conn.address]])

    def forward(self, node: str, conn: Peer, req: Request) -> None:
        self.outbox.put(node, [REQ, self.node_id, id(conn), req.id, request_message(req)])

    def disconnected(self, conn: Peer, *, keep_session: bool = False) -> None:
        """The tunnel of ``conn`` is done: its stand-in over there ends (a bye).

        Except when ``conn`` was closed for a newer connection of its session
        (4001) that is tunnelled to the same node: that connection's hello makes
        the stand-in's session its own there and ends the stand-in itself, as one
        connection hands a session to the next on one node. A bye could overtake
        that hello and show the player leaving and coming back. Should the hello
        never get that far, the next liveness check ends the stand-in
        (:meth:`check_peers`)."""
        tunnel = self._tunnels.pop(id(conn), None)
        self._next_in.pop(id(conn), None)
        if tunnel is None:
            return
        session = conn.session
        newer = session.peer if session is not None else None
        if newer is not None and newer is not conn and self.owner_of(newer) == tunnel[0]:
            return
        self.outbox.put(tunnel[0], [BYE, self.node_id, id(conn), 0, None])
        if keep_session:
            return
        # This node's copy of the session was only a stub for the tunnel; the next
        # hello reads the store again, wherever the room runs by then.
        if session is not None and session.peer in (None, conn):
            self.service.sessions.forget(session)

    # -- messages ------------------------------------------------------------------

    async def _publish(self, node: str, entries: list[list[Any]]) -> int:
        data = msgpack.packb(entries, use_bin_type=True)
        async with guard("publish", self.store.pool.timeout):
            receivers: int = await self.store.pool.protocol().publish(
                self.store.keys.node(node), data
            )
        return receivers

    def _undelivered(self, node: str, entries: list[list[Any]], exc: BaseException | None) -> None:
        """A batch did not arrive: its requests get storage_unavailable (nothing was
        done: try again); a node without a subscriber gets a strike."""
        for kind, _src, conn_id, rid, _payload in entries:
            if kind == REQ and conn_id in self._tunnels:
                conn = self._tunnels[conn_id][1]
                error = unavailable("cannot reach the room's server")
                conn.error(rid, error.code, error.message)
        if exc is None:
            self._strikes[node] = max(self._strikes.get(node, 0), 1)

    async def _listen(self, sub: Any) -> None:
        while True:
            message = await sub.next_published()
            try:
                for entry in decode_batch(message.value):
                    self._receive(*entry)
            except Exception:
                log.exception("bad relay message")

    def _receive(self, kind: str, src: str, conn_id: int, n: int, payload: Any) -> None:
        self._heard[src] = time.monotonic()
        self._dead.discard(src)
        self._strikes.pop(src, None)
        if kind in (OUT, SHUT, MOVE):
            self._to_client(kind, conn_id, n, payload)
        elif kind == OPEN:
            binary, token, address = payload
            key = (src, conn_id)
            new = RemoteConn(
                self.service,
                self.outbox,
                self.flusher,
                src,
                conn_id,
                binary,
                self.node_id,
                token,
                address,
            )
            self._remotes[key] = new
            new.done(lambda: self._forget_remote(key, new))
        elif kind == REQ:
            remote = self._remotes.get((src, conn_id))
            if remote is None:  # we lost track of it (a restart, a lost message)
                shut = [int(CloseCode.GOING_AWAY), "resume"]
                self.outbox.put(src, [SHUT, self.node_id, conn_id, 0, shut])
            else:
                remote.submit(parse_request(payload))
        elif kind == BYE:
            remote = self._remotes.get((src, conn_id))
            if remote is not None:
                remote.end()
        elif kind == LIVE:
            self._reconcile(src, *payload)
        elif kind == INVITE:
            player, sender, sender_player, room, role = payload
            invitation = Invitation(player, sender, sender_player, room, Role(role))
            SessionsReach(self.service.sessions).hand_over(invitation)
        elif kind == MATCHED:
            player, ticket, code, fields = payload
            message = M.matched(
                ladder=fields["ladder"],
                rated=fields["rated"],
                room=fields["room"],
                starts_at=fields["starts_at"],
            )
            self.service.quick.arrived(player, ticket, code, src, message)

    def _to_client(self, kind: str, conn_id: int, n: int, payload: Any) -> None:
        tunnel = self._tunnels.get(conn_id)
        if tunnel is None:
            return
        conn = tunnel[1]
        if n != self._next_in.get(conn_id):  # a lost frame: the client must resync
            conn.close(CloseCode.GOING_AWAY, "the relay lost messages; resume")
            return
        self._next_in[conn_id] = n + 1
        if kind == OUT:
            conn.send_data(payload)
        elif kind == SHUT:
            code, reason = payload
            conn.close(CloseCode(code), reason)
        else:  # MOVE: the owner sends the client on to the node of the room it asks for
            node, message = payload
            req = parse_request(message)
            self.disconnected(conn, keep_session=True)
            if node == self.node_id:
                self.service.tasks.spawn(self._here(conn, req))
            else:
                assert conn.session is not None
                self.open(node, conn, conn.session.token)
                self.forward(node, conn, req)

    async def _here(self, conn: Peer, req: Request) -> None:
        """A request sent back to us: the room it asks for runs on this node."""
        try:
            await self.service.handle(conn, req)
        except RoomError as exc:
            conn.error(req.id, exc.code, exc.message, **exc.extra)

    def _forget_remote(self, key: tuple[str, int], remote: RemoteConn) -> None:
        if self._remotes.get(key) is remote:
            del self._remotes[key]

    def _reconcile(self, node: str, theirs: list[int], mine: list[int]) -> None:
        """``theirs``: tunnels the peer has to us; ``mine``: our tunnels it serves.
        Batches to one node arrive in order, so neither list can miss a tunnel
        that was opened before it was made."""
        for (src, cid), remote in list(self._remotes.items()):
            if src == node and cid not in theirs:
                remote.end()
        for cid, (owner, conn) in list(self._tunnels.items()):
            if owner == node and cid not in mine and self._next_in.get(cid, 1) > 1:
                conn.close(CloseCode.GOING_AWAY, "the room's server forgot this connection; resume")
