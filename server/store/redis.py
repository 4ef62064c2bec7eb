"""The durable store: room logs and sessions in Redis (``serve --redis URL``).

Keys (``P`` is the prefix, ``klondike:`` by default); every one of them carries a TTL,
so an abandoned room or session leaves nothing behind:

- ``P rooms``: sorted set of open room codes, scored by the last append (Redis clock,
  ms). It is both the reservation of a code and the list :meth:`open_rooms` recovers;
  members idle longer than ``idle_ttl`` are pruned. Its own TTL is refreshed with
  every write, so it vanishes once every room is idle.
- ``P room:CODE:log``: list of the room's records, oldest first, binary as given.
  ``idle_ttl`` (24 h) refreshed on every append; ``closed_ttl`` once closed.
- ``P room:CODE:lease``: which node runs the room (server/cluster/leases.py), with a short TTL.
- ``P room:CODE:writes``: hash of write ids: the last one written (with the log
  length it left) and every one voided by a resolution; TTL as the log's.
- ``P session:SHA256(token)``: JSON ``{player, name, room}``; ``session_ttl``
  refreshed whenever the session is read or written.
- ``P here:PLAYER``: the node a player's socket is on, for friends on other nodes
  (server/cluster/friends.py); 30 min, renewed while the player stays connected.

Why appends look the way they do:

- *Durable before acknowledged.* ``append`` returns once Redis has answered, and a
  Redis run with ``appendonly yes``/``appendfsync always`` answers a write only after
  fsyncing it. The store checks that setting when it connects and warns otherwise.
- *Group commit.* Appends issued while another is in flight (or in the same loop tick)
  are coalesced: one Lua call per batch, covering every room in it, so throughput
  grows with load instead of paying a round trip per move.
- *An unknown outcome is resolved, never guessed.* An append whose connection dropped
  or timed out after the script was sent may or may not have run (the lost reply:
  Redis ran it, we never heard), and may even run later (a frozen Redis thawing with
  it in its socket buffer). Refusing it would be a lie half the time, so the store
  does not settle such an append until it knows: every append carries a write id,
  which the script records in ``P room:CODE:writes`` (a hash) when it writes, and
  which the store then *resolves* (``_RESOLVE``), retrying until Redis answers:
  one atomic step that marks the id void unless it was written. A write found there
  is acknowledged (its records are in the log, for whoever runs the room next); a
  void one is refused, and the script refuses a void id should it arrive late, so
  "not written" is final. Failures before anything was sent (no connection, an
  error reply) are definite and refused at once. Only if the store is closed with
  an outcome still unknown does an append fail with :class:`StoreUncertain`.
- *Exactly the records that were acknowledged.* The store remembers each room's log
  length as of the last acknowledged append and sends it along; the script writes
  only onto exactly that length (shorter: Redis lost data; longer: someone else
  wrote), never trimming or overwriting anything. When a fencing token is set (by
  the cluster lease) the script also refuses to write unless the lease still holds
  that token: a node that lost its room cannot touch the log.
- *Fenced per runner, not per room.* Every rebuild of a room takes a lease token of
  its own, and its runner's appends carry it (``append(..., fence=token)``). The
  store refuses at once an append whose token is not the room's current one in this
  process, and Redis refuses one whose token is no longer the lease; so a runner
  that was replaced, even by another in the same process, cannot append, and a
  pending batch is never sent under a token its records were not given with.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from .base import SessionRecord, StoreUnavailable, StoreUncertain, token_key
from .redis_conn import RETRY_S, Pool, RedisAddress, Script, check_durability, definite, guard

__all__ = ["LeaseLost", "LeaseOwner", "RedisKeys", "RedisStore", "StoreUncertain"]

log = logging.getLogger(__name__)

DAY_MS = 24 * 3600 * 1000


class LeaseLost(StoreUnavailable):
    """This node no longer holds the room's lease: the append was refused."""


class LeaseOwner(Protocol):
    """The cluster, as the store sees it: it issues lease tokens for new rooms."""

    lease_ms: int

    def new_token(self) -> bytes: ...

    def acquired(self, code: str, token: bytes) -> None: ...


