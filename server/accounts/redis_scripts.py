"""The Redis account store's key names and Lua scripts (server/accounts/redis.py).

Each script is one atomic step of the store: Redis runs it with nothing else in
between, so whatever it checks still holds when it writes. A script checks
before it writes, so one that refuses has written nothing. Scripts return one
string (JSON from cjson, whose strings are the fields as stored) or an integer:
asyncio-redis decodes nested strings wrongly (server/store/redis_conn.py).

The scripts that reach keys named by what they read (deleting an account,
listing its devices) build those names from the base passed in, with the same
words as :class:`AccountKeys`.

Long because it is mostly Lua: one script per atomic step, each with the
comment that says what it is given and what it answers.
"""

from __future__ import annotations

from ..store.redis_conn import Script
from . import redis_ratings as ratings


class AccountKeys:
    """Key names, in one place so the store and the tests agree (the scripts that
    build names from what they read use the same words)."""

    def __init__(self, prefix: str = "klondike:") -> None:
        self.base = f"{prefix}accounts:"
        self.deleted = self._key("deleted")

    def _key(self, name: str) -> bytes:
        return (self.base + name).encode()

    def account(self, account: str) -> bytes:
        return self._key(f"account:{account}")

    def held(self, account: str, what: str) -> bytes:
        """The set (or, for ``friends``, hash) of what an account holds."""
        return self._key(f"account:{account}:{what}")

    def handle(self, key: str) -> bytes:
        return self._key(f"handle:{key}")

    def player(self, player: str) -> bytes:
        return self._key(f"player:{player}")

    def device(self, device: str) -> bytes:
        return self._key(f"device:{device}")

    def token(self, token_hash: str) -> bytes:
        return self._key(f"token:{token_hash}")

    def link(self, code_hash: str) -> bytes:
        return self._key(f"link:{code_hash}")

    def recovery(self, code_hash: str) -> bytes:
        return self._key(f"recovery:{code_hash}")

    def passkey(self, credential_id: bytes) -> bytes:
        return self._key(f"passkey:{credential_id.hex()}")

    def friend_link(self, link_hash: str) -> bytes:
        return self._key(f"friend-link:{link_hash}")

    def history(self, player: str, what: str) -> bytes:
        """``deals``, ``deal``, ``rounds``, ``round``, ``ladders`` or ``totals:``."""
        return self._key(f"history:{player}:{what}")

    def replay(self, key: str) -> bytes:
        return self._key(f"replay:{key}")


# Shared by the scripts that read: a hash as a table (nil when there is none).
_RECORD_LUA = """
local function record(key)
  local flat = redis.call('HGETALL', key)
  if #flat == 0 then return nil end
  local t = {}
  for i = 1, #flat, 2 do t[flat[i]] = flat[i + 1] end
  return t
end
"""

# KEYS: a record. The record as JSON, or nil.
READ = Script("accounts_read", _RECORD_LUA + "return cjson.encode(record(KEYS[1]) or false)")

# KEYS: an index (handle, player, token). ARGV: the name of records before the id.
# The record the index names, or nil.
READ_INDEXED = Script(
    "accounts_read_indexed",
    _RECORD_LUA
    + """
local id = redis.call('GET', KEYS[1])
if not id then return cjson.encode(false) end
return cjson.encode(record(ARGV[1] .. id) or false)
""",
)

# KEYS: player indexes. ARGV: the name of records before the id, then the
# players. {player: handle} of those with an account, as JSON.
HANDLES = Script(
    "accounts_handles",
    """
local out = {}
for i, key in ipairs(KEYS) do
  local id = redis.call('GET', key)
  if id then
    local handle = redis.call('HGET', ARGV[1] .. id, 'handle')
    if handle then out[ARGV[i + 1]] = handle end
  end
end
if next(out) == nil then return '{}' end
return cjson.encode(out)
""",
)

# KEYS: accounts. ARGV: their ids. {account: player} of those that exist, as JSON.
PLAYERS = Script(
    "accounts_players",
    """
local out = {}
for i, key in ipairs(KEYS) do
  local player = redis.call('HGET', key, 'player')
  if player then out[ARGV[i]] = player end
end
if next(out) == nil then return '{}' end
return cjson.encode(out)
""",
)

# ARGV: a set of ids, the name of records before the id. Those records, as a list.
READ_MEMBERS = Script(
    "accounts_read_members",
    _RECORD_LUA
    + """
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', ARGV[1])) do
  local r = record(ARGV[2] .. id)
  if r then out[#out + 1] = r end
end
if #out == 0 then return '[]' end
return cjson.encode(out)
""",
)

