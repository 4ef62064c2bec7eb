"""Connections to Redis on asyncio-redis 0.16, made safe for a server that must not stall.

The Redis store and the cluster relay share this module so that every Redis failure
means the same thing everywhere: :class:`~server.store.StoreUnavailable`, raised
quickly, and a connection that comes back by itself when Redis does.

What we verified in asyncio-redis 0.16 (and why this module does not use its
``Connection`` and ``Pool`` classes):

- ``Connection`` reconnects by itself, but backs off by 1.5x per failure up to 60 s,
  so a Redis that was down for a minute would be noticed up to a minute late; and its
  retry loop ignores ``close()`` while Redis is down, leaking a task forever. A
  :class:`Link` retries every ``RETRY_S`` until it is closed.
- The first ``Connection.create`` waits forever for an unreachable Redis; a Link
  gives up after a timeout (the caller then raises ``StoreUnavailable``).
- On (re)connect the protocol sends AUTH/SELECT from a task of its own, so a command
  issued meanwhile could run on the wrong database. A Link is handed out only after
  its own SELECT (or PING) has been answered, which Redis runs after the protocol's.
- A lost connection fails every pending future with ``ConnectionLostError``; a
  command on a disconnected protocol raises ``NotConnectedError``; a restarted Redis
  answers ``-LOADING`` while it reads its AOF. All of these, error replies and
  timeouts (a frozen Redis never answers), become ``StoreUnavailable`` in :func:`guard`.
- ``evalsha`` turns *every* error reply into ``ScriptKilledError``, NOSCRIPT included
  (Redis forgets scripts when it restarts), so :meth:`Pool.script` reloads the script
  and retries once. ``EvalScriptReply.return_value`` decodes nested strings wrongly, so
  our scripts return integers, arrays of integers, or one top-level string.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import asyncio_redis  # type: ignore[import-untyped]
from asyncio_redis.encoders import BytesEncoder  # type: ignore[import-untyped]

from .base import StoreUnavailable

__all__ = [
    "Link",
    "Pool",
    "RedisAddress",
    "Script",
    "check_durability",
    "config_get",
    "definite",
    "guard",
]

log = logging.getLogger(__name__)
# asyncio-redis logs every connect and disconnect at INFO; Link says what matters.
logging.getLogger("asyncio_redis").setLevel(logging.WARNING)

RETRY_S = 0.5  # between reconnection attempts: short, so service resumes promptly


@dataclass(frozen=True, slots=True)
class RedisAddress:
    """Where Redis is: parsed from ``redis://[:password@]host[:port][/db]``, and
    the ``?prefix=`` the stores of ``serve --redis URL`` key under (None: their
    default)."""

    host: str = "127.0.0.1"
    port: int = 6379
    db: int = 0
    password: bytes | None = None
    prefix: str | None = None

    @classmethod
    def parse(cls, url: str) -> RedisAddress:
        parts = urlsplit(url)
        if parts.scheme != "redis":
            raise ValueError(f"not a redis:// URL: {url!r}")
        path = parts.path.strip("/")
        password = unquote(parts.password) if parts.password else None
        return cls(
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 6379,
            db=int(path) if path else 0,
            password=password.encode() if password else None,
            prefix=next(reversed(parse_qs(parts.query).get("prefix", [])), None),
        )


@contextlib.asynccontextmanager
async def guard(what: str, timeout: float) -> AsyncIterator[None]:
    """Run Redis calls so that any failure, or silence for ``timeout`` s, is
    ``StoreUnavailable``: the server answers ``storage_unavailable`` and carries on."""
    try:
        async with asyncio.timeout(timeout):
            yield
    except StoreUnavailable:
        raise
    except TimeoutError as exc:
        raise StoreUnavailable(f"{what}: Redis did not answer within {timeout} s") from exc
    except (asyncio_redis.Error, asyncio_redis.ErrorReply, OSError) as exc:
        raise StoreUnavailable(f"{what}: {type(exc).__name__}: {exc}") from exc


def definite(exc: BaseException, sent: bool) -> bool:
    """Whether a failed write is known not to have run: nothing was sent, or Redis
    answered with an error (a script that errs before writing writes nothing; ours
    check before they write). A timeout or a lost connection after sending is not:
    Redis may have run it, or may still (a frozen Redis thaws with it buffered)."""
    if not sent:
        return True
    cause = exc.__cause__ if isinstance(exc, StoreUnavailable) else exc
    if isinstance(cause, asyncio_redis.ConnectionLostError):  # a NotConnectedError
        return False
    return isinstance(
        cause,
        (
            asyncio_redis.ErrorReply,
            asyncio_redis.ScriptKilledError,
            asyncio_redis.NotConnectedError,
        ),
    )


class Link:
    """One TCP connection to Redis that reconnects by itself until closed.

    ``protocol`` is the asyncio-redis ``RedisProtocol`` (binary-safe: BytesEncoder, so
    every key and value is ``bytes``). It is the same object across reconnects, which
    is what lets a pub/sub link resubscribe its channels by itself.
    """

    def __init__(self, address: RedisAddress, *, check: bool = True) -> None:
        self._address = address
        self._check = check  # pub/sub links cannot PING/SELECT through asyncio-redis
        self._closing = False
        self._ready = False
        self._task: asyncio.Task[None] | None = None
        self.protocol: Any = asyncio_redis.RedisProtocol(
            password=address.password,
            db=address.db,
            encoder=BytesEncoder(),
            connection_lost_callback=self._lost,
            enable_typechecking=False,  # per-call argument checks cost CPU on every move
        )

    @property
    def ready(self) -> bool:
        """Connected, authenticated, on the right database."""
        return self._ready and bool(self.protocol.is_connected)

    async def connect(self, timeout: float) -> None:
        """The first connection: StoreUnavailable after ``timeout`` s, but keep trying
        in the background so the link comes up whenever Redis does."""
        try:
            async with asyncio.timeout(timeout):
                await self._connect_once()
        except (TimeoutError, OSError, asyncio_redis.Error, asyncio_redis.ErrorReply) as exc:
            self._start_reconnecting()
            raise StoreUnavailable(f"cannot reach Redis at {self._describe()}: {exc}") from exc

    async def _connect_once(self) -> None:
        loop = asyncio.get_running_loop()
        a = self._address
        await loop.create_connection(lambda: self.protocol, a.host, a.port)
        if self._closing:
            self._drop_transport()
            return
        if self._check:
            # Our own SELECT (or PING) is answered after the protocol's AUTH/SELECT,
            # so from here on every command runs authenticated on the right db.
            await (self.protocol.select(a.db) if a.db else self.protocol.ping())
        self._ready = True
        log.info("connected to Redis at %s", self._describe())

    def _lost(self) -> None:
        self._ready = False
        if not self._closing:
            log.warning("lost the connection to Redis at %s; reconnecting", self._describe())
            self._start_reconnecting()

    def _start_reconnecting(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        while not self._closing:
            try:
                await self._connect_once()
                return
            except (OSError, asyncio_redis.Error, asyncio_redis.ErrorReply):
                self._drop_transport()
                await asyncio.sleep(RETRY_S)

    def _drop_transport(self) -> None:
        transport = self.protocol.transport
        if transport is not None:
            transport.close()

    def _describe(self) -> str:
        return f"{self._address.host}:{self._address.port}/{self._address.db}"

    async def close(self) -> None:
        self._closing = True
        self._ready = False
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._drop_transport()


async def config_get(address: RedisAddress, names: Sequence[str], timeout: float) -> list[str]:
    """CONFIG GET each name, on a short-lived text connection: asyncio-redis cannot
    send CONFIG GET through a BytesEncoder protocol (it type-checks the name as str
    and then writes it unencoded)."""
    async with guard("config get", timeout):
        conn = await asyncio_redis.Connection.create(
            address.host,
            address.port,
            db=address.db,
            auto_reconnect=False,
            password=address.password.decode() if address.password else None,
        )
        try:
            return [str((await conn.config_get(name)).value) for name in names]
        finally:
            conn.close()


async def check_durability(address: RedisAddress, timeout: float) -> bool | None:
    """Whether Redis fsyncs every write before answering (None: cannot tell); warn
    when it does not, since acknowledged moves could then be lost in a crash."""
    try:
        aof, fsync = await config_get(address, ["appendonly", "appendfsync"], timeout)
    except StoreUnavailable as exc:  # CONFIG may be disabled on managed Redis
        log.warning("cannot check Redis persistence settings: %s", exc)
        return None
    if aof == "yes" and fsync == "always":
        return True
    log.warning(
        "Redis runs with appendonly=%s appendfsync=%s: acknowledged moves can be lost "
        "if Redis crashes; use --appendonly yes --appendfsync always",
        aof,
        fsync,
    )
    return False


class Script:
    """A Lua script run by SHA, reloaded when Redis has forgotten it."""

    def __init__(self, name: str, code: str) -> None:
        self.name = name
        self.code = code
        self.sha: str | None = None


class Pool:
    """A few Links used round-robin. asyncio-redis pipelines the commands of many
    tasks on one connection, so a handful of links carry a whole server."""

    def __init__(self, address: RedisAddress, size: int, timeout: float) -> None:
        self.address = address
        self.timeout = timeout  # per operation
        self._links = [Link(address) for _ in range(max(1, size))]
        self._next = 0

    @classmethod
    async def connect(
        cls,
        address: RedisAddress,
        *,
        size: int = 4,
        timeout: float = 5.0,
        connect_timeout: float = 10.0,
    ) -> Pool:
        """Connect every link; StoreUnavailable (and nothing left running) when Redis
        stays unreachable for ``connect_timeout`` s."""
        pool = cls(address, size, timeout)
        try:
            await asyncio.gather(*(link.connect(connect_timeout) for link in pool._links))
        except StoreUnavailable:
            await pool.close()
            raise
        return pool

    @property
    def connected(self) -> bool:
        """Some link is up (False once every link has seen its connection drop)."""
        return any(link.ready for link in self._links)

    def protocol(self) -> Any:
        """A ready connection's protocol, or StoreUnavailable while Redis is away."""
        n = len(self._links)
        for i in range(n):
            link = self._links[(self._next + i) % n]
            if link.ready and not link.protocol.in_use:
                self._next = (self._next + i + 1) % n
                return link.protocol
        raise StoreUnavailable(f"no connection to Redis at {self.address.host}:{self.address.port}")

    async def script(
        self,
        script: Script,
        keys: Sequence[bytes],
        args: Sequence[bytes],
        sent: list[bool] | None = None,
    ) -> Any:
        """EVALSHA ``script``; load it first if this Redis has not seen it (or has
        restarted since). Returns the script's decoded return value.

        ``sent``, when given, gets True appended once the call has gone to Redis,
        so that a caller can tell a write that never left (definite) from one whose
        reply was lost (see :func:`definite`)."""
        protocol = self.protocol()
        if script.sha is None:
            script.sha = await protocol.script_load(script.code)
        try:
            if sent is not None:
                sent.append(True)
            reply = await protocol.evalsha(script.sha, list(keys), list(args))
        except asyncio_redis.ScriptKilledError:
            # Most likely NOSCRIPT after a Redis restart (asyncio-redis cannot tell).
            script.sha = await protocol.script_load(script.code)
            reply = await protocol.evalsha(script.sha, list(keys), list(args))
        return await reply.return_value()

    def link(self, *, pubsub: bool = False) -> Link:
        """A new Link outside the pool, for blocking pops or a subscription (either
        would make a pooled connection unusable for anything else)."""
        return Link(self.address, check=not pubsub)

    async def close(self) -> None:
        await asyncio.gather(*(link.close() for link in self._links))
