"""Node-to-node relay of client connections over Redis pub/sub (see server/cluster/leases.py).

A client whose room runs on another node keeps its socket where it is (the *edge*
node) and is *tunnelled* to the room's *owner*: the edge forwards its parsed
requests, the owner runs them as for a local client through a :class:`RemoteConn`
and sends back the exact frames the client gets — replies and room events in the
order the owner produced them, already encoded for the client's subprotocol. The
edge understands none of it; it only writes the frames to the socket. So the
``progress`` events that wait to leave together (docs/protocol.md "Batched
events") wait on the owner, as for its own sockets, and cross as the one
``events`` frame the client gets.

Each node subscribes to one channel of its own; a message is a msgpack list of
entries ``[kind, from_node, conn_id, n, payload]``, batched per event-loop tick and
per destination so a busy room costs one PUBLISH per tick, not one per frame:

======== =========== ====================================================
kind     direction   payload
======== =========== ====================================================
``open`` edge→owner  ``[binary, token, address]``: a new tunnel (token: attach
                     the session now, for a client that said hello at the
                     edge; address: the client's, which its limits go by)
``req``  edge→owner  the request, as the map its client sends
                     (``protocol.requests.request_message``)
``bye``  edge→owner  the client's socket closed
``live`` both ways   ``[conn ids]``: the tunnels this node still has with you
``out``  owner→edge  one frame for the client
``shut`` owner→edge  ``[code, reason]``: close the client's socket
``move``  owner→edge  ``[node, request]``: the client, in no room here, asks
                     to join a room that runs on ``node``: tunnel it there
                     (the request as in ``req``)
``invite`` any→any   ``[player, from, from_player, room, role]``: a friend's
                     ``friend_invite`` for the player whose socket is on the
                     receiving node (server/cluster/friends.py); no tunnel
``matched`` any→any  ``[player, ticket, room, fields]``: the quick match
                     seated the player, whose socket is on the receiving node,
                     in a room of the sender's (server/cluster/queue.py): that
                     node tunnels them to it and hands them ``matched`` (its
                     ``fields``)
======== =========== ====================================================

Pub/sub drops messages while a connection to Redis is down. ``n`` numbers the
owner's frames per tunnel, so an edge that sees a gap closes the client with 1001
and the client resumes with its token, which gets it a fresh snapshot: the same
"gap → snapshot" rule clients already follow for room events. ``live`` lists are
the anti-entropy for lost ``bye``/``shut`` messages.

A request crosses as the map its client sent, made again by the codec that parsed
it (protocol/requests.py) and parsed by the same codec at the owner: one codec for the
socket and the relay, so a request cannot arrive other than it left.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import msgpack  # type: ignore[import-untyped, unused-ignore]

from protocol import messages as M
from protocol.messages import CloseCode, Code, ErrorCode
from protocol.requests import Request, request_message
from protocol.wire import WireError, encode

from ..core.values import RoomError
from ..net.connection import Flusher, HeldEvents
from ..peer import SessionState, Site
from ..service.service import Service

__all__ = ["Outbox", "RemoteConn", "decode_batch"]

log = logging.getLogger("klondike_race.relay")

OPEN, REQ, BYE, LIVE, OUT, SHUT, MOVE = "open", "req", "bye", "live", "out", "shut", "move"
INVITE, MATCHED = "invite", "matched"


def decode_batch(data: bytes) -> list[list[Any]]:
    batch: list[list[Any]] = msgpack.unpackb(data, raw=False)
    return batch


class Outbox:
    """Entries for other nodes, sent as one PUBLISH per node per loop tick.

    ``publish(node, entries)`` is awaited in a task; it returns the number of
    receivers (0: the node is gone) or raises StoreUnavailable. ``failed(node,
    entries, receivers_or_exc)`` hears about every batch that did not arrive.
    """

    def __init__(self, publish: Any, failed: Any) -> None:
        self._publish = publish
        self._failed = failed
        self._pending: dict[str, list[list[Any]]] = {}
        self._busy: set[str] = set()  # nodes with a PUBLISH in flight
        self._scheduled = False
        self._tasks: set[asyncio.Task[None]] = set()

    def put(self, node: str, entry: list[Any]) -> None:
        self._pending.setdefault(node, []).append(entry)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        """One PUBLISH in flight per node: batches then reach it in the order they
        were made (the pool's connections would not keep that order)."""
        self._scheduled = False
        for node in [n for n in self._pending if n not in self._busy]:
            entries = self._pending.pop(node)
            self._busy.add(node)
            task = asyncio.get_running_loop().create_task(self._send(node, entries))
            self._tasks.add(task)
            task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[None]) -> None:
        """Nobody awaits a send: a failure _send did not handle (a bug in
        ``failed``) is logged here once, not left to the garbage collector."""
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("relay: sending a batch failed", exc_info=exc)

    async def _send(self, node: str, entries: list[list[Any]]) -> None:
        try:
            receivers = await self._publish(node, entries)
        except Exception as exc:  # StoreUnavailable, typically
            self._failed(node, entries, exc)
        else:
            if not receivers:
                self._failed(node, entries, None)
        finally:
            self._busy.discard(node)
            if self._pending and not self._scheduled:
                self._scheduled = True
                asyncio.get_running_loop().call_soon(self._flush)

    async def drain(self) -> None:
        while self._tasks or self._scheduled:
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            else:
                await asyncio.sleep(0)


