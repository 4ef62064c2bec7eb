"""Daily results in Redis (``serve --redis``), shared by every node. Keys, under
``P`` = the prefix (``klondike:``) and ``daily:``, per daily ``D`` = ``DATE:LADDER``:

- ``P daily:claims:D`` (hash: player -> the room of their run),
- ``P daily:results:D`` (hash: player -> the result's JSON: its ranking fields),
- ``P daily:lines:D`` (hash: player -> their run's line, results.py
  ``line_bytes``), written by the script that keeps the result and read only
  by ghosts, comparisons and challenges, never by a page,
- ``P daily:board:D`` (sorted set: player by board score,
  protocol/daily_runs.py ``board_score``: the win, the time, the moves packed in
  one integer below 2**48, exact as Redis's double), so a rank is a ``ZCOUNT``
  of the scores strictly below the player's and a page a ``ZRANGE``;
- ``P daily:ghosts:D`` (hash: player -> the JSON of their run's ghosts, kept
  the first time they are chosen),
- ``P daily:streaks:PLAYER`` (hash of counters and day numbers), and
  ``P daily:runs:PLAYER`` (set: the results hashes that hold a run of theirs).

Each step is one Lua script, so a claim and a result happen once whichever
node writes them, and a result folds into the streaks only when it is counted.
Every write answers alike when run twice (a claim returns the claim, a result
already kept returns 0), so a write whose reply was lost is sent again until
Redis answers, and that answer stands for both. Durable as the other Redis
stores are: with ``appendfsync always`` Redis answers once its file is fsynced.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any

import msgpack  # type: ignore[import-untyped]

from ..store.base import StoreUnavailable, StoreUncertain
from ..store.redis_conn import RETRY_S, Pool, RedisAddress, Script, definite, guard
from .results import (
    GhostChoice,
    RankedRun,
    RunClaim,
    RunResult,
    Streaks,
    TimedEntry,
    line_bytes,
    line_from_bytes,
    ranked,
)

__all__ = ["RedisResults"]

log = logging.getLogger(__name__)

# The claim, or a new one; and whether a result is kept. KEYS: claims, results.
# ARGV: player, room. Returns "code 0|1".
_CLAIM = Script(
    "daily_claim",
    """
local code = redis.call('HGET', KEYS[1], ARGV[1])
if not code then
  code = ARGV[2]
  redis.call('HSET', KEYS[1], ARGV[1], code)
end
return code .. ' ' .. redis.call('HEXISTS', KEYS[2], ARGV[1])
""",
)

# Read a claim. KEYS: claims, results. ARGV: player. Returns "" or "code 0|1".
_CLAIMED = Script(
    "daily_claimed",
    """
local code = redis.call('HGET', KEYS[1], ARGV[1])
if not code then return '' end
return code .. ' ' .. redis.call('HEXISTS', KEYS[2], ARGV[1])
""",
)

# A run's ghosts: those kept, or these, kept now. KEYS: ghosts. ARGV: player,
# JSON. Returns the JSON kept.
_GHOSTS = Script(
    "daily_ghosts",
    """
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
return redis.call('HGET', KEYS[1], ARGV[1])
""",
)
_KEPT_GHOSTS = Script("daily_kept_ghosts", "return redis.call('HGET', KEYS[1], ARGV[1]) or ''")

# Keep a result once, with its place on the board, if its room is the one the
# player's claim names (a room made by an attempt that lost its claim, or never
# claimed, counts for nothing), with its line, and fold it into the player's
# streaks; the player's set of their dailies' result hashes gains this one.
# KEYS: results, board, claims, streaks, the player's runs, lines. ARGV: player,
# JSON, board score, UTC day number, won (1/0), room, line. Returns 1 if
# counted now, 0 if kept already.
_ADD = Script(
    "daily_add",
    """
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[6] then return 0 end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('HSET', KEYS[6], ARGV[1], ARGV[7])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('SADD', KEYS[5], KEYS[1])
local day = tonumber(ARGV[4])
local function grow(count_field, day_field, best_field)
  local last = tonumber(redis.call('HGET', KEYS[4], day_field) or '-1')
  if day <= last then return end
  local n = 1
  if day == last + 1 then n = tonumber(redis.call('HGET', KEYS[4], count_field) or '0') + 1 end
  redis.call('HSET', KEYS[4], count_field, n, day_field, day)
  if n > tonumber(redis.call('HGET', KEYS[4], best_field) or '0') then
    redis.call('HSET', KEYS[4], best_field, n)
  end