class RedisKeys:
    """Key names, in one place so the store, the cluster and the tests agree."""

    def __init__(self, prefix: str = "klondike:") -> None:
        self.prefix = prefix
        self.rooms = f"{prefix}rooms".encode()

    def log(self, code: str) -> bytes:
        return f"{self.prefix}room:{code}:log".encode()

    def lease(self, code: str) -> bytes:
        return f"{self.prefix}room:{code}:lease".encode()

    def writes(self, code: str) -> bytes:
        return f"{self.prefix}room:{code}:writes".encode()

    def session(self, token: str) -> bytes:
        return f"{self.prefix}session:{token_key(token)}".encode()

    def seeds(self, key: str) -> bytes:
        """A pool of proven seeds (server/rooms/proofs.py ``pool_key``): a list."""
        return f"{self.prefix}seeds:{key}".encode()

    def node(self, node_id: str) -> bytes:
        """A node's pub/sub channel (a channel, not a key: it stores nothing)."""
        return f"{self.prefix}node:{node_id}".encode()


_NOW = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"

# KEYS: rooms, log, lease. ARGV: code, idle_ttl, lease token ('': none), lease ms.
# A code is free when no log exists and no reservation younger than idle_ttl holds
# it. In cluster mode the new room's lease is taken in the same step, so no other
# node can mistake the fresh room for an abandoned one.
_RESERVE_LUA = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) > now - tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[4]) end
return 1
"""
_RESERVE = Script("reserve", _NOW + _RESERVE_LUA)

# KEYS: rooms, then (log, lease, writes) per room. ARGV: idle_ttl, room count, then
# per room: code, expected length (-1: unknown), fencing token ('' : none), write id,
# previous write id ('' : none), n, n records.
# Returns per room the new length, -1 (lease not held), -2 (log shorter than
# acknowledged: Redis lost data), -3 (this write id was voided by a resolution) or -4
# (log longer than acknowledged: someone else wrote), comma-separated: one string
# decodes much faster in asyncio-redis than an array. Nothing is written unless the
# result is a length.
_APPEND_LUA = """
local ttl = ARGV[1]
local out = {}
local a = 3
for i = 1, tonumber(ARGV[2]) do
  local log, lease, writes = KEYS[3 * i - 1], KEYS[3 * i], KEYS[3 * i + 1]
  local code, expected, fence = ARGV[a], tonumber(ARGV[a + 1]), ARGV[a + 2]
  local wid, prev = ARGV[a + 3], ARGV[a + 4]
  local first = a + 6
  a = first + tonumber(ARGV[a + 5])
  local n = redis.call('LLEN', log)
  if fence ~= '' and redis.call('GET', lease) ~= fence then
    out[i] = -1
  elseif redis.call('HEXISTS', writes, wid) == 1 then
    out[i] = -3
  elseif expected >= 0 and n < expected then
    out[i] = -2
  elseif expected >= 0 and n > expected then
    out[i] = -4
  else
    for j = first, a - 1, 4000 do
      n = redis.call('RPUSH', log, unpack(ARGV, j, math.min(j + 3999, a - 1)))
    end
    if prev ~= '' then redis.call('HDEL', writes, prev) end
    redis.call('HSET', writes, wid, n)
    redis.call('PEXPIRE', writes, ttl)
    redis.call('PEXPIRE', log, ttl)
    redis.call('ZADD', KEYS[1], now, code)
    out[i] = n
  end
