"""Challenges in Redis (``serve --redis``), shared by every node. Keys, under
``P`` = the prefix (``klondike:``) and ``challenges:``:

- ``P challenges:c:ID`` (a challenge's JSON), ``P challenges:by:PLAYER`` and
  ``P challenges:of:SOURCE`` (sets of the ids a player made, made of a deal);
- ``P challenges:takes:ID`` (hash: player -> their take's JSON, without its
  result), ``P challenges:results:ID`` (hash: player -> the take's result),
  ``P challenges:taken:PLAYER`` (set: the ids they took);
- ``P challenges:withdrawn`` (set: the ids of the challenges withdrawn, their
  challenger's account deleted).

Each write is one Lua script that answers alike when run twice (a challenge
is set once, a take claimed once, a result kept once and only from the room
the take names), so a write whose reply was lost is run again until Redis
answers, as the daily results' store does (server/daily/redis_results.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any

from ..daily.results import RunResult
from ..store.base import StoreUnavailable, StoreUncertain
from ..store.redis_conn import RETRY_S, Pool, RedisAddress, Script, definite, guard
from .model import Challenge, Take

__all__ = ["RedisChallenges"]

log = logging.getLogger(__name__)

# KEYS: the challenge, by, of. ARGV: id, JSON.
_ADD = Script(
    "challenge_add",
    """
redis.call('SETNX', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
return 1
""",
)

# The take kept, or this one, taken now. KEYS: takes, taken, results. ARGV:
# player, JSON, id. Returns JSON [take, result or false].
_TAKE = Script(
    "challenge_take",
    """
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return cjson.encode({redis.call('HGET', KEYS[1], ARGV[1]), redis.call('HGET', KEYS[3], ARGV[1])})
""",
)

# Keep a take's result once, from the take's room. KEYS: takes, results. ARGV:
# player, room, JSON. Returns 1 if kept now.
_RESULT = Script(
    "challenge_result",
    """
local take = redis.call('HGET', KEYS[1], ARGV[1])
if not take or cjson.decode(take)['code'] ~= ARGV[2] then return 0 end
return redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[3])
""",
)

# Withdraw every challenge a player made: each removed (and from the set of its
# source's), its id kept as withdrawn. KEYS: by, withdrawn. ARGV: the key prefix
# of a challenge, of a source's set. Returns 1.
_WITHDRAW = Script(
    "challenge_withdraw",
    """
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local c = redis.call('GET', ARGV[1] .. id)
  if c then
    redis.call('SREM', ARGV[2] .. cjson.decode(c)['source'], id)
    redis.call('DEL', ARGV[1] .. id)
  end
  redis.call('SADD', KEYS[2], id)
