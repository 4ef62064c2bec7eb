"""Several server nodes on one Redis: who runs each room, and how the others reach it.

Only with ``serve --redis``; the in-memory server never imports this. The service
calls it at three points (``Service.cluster``): to route a request, when a client
disconnects, and to claim a room before rebuilding it.

**One owner per room: leases.** ``room:CODE:lease`` holds ``NODE#n`` with a TTL of
``lease_ms`` (3 s). A node takes it with the reservation of a new code (one Lua
step), or claims it by compare-and-set when it is missing or its holder is dead;
it renews all its leases every ``lease_ms / 3`` in one script call. Every append
carries the token it was granted (the store's *fence*), so a node that lost its
lease — frozen, cut off, declared dead — cannot write another word to the log.

**One token per incarnation.** Every claim takes a new token, even when this node
held the lease already, and a runner appends with the token of the claim it was
made for (:meth:`Cluster.writer`). So a runner that was replaced or given up,
even in this process, is fenced off by the store like a dead node is. Claims are
only made by the service's single-flight adoption (server/service/adoption.py), so
concurrent requests for one room make one claim and one runner.

**Liveness is a subscription.** Each node subscribes to its own channel
(server/cluster/tunnels.py). ``PUBSUB NUMSUB`` of that channel is 0 once the node's process
is gone (the kernel closes its socket at once), so a crashed owner is noticed
within a second instead of a lease period; a node is declared dead after two
consecutive checks find no subscriber, to ride out a reconnect.

**Takeover.** A room is claimed (log loaded, room rebuilt, every member not
connected here marked offline) when a client asks for it and its holder is dead,
and by a scan every ``lease_ms`` of open rooms without a live lease, so rooms with
timers but no clients move too. Clients of a dead owner are closed with 1001 by
their edge and resume with their tokens, as after any server restart.

**Reaching a room on another node** is a tunnel (server/cluster/relay.py): the client's
node forwards its requests to the owner and writes back the frames the owner sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import secrets
import socket
from collections.abc import Sequence
from typing import Any

from protocol.account_requests import ACCOUNT_REQUESTS
from protocol.daily_requests import DAILY_AT_THE_EDGE, DailyBoard, DailyCompare
from protocol.friend_requests import AT_THE_EDGE
from protocol.messages import CloseCode
from protocol.requests import Hello, JoinRoom, Request

from ..net.connection import Flusher, Limits
from ..peer import Peer
from ..rooms.runner import Writer
from ..service.service import Service
from ..store.base import StoreUnavailable, unavailable
from ..store.redis import RedisStore
from ..store.redis_conn import Script, guard
from .friends import ClusterReach
from .queue import SharedBook
from .relay import RemoteConn
from .tunnels import Tunnels

__all__ = ["Cluster"]

log = logging.getLogger("klondike_race.cluster")

# KEYS: rooms, lease. ARGV: code, expected holder ('' : none), new token, lease ms.
# -1: no such room; 0: someone else got there first; 1: ours.
_CLAIM = Script(
    "claim",
    """
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return -1 end
local held = redis.call('GET', KEYS[2])
if (held or '') ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
return 1
""",
)

# KEYS: (lease, log) per room. ARGV: lease ms, then (token, acknowledged length) per
# room. Per room 1 (renewed, or re-taken after a Redis restart lost it while nobody
# else wrote) or 0 (lost).
_RENEW = Script(
    "renew",
    """
local out = {}
for i = 1, #KEYS / 2 do
  local lease, log = KEYS[2 * i - 1], KEYS[2 * i]
  local token, len = ARGV[2 * i], tonumber(ARGV[2 * i + 1])
  local held = redis.call('GET', lease)
  if held == token then
    redis.call('PEXPIRE', lease, ARGV[1]); out[i] = 1
  elseif not held and redis.call('LLEN', log) == len then
    redis.call('SET', lease, token, 'PX', ARGV[1]); out[i] = 1
  else
    out[i] = 0
  end
