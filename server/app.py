"""The server process: WebSocket and HTTP on one port, start-up and shutdown.

:class:`RaceServer` wires the parts together and is what tests start in-process
(port 0, an injectable clock, seed source and limits). :func:`run` is the
process entry point used by ``python -m server`` and ``klondike-race serve``:
uvloop when available, SIGINT/SIGTERM for a graceful stop (clients get 1001 and
may resume with their token), and one log line once listening.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import ssl
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response
from websockets.typing import Subprotocol

from protocol.wire import JSON, MSGPACK, SUBPROTOCOLS

from . import ids
from .accounts.store import AccountStore
from .challenges.store import ChallengeStore
from .collector import collect_garbage
from .daily.results import ResultStore
from .daily.store import DailyStore
from .net.clock import Clock, SystemClock
from .net.connection import Connection, Flusher, GameSocket, Limits
from .net.http import DEFAULT_STATIC, HttpRoutes, not_found, other_protocol, site_of, too_many
from .net.metrics import Metrics
from .net.ratelimit import client_address
from .rooms.proofs import ProvenPools
from .service.service import IDLE_ROOM_MS, Service
from .store.base import Store, StoreUnavailable
from .store.memory import MemoryStore

__all__ = ["MAX_FRAME", "RaceServer", "run"]

log = logging.getLogger("klondike_race")

MAX_FRAME = 64 * 1024


def select_subprotocol(_conn: ServerConnection, offered: Any) -> Subprotocol | None:
    """JSON only for a client that asks for it; msgpack for everyone else,
    including a client that offers neither (then no header is sent)."""
    if MSGPACK in offered:
        return Subprotocol(MSGPACK)
    if JSON in offered:
        return Subprotocol(JSON)
    return None


class RaceServer:
    def __init__(
        self,
        store: Store | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 8765,
        clock: Clock | None = None,
        draw_seed: Callable[[], str] = ids.new_seed,
        limits: Limits | None = None,
        proofs: ProvenPools | None = None,
        static_dir: Path | None = DEFAULT_STATIC,
        ping_interval: float | None = 20.0,
        store_factory: Callable[[], Awaitable[Store]] | None = None,
        clustered: bool = False,
        idle_room_ms: int = IDLE_ROOM_MS,
        origins: Sequence[str] = (),
        metrics_address: tuple[str, int] | None = None,
        tls: ssl.SSLContext | None = None,
        rp_id: str | None = None,
        accounts: AccountStore | None = None,
        accounts_factory: Callable[[], Awaitable[AccountStore]] | None = None,
        daily: DailyStore | None = None,
        daily_factory: Callable[[], Awaitable[DailyStore]] | None = None,
        publish_daily: bool = True,
        daily_results: ResultStore | None = None,
        daily_results_factory: Callable[[], Awaitable[ResultStore]] | None = None,
        challenges: ChallengeStore | None = None,
        challenges_factory: Callable[[], Awaitable[ChallengeStore]] | None = None,
    ) -> None:
        self.tls = tls  # HTTPS and WSS on the one port (server/net/tls.py)
        self.rp_id = rp_id  # passkeys' RP ID; None: each connection's Host name
        self.origins = tuple(origins)
        self.store: Store = store if store is not None else MemoryStore()
        self._store_factory = store_factory
        self._accounts_factory = accounts_factory  # beside the room store: server/cli.py
        self._daily_factory = daily_factory  # the daily deals' store, likewise
        self._results_factory = daily_results_factory  # the daily runs' results, likewise
        self._challenges_factory = challenges_factory  # the challenges, likewise
        # Keep the next days' daily deals published (server/daily/publisher.py);
        # off only for a server in a test that is about something else: it
        # proves sixteen deals in a worker process at start.
        self.publish_daily = publish_daily
        self.clustered = clustered  # several nodes on one Redis: server/cluster/leases.py
        self._cluster: Any = None
        self.host = host
        self.port = port
        self.limits = limits or Limits()
        self.metrics = Metrics()
        self.service = Service(
            self.store,
            clock or SystemClock(),
            self.metrics,
            draw_seed,
            idle_room_ms,
            self.limits,
            proofs,
            accounts,
            daily,
            daily_results,
        )
        if challenges is not None:
            self.service.challenges = challenges
        self.http = HttpRoutes(
            self._health,
            self.metrics.render,
            static_dir,
            origins=origins,
            metrics_here=metrics_address is None,
            secure=tls is not None,
        )
        # /metrics on a listener of its own, answering any peer that reaches it
        self.metrics_address = metrics_address
        self._metrics_http = HttpRoutes(
            self._health, self.metrics.render, None, metrics_anywhere=True
        )
        self._metrics_server: Server | None = None
        self.flusher = Flusher(self.limits.progress_delay)
        self._per_address: Counter[str] = Counter()
        self.ping_interval = ping_interval
        self._server: Server | None = None
        m = self.metrics
        m.rooms.set_function(lambda: len(self.service.rooms))
        for role in ("none", "player", "spectator"):
            m.connections.labels(role).set_function(self._counter(role))

    def _counter(self, role: str) -> Callable[[], int]:
        return lambda: self._count(role)

    def _count(self, role: str) -> int:
        return sum(1 for c in self.service.connections if self.service.role_of(c) == role)

    def _health(self) -> dict[str, Any]:
        return {
            "status": "ok",
            "version": 1,
            "rooms": len(self.service.rooms),
            "connections": len(self.service.connections),
        }

    async def _handler(self, ws: ServerConnection) -> None:
        headers = ws.request.headers if ws.request is not None else Headers()
        site = site_of(headers, self.tls is not None, self.rp_id, self.origins)
        conn = Connection(self.service, ws, self.limits, self.flusher, site)
        self._per_address[conn.address] += 1
        try:
            await conn.serve()
        finally:
            self._per_address[conn.address] -= 1
            if not self._per_address[conn.address]:
                del self._per_address[conn.address]

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """HTTP first (server/net/http.py); a handshake from an address that has
        its connections already is refused with 429 before it costs a socket, and
        one offering only subprotocols of another version with 426."""
        answer = self.http(connection, request)
        if answer is None:
            offered = [
                p.strip()
                for value in request.headers.get_all("Sec-WebSocket-Protocol")
                for p in value.split(",")
            ]
            if offered and not any(p in SUBPROTOCOLS for p in offered):
                return other_protocol(SUBPROTOCOLS)
            limit = self.limits.connections_per_address
            peer = connection.remote_address
            forwarded = request.headers.get("X-Forwarded-For")
            address = client_address(
                str(peer[0]) if peer else "unknown", forwarded, self.limits.trusted_proxies
            )
            if self._per_address[address] >= limit:
                return too_many(f"at most {limit} connections from one address")
        return answer

    async def start(self) -> None:
        """Connect the store (when it needs the loop), rebuild open rooms, listen."""
        if self._store_factory is not None:
            self.store = await self._store_factory()
            self.service.use_store(self.store)
            self._store_factory = None
        if self._accounts_factory is not None:
            self.service.use_accounts(await self._accounts_factory())
            self._accounts_factory = None
        if self._daily_factory is not None:
            self.service.use_daily(await self._daily_factory())
            self._daily_factory = None
        if self._results_factory is not None:
            self.service.use_daily_results(await self._results_factory())
            self._results_factory = None
        if self._challenges_factory is not None:
            self.service.challenges = await self._challenges_factory()
            self._challenges_factory = None
        if self.clustered:
            from .cluster.leases import Cluster

            self._cluster = self.service.cluster = await Cluster.start(
                self.service, flusher=self.flusher
            )
        await self.service.recover()
        if self.publish_daily:
            self.service.daily.start()
        self._server = await serve(
            self._handler,
            self.host,
            self.port,
            subprotocols=[Subprotocol(MSGPACK), Subprotocol(JSON)],
            select_subprotocol=select_subprotocol,
            process_request=self._process_request,
            create_connection=GameSocket,
            compression=None,
            max_size=MAX_FRAME,
            max_queue=64,
            ping_interval=self.ping_interval,
            close_timeout=2.0,
            server_header=None,
            ssl=self.tls,
        )
        sock = next(iter(self._server.sockets))
        self.port = sock.getsockname()[1]
        if self.metrics_address is not None:
            host, port = self.metrics_address
            self._metrics_server = await serve(
                self._no_socket, host, port, process_request=self._metrics_only, server_header=None
            )
            self.metrics_address = host, next(iter(self._metrics_server.sockets)).getsockname()[1]

    def _metrics_only(self, connection: ServerConnection, request: Request) -> Response:
        answer = self._metrics_http(connection, request)
        return answer if answer is not None else not_found()

    async def _no_socket(self, ws: ServerConnection) -> None:  # pragma: no cover
        await ws.close()

    @property
    def url(self) -> str:
        scheme = "wss" if self.tls is not None else "ws"
        return f"{scheme}://{self.host}:{self.port}/ws"

    @property
    def page(self) -> str:
        """The browser client's address (``/``)."""
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{self.host}:{self.port}/"

    async def stop(self) -> None:
        """Close every client with 1001 (going away), then the store."""
        # First the proven-seed pools: a room waiting for one is refused at once
        # rather than holding its connection, and so the shutdown, open. The
        # daily deals' publisher before them: it would only wait to try again.
        await self.service.daily.stop()
        await self.service.seeding.proofs.close()
        if self._server is not None:
            self._server.close(close_connections=True)
            await self._server.wait_closed()
            self._server = None
        if self._metrics_server is not None:
            self._metrics_server.close()
            await self._metrics_server.wait_closed()
            self._metrics_server = None
        if self._cluster is not None:
            # First, while the rooms still run: relayed clients' departures are
            # recorded, then the leases are handed over.
            await self._cluster.stop()
        await self.service.stop()
        await self.store.close()
        await self.service.accounts.close()
        await self.service.daily.store.close()
        await self.service.daily_results.close()
        await self.service.challenges.close()

    async def __aenter__(self) -> RaceServer:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.stop()


async def serve_forever(server: RaceServer) -> None:
    await server.start()
    gc_task = asyncio.get_running_loop().create_task(collect_garbage())
    log.info("klondike-race listening on %s and %s", server.url, server.page)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        log.info("klondike-race shutting down")
        gc_task.cancel()
        await server.stop()


def run(server: RaceServer) -> int:
    """Run until SIGINT/SIGTERM, on uvloop when it is installed."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        import uvloop  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        runner: Callable[[Any], Any] = asyncio.run
    else:  # pragma: no cover - not installed in the test environment
        runner = uvloop.run
    try:
        runner(serve_forever(server))
    except StoreUnavailable as exc:
        log.error("klondike-race: the store is unavailable: %s", exc)
        return 1
    except OSError as exc:  # e.g. the port is taken
        log.error("klondike-race: cannot listen on %s:%s: %s", server.host, server.port, exc)
        return 1
    return 0
