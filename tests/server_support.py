"""Helpers for the server tests: an in-process server and a raw WebSocket client.

The client here is deliberately bare (websockets + the wire codec), not the
client/ library, so the server tests pin the wire contract of docs/protocol.md
on their own. Every frame a client receives is kept, raw and decoded, for the
hidden-information checks.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from protocol.wire import JSON, MSGPACK, decode, encode
from server.app import RaceServer
from server.net.connection import Limits
from server.store.base import SessionRecord, StoreUnavailable
from server.store.memory import MemoryStore

TIMEOUT = 10.0
# Tests open many sessions and rooms from one address, flat out: no caps unless a
# test sets its own limits.
UNLIMITED = Limits(
    rate=1e6,
    burst=1e6,
    connections_per_address=10**6,
    sessions_per_minute=10**6,
    rooms_per_minute=10**6,
    wrong_codes_per_minute=10**6,
)


class FakeClock:
    """A server clock the test moves by hand; timers wake when it passes them."""

    def __init__(self, start: int = 1_764_430_000_000) -> None:
        self.ms = start
        self._changed = asyncio.Event()

    def now(self) -> int:
        return self.ms

    def advance(self, ms: int) -> None:
        self.ms += ms
        self._changed.set()

    async def sleep_until(self, deadline: int) -> None:
        while self.ms < deadline:
            self._changed.clear()
            await self._changed.wait()


class FlakyStore(MemoryStore):
    """The memory store with a switch that makes appends fail like a lost Redis."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    async def append(self, code: str, records: Any) -> int:
        if self.down:
            raise StoreUnavailable("switched off by the test")
        return await super().append(code, records)

    async def put_session(self, token: str, record: SessionRecord) -> None:
        await super().put_session(token, record)


class Seeds:
    """A seed source for the server: queued seeds first, then made-up ones."""

    def __init__(self, *seeds: str) -> None:
        self.queue = list(seeds)
        self.counter = itertools.count()
        self.drawn: list[str] = []

    def __call__(self) -> str:
        seed = self.queue.pop(0) if self.queue else f"test-seed-{next(self.counter)}"
        self.drawn.append(seed)
        return seed


@asynccontextmanager
async def running_server(**kwargs: Any) -> AsyncIterator[RaceServer]:
    kwargs.setdefault("port", 0)
    kwargs.setdefault("static_dir", None)
    kwargs.setdefault("limits", UNLIMITED)
    server = RaceServer(**kwargs)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def small_limits(**changes: Any) -> Limits:
    return Limits(**changes)


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
    on_frame: Callable[[Client, Frame], None] | None = None
    auto_number: bool = True
    logged: dict[int, int] = field(default_factory=dict)  # deal -> its board's "logged"
    _numbered: dict[Any, int] = field(default_factory=dict)  # move rid in flight -> deal

    @classmethod
    async def open(cls, url: str, proto: str | None = MSGPACK, **kwargs: Any) -> Client:
        protos = [Subprotocol(proto)] if proto else None
        ws = await connect(url, subprotocols=protos, max_size=None, compression=None, **kwargs)
        client = cls(ws, ws.subprotocol != JSON)
        client._reader = asyncio.get_running_loop().create_task(client._read())
        return client

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                msg = decode(raw, self.binary)
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
        """Keep each deal's ``logged`` from the board views this client is sent."""
        self._numbered.pop(msg.get("id"), None)
        kind = msg.get("type")
        if kind == "moved":
            number, board = msg.get("deal"), msg.get("board")
        elif kind in ("joined", "snapshot", "welcome", "deal_started"):
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

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        rid = next(self._ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        if kind == "move" and "n" not in fields and self.auto_number:
            deal = fields.get("deal")
            fields["n"] = self.next_n(deal) if isinstance(deal, int) else 0
            self._numbered[rid] = deal
        await self.send({"type": kind, "id": rid, **fields})
        return await asyncio.wait_for(fut, TIMEOUT)

    async def ok(self, kind: str, **fields: Any) -> dict[str, Any]:
        reply = await self.request(kind, **fields)
        assert reply["type"] != "error", reply
        return reply

    async def hello(self, name: str) -> dict[str, Any]:
        reply = await self.ok("hello", version=1, name=name)
        self.name, self.token, self.player = name, reply["token"], reply["player"]
        return reply

    async def event(self, kind: str, timeout: float = TIMEOUT, **match: Any) -> dict[str, Any]:
        """The next event of ``kind`` (matching ``match``) after the last one taken."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            while self._cursor < len(self.events):
                msg = self.events[self._cursor]
                self._cursor += 1
                if msg["type"] == kind and all(msg.get(k) == v for k, v in match.items()):
                    return msg
            if self.close_code is not None:
                raise ConnectionError(f"closed {self.close_code} waiting for {kind}")
            self._arrived.clear()
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(f"no {kind} event {match}")
            try:
                await asyncio.wait_for(self._arrived.wait(), left)
            except TimeoutError:
                raise TimeoutError(f"no {kind} event {match}") from None

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


async def player(server: RaceServer, name: str, proto: str | None = MSGPACK) -> Client:
    client = await Client.open(server.url, proto)
    await client.hello(name)
    return client


class Ledger:
    """The test's own record of every accepted move, in acceptance order, so a
    test can recompute every score with the engine and compare the server's."""

    def __init__(self) -> None:
        self.moves: dict[int, dict[str, list[Any]]] = {}
        self.results: dict[int, dict[str, list[dict[str, Any]]]] = {}  # as ``moved`` said
        self.rules: dict[int, Any] = {}
        self.seeds: dict[int, str] = {}
        self.started_at: dict[int, int] = {}
        self.ended_at: dict[int, int] = {}
        self.order = itertools.count(1)

    def deal_started(self, deal: dict[str, Any], seed: str, players: list[str]) -> None:
        from protocol.settings import DealRules

        n = deal["number"]
        self.rules[n] = DealRules.from_wire(deal["rules"])
        self.seeds[n] = seed
        self.started_at[n] = deal["started_at"]
        self.moves[n] = {p: [] for p in players}
        self.results[n] = {p: [] for p in players}

    def moved(self, player: str, reply: dict[str, Any], move: dict[str, Any]) -> None:
        from protocol.moves import Move
        from protocol.scoring import TimedMove

        self.moves[reply["deal"]][player].append(
            TimedMove(reply["t"], next(self.order), Move.from_wire(move))
        )
        self.results[reply["deal"]][player].append(reply["result"])

    def sheet(
        self, players: list[str], scoring: Any, bonus: int, now: int, carry: Any = None
    ) -> Any:
        from protocol.scoring import replay
        from protocol.sheet import DealEntry, build_sheet

        entries = []
        for n in sorted(self.moves):
            results = {
                p: replay(self.seeds[n], self.rules[n], ms) for p, ms in self.moves[n].items()
            }
            stop = self.ended_at.get(n, now) - self.started_at[n]
            entries.append(DealEntry(results, {p: stop for p in results}))
        return build_sheet(players, entries, scoring, bonus, carry)

    def logs_wire(self, n: int) -> dict[str, list[dict[str, Any]]]:
        """Deal ``n``'s logs as a revealed deal must carry them: each move with the
        ``result`` its ``moved`` reply carried live."""
        return {
            p: [
                {"t": tm.t, "move": tm.move.to_wire(), "result": result}
                for tm, result in zip(ms, self.results[n][p], strict=True)
            ]
            for p, ms in self.moves[n].items()
        }