end
grow('played', 'played_day', 'best_played')
if ARGV[5] == '1' then grow('won', 'won_day', 'best_won') end
return 1
""",
)

# A player's result and the count of runs strictly ahead. KEYS: results, board.
# ARGV: player. Returns "" or "AHEAD JSON".
_RANK = Script(
    "daily_rank",
    """
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not score then return '' end
local ahead = redis.call('ZCOUNT', KEYS[2], '-inf', '(' .. score)
return ahead .. ' ' .. redis.call('HGET', KEYS[1], ARGV[1])
""",
)

# A page: the runs at positions ARGV[1] .. ARGV[2], and how many are strictly
# ahead of the first. KEYS: results, board. Returns JSON [ahead, [json, ...]].
_PAGE = Script(
    "daily_page",
    """
local players = redis.call('ZRANGE', KEYS[2], ARGV[1], ARGV[2])
if #players == 0 then return '[0, []]' end
local score = redis.call('ZSCORE', KEYS[2], players[1])
local ahead = redis.call('ZCOUNT', KEYS[2], '-inf', '(' .. score)
local runs = redis.call('HMGET', KEYS[1], unpack(players))
return cjson.encode({ahead, runs})
""",
)

# Reads: some players' results (KEYS: results; ARGV: players; JSON list, false
# for none), the runs counted (KEYS: results), a player's streaks (KEYS:
# streaks; JSON of the hash as a flat list).
_SOME = Script("daily_some", "return cjson.encode(redis.call('HMGET', KEYS[1], unpack(ARGV)))")
# Some players' lines: KEYS: lines; ARGV: players. A msgpack array (binary
# strings, false for none).
_LINES = Script("daily_lines", "return cmsgpack.pack(redis.call('HMGET', KEYS[1], unpack(ARGV)))")
_COUNT = Script("daily_count", "return redis.call('HLEN', KEYS[1])")
_STREAKS = Script("daily_streaks", "return cjson.encode(redis.call('HGETALL', KEYS[1]))")
# A player's runs: KEYS: their set of result hashes; ARGV: the player. JSON list.
_RUNS_OF = Script(
    "daily_runs_of",
    """