end
redis.call('DEL', KEYS[1])
return 1
""",
)
_WITHDRAWN = Script("challenge_withdrawn", "return redis.call('SISMEMBER', KEYS[1], ARGV[1])")

# Reads. The challenges of a set of ids: KEYS: the set; ARGV: the key prefix of
# a challenge. A challenge's takes: KEYS: takes, results. A player's takes:
# KEYS: taken; ARGV: the prefix of takes and results keys, the player.
_GET = Script("challenge_get", "return redis.call('GET', KEYS[1]) or ''")
_SET = Script(
    "challenge_set",
    """
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local c = redis.call('GET', ARGV[1] .. id)
  if c then out[#out + 1] = c end
end
return cjson.encode(out)
""",
)
_TAKES_OF = Script(
    "challenge_takes_of",
    """
local out = {}
local takes = redis.call('HGETALL', KEYS[1])
for i = 1, #takes, 2 do
  out[#out + 1] = {takes[i + 1], redis.call('HGET', KEYS[2], takes[i])}
end
return cjson.encode(out)
""",
)
_TAKEN_BY = Script(
    "challenge_taken_by",
    """
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local take = redis.call('HGET', ARGV[1] .. 'takes:' .. id, ARGV[2])
  if take then
    out[#out + 1] = {take, redis.call('HGET', ARGV[1] .. 'results:' .. id, ARGV[2])}
  end
end
return cjson.encode(out)
""",
)

_READS = (_GET, _SET, _TAKES_OF, _TAKEN_BY, _WITHDRAWN)


def _take(take: str, result: Any) -> Take:
    data = json.loads(take)
    run = RunResult.from_json(json.loads(result)) if isinstance(result, str) else None
    return Take(data["challenge"], data["player"], data["code"], data["created"], run)


class RedisChallenges:
    """The :class:`~server.challenges.store.ChallengeStore` on Redis; see the
    module docstring. Unusable (StoreUnavailable) until :meth:`connect`."""

    def __init__(
        self,
        address: RedisAddress,
        *,
        prefix: str = "klondike:",
        timeout: float = 5.0,
        settle_timeout: float = 10.0,
    ) -> None:
        self.address = address
        self.base = f"{prefix}challenges:"
        self.timeout = timeout
        self.settle_timeout = settle_timeout
        self._pool: Pool | None = None

    @classmethod
    async def from_url(cls, url: str, **options: Any) -> RedisChallenges:
        """Connected to the Redis of ``serve --redis URL`` (its ``prefix`` too)."""
        address = RedisAddress.parse(url)
        if address.prefix:
            options.setdefault("prefix", address.prefix)
        store = cls(address, **options)
        await store.connect()
        return store

    async def connect(self, connect_timeout: float = 10.0) -> None:
        self._pool = await Pool.connect(
            self.address, size=2, timeout=self.timeout, connect_timeout=connect_timeout
        )

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    def _key(self, *parts: str) -> bytes:
        return (self.base + ":".join(parts)).encode()

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
        Redis answers (each answers alike when run twice), or StoreUncertain."""
        sent: list[bool] = []
        try:
            return await self._send(script, keys, args, sent)
        except StoreUnavailable as exc:
            if script in _READS or definite(exc, bool(sent)):
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

    async def add(self, challenge: Challenge) -> None:
        c = challenge
        keys = [self._key("c", c.id), self._key("by", c.challenger), self._key("of", c.source)]
        await self._run(_ADD, keys, [c.id.encode(), json.dumps(c.to_json()).encode()])

    async def get(self, challenge: str) -> Challenge | None:
        reply = await self._run(_GET, [self._key("c", challenge)], [])
        text = reply.decode() if isinstance(reply, bytes) else str(reply)
        return Challenge.from_json(json.loads(text)) if text else None

    async def take(self, challenge: str, player: str, code: str, now: float) -> Take:
        new = json.dumps({"challenge": challenge, "player": player, "code": code, "created": now})
        keys = [
            self._key("takes", challenge),
            self._key("taken", player),
            self._key("results", challenge),
        ]
        reply = await self._run(_TAKE, keys, [player.encode(), new.encode(), challenge.encode()])
        take, result = json.loads(reply)
        return _take(take, result)

    async def add_result(self, challenge: str, result: RunResult) -> bool:
        keys = [self._key("takes", challenge), self._key("results", challenge)]
        data = json.dumps(result.to_json()).encode()
        args = [result.player.encode(), result.code.encode(), data]
        return bool(await self._run(_RESULT, keys, args))

    async def _set(self, key: bytes) -> list[Challenge]:
        reply = await self._run(_SET, [key], [self._key("c", "")])
        return [Challenge.from_json(json.loads(c)) for c in json.loads(reply)]

    async def made_by(self, player: str) -> list[Challenge]:
        return await self._set(self._key("by", player))

    async def made_from(self, source: str) -> list[Challenge]:
        return await self._set(self._key("of", source))

    async def takes_of(self, challenge: str) -> list[Take]:
        keys = [self._key("takes", challenge), self._key("results", challenge)]
        return [_take(t, r) for t, r in json.loads(await self._run(_TAKES_OF, keys, []))]

    async def taken_by(self, player: str) -> list[Take]:
        args = [self.base.encode(), player.encode()]
        reply = await self._run(_TAKEN_BY, [self._key("taken", player)], args)
        return [_take(t, r) for t, r in json.loads(reply)]

    async def withdraw(self, challenger: str) -> None:
        keys = [self._key("by", challenger), self._key("withdrawn")]
        await self._run(_WITHDRAW, keys, [self._key("c", ""), self._key("of", "")])

    async def withdrawn(self, challenge: str) -> bool:
        reply = await self._run(_WITHDRAWN, [self._key("withdrawn")], [challenge.encode()])
        return bool(reply)
