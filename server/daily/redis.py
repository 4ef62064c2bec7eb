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

import json
from datetime import date

from ..store.redis_conn import Script
from ..store.redis_scripts import ScriptStore
from .schedule import LADDERS, DailyDeal, days_between

__all__ = ["RedisDaily"]

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


class RedisDaily(ScriptStore):
    """The :class:`~server.daily.store.DailyStore` on Redis; unusable
    (StoreUnavailable) until :meth:`connect`."""

    KEYS = "daily:"
    POOL = 1
    READS = frozenset((DAYS,))

    def key(self, day: date, ladder: str) -> bytes:
        return f"{self.base}{day.isoformat()}:{ladder}".encode()

    async def publish(self, deal: DailyDeal) -> DailyDeal:
        """Kept once: a day already published stays as it is, and the deal kept
        is the answer (a lost reply is run again, :meth:`ScriptStore._run`)."""
        kept = await self._run(
            PUBLISH, [self.key(deal.day, deal.ladder)], [json.dumps(deal.to_json()).encode()]
        )
        return DailyDeal.from_json(json.loads(kept))

    async def days(self, first: date, last: date) -> list[DailyDeal]:
        keys = [self.key(day, name) for day in days_between(first, last) for name in LADDERS]
        raw = await self._run(DAYS, keys, [])
        return [DailyDeal.from_json(d) for d in json.loads(raw)]