class RemoteConn(HeldEvents):
    """The owner's stand-in for a client connected to another node.

    A :class:`~server.peer.Peer`, as a local
    :class:`~server.net.connection.Connection` is, and it runs the tunnel's
    requests one at a time, in order, like a local connection's reader loop does.
    It holds the client's ``progress`` events as a local connection does
    (``HeldEvents``, on this node's flusher): they cross as one ``out`` frame,
    the ``events`` frame the client gets, so the edge needs no timer of its own.
    """

    def __init__(
        self,
        service: Service,
        outbox: Outbox,
        flusher: Flusher,
        node: str,
        conn_id: int,
        binary: bool,
        me: str,
        token: str | None = None,
        address: str = "",
    ) -> None:
        self.service = service
        self.outbox = outbox
        self.flusher = flusher
        self._later: list[bytes | str] = []
        self.later_due: float | None = None
        self.node = node  # the edge
        self.conn_id = conn_id
        self.binary = binary
        self.me = me
        self.address = address or f"relay:{node}"
        self.site: Site | None = None  # passkey ceremonies stay on the client's own node
        self.session: SessionState | None = None
        self.closing = False
        self.link_base: str | None = None  # account requests are answered at the edge
        self._n = 0
        self._queue: asyncio.Queue[Request | None] = asyncio.Queue()
        self.ended = asyncio.Event()
        self._worker = asyncio.get_running_loop().create_task(self._work(token))

    def submit(self, req: Request) -> None:
        if not self.closing:
            self._queue.put_nowait(req)

    async def _attach(self, token: str) -> None:
        """The client said hello at its edge (it joins a room that runs here):
        take its session over here too, before any of its requests runs."""
        sessions = self.service.sessions
        sessions.attach(await sessions.resume(token), self)

    async def _work(self, token: str | None) -> None:
        try:
            if token is not None:
                try:
                    await self._attach(token)
                except (RoomError, Exception):
                    log.warning("cannot attach a relayed session", exc_info=True)
                    self.close(CloseCode.GOING_AWAY, "cannot resume here; try again")
            while (req := await self._queue.get()) is not None:
                try:
                    await self.service.handle(self, req)
                except (WireError, RoomError) as exc:
                    self.error(req.id, exc.code, exc.message, **exc.extra)
                except Exception:
                    log.exception("relayed request failed: %.200r", req)
                    self.error(
                        req.id, ErrorCode.INTERNAL_ERROR, "the server failed on this request"
                    )
        finally:
            self.closing = True
            self.ended.set()
            await self.service.disconnected(self)

    def error(self, rid: Any, code: Code, message: str, **extra: Any) -> None:
        self.send(M.error(rid, code, message, **extra))

    def send(self, msg: M.Message) -> None:
        self.send_data(encode(msg, self.binary))

    def send_data(self, data: bytes | str) -> None:
        """One frame for the client, after the events it holds (so in order)."""
        if self.closing:
            return
        if self._later:
            self.bring_later()
        self._enqueue(data)

    def _enqueue(self, data: bytes | str) -> None:
        self._n += 1
        self.outbox.put(self.node, [OUT, self.me, self.conn_id, self._n, data])

    def failed(self) -> None:
        log.exception("sending to a relayed client failed; closing it")
        self._later.clear()
        self.close(CloseCode.SERVER_ERROR, "the server failed to send to you; resume")

    def redirect(self, node: str, req: Request) -> None:
        """Send the client on to ``node`` (its edge re-tunnels it) and end here,
        after the events it holds."""
        if not self.closing:
            self.bring_later()
            self._n += 1
            entry = [MOVE, self.me, self.conn_id, self._n, [node, request_message(req)]]
            self.outbox.put(self.node, entry)
        self.end()

    def close(self, code: CloseCode, reason: str) -> None:
        """Close the client's socket at the edge (after what it has), then end
        like a closed connection."""
        if not self.closing:
            self.bring_later()
            self._n += 1
            entry = [SHUT, self.me, self.conn_id, self._n, [int(code), reason]]
            self.outbox.put(self.node, entry)
        self.end()

    def done(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once this stand-in has ended and been cleaned up."""
        self._worker.add_done_callback(lambda _task: callback())

    def end(self) -> None:
        """The tunnel is gone (the client left, or its node died): stop after the
        request in progress, then record the disconnection as for a local socket.
        Events still held have nobody to go to."""
        self.closing = True
        self._later.clear()
        self._queue.put_nowait(None)