# KEYS: account, handle, player. ARGV: id, handle key, player, then the fields.
# 1 when stored (or when this very account is stored already: a retried create
# whose reply was lost), 0 when the handle or the player has an account.
CREATE = Script(
    "accounts_create",
    """
local held = redis.call('HMGET', KEYS[1], 'hkey', 'player')
if held[1] then
  if held[1] == ARGV[2] and held[2] == ARGV[3] then return 1 end
  return 0
end
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SET', KEYS[3], ARGV[1])
return 1
""",
)

# KEYS: account, new handle, new player. ARGV: base, id, handle key, player, then
# the fields. 0 (nothing written) when there is no such account, or the new handle
# or player belongs to another; the old claims are released in the same step.
UPDATE = Script(
    "accounts_update",
    """
local base, id = ARGV[1], ARGV[2]
local old = redis.call('HMGET', KEYS[1], 'hkey', 'player')
if not old[1] then return 0 end
for i, name in ipairs({'handle:', 'player:'}) do
  if old[i] ~= ARGV[2 + i] then
    local holder = redis.call('GET', KEYS[1 + i])
    if holder and holder ~= id then return 0 end
  end
end
for i, name in ipairs({'handle:', 'player:'}) do
  if old[i] ~= ARGV[2 + i] then
    redis.call('DEL', base .. name .. old[i])
    redis.call('SET', KEYS[1 + i], id)
  end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
return 1
""",
)

# ARGV: base, account id. Everything the account holds goes, in one step; its
# player is remembered as deleted. 0 when there was no such account.
DELETE = Script(
    "accounts_delete",
    """
local base, id = ARGV[1], ARGV[2]
local acc = base .. 'account:' .. id
local f = redis.call('HMGET', acc, 'hkey', 'player', 'friendlink')
if not f[1] then return 0 end
redis.call('DEL', base .. 'handle:' .. f[1], base .. 'player:' .. f[2])
if f[3] then redis.call('DEL', base .. 'friend-link:' .. f[3]) end
for _, d in ipairs(redis.call('SMEMBERS', acc .. ':devices')) do
  local token = redis.call('HGET', base .. 'device:' .. d, 'token')
  if token then redis.call('DEL', base .. 'token:' .. token) end
  redis.call('DEL', base .. 'device:' .. d)
end
for what, name in pairs({passkeys = 'passkey:', recovery = 'recovery:', links = 'link:'}) do
  for _, m in ipairs(redis.call('SMEMBERS', acc .. ':' .. what)) do
    redis.call('DEL', base .. name .. m)
  end
end
for _, other in ipairs(redis.call('HKEYS', acc .. ':friends')) do
  redis.call('HDEL', base .. 'account:' .. other .. ':friends', id)
end
local h = base .. 'history:' .. f[2] .. ':'
for _, ladder in ipairs(redis.call('SMEMBERS', h .. 'ladders')) do
  redis.call('DEL', h .. 'totals:' .. ladder)
end
redis.call('DEL', h .. 'deals', h .. 'deal', h .. 'rounds', h .. 'round', h .. 'ladders')
for i = 3, #ARGV do  -- the ladders: the player's rating, row and chart on each
  local r = base .. 'ratings:' .. ARGV[i]
  redis.call('HDEL', r, f[2])
  redis.call('ZREM', r .. ':table', f[2])
  redis.call('DEL', r .. ':chart:' .. f[2])
end
redis.call('DEL', acc, acc .. ':devices', acc .. ':passkeys', acc .. ':recovery',
  acc .. ':links', acc .. ':friends')
redis.call('SADD', base .. 'deleted', f[2])
return 1
""",
)

# KEYS: account, device, token, the account's devices. ARGV: device id, then the
# fields. Nothing is written for an account that is gone (deleted meanwhile).
ADD_DEVICE = Script(
    "accounts_add_device",
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV, 2))
redis.call('SET', KEYS[3], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
return 1
""",
)

# KEYS: device. ARGV: time. Only a device that is still there.
TOUCH_DEVICE = Script(
    "accounts_touch_device",
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'last_used', ARGV[1])
return 1
""",
)

# KEYS: device. ARGV: base, device id. Its token stops working in the same step.
REMOVE_DEVICE = Script(
    "accounts_remove_device",
    """
local f = redis.call('HMGET', KEYS[1], 'token', 'account')
if not f[1] then return 0 end
redis.call('DEL', KEYS[1], ARGV[1] .. 'token:' .. f[1])
redis.call('SREM', ARGV[1] .. 'account:' .. f[2] .. ':devices', ARGV[2])
return 1
""",
)

