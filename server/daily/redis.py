"""Published days in Redis, shared by every node: one string key per day and ladder.

``PREFIX daily:DAY:LADDER`` holds the deal's JSON (schedule.py
``DailyDeal.to_json``), with no expiry: a published day is kept for ever. The
one write is a script, ``SET … NX`` then ``GET``: two nodes publishing the same
day at once are both answered with the deal Redis kept first, and running the
script again (a reply lost with the connection) answers the same, so a lost
reply is settled by running it again. Durable as Redis is configured
(``appendfsync always`` for the promise, as the room store says).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from datetime import date
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..store.base import StoreUnavailable, StoreUncertain
from ..store.redis_conn import RETRY_S, Pool, RedisAddress, Script, definite, guard
from .schedule import LADDERS, DailyDeal, days_between

__all__ = ["RedisDaily"]

log = logging.getLogger(__name__)

# KEYS: the day's key. ARGV: the deal's JSON. Returns the JSON kept.
PUBLISH = Script(
    "daily_publish",
    """
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
""",
)

# KEYS: the keys of the days asked for. Returns one JSON array of those kept
# (one top-level string: nested replies are decoded wrongly by asyncio-redis).
DAYS = Script(
    "daily_days",
    """
local kept = {}
for _, key in ipairs(KEYS) do
  local v = redis.call('GET', key)
  if v then kept[#kept + 1] = v end
end
return '[' .. table.concat(kept, ',') .. ']'
""",
)


class RedisDaily:
    """The :class:`~server.daily.store.DailyStore` on Redis; unusable
    (StoreUnavailable) until :meth:`connect`."""

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
        self.prefix = prefix
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.settle_timeout = settle_timeout
        self._pool: Pool | None = None

    @classmethod
    async def from_url(cls, url: str, **options: Any) -> RedisDaily:
        """Connected to the Redis of ``serve --redis URL``, with its ``prefix``."""
        prefix = parse_qs(urlsplit(url).query).get("prefix")
        if prefix:
            options.setdefault("prefix", prefix[-1])
        store = cls(RedisAddress.parse(url), **options)
        await store.connect()
        return store

    async def connect(self) -> None:
        self._pool = await Pool.connect(
            self.address, size=1, timeout=self.timeout, connect_timeout=self.connect_timeout
        )

    def key(self, day: date, ladder: str) -> bytes:
        return f"{self.prefix}daily:{day.isoformat()}:{ladder}".encode()

    async def _send(self, what: str, script: Script, keys: Sequence[bytes], args: Sequence[bytes],
                    sent: list[bool]) -> Any:  # fmt: skip
        pool = self._pool
        if pool is None:
            raise StoreUnavailable(f"daily {what}: not connected to Redis")
        async with guard(f"daily {what}", self.timeout):
            return await pool.script(script, keys, args, sent)

    async def publish(self, deal: DailyDeal) -> DailyDeal:
        keys = [self.key(deal.day, deal.ladder)]
        args = [json.dumps(deal.to_json()).encode()]
        sent: list[bool] = []
        try:
            kept = await self._send("publish", PUBLISH, keys, args, sent)
        except StoreUnavailable as exc:
            if definite(exc, bool(sent)):
                raise
            kept = await self._settle(keys, args)
        return DailyDeal.from_json(json.loads(kept))

    async def _settle(self, keys: Sequence[bytes], args: Sequence[bytes]) -> Any:
        """A publish whose reply was lost: run it again until Redis answers; the
        answer is the deal kept, whichever run kept it."""
        log.warning("daily publish: the reply was lost; running it again to settle it")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settle_timeout
        while True:
            await asyncio.sleep(RETRY_S)
            try:
                return await self._send("publish", PUBLISH, keys, args, [])
            except StoreUnavailable as exc:
                if loop.time() >= deadline or self._pool is None:
                    raise StoreUncertain(f"daily publish: {exc}; it may have been done") from exc

    async def days(self, first: date, last: date) -> list[DailyDeal]:
        keys = [self.key(day, name) for day in days_between(first, last) for name in LADDERS]
        raw = await self._send("days", DAYS, keys, [], [])
        return [DailyDeal.from_json(d) for d in json.loads(raw)]

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()