end
redis.call('PEXPIRE', KEYS[1], ttl)
return table.concat(out, ',')
"""
_APPEND = Script("append", _NOW + _APPEND_LUA)

# KEYS: log, lease. ARGV: fencing token ('': none), expected length (-1: unknown),
# drop, SHA1 hex of the record that must then come first. Drops the first `drop`
# records, only if the log is the one acknowledged and the record at `drop` is that
# checkpoint. Returns the new length, -1 (lease not held), -2 (not the length
# acknowledged: left to the next append to sort out) or -3 (no such checkpoint there).
_COMPACT_LUA = """
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[1] then return -1 end
local n = redis.call('LLEN', KEYS[1])
local expected, drop = tonumber(ARGV[2]), tonumber(ARGV[3])
if expected >= 0 and n ~= expected then return -2 end
if drop >= n then return -3 end
if redis.sha1hex(redis.call('LINDEX', KEYS[1], drop)) ~= ARGV[4] then return -3 end
redis.call('LTRIM', KEYS[1], drop, -1)
return n - drop
"""
_COMPACT = Script("compact", _COMPACT_LUA)

# KEYS: log. ARGV: SHA1 hex. After a compaction whose reply was lost: the length,
# and 1 when the log starts with that record (the compaction took place), else 0.
_COMPACTED_LUA = """
local head = redis.call('LINDEX', KEYS[1], 0)
local same = head and redis.sha1hex(head) == ARGV[1]
return {redis.call('LLEN', KEYS[1]), same and 1 or 0}
"""
_COMPACTED = Script("compacted", _COMPACTED_LUA)

# KEYS: writes per room. ARGV: idle_ttl, then a write id per room. Per room the log
# length the write left (it was written), or -1: it was not, and is void from now on
# (the append script refuses it should it still arrive). Idempotent: resolving twice
# (the first reply lost too) gives the same answer.
_RESOLVE_LUA = """
local out = {}
for i = 1, #KEYS do
  redis.call('HSETNX', KEYS[i], ARGV[i + 1], 'void')
  redis.call('PEXPIRE', KEYS[i], ARGV[1])
  local v = redis.call('HGET', KEYS[i], ARGV[i + 1])
  if v == 'void' then out[i] = -1 else out[i] = tonumber(v) end
end
return table.concat(out, ',')
"""
_RESOLVE = Script("resolve", _RESOLVE_LUA)

# KEYS: rooms. ARGV: idle_ttl. Drops reservations idle for longer than idle_ttl.
_PRUNE_LUA = """
return redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[1])))
"""
_PRUNE = Script("prune", _NOW + _PRUNE_LUA)

# KEYS: rooms, log, lease, writes. ARGV: code, closed_ttl (0: delete now). The
# writes hash lives as long as the log, so a void id stays void while it does.
_CLOSE_LUA = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[3])
if tonumber(ARGV[2]) > 0 then
  redis.call('PEXPIRE', KEYS[2], ARGV[2]); redis.call('PEXPIRE', KEYS[4], ARGV[2])
else redis.call('DEL', KEYS[2], KEYS[4]) end
return 1
"""
_CLOSE = Script("close", _CLOSE_LUA)

# KEYS: session. ARGV: session_ttl. GET that refreshes the TTL (GETEX needs Redis 6.2;
# this works on any Redis with scripting).
_GET_SESSION_LUA = """
local v = redis.call('GET', KEYS[1])
if v then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return v
"""
_GET_SESSION = Script("get_session", _GET_SESSION_LUA)

# KEYS: a pool of proven seeds. Taking is one LPOP: atomic, so each entry is
# handed to exactly one caller across every node. ARGV (put): the entry, the ms
# the pool is kept unused (every key expires, like an idle room's).
_TAKE_SEED = Script("take_seed", "return redis.call('LPOP', KEYS[1])")
_PUT_SEED = Script(
    "put_seed",
    "local n = redis.call('RPUSH', KEYS[1], ARGV[1]) "
    "redis.call('PEXPIRE', KEYS[1], ARGV[2]) return n",
)
_SEEDS_READY = Script("seeds_ready", "return redis.call('LLEN', KEYS[1])")


@dataclass
class _Batch:
    """Appends to one room waiting for the next flush, in call order, all under
    the fencing token the room had when the batch began."""

    fence: bytes
    wid: bytes  # the write id: what resolves the outcome should the reply be lost
    records: list[bytes] = field(default_factory=list)
    waiters: list[tuple[asyncio.Future[int], int]] = field(default_factory=list)  # (fut, end)


@dataclass
class _Trim:
    """A compaction waiting for the room's appends in flight to return."""

    drop: int
    sha: bytes  # SHA1 hex of the checkpoint that must come first
    future: asyncio.Future[None]


