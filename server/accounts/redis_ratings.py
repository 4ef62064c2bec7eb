"""The Redis account store's ratings: key names and Lua scripts.

Keys under the accounts' base (``P``): ``P ratings:LADDER`` (hash: player ->
the rating as JSON), ``P ratings:LADDER:table`` (sorted set: player by minus
the shown rating, so ties list by player id, as every store lists them),
``P ratings:LADDER:log`` (list: the ladder's rated rounds as JSON, in the
order applied), ``P ratings:LADDER:chart:PLAYER`` (list: the player's chart
points) and ``P rated:KEY`` (a logged round by its key: what makes applying
it twice a no-op).

Applying a round is one script: it checks the key is not logged and that every
player's count of rated rounds is the one the new ratings were computed from,
then writes them all, so two nodes rating rounds with a player in common cannot
lose either round. Rerun after a lost reply, it answers ``already``: the round
is applied once either way.
"""

from __future__ import annotations

from ..store.redis_conn import Script


def ratings(base: str, ladder: str) -> bytes:
    return f"{base}ratings:{ladder}".encode()


def table(base: str, ladder: str) -> bytes:
    return f"{base}ratings:{ladder}:table".encode()


def log(base: str, ladder: str) -> bytes:
    return f"{base}ratings:{ladder}:log".encode()


def chart(base: str, ladder: str, player: str) -> bytes:
    return f"{base}ratings:{ladder}:chart:{player}".encode()


def rated(base: str, key: str) -> bytes:
    return f"{base}rated:{key}".encode()


# KEYS: rated:KEY, ratings, table, log, the deleted players, then each player's
# chart. ARGV: the round's JSON, then per player: id, rounds seen, rating JSON,
# minus shown, chart point JSON. Answers new, already or stale. A deleted
# account's player gets no rating nor chart.
APPLY = Script(
    "ratings_apply",
    """
if redis.call('EXISTS', KEYS[1]) == 1 then return 'already' end
local n = (#ARGV - 1) / 5
for i = 0, n - 1 do
  local kept = redis.call('HGET', KEYS[2], ARGV[2 + 5 * i])
  local rounds = 0
  if kept then rounds = cjson.decode(kept)['rounds'] end
  if rounds ~= tonumber(ARGV[3 + 5 * i]) then return 'stale' end
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[4], ARGV[1])
for i = 0, n - 1 do
  local p = ARGV[2 + 5 * i]
  if redis.call('SISMEMBER', KEYS[5], p) == 0 then
    redis.call('HSET', KEYS[2], p, ARGV[4 + 5 * i])
    redis.call('ZADD', KEYS[3], ARGV[5 + 5 * i], p)
    redis.call('RPUSH', KEYS[6 + i], ARGV[6 + 5 * i])
  end
end
return 'new'
""",
)

# KEYS: ratings, table, log. ARGV: base, ladder, the number of the log's round
# keys as the caller read it, those keys, the number of rounds, their JSON and
# keys (pairs), then per player: id, rating JSON, minus shown, the number of
# chart points, the points' JSON. Forgets the ladder, writes it anew (1); 0,
# writing nothing, when the log is not as read (a round applied meanwhile).
REPLACE = Script(
    "ratings_replace",
    """
local base, ladder = ARGV[1], ARGV[2]
local logged = redis.call('LRANGE', KEYS[3], 0, -1)
local nread = tonumber(ARGV[3])
if #logged ~= nread then return 0 end
for j, entry in ipairs(logged) do
  if cjson.decode(entry)['key'] ~= ARGV[3 + j] then return 0 end
end
for _, entry in ipairs(logged) do
  redis.call('DEL', base .. 'rated:' .. cjson.decode(entry)['key'])
end
for _, p in ipairs(redis.call('HKEYS', KEYS[1])) do
  redis.call('DEL', base .. 'ratings:' .. ladder .. ':chart:' .. p)
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
local i = 4 + nread
local rounds = tonumber(ARGV[i])
for _ = 1, rounds do
  redis.call('RPUSH', KEYS[3], ARGV[i + 1])
  redis.call('SET', base .. 'rated:' .. ARGV[i + 2], ARGV[i + 1])
  i = i + 2
end
i = i + 1
local deleted = base .. 'deleted'
while i <= #ARGV do
  local p = ARGV[i]
  local points = tonumber(ARGV[i + 3])
  if redis.call('SISMEMBER', deleted, p) == 0 then
    redis.call('HSET', KEYS[1], p, ARGV[i + 1])
    redis.call('ZADD', KEYS[2], ARGV[i + 2], p)
    local key = base .. 'ratings:' .. ladder .. ':chart:' .. p
    for j = 1, points do redis.call('RPUSH', key, ARGV[i + 3 + j]) end
  end
  i = i + 4 + points
end
return 1
""",
)

# KEYS: ratings. ARGV: players. Answers {player: rating JSON} as JSON.
READ_RATINGS = Script(
    "ratings_read",
    """
local out = {}
for _, p in ipairs(ARGV) do
  local kept = redis.call('HGET', KEYS[1], p)
  if kept then out[p] = kept end
end
if next(out) == nil then return '{}' end
return cjson.encode(out)
""",
)

# KEYS: table, ratings. ARGV: start, stop. Answers [[player, rating JSON], ...].
TABLE = Script(
    "ratings_table",
    """
local out = {}
for _, p in ipairs(redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2])) do
  out[#out + 1] = {p, redis.call('HGET', KEYS[2], p)}
end
if #out == 0 then return '[]' end
return cjson.encode(out)
""",
)

# KEYS: table. ARGV: player. Answers the rank, or -1.
POSITION = Script(
    "ratings_position",
    """
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
if rank then return rank end
return -1
""",
)

# KEYS: a list. Answers its entries as a JSON list of strings.
LIST = Script(
    "ratings_list",
    """
local items = redis.call('LRANGE', KEYS[1], 0, -1)
if #items == 0 then return '[]' end
return cjson.encode(items)
""",
)

READS = frozenset({READ_RATINGS, TABLE, POSITION, LIST})
REPEATABLE = frozenset({REPLACE, APPLY})
"""``APPLY`` run again after a lost reply answers ``already`` where the first
run answered ``new``: either way the round is applied once, and whoever applies
it takes the round's figures from the charts (server/ratings/keeping.py)."""