# KEYS: account, link, the account's links. ARGV: base, code hash, account id,
# expires (s, as written), expires (unix ms). The key expires with the code; codes
# of the account that have expired are dropped from its set on the way.
PUT_LINK = Script(
    "accounts_put_link",
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for _, h in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  if redis.call('EXISTS', ARGV[1] .. 'link:' .. h) == 0 then redis.call('SREM', KEYS[3], h) end
end
redis.call('HSET', KEYS[2], 'account', ARGV[3], 'expires', ARGV[4])
redis.call('PEXPIREAT', KEYS[2], ARGV[5])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('SADD', KEYS[3], ARGV[2]) end
return 1
""",
)

# KEYS: link. ARGV: base, code hash. GET and DEL in one step: "account\\nexpires",
# or nil when there is no such code, it has expired (by Redis's clock, the one its
# TTL runs on, to the microsecond) or its account is gone. Used up whatever the answer.
TAKE_LINK = Script(
    "accounts_take_link",
    """
local t = redis.call('TIME')
local f = redis.call('HMGET', KEYS[1], 'account', 'expires')
if not f[1] then return false end
redis.call('DEL', KEYS[1])
local acc = ARGV[1] .. 'account:' .. f[1]
redis.call('SREM', acc .. ':links', ARGV[2])
if tonumber(f[2]) <= t[1] + t[2] / 1000000 then return false end
if redis.call('EXISTS', acc) == 0 then return false end
return f[1] .. '\\n' .. f[2]
""",
)

# KEYS: account, its recovery set. ARGV: base, account id, then the code hashes.
SET_RECOVERY = Script(
    "accounts_set_recovery",
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for _, h in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  redis.call('DEL', ARGV[1] .. 'recovery:' .. h)
end
redis.call('DEL', KEYS[2])
for i = 3, #ARGV do
  redis.call('SET', ARGV[1] .. 'recovery:' .. ARGV[i], ARGV[2])
  redis.call('SADD', KEYS[2], ARGV[i])
end
return 1
""",
)

# KEYS: recovery code. ARGV: base, code hash. The account, the code gone with it.
TAKE_RECOVERY = Script(
    "accounts_take_recovery",
    """
local acc = redis.call('GET', KEYS[1])
if not acc then return false end
redis.call('DEL', KEYS[1])
redis.call('SREM', ARGV[1] .. 'account:' .. acc .. ':recovery', ARGV[2])
return acc
""",
)

# KEYS: account, passkey, the account's passkeys. ARGV: hex id, then the fields.
ADD_PASSKEY = Script(
    "accounts_add_passkey",
    """
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV, 2))
redis.call('SADD', KEYS[3], ARGV[1])
return 1
""",
)

# KEYS: passkey. ARGV: the new counter, the time. Compare-and-set: only a counter
# beyond the stored one moves it (or 0 after 0: an authenticator without one).
USE_PASSKEY = Script(
    "accounts_use_passkey",
    """
local stored = redis.call('HGET', KEYS[1], 'sign_count')
if not stored then return 0 end
local old, new = tonumber(stored), tonumber(ARGV[1])
if not (new > old or (new == 0 and old == 0)) then return 0 end
redis.call('HSET', KEYS[1], 'sign_count', ARGV[1], 'last_used', ARGV[2])
return 1
""",
)

# KEYS: passkey. ARGV: base, hex id.
REMOVE_PASSKEY = Script(
    "accounts_remove_passkey",
    """
local acc = redis.call('HGET', KEYS[1], 'account')
if not acc then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', ARGV[1] .. 'account:' .. acc .. ':passkeys', ARGV[2])
return 1
""",
)

# KEYS: deleted, deals, deal, rounds, round, ladders (the tallies' names). ARGV:
# player, the name of the totals before the tally, deal count, then per deal:
# key, t, JSON, its tallies joined by '|' (store.py tallies: ladder, week), and
# what it adds to each (store.py add_to_totals: wins, best seconds or '', moves,
# score); round count, then per round: key, t, JSON. An
# entry kept already is left alone, and only a new one counts in the totals. A
# deleted player's history is not written again.
ADD_HISTORY = Script(
    "accounts_add_history",
    """
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 0 end
local a = 4
for i = 1, tonumber(ARGV[3]) do
  local key, t, entry, ladder = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local wins, seconds, moves, score = ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7]
  a = a + 8
  if redis.call('HSETNX', KEYS[3], key, entry) == 1 then
    redis.call('ZADD', KEYS[2], t, key)
    for tally in string.gmatch(ladder, '[^|]+') do
      redis.call('SADD', KEYS[6], tally)
      local totals = ARGV[2] .. tally
      redis.call('HINCRBY', totals, 'deals', 1)
      redis.call('HINCRBY', totals, 'wins', wins)
      redis.call('HINCRBY', totals, 'moves', moves)
      redis.call('HINCRBY', totals, 'score', score)
      if seconds ~= '' then
        local best = redis.call('HGET', totals, 'best_seconds')
        if not best or tonumber(seconds) < tonumber(best) then
          redis.call('HSET', totals, 'best_seconds', seconds)
        end
      end
    end
  end
end
local rounds = tonumber(ARGV[a])
a = a + 1
for i = 1, rounds do
  if redis.call('HSETNX', KEYS[5], ARGV[a], ARGV[a + 2]) == 1 then
    redis.call('ZADD', KEYS[4], ARGV[a + 1], ARGV[a])
  end
  a = a + 3
end
return 1
""",
)