end
return out
""",
)

# KEYS: lease. ARGV: token. Delete only our own lease.
_RELEASE = Script(
    "release",
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
)

LOCAL = ""  # locate(): the room runs here
NO_LEASE = b""  # a writer's fence when this node holds no lease: the store refuses it


def _node_of(token: bytes) -> str:
    return token.decode().rpartition("#")[0]


class Cluster:
    """This node's membership of the cluster; see the module docstring."""

    def __init__(
        self,
        service: Service,
        store: RedisStore,
        *,
        lease_ms: int = 3000,
        flusher: Flusher | None = None,
    ) -> None:
        """``flusher``: the server's, on which relayed clients' events are held as
        its own sockets' are (None: one with the default wait)."""
        self.service = service
        self.store = store
        self.lease_ms = lease_ms
        self.node_id = f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        flusher = flusher or Flusher(Limits().progress_delay)
        self.tunnels = Tunnels(service, store, self.node_id, flusher)
        self.friends = ClusterReach(service, store, self.tunnels)
        self._counter = itertools.count(1)
        self._leases: dict[str, bytes] = {}  # rooms run here → their lease token
        self._tasks: list[asyncio.Task[None]] = []

    # -- life cycle ------------------------------------------------------------

    @classmethod
    async def start(cls, service: Service, **options: Any) -> Cluster:
        store = service.store
        if not isinstance(store, RedisStore):
            raise TypeError("a cluster needs the Redis store")
        cluster = cls(service, store, **options)
        await cluster.tunnels.start()
        cluster.friends.start()
        token = cluster.new_token()
        service.quick.book = SharedBook(store, cluster.tunnels, token, cluster.lease_ms, _RELEASE)
        store.owner = cluster
        loop = asyncio.get_running_loop()
        period = cluster.lease_ms / 1000
        cluster._tasks.append(loop.create_task(cluster._every(period / 3, cluster._tick)))
        cluster._tasks.append(loop.create_task(cluster._every(period, cluster._scan)))
        log.info("node %s joined the cluster", cluster.node_id)
        return cluster

    async def stop(self) -> None:
        """Hand our rooms back: release their leases, so that another node may
        claim them at once instead of after a lease period."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.friends.stop()
        await self.tunnels.stop()
        for code in list(self._leases):
            await self._release(code)
        self.store.owner = None

    async def _every(self, seconds: float, job: Any) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await job()
            except StoreUnavailable as exc:
                log.debug("cluster %s: %s", job.__name__, exc)
            except Exception:
                log.exception("cluster %s failed", job.__name__)

    def writer(self, code: str) -> Writer:
        """Appends to ``code``'s log fenced by the token this node holds for it
        now, for good: the runner made with it writes as this incarnation, and
        once the room is claimed again (or dropped) the store refuses it."""
        token = self._leases.get(code, NO_LEASE)
        store = self.store

        def append(records: Sequence[bytes]) -> asyncio.Future[int]:
            return store.append(code, records, fence=token)

        return append

    # -- LeaseOwner (the store asks for a token when it reserves a new room) -----

    def new_token(self) -> bytes:
        return f"{self.node_id}#{next(self._counter)}".encode()

    def acquired(self, code: str, token: bytes) -> None:
        self._leases[code] = token

    # -- ownership ---------------------------------------------------------------

    async def _lease_holder(self, code: str) -> bytes | None:
        async with guard("lease", self.store.pool.timeout):
            held: bytes | None = await self.store.pool.protocol().get(self.store.keys.lease(code))
        return held

    async def claim(self, code: str) -> bool:
        """Become the room's owner if nobody alive is, under a token new to this
        claim; True when it may run here (the caller then rebuilds it from the log).

        Never "true, we hold it already": the caller is the service's adoption,
        which runs one at a time per room and only for a room not running here,
        so a lease of this node's own is a leftover (an adoption that failed) and
        is taken over like a dead node's; whatever still holds its token is
        fenced off."""
        if code in self.service.rooms:
            return False  # claiming anew would fence off the runner we have
        held = await self._lease_holder(code)
        if (
            held is not None
            and _node_of(held) != self.node_id
            and not await self.tunnels.is_dead(_node_of(held))
        ):
            return False
        token = self.new_token()
        keys = self.store.keys
        async with guard("claim", self.store.pool.timeout):
            won = await self.store.pool.script(
                _CLAIM,
                [keys.rooms, keys.lease(code)],
                [code.encode(), held or b"", token, b"%d" % self.lease_ms],
            )
        if won != 1:
            return False
        self.store.forget(code)
        self.store.fence(code, token)
        self._leases[code] = token
        log.info("node %s runs room %s from now on", self.node_id, code)
        return True

    async def locate(self, code: str) -> str | None:
        """Where the room runs: LOCAL (perhaps claimed and rebuilt just now),
        another node's id, or None when there is no such open room.

        Any number of calls for one room at once (clients resuming together, the
        scan) share one adoption: :meth:`Adoption.adopt` is single-flight."""
        for _ in range(3):
            if code in self.service.rooms:
                return LOCAL
            if code not in self.service.adoption:
                held = await self._lease_holder(code)
                if held is not None and _node_of(held) != self.node_id:
                    node = _node_of(held)
                    if not await self.tunnels.is_dead(node):
                        return node
            if await self.service.adoption.adopt(code):
                return LOCAL
            async with guard("locate", self.store.pool.timeout):
                index = self.store.pool.protocol()
                if await index.zscore(self.store.keys.rooms, code.encode()) is None:
                    return None
        return None

    async def release(self, code: str) -> None:
        """Hand the lease back: an adoption that came to nothing (closed room,
        the store away), so that the next claim, here or elsewhere, need not wait
        for it to expire."""
        await self._release(code)

    async def _release(self, code: str) -> None:
        token = self._leases.pop(code, None)
        self.store.forget(code)
        if token is None:
            return
        with contextlib.suppress(StoreUnavailable):
            async with guard("release", self.store.pool.timeout):
                await self.store.pool.script(_RELEASE, [self.store.keys.lease(code)], [token])

    def _drop(self, code: str) -> None:
        """We lost the room's lease: stop running it; its members' clients are
        closed with 1001 and resume wherever it runs next."""
        self._leases.pop(code, None)
        self.store.forget(code)
        runner = self.service.rooms.pop(code, None)
        if runner is None:
            return
        runner.stop()
        log.warning("node %s lost the lease of room %s", self.node_id, code)
        for pid in runner.room.members:
            conn = self.service.peer_of(pid)
            if conn is not None:
                conn.close(CloseCode.GOING_AWAY, "the room moved to another server; resume")

    async def _tick(self) -> None:
        """Renew our leases (all in one script call), then check on our peers."""
        for code in [c for c in self._leases if c not in self.service.rooms]:
            if code not in self.service.adoption:  # (an adoption holds its lease already)
                self._leases.pop(code, None)  # closed here: close_room deleted the lease
        if self._leases:
            codes = list(self._leases)
            keys: list[bytes] = []
            args = [b"%d" % self.lease_ms]
            for code in codes:
                keys += [self.store.keys.lease(code), self.store.keys.log(code)]
                args += [self._leases[code], b"%d" % self.store.expected_length(code)]
            async with guard("renew", self.store.pool.timeout):
                kept = await self.store.pool.script(_RENEW, keys, args)
            for code, ok in zip(codes, kept, strict=True):
                if not ok:
                    self._drop(code)
        await self.tunnels.check_peers(self.lease_ms / 3000)

    async def _scan(self) -> None:
        """Claim open rooms whose lease is gone or whose owner is dead, so that
        rooms with nobody connected (but a clock running) move too."""
        for code in await self.store.open_rooms():
            if code not in self.service.rooms:
                await self.locate(code)

    # -- the service's hooks -------------------------------------------------------

    async def route(self, conn: Peer, req: Request) -> bool:
        """True when the request went to the node that runs its room."""
        try:
            return await self._route(conn, req)
        except StoreUnavailable:
            raise unavailable() from None

    async def _route(self, conn: Peer, req: Request) -> bool:
        if isinstance(req, (DailyBoard, DailyCompare)) and not isinstance(conn, RemoteConn):
            node = self.tunnels.owner_of(conn)
            if node is not None:
                # The client's room runs there, and so may its daily run: a run
                # just over has its result write under way there, which that
                # node's answer waits for (server/daily/runs.py ``settled_player``).
                self.tunnels.forward(node, conn, req)
                return True
        if isinstance(req, (*ACCOUNT_REQUESTS, *AT_THE_EDGE, *DAILY_AT_THE_EDGE)):
            # answered where the client is (server/accounts/handlers.py); the
            # daily deals are in the store every node shares (server/daily/)
            return False
        if isinstance(conn, RemoteConn):
            return await self._route_relayed(conn, req)
        node = self.tunnels.owner_of(conn)
        if node is not None:
            self.tunnels.forward(node, conn, req)
            return True
        code: str | None = None
        resume = (req.token or req.device) if isinstance(req, Hello) else None
        if resume:
            code = await self.service.sessions.room_code_of(resume)
        elif isinstance(req, JoinRoom):
            code = req.code.strip().upper()
        if not code or code in self.service.rooms:
            return False
        node = await self.locate(code)
        if not node:  # LOCAL or None: the service answers (joined, no_such_room, …)
            return False
        if resume:
            sessions = self.service.sessions
            sessions.attach(await sessions.resume(resume), conn)
            token = None  # the relayed hello resumes the session over there
        else:
            assert conn.session is not None
            token = conn.session.token
        self.tunnels.open(node, conn, token)
        self.tunnels.forward(node, conn, req)
        return True

    async def _route_relayed(self, conn: RemoteConn, req: Request) -> bool:
        """A relayed client normally asks for the room that runs here; one that is
        in no room here and joins a room of a third node is sent on to it."""
        if not isinstance(req, JoinRoom) or conn.session is None or conn.session.room_code:
            return False
        code = req.code.strip().upper()
        if code in self.service.rooms:
            return False
        node = await self.locate(code)
        if not node:
            return False
        conn.redirect(node, req)
        return True

    def disconnected(self, conn: Peer) -> None:
        self.tunnels.disconnected(conn)
