"""Daily results in Redis (``serve --redis``), shared by every node. Keys, under
``P`` = the prefix (``klondike:``) and ``daily:``, per daily ``D`` = ``DATE:LADDER``:

- ``P daily:claims:D`` (hash: player -> the room of their run),
- ``P daily:results:D`` (hash: player -> the result's JSON: its ranking fields),
- ``P daily:lines:D`` (hash: player -> their run's line, results.py
  ``line_bytes``), written by the script that keeps the result and read only
  by ghosts, comparisons and challenges, never by a page,
- ``P daily:board:D`` (sorted set: player by board score,
  protocol/placings.py ``board_score``: the rule of runs packed in one integer
  below 2**53, exact as Redis's double), so a rank is a ``ZCOUNT`` of the
  scores strictly below the player's and a page a ``ZRANGE``;
- ``P daily:ghosts:D`` (hash: player -> the JSON of their run's ghosts, kept
  the first time they are chosen),
- ``P daily:streaks:PLAYER`` (hash of counters and day numbers), and
  ``P daily:runs:PLAYER`` (set: the results hashes that hold a run of theirs);
- ``P daily:ranked_by_homes``, set once the results kept before runs not won
  were ranked by how far they got have their cards home, from their lines,
  and their board scores by the rule of runs (``_rank_by_homes``, on
  connecting; a node still running the version before would go on writing
  the old way: every node is upgraded at once).

Each step is one Lua script, so a claim and a result happen once whichever
node writes them, and a result folds into the streaks only when it is counted.
Every write answers alike when run twice (a claim returns the claim, a result
already kept returns 0), so a write whose reply was lost is sent again until
Redis answers, and that answer stands for both. Durable as the other Redis
stores are: with ``appendfsync always`` Redis answers once its file is fsynced.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import msgpack  # type: ignore[import-untyped]

from ..store.redis_conn import Script
from ..store.redis_scripts import ScriptStore
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

# Bringing results kept before runs not won were ranked by how far they got to
# the rule of runs (RedisResults._rank_by_homes). The results hashes, a SCAN
# step at a time: KEYS: the mark of it done; ARGV: cursor, pattern. Returns ""
# once marked, else JSON [cursor, [key, ...]].
_OLD_DAILIES = Script(
    "daily_old_dailies",
    """
if redis.call('EXISTS', KEYS[1]) == 1 then return '' end
return cjson.encode(redis.call('SCAN', ARGV[1], 'MATCH', ARGV[2], 'COUNT', 1000))
""",
)
# A daily's results kept without their cards home, each with its line. KEYS:
# results, lines. A msgpack array of [player, JSON, line or false].
_OLD_RUNS = Script(
    "daily_old_runs",
    """
local flat = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #flat, 2 do
  if not string.find(flat[i + 1], '"home":', 1, true) then
    out[#out + 1] = {flat[i], flat[i + 1], redis.call('HGET', KEYS[2], flat[i])}
  end
end
return cmsgpack.pack(out)
""",
)
# A result kept again with its cards home, and its place on the board: only if
# it is still the one read. KEYS: results, board. ARGV: player, the JSON read,
# the new JSON, board score. Returns 1 if replaced, 0 if it was already.
_RANKED_AGAIN = Script(
    "daily_ranked_again",
    """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
return 1
""",
)
_MARK = Script("daily_mark", "redis.call('SET', KEYS[1], '1') return 1")

_READS = (
    _KEPT_GHOSTS,
    _CLAIMED,
    _RANK,
    _PAGE,
    _SOME,
    _LINES,
    _COUNT,
    _STREAKS,
    _RUNS_OF,
    _OLD_DAILIES,
    _OLD_RUNS,
)


def _json(run: RunResult) -> bytes:
    return json.dumps(run.to_json(), separators=(",", ":")).encode()


class RedisResults(ScriptStore):
    """The :class:`~server.daily.results.ResultStore` on Redis; see the module
    docstring. Unusable (StoreUnavailable) until :meth:`connect`."""

    KEYS = "daily:"
    READS = frozenset(_READS)

    def _keys(self, date: str, ladder: str) -> tuple[bytes, bytes, bytes]:
        d = f"{date}:{ladder}"
        return tuple(f"{self.base}{what}:{d}".encode() for what in ("claims", "results", "board"))  # type: ignore[return-value]

    async def connect(self) -> None:
        await super().connect()
        try:
            await self._rank_by_homes()
        except BaseException:
            await self.close()
            raise

    async def _rank_by_homes(self) -> None:
        """Results kept before runs not won were ranked by how far they got
        gain their cards home and the moment the last went home, as their
        lines tell them, and their place on the board by the rule of runs now;
        then a mark says it is done, and later starts skip it. Every node may
        do it at once: each result is replaced only while it is the one read,
        with what its line makes of it, the same whoever computes it."""
        mark = f"{self.base}ranked_by_homes".encode()
        prefix = f"{self.base}results:"
        cursor = "0"
        while True:
            reply = await self._run(_OLD_DAILIES, [mark], [cursor.encode(), f"{prefix}*".encode()])
            if not reply:
                return  # marked: done before
            cursor, keys = json.loads(reply)
            for key in keys:
                await self._rank_daily_by_homes(key.removeprefix(prefix))
            if cursor == "0":
                break
        await self._run(_MARK, [mark], [])

    async def _rank_daily_by_homes(self, daily: str) -> None:
        results, board, lines = (
            f"{self.base}{what}:{daily}".encode() for what in ("results", "board", "lines")
        )
        reply = await self._run(_OLD_RUNS, [results, lines], [])
        for player, data, line in msgpack.unpackb(reply, raw=True):
            run = RunResult.from_json(json.loads(data))
            if not run.won and isinstance(line, bytes):
                run = run.with_line(line_from_bytes(line))
            args = [player, data, _json(run), str(run.board_score).encode()]
            await self._run(_RANKED_AGAIN, [results, board], args)

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
            _json(result),
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