# KEYS: an entries' sorted set, their hash. ARGV: the highest score ('+inf' or
# '(' exclusive), how many. The entries' JSON, newest first, as a JSON list.
HISTORY = Script(
    "accounts_history",
    """
local keys = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[1], '-inf', 'LIMIT', 0, ARGV[2])
if #keys == 0 then return '[]' end
local out = {}
for i, key in ipairs(keys) do out[i] = redis.call('HGET', KEYS[2], key) end
return cjson.encode(out)
""",
)

# KEYS: ladders. ARGV: the name of the totals before the ladder.
TOTALS = Script(
    "accounts_totals",
    _RECORD_LUA
    + """
local out = {}
for _, ladder in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local r = record(ARGV[1] .. ladder)
  if r then r.ladder = ladder out[#out + 1] = r end
end
if #out == 0 then return '[]' end
return cjson.encode(out)
""",
)

# KEYS: replay. ARGV: the bytes, when it goes (unix ms).
PUT_REPLAY = Script(
    "accounts_put_replay",
    "redis.call('SET', KEYS[1], ARGV[1]) redis.call('PEXPIREAT', KEYS[1], ARGV[2]) return 1",
)

# KEYS: account a, account b, a's friends, b's friends. ARGV: a, b, the JSON.
# Kept on both sides, so each lists it in one read; only between accounts that are.
SET_FRIENDSHIP = Script(
    "accounts_set_friendship",
    """
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
return 1
""",
)

# KEYS: a's friends, b's friends. ARGV: a, b.
REMOVE_FRIENDSHIP = Script(
    "accounts_remove_friendship",
    "local n = redis.call('HDEL', KEYS[1], ARGV[2]) redis.call('HDEL', KEYS[2], ARGV[1]) return n",
)

# KEYS: friends. Their JSON, as a JSON list.
FRIENDSHIPS = Script(
    "accounts_friendships",
    "local v = redis.call('HVALS', KEYS[1]) if #v == 0 then return '[]' end return cjson.encode(v)",
)

# KEYS: account, the new link. ARGV: base, account id, link hash. The old link
# stops working in the same step.
SET_FRIEND_LINK = Script(
    "accounts_set_friend_link",
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local old = redis.call('HGET', KEYS[1], 'friendlink')
if old then redis.call('DEL', ARGV[1] .. 'friend-link:' .. old) end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[1], 'friendlink', ARGV[3])
return 1
""",
)

# KEYS: account. ARGV: the room code ('' for none). Only an account that is.
SET_ROOM = Script(
    "accounts_set_room",
    """
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'room_code', ARGV[1]) end
return 1
""",
)
GET = Script("accounts_get", "return redis.call('GET', KEYS[1])")
SCARD = Script("accounts_scard", "return redis.call('SCARD', KEYS[1])")
SISMEMBER = Script("accounts_sismember", "return redis.call('SISMEMBER', KEYS[1], ARGV[1])")

# Scripts that only read: a lost reply changed nothing.
READS = (
    frozenset(
        {READ, READ_INDEXED, READ_MEMBERS, HISTORY, TOTALS, FRIENDSHIPS, GET, SCARD, SISMEMBER}
    )
    | ratings.READS
)

# Writes that give the same answer run twice as once (a create answers 1 when its
# very account is there), so a write whose reply was lost is settled by running
# it again. The others (taking a code, moving a counter, removing) would answer
# the second run differently: their lost reply stays unknown.
REPEATABLE = (
    frozenset(
        {
            CREATE,
            UPDATE,
            SET_ROOM,
            DELETE,
            ADD_DEVICE,
            TOUCH_DEVICE,
            PUT_LINK,
            SET_RECOVERY,
            ADD_HISTORY,
            PUT_REPLAY,
            SET_FRIENDSHIP,
            SET_FRIEND_LINK,
        }
    )
    | ratings.REPEATABLE
)
