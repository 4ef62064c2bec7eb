"""One quick-match book for every node on one Redis (server/matchmaking/book.py).

Keys (``P`` the store's prefix), each with a TTL:

- ``P quick:queue``: a sorted set, every queued player scored by when they
  queued (its TTL renewed with every entry);
- ``P quick:entry:PLAYER``: the entry, ``TICKET\\n`` and the msgpack of the rest,
  living :data:`ENTRY_TTL_MS` unless the player's node refreshes it (every pass,
  once a second): a node that dies leaves the queue within that time;
- ``P quick:matched:PLAYER``: the ticket of a player taken for a room and not
  yet told (:data:`MATCHED_TTL_MS` at most);
- ``P quick:lead``: the pass under way: one node at a time forms rooms.

Every change is one Lua step, so two nodes never both take a player: joining
refuses a player with an entry or a matched key, and taking a group for a room
checks every ticket before it removes any. The ``lead`` key is a lease like a
room's (server/cluster/leases.py): a token of the node's, a TTL of a lease
period, released by the same compare-and-delete; it keeps passes from
overlapping, while the take keeps them safe should a frozen node's pass
outlive it.

The node that forms a room makes and runs it; a player connected to another
node is told through the relay (``matched``, server/cluster/relay.py), and their
node tunnels them to the room as it does a client joining a room that runs
elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgpack  # type: ignore[import-untyped, unused-ignore]

from protocol import messages as M
from protocol.messages import ErrorCode

from ..core.values import RoomError
from ..matchmaking.book import Entry, Removal
from ..peer import Peer
from ..store.redis import RedisStore
from ..store.redis_conn import Script, guard
from .relay import MATCHED
from .tunnels import Tunnels

__all__ = ["ENTRY_TTL_MS", "MATCHED_TTL_MS", "SharedBook"]

ENTRY_TTL_MS = 5_000  # an entry lapses this long after its node last refreshed it
MATCHED_TTL_MS = 30_000  # a matched player not told by then is free again

# KEYS: queue, entry, matched. ARGV: player, since, value, ttl.
_PUT = Script(
    "quick_put",
    """
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
""",
)

# KEYS: queue, entry, matched. ARGV: player, ticket. 1 removed, 2 matched, 0 absent.
_REMOVE = Script(
    "quick_remove",
    """
