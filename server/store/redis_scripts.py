"""A store whose every step is one Lua script on Redis: the daily deals, the
daily results and the challenges are each such a store.

What they share is how a step is sent and what a lost reply means. A step is one
script, so it is done whole or not at all; a read whose reply was lost is simply
refused (StoreUnavailable: nothing changed). A write whose reply was lost may or
may not have been done, so it is run again until Redis answers: each script
answers alike when run twice (it finds its own earlier work and says so), and the
answer is the write's, whichever run did it. Should Redis stay silent past
``settle_timeout``, the step is StoreUncertain, as the room store's are.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, ClassVar, Self

from .base import StoreUnavailable, StoreUncertain
from .redis_conn import RETRY_S, Pool, RedisAddress, Script, definite, guard

__all__ = ["ScriptStore"]

log = logging.getLogger(__name__)


class ScriptStore:
    """Unusable (StoreUnavailable) until :meth:`connect`. A subclass names its
    keys' part (``KEYS``: its keys are ``prefix + KEYS + …``, :attr:`base`), its
    pool's size and the scripts that only read (``READS``)."""

    KEYS: ClassVar[str]
    POOL: ClassVar[int] = 2
    READS: ClassVar[frozenset[Script]] = frozenset()

    def __init__(
        self,
        address: RedisAddress,
        *,
        prefix: str = "klondike:",
        timeout: float = 5.0,
        connect_timeout: float = 10.0,
        settle_timeout: float = 10.0,
    ) -> None:
        self.address = address
        self.base = f"{prefix}{self.KEYS}"
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.settle_timeout = settle_timeout
        self._pool: Pool | None = None

    @classmethod
    async def from_url(cls, url: str, **options: Any) -> Self:
        """Connected to the Redis of ``serve --redis URL``, with its ``prefix``."""
        address = RedisAddress.parse(url)
        if address.prefix:
            options.setdefault("prefix", address.prefix)
        store = cls(address, **options)
        await store.connect()
        return store

    async def connect(self) -> None:
        self._pool = await Pool.connect(
            self.address, size=self.POOL, timeout=self.timeout, connect_timeout=self.connect_timeout
        )

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def _send(
        self, script: Script, keys: Sequence[bytes], args: Sequence[bytes], sent: list[bool]
    ) -> Any:
        pool = self._pool
        if pool is None:
            raise StoreUnavailable(f"{script.name}: not connected to Redis")
        async with guard(script.name, self.timeout):
            return await pool.script(script, keys, args, sent)

    async def _run(self, script: Script, keys: Sequence[bytes], args: Sequence[bytes]) -> Any:
        """The script's answer; a write whose reply was lost is run again until
        Redis answers, or StoreUncertain (see the module docstring)."""
        sent: list[bool] = []
        try:
            return await self._send(script, keys, args, sent)
        except StoreUnavailable as exc:
            if script in self.READS or definite(exc, bool(sent)):
                raise
            first = exc
        log.warning("%s: the reply was lost; running it again to settle it", script.name)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settle_timeout
        while True:
            await asyncio.sleep(RETRY_S)
            try:
                return await self._send(script, keys, args, [])
            except StoreUnavailable as exc:
                if loop.time() >= deadline or self._pool is None:
                    raise StoreUncertain(f"{script.name}: {exc}; it may be done") from first