local out = {}
for _, results in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local run = redis.call('HGET', results, ARGV[1])
  if run then out[#out + 1] = run end
end
return cjson.encode(out)
""",
)

_READS = (_KEPT_GHOSTS, _CLAIMED, _RANK, _PAGE, _SOME, _LINES, _COUNT, _STREAKS, _RUNS_OF)


class RedisResults:
    """The :class:`~server.daily.results.ResultStore` on Redis; see the module
    docstring. Unusable (StoreUnavailable) until :meth:`connect`."""

    def __init__(
        self,
        address: RedisAddress,
        *,
        prefix: str = "klondike:",
        timeout: float = 5.0,
        settle_timeout: float = 10.0,
    ) -> None:
        self.address = address
        self.base = f"{prefix}daily:"
        self.timeout = timeout
        self.settle_timeout = settle_timeout
        self._pool: Pool | None = None

    @classmethod
    async def from_url(cls, url: str, **options: Any) -> RedisResults:
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

    def _keys(self, date: str, ladder: str) -> tuple[bytes, bytes, bytes]:
        d = f"{date}:{ladder}"
        return tuple(f"{self.base}{what}:{d}".encode() for what in ("claims", "results", "board"))  # type: ignore[return-value]

    async def _send(
        self, script: Script, keys: Sequence[bytes], args: Sequence[bytes], sent: list[bool]
    ) -> Any:
        pool = self._pool
        if pool is None:
            raise StoreUnavailable(f"daily {script.name}: not connected to Redis")
        async with guard(f"daily {script.name}", self.timeout):
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
        log.warning("daily %s: the reply was lost; running it again to settle it", script.name)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settle_timeout
        while True:
            await asyncio.sleep(RETRY_S)
            try:
                return await self._send(script, keys, args, [])
            except StoreUnavailable as exc:
                if loop.time() >= deadline or self._pool is None:
                    raise StoreUncertain(f"daily {script.name}: {exc}; it may be done") from first

    @staticmethod
    def _claim(reply: Any) -> RunClaim | None:
        text = reply.decode() if isinstance(reply, bytes) else str(reply)
        if not text:
            return None
        code, over = text.rsplit(" ", 1)
        return RunClaim(code, over == "1")

    async def claim(self, date: str, ladder: str, player: str, code: str) -> RunClaim:
        claims, results, _ = self._keys(date, ladder)
        got = self._claim(
            await self._run(_CLAIM, [claims, results], [player.encode(), code.encode()])
        )
        assert got is not None
        return got

    async def claimed(self, date: str, ladder: str, player: str) -> RunClaim | None:
        claims, results, _ = self._keys(date, ladder)
        return self._claim(await self._run(_CLAIMED, [claims, results], [player.encode()]))

    def _ghosts_key(self, date: str, ladder: str) -> bytes:
        return f"{self.base}ghosts:{date}:{ladder}".encode()

    @staticmethod
    def _choice(reply: Any) -> GhostChoice | None:
        text = reply.decode() if isinstance(reply, bytes) else str(reply)
        return [(kind, player) for kind, player in json.loads(text)] if text else None

    async def keep_ghosts(
        self, date: str, ladder: str, player: str, ghosts: GhostChoice
    ) -> GhostChoice:
        args = [player.encode(), json.dumps(ghosts).encode()]
        kept = self._choice(await self._run(_GHOSTS, [self._ghosts_key(date, ladder)], args))
        return kept or []

    async def kept_ghosts(self, date: str, ladder: str, player: str) -> GhostChoice | None:
        key = self._ghosts_key(date, ladder)
        return self._choice(await self._run(_KEPT_GHOSTS, [key], [player.encode()]))

    def _lines_key(self, date: str, ladder: str) -> bytes:
        return f"{self.base}lines:{date}:{ladder}".encode()

    async def add_result(self, result: RunResult, line: Sequence[TimedEntry]) -> bool:
        claims, results, board = self._keys(result.date, result.ladder)
        streaks = f"{self.base}streaks:{result.player}".encode()
        runs = f"{self.base}runs:{result.player}".encode()
        lines = self._lines_key(result.date, result.ladder)
        args = [
            result.player.encode(),
            json.dumps(result.to_json(), separators=(",", ":")).encode(),
            str(result.board_score).encode(),
            str(result.day).encode(),
            b"1" if result.won else b"0",
            result.code.encode(),
            line_bytes(line),
        ]
        keys = [results, board, claims, streaks, runs, lines]
        return bool(await self._run(_ADD, keys, args))

    async def rank(self, date: str, ladder: str, player: str) -> RankedRun | None:
        _, results, board = self._keys(date, ladder)
        reply = await self._run(_RANK, [results, board], [player.encode()])
        text = reply.decode() if isinstance(reply, bytes) else str(reply)
        if not text:
            return None
        ahead, data = text.split(" ", 1)
        return 1 + int(ahead), RunResult.from_json(json.loads(data))

    async def board(self, date: str, ladder: str, start: int, limit: int) -> list[RankedRun]:
        if limit <= 0:
            return []
        _, results, board = self._keys(date, ladder)
        args = [str(start).encode(), str(start + limit - 1).encode()]
        reply = await self._run(_PAGE, [results, board], args)
        ahead, rows = json.loads(reply)
        runs = [RunResult.from_json(json.loads(r)) for r in rows if isinstance(r, str)]
        return ranked(runs, 1 + int(ahead), start) if runs else []

    async def results_of(self, date: str, ladder: str, players: Sequence[str]) -> list[RunResult]:
        if not players:
            return []
        _, results, _ = self._keys(date, ladder)
        reply = await self._run(_SOME, [results], [p.encode() for p in players])
        return [RunResult.from_json(json.loads(r)) for r in json.loads(reply) if isinstance(r, str)]

    async def lines(
        self, date: str, ladder: str, players: Sequence[str]
    ) -> dict[str, list[TimedEntry]]:
        if not players:
            return {}
        key = self._lines_key(date, ladder)
        reply = await self._run(_LINES, [key], [p.encode() for p in players])
        found = msgpack.unpackb(reply, raw=True)
        return {
            p: line_from_bytes(data)
            for p, data in zip(players, found, strict=True)
            if isinstance(data, bytes)
        }

    async def runs_of(self, player: str) -> list[RunResult]:
        key = f"{self.base}runs:{player}".encode()
        rows = json.loads(await self._run(_RUNS_OF, [key], [player.encode()]))
        return [RunResult.from_json(json.loads(r)) for r in rows]

    async def count(self, date: str, ladder: str) -> int:
        _, results, _ = self._keys(date, ladder)
        return int(await self._run(_COUNT, [results], []))

    async def streaks(self, player: str) -> Streaks:
        key = f"{self.base}streaks:{player}".encode()
        flat = json.loads(await self._run(_STREAKS, [key], []))
        got = dict(zip(flat[::2], flat[1::2], strict=True)) if flat else {}
        return Streaks(
            int(got.get("played", 0)),
            int(got.get("played_day", -1)),
            int(got.get("won", 0)),
            int(got.get("won_day", -1)),
            int(got.get("best_played", 0)),
            int(got.get("best_won", 0)),
        )