if redis.call('GET', KEYS[3]) == ARGV[2] then return 2 end
local v = redis.call('GET', KEYS[2])
if v and string.sub(v, 1, #ARGV[2] + 1) == ARGV[2] .. '\\n' then
  redis.call('DEL', KEYS[2])
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
""",
)

# KEYS: queue, then (entry, matched) per player. ARGV: matched ttl, then
# (player, ticket) per player. All taken (1) or none (0).
_TAKE = Script(
    "quick_take",
    """
local n = (#KEYS - 1) / 2
for i = 1, n do
  local v, t = redis.call('GET', KEYS[2 * i]), ARGV[2 * i + 1]
  if not v or string.sub(v, 1, #t + 1) ~= t .. '\\n' then return 0 end
end
for i = 1, n do
  redis.call('DEL', KEYS[2 * i])
  redis.call('ZREM', KEYS[1], ARGV[2 * i])
  redis.call('SET', KEYS[2 * i + 1], ARGV[2 * i + 1], 'PX', ARGV[1])
end
return 1
""",
)

# KEYS: queue, then (entry, matched) per player. ARGV: ttl, then (player, since,
# value, ticket) per player: matched ones queued again as they were.
_PUT_BACK = Script(
    "quick_put_back",
    """
for i = 1, (#KEYS - 1) / 2 do
  local a = 4 * i - 2
  if redis.call('GET', KEYS[2 * i + 1]) == ARGV[a + 3] then
    redis.call('DEL', KEYS[2 * i + 1])
    redis.call('SET', KEYS[2 * i], ARGV[a + 2], 'PX', ARGV[1])
    redis.call('ZADD', KEYS[1], ARGV[a + 1], ARGV[a])
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
""",
)

# KEYS: matched. ARGV: ticket. Told: free again.
_TOLD = Script(
    "quick_told",
    "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1",
)

# KEYS: queue, then (entry, matched) per player. ARGV: ttl, then ticket per
# player. Per player 1 (still queued: renewed), 2 (matched), 0 (neither).
_REFRESH = Script(
    "quick_refresh",
    """
local out = {}
for i = 1, (#KEYS - 1) / 2 do
  local t = ARGV[i + 1]
  local v = redis.call('GET', KEYS[2 * i])
  if v and string.sub(v, 1, #t + 1) == t .. '\\n' then
    redis.call('PEXPIRE', KEYS[2 * i], ARGV[1]); out[i] = 1
  elseif redis.call('GET', KEYS[2 * i + 1]) == t then
    out[i] = 2
  else
    out[i] = 0
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return out
""",
)

# KEYS: queue, then entry per player. ARGV: player per player. Lapsed entries
# leave the queue's index.
_PRUNE = Script(
    "quick_prune",
    """
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 0 then redis.call('ZREM', KEYS[1], ARGV[i - 1]) end
end
return 1
""",
)

# KEYS: lead. ARGV: token, ttl.
_LEAD = Script(
    "quick_lead",
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0",
)


def _value(e: Entry) -> bytes:
    rest: bytes = msgpack.packb([e.name, e.ladder, e.rating, e.since, e.node], use_bin_type=True)
    return e.ticket.encode() + b"\n" + rest


def _entry(player: str, value: bytes) -> Entry:
    ticket, _, rest = value.partition(b"\n")
    name, ladder, rating, since, node = msgpack.unpackb(rest, raw=False)
    return Entry(player, name, ladder, int(rating), int(since), node, ticket.decode())


class SharedBook:
    """The quick-match book in Redis; see the module docstring."""

    def __init__(
        self, store: RedisStore, tunnels: Tunnels, token: bytes, lease_ms: int, release: Script
    ) -> None:
        self.store = store
        self._release = release  # a lease's compare-and-delete (server/cluster/leases.py)
        self.tunnels = tunnels
        self.node = tunnels.node_id
        self._token = token  # this node's lead token (a lease token of its own)
        self._lease_ms = lease_ms
        prefix = store.keys.prefix
        self._queue = f"{prefix}quick:queue".encode()
        self._lead = f"{prefix}quick:lead".encode()
        self._prefix = prefix

    def _entry_key(self, player: str) -> bytes:
        return f"{self._prefix}quick:entry:{player}".encode()

    def _matched_key(self, player: str) -> bytes:
        return f"{self._prefix}quick:matched:{player}".encode()

    async def _run(self, what: str, script: Script, keys: list[bytes], args: list[bytes]) -> object:
        async with guard(what, self.store.pool.timeout):
            return await self.store.pool.script(script, keys, args)

    async def put(self, entry: Entry) -> list[Entry]:
        p = entry.player
        keys = [self._queue, self._entry_key(p), self._matched_key(p)]
        args = [p.encode(), b"%d" % entry.since, _value(entry), b"%d" % ENTRY_TTL_MS]
        if not await self._run("quick_put", _PUT, keys, args):
            raise RoomError(ErrorCode.ALREADY_QUEUED, "you wait in a queue already")
        return await self.entries()

    async def remove(self, player: str, ticket: str) -> Removal:
        keys = [self._queue, self._entry_key(player), self._matched_key(player)]
        done = await self._run("quick_remove", _REMOVE, keys, [player.encode(), ticket.encode()])
        return {1: Removal.REMOVED, 2: Removal.MATCHED}.get(int(str(done)), Removal.ABSENT)

    async def lead(self) -> bool:
        args = [self._token, b"%d" % self._lease_ms]
        return bool(await self._run("quick_lead", _LEAD, [self._lead], args))

    async def done_leading(self) -> None:
        await self._run("quick_release", self._release, [self._lead], [self._token])

    async def entries(self) -> list[Entry]:
        async with guard("quick_entries", self.store.pool.timeout):
            queued = await self.store.pool.protocol().zrange_asdict(self._queue)
            players = [p.decode() for p in queued]
            if not players:
                return []
            keys = [self._entry_key(p) for p in players]
            values = await self.store.pool.protocol().mget_aslist(keys)
        found = [_entry(p, v) for p, v in zip(players, values, strict=True) if v]
        if len(found) < len(players):
            args = [p.encode() for p in players]
            await self._run("quick_prune", _PRUNE, [self._queue, *keys], args)
        return found

    def _pairs(self, players: Sequence[str]) -> list[bytes]:
        keys = [self._queue]
        for p in players:
            keys += [self._entry_key(p), self._matched_key(p)]
        return keys

    async def take(self, group: Sequence[Entry]) -> bool:
        args = [b"%d" % MATCHED_TTL_MS]
        for e in group:
            args += [e.player.encode(), e.ticket.encode()]
        keys = self._pairs([e.player for e in group])
        return bool(await self._run("quick_take", _TAKE, keys, args))

    async def put_back(self, group: Sequence[Entry]) -> None:
        args = [b"%d" % ENTRY_TTL_MS]
        for e in group:
            args += [e.player.encode(), b"%d" % e.since, _value(e), e.ticket.encode()]
        await self._run("quick_put_back", _PUT_BACK, self._pairs([e.player for e in group]), args)

    async def told(self, player: str, ticket: str) -> None:
        await self._run("quick_told", _TOLD, [self._matched_key(player)], [ticket.encode()])

    async def refresh(self, entries: Sequence[Entry]) -> list[str]:
        args = [b"%d" % ENTRY_TTL_MS, *(e.ticket.encode() for e in entries)]
        keys = self._pairs([e.player for e in entries])
        kept = await self._run("quick_refresh", _REFRESH, keys, args)
        assert isinstance(kept, list)
        return [e.player for e, k in zip(entries, kept, strict=True) if not k]

    def tell(self, entry: Entry, code: str, message: M.Message) -> None:
        e = entry
        fields = {k: message[k] for k in ("ladder", "rated", "room", "starts_at")}
        payload = [e.player, e.ticket, code, fields]
        self.tunnels.outbox.put(e.node, [MATCHED, self.node, 0, 0, payload])

    def follow(self, peer: Peer, node: str) -> None:
        assert peer.session is not None
        self.tunnels.open(node, peer, peer.session.token)