class RedisStore:
    """The :class:`server.store.Store` protocol on Redis; see the module docstring."""

    def __init__(
        self,
        pool: Pool,
        *,
        prefix: str = "klondike:",
        idle_ttl_ms: int = DAY_MS,
        closed_ttl_ms: int = 600_000,
        session_ttl_ms: int = 7 * DAY_MS,
    ) -> None:
        self.pool = pool
        self.keys = RedisKeys(prefix)
        self.idle_ttl_ms = idle_ttl_ms
        self.closed_ttl_ms = closed_ttl_ms
        self.session_ttl_ms = session_ttl_ms
        self.durable: bool | None = None  # appendfsync always, as far as Redis tells
        self._lengths: dict[str, int] = {}  # acknowledged log length per room
        self._fences: dict[str, bytes] = {}  # lease token per room (cluster mode)
        self.owner: LeaseOwner | None = None  # the cluster, when there is one
        self._pending: dict[str, _Batch] = {}
        self._inflight: set[str] = set()  # rooms with an append (or a compaction) in flight
        self._trims: dict[str, _Trim] = {}  # compactions waiting for their room
        self._flush_scheduled = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._id = secrets.token_hex(6).encode()  # write ids: this store's, then a count
        self._wids = itertools.count(1)
        self._written: dict[str, bytes] = {}  # per room, the last write id known written
        self._closing = False

    @classmethod
    async def from_url(
        cls,
        url: str,
        *,
        pool_size: int = 4,
        timeout: float = 5.0,
        connect_timeout: float = 10.0,
        **options: Any,
    ) -> RedisStore:
        """Connect to ``redis://[:password@]host[:port][/db][?options]``.

        ``options`` (keywords, or in the URL's query so that ``serve --redis`` can
        set them): ``prefix``, ``idle_ttl``, ``closed_ttl``, ``session_ttl`` (seconds
        in the URL, ``*_ttl_ms`` as keywords). StoreUnavailable when Redis cannot be
        reached within ``connect_timeout`` s. ``timeout`` bounds every operation: a
        frozen Redis costs a move at most that long."""
        for name, values in parse_qs(urlsplit(url).query).items():
            if name == "prefix":
                options.setdefault("prefix", values[-1])
            elif name in ("idle_ttl", "closed_ttl", "session_ttl"):
                options.setdefault(f"{name}_ms", int(float(values[-1]) * 1000))
            else:
                raise ValueError(f"unknown Redis URL option {name!r}")
        address = RedisAddress.parse(url)
        pool = await Pool.connect(
            address, size=pool_size, timeout=timeout, connect_timeout=connect_timeout
        )
        store = cls(pool, **options)
        store.durable = await check_durability(address, timeout)
        return store

    # -- rooms -------------------------------------------------------------------

    async def reserve_room(self, code: str) -> bool:
        owner = self.owner
        token = owner.new_token() if owner is not None else b""
        lease_ms = owner.lease_ms if owner is not None else 0
        async with guard("reserve_room", self.pool.timeout):
            ok = await self.pool.script(
                _RESERVE,
                [self.keys.rooms, self.keys.log(code), self.keys.lease(code)],
                [code.encode(), b"%d" % self.idle_ttl_ms, token, b"%d" % lease_ms],
            )
        if not ok:
            return False
        self._lengths[code] = 0
        if owner is not None:
            self.fence(code, token)
            owner.acquired(code, token)
        return True

    def append(
        self, code: str, records: Sequence[bytes], fence: bytes | None = None
    ) -> asyncio.Future[int]:
        """Queue the records for the next group commit (this loop tick's, or, when
        the room has an append in flight, the one after it); the future settles
        with it. A future, not a coroutine: see :meth:`server.store.Store.append`.

        ``fence``: the token of the runner that writes (server/cluster/leases.py).
        Unless it is the room's current token here, the future fails at once with
        LeaseLost; None appends under whatever token the room has (one node).

        Sending each append at once instead saves a turn of the event loop but
        costs a script call per room; measured under load, batching wins."""
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        current = self._fences.get(code, b"")
        if fence is not None and (fence != current or not fence):
            fut.set_exception(LeaseLost(f"room {code}: this runner's lease is not the room's"))
            return fut
        batch = self._pending.get(code)
        if batch is None:
            batch = self._pending[code] = _Batch(current, b"%s.%d" % (self._id, next(self._wids)))
        batch.records.extend(records)
        batch.waiters.append((fut, len(batch.records)))
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)
        return fut

    def joinable(self, code: str) -> bool:
        """An append now would join the room's unsent batch: one script call, one fate."""
        return code in self._pending and code not in self._inflight

    def _flush(self) -> None:
        """Send every pending room that has no append in flight, as one script call."""
        self._flush_scheduled = False
        for code in [c for c in self._trims if c not in self._inflight]:
            self._start_trim(code, self._trims.pop(code))
        ready = {c: b for c, b in self._pending.items() if c not in self._inflight}
        if not ready:
            return
        for code in ready:
            del self._pending[code]
        self._inflight.update(ready)
        task = asyncio.get_running_loop().create_task(self._send(ready))
        self._tasks.add(task)
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("group commit failed", exc_info=exc)  # a bug: _send settles all

    async def _send(self, batches: dict[str, _Batch]) -> None:
        keys = [self.keys.rooms]
        args = [b"%d" % self.idle_ttl_ms, b"%d" % len(batches)]
        for code, batch in batches.items():
            keys += [self.keys.log(code), self.keys.lease(code), self.keys.writes(code)]
            args += [
                code.encode(),
                b"%d" % self._lengths.get(code, -1),
                batch.fence,
                batch.wid,
                self._written.get(code, b""),
                b"%d" % len(batch.records),
                *batch.records,
            ]
        sent: list[bool] = []
        try:
            try:
                async with guard("append", self.pool.timeout):
                    reply = await self.pool.script(_APPEND, keys, args, sent)
                results = [int(n) for n in reply.split(b",")]
                if len(results) != len(batches):
                    raise ValueError(f"append: {len(results)} results for {len(batches)} rooms")
            except (StoreUnavailable, asyncio.CancelledError) as exc:
                if isinstance(exc, StoreUnavailable) and definite(exc, bool(sent)):
                    for batch in batches.values():
                        _settle(batch, exc)
                    return
                # Sent, and no answer: it may have run. Find out before answering.
                log.warning("append: %s; resolving its outcome", exc)
                try:
                    results = await self._resolve(batches)
                except StoreUncertain as gave_up:
                    for batch in batches.values():
                        _settle(batch, gave_up)
                    if isinstance(exc, asyncio.CancelledError):
                        raise
                    return
            except Exception as exc:  # a bug, or a reply we cannot read: fail, do not hang
                log.error("append: unexpected failure", exc_info=exc)
                unknown = StoreUncertain(f"append failed: {exc}")
                for batch in batches.values():
                    _settle(batch, unknown)
                return
            for (code, batch), n in zip(batches.items(), results, strict=True):
                if n >= 0:
                    if self._fences.get(code, b"") == batch.fence:
                        # (Not after the room was claimed anew meanwhile: the new
                        # incarnation's load() counted the log, these included.)
                        self._lengths[code] = n
                        self._written[code] = batch.wid
                    _settle(batch, n)
                elif n == -1:
                    _settle(batch, LeaseLost(f"room {code}: this node lost its lease"))
                elif n == -3:
                    _settle(batch, StoreUnavailable(f"room {code}: the write was voided"))
                else:
                    what = "fewer" if n == -2 else "more"
                    log.error("room %s: Redis holds %s records than acknowledged", code, what)
                    _settle(batch, StoreUnavailable(f"room {code}: log not as acknowledged"))
        finally:
            self._inflight.difference_update(batches)
            if (self._pending or self._trims) and not self._flush_scheduled:
                self._flush_scheduled = True
                asyncio.get_running_loop().call_soon(self._flush)

    # -- compaction ------------------------------------------------------------------

    def compact(self, code: str, keep_from: int, first: bytes) -> asyncio.Future[None]:
        """Drop the records before the room's checkpoint at ``keep_from`` (see
        :meth:`server.store.Store.compact`), in one fenced script call.

        It is ordered with the room's appends as they are with each other: it waits
        for the one in flight, and those issued meanwhile wait for it, because the
        append script checks the log's length against the acknowledged one, which
        the compaction changes. If its reply is lost, the store asks Redis whether
        it took place before the room's next append goes."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        earlier = self._trims.pop(code, None)
        if earlier is not None and not earlier.future.done():
            earlier.future.set_exception(StoreUnavailable(f"room {code}: compaction superseded"))
        self._trims[code] = _Trim(keep_from, hashlib.sha1(first).hexdigest().encode(), fut)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)
        return fut

    def _start_trim(self, code: str, trim: _Trim) -> None:
        self._inflight.add(code)
        task = asyncio.get_running_loop().create_task(self._trim(code, trim))
        self._tasks.add(task)
        task.add_done_callback(self._sent)

    async def _trim(self, code: str, trim: _Trim) -> None:
        expected = self._lengths.get(code, -1)
        log_key, lease = self.keys.log(code), self.keys.lease(code)
        args = [self._fences.get(code, b""), b"%d" % expected, b"%d" % trim.drop, trim.sha]
        try:
            try:
                async with guard("compact", self.pool.timeout):
                    n = int(await self.pool.script(_COMPACT, [log_key, lease], args))
            except StoreUnavailable as exc:
                await self._after_lost_trim(code, trim)
                _finish(trim.future, exc)
                return
            except Exception as exc:  # a reply we cannot read: as above
                log.error("compact: unexpected failure", exc_info=exc)
                await self._after_lost_trim(code, trim)
                _finish(trim.future, StoreUnavailable(f"compact failed: {exc}"))
                return
            if n >= 0:
                self._lengths[code] = n
                _finish(trim.future, None)
            elif n == -1:
                _finish(trim.future, LeaseLost(f"room {code}: this node lost its lease"))
            else:
                why = "not the log acknowledged" if n == -2 else "no such checkpoint there"
                _finish(trim.future, StoreUnavailable(f"room {code}: not compacted: {why}"))
        finally:
            self._inflight.discard(code)
            if (self._pending or self._trims) and not self._flush_scheduled:
                self._flush_scheduled = True
                asyncio.get_running_loop().call_soon(self._flush)

    async def _after_lost_trim(self, code: str, trim: _Trim) -> None:
        """The compaction's reply was lost: did it take place? The room's length
        after it depends on that, and the next append checks it. If Redis cannot
        say either, the length is unknown (-1) for that one append."""
        try:
            async with guard("compacted", self.pool.timeout):
                n, same = await self.pool.script(_COMPACTED, [self.keys.log(code)], [trim.sha])
        except Exception:
            self._lengths.pop(code, None)
            return
        if int(same):
            self._lengths[code] = int(n)

    async def _resolve(self, batches: dict[str, _Batch]) -> list[int]:
        """Whether each batch's write was done, as the append script would answer
        (the log length it left), or -3: it was not, and never will be (its id is
        void now). Retries every ``RETRY_S`` until Redis answers, the rooms'
        later appends waiting meanwhile (they could not be ordered after an
        unknown); StoreUncertain only once the store is closing."""
        keys = [self.keys.writes(code) for code in batches]
        args = [b"%d" % self.idle_ttl_ms, *(batch.wid for batch in batches.values())]
        while True:
            try:
                async with guard("resolve", self.pool.timeout):
                    reply = await self.pool.script(_RESOLVE, keys, args)
                results = [int(n) for n in reply.split(b",")]
            except StoreUnavailable as exc:
                if self._closing:
                    raise StoreUncertain(f"closed while resolving an append ({exc})") from exc
                await asyncio.sleep(RETRY_S)
                continue
            log.warning(
                "append resolved: %s",
                ", ".join(
                    f"{code} {'written' if n >= 0 else 'not written'}"
                    for code, n in zip(batches, results, strict=True)
                ),
            )
            return [n if n >= 0 else -3 for n in results]

    async def load(self, code: str) -> list[bytes]:
        async with guard("load", self.pool.timeout):
            records: list[bytes] = await self.pool.protocol().lrange_aslist(self.keys.log(code))
        self._lengths[code] = len(records)
        return records

    async def open_rooms(self) -> list[str]:
        async with guard("open_rooms", self.pool.timeout):
            await self.pool.script(_PRUNE, [self.keys.rooms], [b"%d" % self.idle_ttl_ms])
            reply = await self.pool.protocol().zrange_asdict(self.keys.rooms)
        return sorted(code.decode() for code in reply)

    async def close_room(self, code: str) -> None:
        async with guard("close_room", self.pool.timeout):
            await self.pool.script(
                _CLOSE,
                [
                    self.keys.rooms,
                    self.keys.log(code),
                    self.keys.lease(code),
                    self.keys.writes(code),
                ],
                [code.encode(), b"%d" % self.closed_ttl_ms],
            )
        self.forget(code)

    # -- what the cluster needs ------------------------------------------------------

    def expected_length(self, code: str) -> int:
        """The log length as of this process's last acknowledged append (-1: unknown)."""
        return self._lengths.get(code, -1)

    def fence(self, code: str, token: bytes | None) -> None:
        """Write the room's log only while its lease holds ``token`` (None: always).
        Records still waiting under an earlier token are refused (LeaseLost): they
        belong to an incarnation of the room that is over."""
        self._refuse_pending(code, token or b"")
        if token is None:
            self._fences.pop(code, None)
        else:
            self._fences[code] = token

    def forget(self, code: str) -> None:
        """Drop what this process remembers of a room it no longer runs; appends
        that still carry its token are refused from now on."""
        self._refuse_pending(code, None)
        self._lengths.pop(code, None)
        self._written.pop(code, None)
        self._fences.pop(code, None)

    def _refuse_pending(self, code: str, keep: bytes | None) -> None:
        batch = self._pending.get(code)
        if batch is not None and batch.fence != keep:
            del self._pending[code]
            _settle(batch, LeaseLost(f"room {code}: this runner's lease is not the room's"))

    # -- proven seeds (deals: winnable) ---------------------------------------------
    # One list per rule set, shared by every node: RPUSH to add, LPOP to take, so a
    # seed is handed out once whichever node asks. An LPOP whose reply is lost
    # loses that seed, which is then never dealt: the safe way to fail.

    async def take_seed(self, key: str) -> tuple[str, str] | None:
        async with guard("take_seed", self.pool.timeout):
            raw = await self.pool.script(_TAKE_SEED, [self.keys.seeds(key)], [])
        if not raw:
            return None
        entry = json.loads(raw)
        return str(entry["seed"]), str(entry["line"])

    async def put_seed(self, key: str, seed: str, line: str) -> int:
        value = json.dumps({"seed": seed, "line": line}).encode()
        async with guard("put_seed", self.pool.timeout):
            n = await self.pool.script(
                _PUT_SEED, [self.keys.seeds(key)], [value, b"%d" % self.idle_ttl_ms]
            )
        return int(n)

    async def seeds_ready(self, key: str) -> int:
        async with guard("seeds_ready", self.pool.timeout):
            return int(await self.pool.script(_SEEDS_READY, [self.keys.seeds(key)], []))

    # -- sessions ----------------------------------------------------------------

    async def put_session(self, token: str, record: SessionRecord) -> None:
        value = json.dumps({"player": record.player, "name": record.name, "room": record.room_code})
        async with guard("put_session", self.pool.timeout):
            await self.pool.protocol().set(
                self.keys.session(token), value.encode(), pexpire=self.session_ttl_ms
            )

    async def get_session(self, token: str) -> SessionRecord | None:
        async with guard("get_session", self.pool.timeout):
            raw = await self.pool.script(
                _GET_SESSION, [self.keys.session(token)], [b"%d" % self.session_ttl_ms]
            )
        if not raw:
            return None
        data = json.loads(raw)
        return SessionRecord(player=data["player"], name=data["name"], room_code=data["room"])

    async def delete_session(self, token: str) -> None:
        async with guard("delete_session", self.pool.timeout):
            await self.pool.protocol().delete([self.keys.session(token)])

    async def close(self) -> None:
        """Let appends in flight finish (bounded by the operation timeout), then
        disconnect. An append still being resolved is tried once more, then fails
        with StoreUncertain."""
        self._closing = True
        while self._tasks or self._pending or self._flush_scheduled:
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            else:
                await asyncio.sleep(0)
        await self.pool.close()


def _finish(fut: asyncio.Future[None], error: BaseException | None) -> None:
    if fut.done():
        return
    if error is None:
        fut.set_result(None)
    else:
        fut.set_exception(error)


def _settle(batch: _Batch, result: int | BaseException) -> None:
    total = len(batch.records)
    for fut, end in batch.waiters:
        if fut.done():
            continue
        if isinstance(result, BaseException):
            fut.set_exception(result)
        else:
            fut.set_result(result - (total - end))
