"""A raw protocol client for the server tests: websockets and the wire codec.

Deliberately bare (not the client/ library), so the server tests pin the wire
contract of docs/protocol.md on their own. Every frame a client receives is kept,
raw and decoded, for the hidden-information checks.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from protocol.outcomes import apply_outcome, view_digest
from protocol.wire import JSON, MSGPACK, decode, encode
from server.app import RaceServer
from tests.support.waiting import TIMEOUT


@dataclass
class Frame:
    raw: bytes | str
    msg: dict[str, Any]


@dataclass
class Client:
    """A raw protocol client: requests get replies by id, events queue by seq.

    A ``move`` request without an ``n`` gets the one docs/protocol.md says a client
    sends: the ``logged`` of the last board view received for that deal, plus the
    moves of that deal still in flight (``auto_number`` false sends none at all).
    Tests of the numbering itself pass ``n`` explicitly.
    """

    ws: ClientConnection
    binary: bool
    name: str = ""
    frames: list[Frame] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    token: str | None = None
    player: str | None = None
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _pending: dict[Any, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _cursor: int = 0
    _reader: asyncio.Task[None] | None = None
    close_code: int | None = None
    received: int = 0  # frames as they came (an ``events`` frame is one)
    batches: list[dict[str, Any]] = field(default_factory=list)  # the ``events`` frames whole
    on_frame: Callable[[Client, Frame], None] | None = None
    auto_number: bool = True
    logged: dict[int, int] = field(default_factory=dict)  # deal -> its board's "logged"
    _numbered: dict[Any, int] = field(default_factory=dict)  # move rid in flight -> deal
    _sent_n: dict[Any, tuple[Any, Any]] = field(default_factory=dict)  # move rid -> (deal, n)

    @classmethod
    async def open(cls, url: str, proto: str | None = MSGPACK, **kwargs: Any) -> Client:
        protos = [Subprotocol(proto)] if proto else None
        ws = await connect(url, subprotocols=protos, max_size=None, compression=None, **kwargs)
        client = cls(ws, ws.subprotocol != JSON)
        client._reader = asyncio.get_running_loop().create_task(client._read())
        return client

    async def _read(self) -> None:
        try:
            async for data in self.ws:
                self.received += 1
                batch = decode(data, self.binary)
                if batch.get("type") == "events":
                    # Batched room events (docs/protocol.md "Batched events"): each
                    # is taken as if it had come alone, with its bytes as the server
                    # spliced them into the batch (all of it but its header).
                    parts = [(encode(e, self.binary), e) for e in batch["events"]]
                    self.batches.append(batch)
                else:
                    parts = [(data, batch)]
                for raw, msg in parts:
                    frame = Frame(raw, msg)
                    self.frames.append(frame)
                    if self.on_frame is not None:
                        self.on_frame(self, frame)
                    if "seq" in msg and msg.get("type") not in ("snapshot", "joined", "welcome"):
                        self.events.append(msg)
                    self._track(msg)
                    fut = self._pending.pop(msg.get("id"), None) if "id" in msg else None
                    if fut is not None and not fut.done():
                        fut.set_result(msg)
                self._arrived.set()
        except ConnectionClosed:
            pass
        finally:
            rcvd = self.ws.protocol.close_rcvd
            self.close_code = rcvd.code if rcvd is not None else 1006
            self._numbered.clear()
            self._arrived.set()
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionError(f"closed {self.close_code}"))

    def _track(self, msg: dict[str, Any]) -> None:
        """Keep each deal's ``logged`` from the board views this client is sent,
        and one past the number of each move acknowledged since."""
        self._numbered.pop(msg.get("id"), None)
        sent = self._sent_n.pop(msg.get("id"), None)
        kind = msg.get("type")
        if kind == "moved":
            if sent is not None and isinstance(sent[1], int):
                number = msg.get("deal")
                if isinstance(number, int):
                    self.logged[number] = max(self.logged.get(number, 0), sent[1] + 1)
            return
        if kind in ("joined", "snapshot", "welcome", "deal_started"):
            holder = msg if kind == "deal_started" else msg.get("room")
            deal = holder.get("deal") if isinstance(holder, dict) else None
            if not isinstance(deal, dict):
                return
            number, board = deal.get("number"), deal.get("board")
        else:
            return
        if isinstance(number, int) and isinstance(board, dict) and "logged" in board:
            self.logged[number] = board["logged"]

    def next_n(self, deal: int) -> int:
        """The ``n`` the next move of ``deal`` carries, as a client works it out."""
        in_flight = sum(1 for d in self._numbered.values() if d == deal)
        return self.logged.get(deal, 0) + in_flight

    async def send_raw(self, data: bytes | str) -> None:
        await self.ws.send(data)

    async def send(self, msg: dict[str, Any]) -> None:
        await self.ws.send(encode(msg, self.binary))

    async def request(
        self, kind: str, timeout: float | None = TIMEOUT, **fields: Any
    ) -> dict[str, Any]:
        """Send a request and return its reply. ``timeout`` None: as long as the
        reply takes (for a reply bound to an event that has no time bound of its
        own, such as a proven deal; the test's own timeout still holds)."""
        rid = next(self._ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        if kind == "move" and "n" not in fields and self.auto_number:
            deal = fields.get("deal")
            fields["n"] = self.next_n(deal) if isinstance(deal, int) else 0
            self._numbered[rid] = deal
        if kind == "move":
            self._sent_n[rid] = (fields.get("deal"), fields.get("n"))
        try:
            await self.send({"type": kind, "id": rid, **fields})
        except ConnectionClosed as exc:  # closed before it left: as one in flight is
            for sent in (self._pending, self._numbered, self._sent_n):
                sent.pop(rid, None)
            code = exc.rcvd.code if exc.rcvd is not None else 1006
            raise ConnectionError(f"closed {code}") from None
        return await asyncio.wait_for(fut, timeout)

    async def ok(self, kind: str, timeout: float | None = TIMEOUT, **fields: Any) -> dict[str, Any]:
        reply = await self.request(kind, timeout=timeout, **fields)
        assert reply["type"] != "error", reply
        return reply

    async def hello(self, name: str) -> dict[str, Any]:
        reply = await self.ok("hello", version=2, name=name)
        self.name, self.token, self.player = name, reply["token"], reply["player"]
        return reply

    async def event(
        self, kind: str, timeout: float | None = TIMEOUT, **match: Any
    ) -> dict[str, Any]:
        """The next event of ``kind`` (matching ``match``) after the last one taken
        (``timeout`` None: however long it takes)."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            while self._cursor < len(self.events):
                msg = self.events[self._cursor]
                self._cursor += 1
                if msg["type"] == kind and all(msg.get(k) == v for k, v in match.items()):
                    return msg
            if self.close_code is not None:
                raise ConnectionError(f"closed {self.close_code} waiting for {kind}")
            self._arrived.clear()
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                raise TimeoutError(f"no {kind} event {match}")
            try:
                await asyncio.wait_for(self._arrived.wait(), left)
            except TimeoutError:
                raise TimeoutError(f"no {kind} event {match}") from None

    async def notice(self, kind: str, timeout: float = TIMEOUT, **match: Any) -> dict[str, Any]:
        """The first frame of ``kind`` (matching ``match``) that is neither a reply
        nor a room event (a ``friend_invite``): such frames have no order to keep."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for frame in self.frames:
                msg = frame.msg
                if "id" in msg or "seq" in msg or msg.get("type") != kind:
                    continue
                if all(msg.get(k) == v for k, v in match.items()):
                    return msg
            if self.close_code is not None:
                raise ConnectionError(f"closed {self.close_code} waiting for {kind}")
            self._arrived.clear()
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(f"no {kind} notice {match}")
            try:
                await asyncio.wait_for(self._arrived.wait(), left)
            except TimeoutError:
                raise TimeoutError(f"no {kind} notice {match}") from None

    def notices(self, kind: str) -> list[dict[str, Any]]:
        return [f.msg for f in self.frames if f.msg.get("type") == kind and "id" not in f.msg]

    async def caught_up(self) -> None:
        """Ping, and wait for the pong: the server answers a ping at once, on the
        same queue as everything else for this connection, so every frame it had
        queued for us before it has arrived by then. How a test proves that
        something did *not* happen up to a point: it would have come first."""
        assert (await self.request("ping"))["type"] == "pong"

    def unseen(self, kind: str) -> list[dict[str, Any]]:
        """The events of ``kind`` after the last one :meth:`event` took."""
        return [m for m in self.events[self._cursor :] if m["type"] == kind]

    def last(self, kind: str) -> dict[str, Any] | None:
        for msg in reversed(self.events):
            if msg["type"] == kind:
                return msg
        return None

    async def closed(self, timeout: float = TIMEOUT) -> int:
        assert self._reader is not None
        await asyncio.wait_for(asyncio.shield(self._reader), timeout)
        assert self.close_code is not None
        return self.close_code

    async def close(self) -> None:
        await self.ws.close()
        if self._reader is not None:
            await self._reader


def after(view: dict[str, Any], told: dict[str, Any]) -> dict[str, Any]:
    """The board view ``view`` becomes by the outcome ``told`` carries (a
    ``moved`` reply, or a watcher's ``progress`` event), as a client keeps it:
    checked by the digest told with it."""
    new = apply_outcome(view, told["outcome"])
    assert view_digest(new) == told["digest"], (view, told)
    return new


RESULT_FIELDS = ("cards", "turned", "events", "pass_started", "status", "undone")


def result_of(reply: dict[str, Any]) -> dict[str, Any]:
    """The RESULT a ``moved`` reply's outcome begins with: what the deal's log
    keeps of the move (docs/protocol.md, "Room view")."""
    return {k: reply["outcome"][k] for k in RESULT_FIELDS}


def after_move(view: dict[str, Any], reply: dict[str, Any], n: int) -> dict[str, Any]:
    """:func:`after` for the ``moved`` reply to our move number ``n``: a view that
    shows the move already (taken up again after it, on resuming, before the
    retry's original reply came) is only checked against the digest."""
    if view["logged"] == n + 1:
        assert view_digest(view) == reply["digest"], (view, reply)
        return view
    assert view["logged"] == n, (view, n)
    return after(view, reply)


async def player(server: RaceServer | str, name: str, proto: str | None = MSGPACK) -> Client:
    """A client that has said hello, on an in-process server or at a ws:// URL."""
    client = await Client.open(server if isinstance(server, str) else server.url, proto)
    await client.hello(name)
    return client


async def resume(url: str, token: str | None) -> tuple[Client, dict[str, Any]]:
    """A new connection that resumes the session of ``token``; and its welcome."""
    client = await Client.open(url)
    welcome = await client.ok("hello", version=2, token=token)
    return client, welcome


class Player:
    """A raw client (tests/support/raw_client.py) playing legal moves with the client's
    bot, remembering every move the server acknowledged and keeping its board by
    their outcomes (``view``: the board after the last acknowledged move)."""

    def __init__(self, client: Any) -> None:
        from client.bot import Bot

        self.client = client
        self.bot = Bot(search_budget=0)
        self.view: dict[str, Any] | None = None
        self.acked: list[dict[str, Any]] = []  # the moved replies, in order

    async def play(self, deal: int, count: int) -> None:
        from protocol.moves import MoveKind

        for _ in range(count):
            assert self.view is not None
            move = self.bot.decide(self.view)
            if move.kind is MoveKind.RESIGN:
                return
            reply = await self.client.request("move", deal=deal, move=move.to_wire())
            assert reply["type"] == "moved", reply
            self.acked.append(reply)
            self.view = after(self.view, reply)
