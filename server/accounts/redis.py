"""Accounts in Redis (``serve --redis``): the store every node of a cluster shares.

Keys, all under ``P`` = the prefix (``klondike:``, as the room store's) and
``accounts:``. Records are hashes of strings, so a script can compare and move a
field (a counter, a handle) without decoding or re-encoding the rest, and a time
is kept as Python wrote it (``repr``: exact):

- ``P account:ID`` (hash: the Account, plus ``hkey``, the handle's key, and
  ``friendlink``), and beside it ``P account:ID:devices``, ``:passkeys``,
  ``:recovery``, ``:links`` (sets of what the account holds, so deleting it
  finds everything) and ``:friends`` (hash: other account -> the friendship).
- ``P handle:HANDLE_KEY`` and ``P player:PLAYER``: the account that holds them.
- ``P device:ID`` (hash) and ``P token:HASH`` (its device id).
- ``P link:HASH`` (hash: account, expires; the key expires then too, so an
  unused code leaves nothing), ``P recovery:HASH`` (the account),
  ``P passkey:HEX_ID`` (hash), ``P friend-link:HASH`` (the account).
- ``P history:PLAYER:deals`` / ``:rounds`` (sorted sets: entry key by time),
  ``:deal`` / ``:round`` (hashes: entry key -> JSON), ``:ladders`` (set) and
  ``:totals:LADDER`` (hash of counters).
- ``P deleted`` (set of the players of deleted accounts), ``P replay:KEY``.
- The ratings' keys (``P ratings:LADDER`` …, ``P rated:KEY``): redis_ratings.py.

Every step that must happen once is one Lua script, so two nodes (or two tasks
on one) racing on the same code, handle or counter cannot both win: taking a
handle, a link or recovery code, moving a passkey's counter, adding history with
its totals. A script checks before it writes, so one that refuses has written
nothing. Scripts that reach keys named by what they read (deleting an account,
listing its devices) build those names from the prefix: they need one Redis, not
Redis Cluster, as the room store's group commit does.

Durable as the room store is, and for the same reason: a coroutine returns once
Redis has answered, and a Redis run with ``appendonly yes`` and ``appendfsync
always`` answers a write only after fsyncing it to its append-only file.
:meth:`RedisAccounts.connect` checks those settings and warns otherwise
(``durable``). A lost connection, an error reply or a silent Redis is
:class:`~server.store.base.StoreUnavailable` (server/store/redis_conn.py
``guard``), or StoreUncertain (below); the connections come back by themselves
when Redis does.

Deleting an account is one step too, and what arrives after it finds nothing
to add to: a device, code, passkey, friendship or friend link for an account
that is gone is not written, nor history for the player of a deleted account
(a room folded after the deletion brings nothing back).

A write whose reply was lost (sent, then the connection dropped or Redis fell
silent) may have run. Most writes answer alike when run twice (history is kept
once by entry key, a device or a replay is set again, and ``create_account``
answers True when the very account, same id, handle and player, is there), so
the store runs such a write again until Redis answers, and that answer is the
first run's. The others (taking a code, moving a passkey's counter, removing)
raise :class:`~server.store.base.StoreUncertain`: a code taken so is used up
without anyone signing in, the safe way to fail. Only a write known not to have
run is StoreUnavailable, as the interface promises.

Longer than most modules because the interface is wide: one short method per
operation of the store, each turning values into a script's arguments and its
answer back; the scripts themselves are in ``redis_scripts.py``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from ..ratings.model import (
    Applied,
    ChartPoint,
    RatedRound,
    Rating,
    Standing,
    chart_points,
    every_ladder,
    replay_with_chart,
    shown,
)
from ..store.base import StoreUnavailable, StoreUncertain
from ..store.redis_conn import (
    RETRY_S,
    Pool,
    RedisAddress,
    Script,
    check_durability,
    definite,
    guard,
)
from . import redis_ratings as rk
from . import redis_scripts as lua
from .model import (
    Account,
    DealEntry,
    Device,
    Friendship,
    FriendState,
    LinkCode,
    Passkey,
    RoundEntry,
    handle_key,
)
from .redis_scripts import AccountKeys
from .store import LadderTotals, add_to_totals, ladders_of, tallies, weeks_of

__all__ = ["AccountKeys", "RedisAccounts"]

log = logging.getLogger(__name__)


def _num(t: float) -> bytes:
    """A time as Redis keeps it: Python's shortest exact form (Lua reads it as
    the same double, and it comes back unchanged)."""
    return repr(float(t)).encode()


def _flag(b: bool) -> bytes:
    return b"1" if b else b"0"


def _fields(pairs: dict[str, str | bytes]) -> list[bytes]:
    out: list[bytes] = []
    for name, value in pairs.items():
        out += [name.encode(), value if isinstance(value, bytes) else value.encode()]
    return out


def _account_fields(a: Account) -> list[bytes]:
    return _fields(
        {
            "account": a.account,
            "player": a.player,
            "handle": a.handle,
            "hkey": handle_key(a.handle),
            "created": _num(a.created),
            "handle_changed": _num(a.handle_changed),
            "shows_record": _flag(a.shows_record),
            "shows_online": _flag(a.shows_online),
            "room_code": a.room_code or "",
        }
    )


def _to_account(f: dict[str, str]) -> Account:
    return Account(
        account=f["account"],
        player=f["player"],
        handle=f["handle"],
        created=float(f["created"]),
        handle_changed=float(f["handle_changed"]),
        shows_record=f["shows_record"] == "1",
        shows_online=f["shows_online"] == "1",
        room_code=f["room_code"] or None,
    )


def _to_device(f: dict[str, str]) -> Device:
    return Device(
        device=f["device"],
        account=f["account"],
        label=f["label"],
        created=float(f["created"]),
        last_used=float(f["last_used"]),
    )


def _to_passkey(f: dict[str, str]) -> Passkey:
    return Passkey(
        credential_id=bytes.fromhex(f["credential_id"]),
        account=f["account"],
        public_key=bytes.fromhex(f["public_key"]),
        sign_count=int(f["sign_count"]),
        label=f["label"],
        created=float(f["created"]),
        last_used=float(f["last_used"]) if f["last_used"] else None,
    )


def _records(raw: Any) -> list[Any]:
    """A script's JSON list (records, or the JSON of entries)."""
    value = json.loads(raw)
    return list(value) if isinstance(value, list) else []


class RedisAccounts:
    """The :class:`~server.accounts.store.AccountStore` on Redis; see the module
    docstring. Unusable (StoreUnavailable) until :meth:`connect`."""

    def __init__(
        self,
        host: str,
        port: int,
        password: str | None = None,
        db: int = 0,
        *,
        prefix: str = "klondike:",
        timeout: float = 5.0,
        connect_timeout: float = 10.0,
        settle_timeout: float = 10.0,
        pool_size: int = 2,
    ) -> None:
        self.address = RedisAddress(
            host=host, port=port, db=db, password=password.encode() if password else None
        )
        self.keys = AccountKeys(prefix)
        self.timeout = timeout  # per operation: a frozen Redis costs a request this long
        self.connect_timeout = connect_timeout
        self.settle_timeout = settle_timeout  # waiting for Redis to settle a lost reply
        self.pool_size = pool_size
        self.durable: bool | None = None  # appendfsync always, as far as Redis tells
        self._pool: Pool | None = None

    @classmethod
    async def from_url(cls, url: str, **options: Any) -> RedisAccounts:
        """Connected to the Redis of ``serve --redis URL``, beside the room store:
        its ``prefix`` option is shared (the room store's TTL options are not the
        accounts' business); ``options`` as the constructor's keywords."""
        address = RedisAddress.parse(url)
        if address.prefix:
            options.setdefault("prefix", address.prefix)
        password = address.password.decode() if address.password else None
        store = cls(address.host, address.port, password, address.db, **options)
        await store.connect()
        return store

    async def connect(self) -> None:
        """StoreUnavailable when Redis stays unreachable for ``connect_timeout`` s."""
        self._pool = await Pool.connect(
            self.address,
            size=self.pool_size,
            timeout=self.timeout,
            connect_timeout=self.connect_timeout,
        )
        self.durable = await check_durability(self.address, self.timeout)

    @property
    def connected(self) -> bool:
        """Some connection to Redis is up."""
        return self._pool is not None and self._pool.connected

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def _run(
        self, what: str, script: Script, keys: Sequence[bytes], args: Sequence[bytes] = ()
    ) -> Any:
        """The script's answer. StoreUnavailable when it is known not to have run
        (nothing sent, or an error reply); when it was sent and no answer came
        (a lost connection, a timeout), a write is settled (:meth:`_settle`) or,
        if that cannot be done, StoreUncertain: it may have run."""
        sent: list[bool] = []
        try:
            return await self._send(what, script, keys, args, sent)
        except StoreUnavailable as exc:
            if script in lua.READS or definite(exc, bool(sent)):
                raise
            if script not in lua.REPEATABLE:
                raise StoreUncertain(f"accounts {what}: {exc}; it may have been done") from exc
            return await self._settle(what, script, keys, args)

    async def _send(
        self,
        what: str,
        script: Script,
        keys: Sequence[bytes],
        args: Sequence[bytes],
        sent: list[bool],
    ) -> Any:
        pool = self._pool
        if pool is None:
            raise StoreUnavailable(f"accounts {what}: not connected to Redis")
        async with guard(f"accounts {what}", self.timeout):
            return await pool.script(script, keys, args, sent)

    async def _settle(
        self, what: str, script: Script, keys: Sequence[bytes], args: Sequence[bytes]
    ) -> Any:
        """A repeatable write whose reply was lost: run it again until Redis
        answers, whose answer is then the first run's (running it twice is running
        it once). StoreUncertain if Redis stays silent for ``settle_timeout`` s."""
        log.warning("accounts %s: the reply was lost; running it again to settle it", what)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settle_timeout
        while True:
            await asyncio.sleep(RETRY_S)  # the links notice the loss and reconnect
            try:
                return await self._send(what, script, keys, args, [])
            except StoreUnavailable as exc:
                if loop.time() >= deadline or self._pool is None:
                    raise StoreUncertain(f"accounts {what}: {exc}; it may have been done") from exc

    async def _record(
        self, what: str, script: Script, keys: Sequence[bytes], args: Sequence[bytes] = ()
    ) -> dict[str, str] | None:
        value = json.loads(await self._run(what, script, keys, args))
        return value if isinstance(value, dict) else None

    @property
    def _base(self) -> bytes:
        return self.keys.base.encode()

    # -- accounts --------------------------------------------------------------

    async def create_account(self, account: Account) -> bool:
        k = self.keys
        hkey = handle_key(account.handle)
        keys = [k.account(account.account), k.handle(hkey), k.player(account.player)]
        args = [account.account.encode(), hkey.encode(), account.player.encode()]
        return bool(await self._run("create", lua.CREATE, keys, args + _account_fields(account)))

    async def account(self, account: str) -> Account | None:
        f = await self._record("account", lua.READ, [self.keys.account(account)])
        return _to_account(f) if f else None

    async def account_by_handle(self, key: str) -> Account | None:
        f = await self._record(
            "by handle", lua.READ_INDEXED, [self.keys.handle(key)], [self.keys.account("")]
        )
        return _to_account(f) if f else None

    async def account_by_player(self, player: str) -> Account | None:
        f = await self._record(
            "by player", lua.READ_INDEXED, [self.keys.player(player)], [self.keys.account("")]
        )
        return _to_account(f) if f else None

    async def handles(self, players: Sequence[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(players))
        if not wanted:
            return {}
        keys = [self.keys.player(p) for p in wanted]
        args = [self.keys.account("")] + [p.encode() for p in wanted]
        found = json.loads(await self._run("handles", lua.HANDLES, keys, args))
        return dict(found) if isinstance(found, dict) else {}

    async def players(self, accounts: Sequence[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(accounts))
        if not wanted:
            return {}
        keys = [self.keys.account(a) for a in wanted]
        args = [a.encode() for a in wanted]
        found = json.loads(await self._run("players", lua.PLAYERS, keys, args))
        return dict(found) if isinstance(found, dict) else {}

    async def update_account(self, account: Account) -> bool:
        k = self.keys
        hkey = handle_key(account.handle)
        keys = [k.account(account.account), k.handle(hkey), k.player(account.player)]
        args = [self._base, account.account.encode(), hkey.encode(), account.player.encode()]
        return bool(await self._run("update", lua.UPDATE, keys, args + _account_fields(account)))

    async def set_room(self, account: str, room_code: str | None) -> None:
        keys = [self.keys.account(account)]
        await self._run("set_room", lua.SET_ROOM, keys, [(room_code or "").encode()])

    async def delete_account(self, account: str) -> None:
        ladders = [ladder.encode() for ladder in every_ladder()]  # its ratings on each
        await self._run("delete", lua.DELETE, [], [self._base, account.encode(), *ladders])

    async def is_deleted(self, player: str) -> bool:
        return bool(
            await self._run("is_deleted", lua.SISMEMBER, [self.keys.deleted], [player.encode()])
        )

    # -- devices ---------------------------------------------------------------

    async def add_device(self, token_hash: str, device: Device) -> None:
        k = self.keys
        keys = [
            k.account(device.account),
            k.device(device.device),
            k.token(token_hash),
            k.held(device.account, "devices"),
        ]
        fields = _fields(
            {
                "device": device.device,
                "account": device.account,
                "label": device.label,
                "created": _num(device.created),
                "last_used": _num(device.last_used),
                "token": token_hash,
            }
        )
        await self._run("add_device", lua.ADD_DEVICE, keys, [device.device.encode(), *fields])

    async def device_by_token(self, token_hash: str) -> Device | None:
        f = await self._record(
            "device", lua.READ_INDEXED, [self.keys.token(token_hash)], [self.keys.device("")]
        )
        return _to_device(f) if f else None

    async def devices(self, account: str) -> list[Device]:
        held = [self.keys.held(account, "devices"), self.keys.device("")]
        raw = await self._run("devices", lua.READ_MEMBERS, [], held)
        return sorted((_to_device(f) for f in _records(raw)), key=lambda d: (d.created, d.device))

    async def touch_device(self, device: str, t: float) -> None:
        await self._run("touch_device", lua.TOUCH_DEVICE, [self.keys.device(device)], [_num(t)])

    async def remove_device(self, device: str) -> bool:
        return bool(
            await self._run(
                "remove_device",
                lua.REMOVE_DEVICE,
                [self.keys.device(device)],
                [self._base, device.encode()],
            )
        )

    # -- one-time codes ----------------------------------------------------------

    async def put_link_code(self, code_hash: str, link: LinkCode) -> None:
        k = self.keys
        keys = [k.account(link.account), k.link(code_hash), k.held(link.account, "links")]
        args = [
            self._base,
            code_hash.encode(),
            link.account.encode(),
            _num(link.expires),
            b"%d" % int(link.expires * 1000),
        ]
        await self._run("put_link_code", lua.PUT_LINK, keys, args)

    async def take_link_code(self, code_hash: str) -> LinkCode | None:
        raw = await self._run(
            "take_link_code",
            lua.TAKE_LINK,
            [self.keys.link(code_hash)],
            [self._base, code_hash.encode()],
        )
        if not raw:
            return None
        account, expires = raw.decode().split("\n")
        return LinkCode(account=account, expires=float(expires))

    async def set_recovery_codes(self, account: str, code_hashes: list[str]) -> None:
        k = self.keys
        keys = [k.account(account), k.held(account, "recovery")]
        args = [self._base, account.encode(), *(h.encode() for h in code_hashes)]
        await self._run("set_recovery_codes", lua.SET_RECOVERY, keys, args)

    async def take_recovery_code(self, code_hash: str) -> str | None:
        raw = await self._run(
            "take_recovery_code",
            lua.TAKE_RECOVERY,
            [self.keys.recovery(code_hash)],
            [self._base, code_hash.encode()],
        )
        return raw.decode() if raw else None

    async def recovery_codes_left(self, account: str) -> int:
        return int(
            await self._run("recovery_codes_left", lua.SCARD, [self.keys.held(account, "recovery")])
        )

    # -- passkeys --------------------------------------------------------------

    async def add_passkey(self, passkey: Passkey) -> bool:
        k = self.keys
        hex_id = passkey.credential_id.hex()
        keys = [
            k.account(passkey.account),
            k.passkey(passkey.credential_id),
            k.held(passkey.account, "passkeys"),
        ]
        fields = _fields(
            {
                "credential_id": hex_id,
                "account": passkey.account,
                "public_key": passkey.public_key.hex(),
                "sign_count": str(passkey.sign_count),
                "label": passkey.label,
                "created": _num(passkey.created),
                "last_used": b"" if passkey.last_used is None else _num(passkey.last_used),
            }
        )
        args = [hex_id.encode(), *fields]
        return bool(await self._run("add_passkey", lua.ADD_PASSKEY, keys, args))

    async def passkey(self, credential_id: bytes) -> Passkey | None:
        f = await self._record("passkey", lua.READ, [self.keys.passkey(credential_id)])
        return _to_passkey(f) if f else None

    async def passkeys(self, account: str) -> list[Passkey]:
        raw = await self._run(
            "passkeys",
            lua.READ_MEMBERS,
            [],
            [self.keys.held(account, "passkeys"), self.keys.passkey(b"")],
        )
        keys = (_to_passkey(f) for f in _records(raw))
        return sorted(keys, key=lambda p: (p.created, p.credential_id))

    async def use_passkey(self, credential_id: bytes, sign_count: int, t: float) -> bool:
        return bool(
            await self._run(
                "use_passkey",
                lua.USE_PASSKEY,
                [self.keys.passkey(credential_id)],
                [b"%d" % sign_count, _num(t)],
            )
        )

    async def remove_passkey(self, credential_id: bytes) -> bool:
        return bool(
            await self._run(
                "remove_passkey",
                lua.REMOVE_PASSKEY,
                [self.keys.passkey(credential_id)],
                [self._base, credential_id.hex().encode()],
            )
        )

    # -- history ---------------------------------------------------------------

    async def add_history(
        self, player: str, deals: list[DealEntry], rounds: list[RoundEntry]
    ) -> None:
        k = self.keys
        keys = [
            k.deleted,
            *(k.history(player, what) for what in ("deals", "deal", "rounds", "round", "ladders")),
        ]
        args = [player.encode(), k.history(player, "totals:"), b"%d" % len(deals)]
        for d in deals:
            one = add_to_totals(None, d, d.ladder)  # what it adds: the Lua sums, keeps the best
            best = b"" if one.best_seconds is None else _num(one.best_seconds)
            args += [
                d.key.encode(),
                _num(d.t),
                _entry_json(d),
                "|".join(tallies(d)).encode(),
                b"%d" % one.wins,
                best,
                b"%d" % one.moves,
                b"%d" % one.score,
            ]
        args.append(b"%d" % len(rounds))
        for r in rounds:
            args += [r.key.encode(), _num(r.t), _entry_json(r)]
        await self._run("add_history", lua.ADD_HISTORY, keys, args)

    async def _history(
        self, player: str, what: str, before: float | None, limit: int
    ) -> list[dict[str, Any]]:
        if limit <= 0:
            return []
        top = b"+inf" if before is None else b"(" + _num(before)
        keys = [self.keys.history(player, what + "s"), self.keys.history(player, what)]
        raw = await self._run(f"{what} history", lua.HISTORY, keys, [top, b"%d" % limit])
        return [json.loads(entry) for entry in _records(raw)]

    async def deal_history(self, player: str, before: float | None, limit: int) -> list[DealEntry]:
        return [DealEntry(**e) for e in await self._history(player, "deal", before, limit)]

    async def round_history(
        self, player: str, before: float | None, limit: int
    ) -> list[RoundEntry]:
        return [RoundEntry(**e) for e in await self._history(player, "round", before, limit)]

    async def totals(self, player: str) -> list[LadderTotals]:
        return ladders_of(await self._tallies(player))

    async def weeks(self, player: str, since: float) -> list[LadderTotals]:
        return weeks_of(await self._tallies(player), since)

    async def _tallies(self, player: str) -> list[LadderTotals]:
        """Every tally of the player: ladders and weeks (a year holds 52 weeks)."""
        k = self.keys
        raw = await self._run(
            "totals", lua.TOTALS, [k.history(player, "ladders")], [k.history(player, "totals:")]
        )
        out = [
            LadderTotals(
                ladder=f["ladder"],
                deals=int(f.get("deals", 0)),
                wins=int(f.get("wins", 0)),
                best_seconds=float(f["best_seconds"]) if "best_seconds" in f else None,
                moves=int(f.get("moves", 0)),
                score=int(f.get("score", 0)),
            )
            for f in _records(raw)
        ]
        return out

    async def put_replay(self, key: str, replay: bytes, expires: float) -> None:
        await self._run(
            "put_replay",
            lua.PUT_REPLAY,
            [self.keys.replay(key)],
            [replay, b"%d" % int(expires * 1000)],
        )

    async def replay(self, key: str) -> bytes | None:
        raw = await self._run("replay", lua.GET, [self.keys.replay(key)])
        return bytes(raw) if raw is not None else None

    # -- friends ---------------------------------------------------------------

    async def set_friendship(self, friendship: Friendship) -> None:
        k = self.keys
        a, b = friendship.a, friendship.b
        value = json.dumps(
            {"a": a, "b": b, "state": friendship.state.value, "since": friendship.since}
        ).encode()
        keys = [k.account(a), k.account(b), k.held(a, "friends"), k.held(b, "friends")]
        await self._run("set_friendship", lua.SET_FRIENDSHIP, keys, [a.encode(), b.encode(), value])

    async def remove_friendship(self, a: str, b: str) -> bool:
        k = self.keys
        keys = [k.held(a, "friends"), k.held(b, "friends")]
        args = [a.encode(), b.encode()]
        return bool(await self._run("remove_friendship", lua.REMOVE_FRIENDSHIP, keys, args))

    async def friendships(self, account: str) -> list[Friendship]:
        raw = await self._run("friendships", lua.FRIENDSHIPS, [self.keys.held(account, "friends")])
        out = []
        for entry in _records(raw):
            f = json.loads(entry)
            out.append(
                Friendship(a=f["a"], b=f["b"], state=FriendState(f["state"]), since=f["since"])
            )
        return sorted(out, key=lambda f: (f.since, f.a, f.b))

    async def set_friend_link(self, account: str, link_hash: str) -> None:
        k = self.keys
        keys = [k.account(account), k.friend_link(link_hash)]
        args = [self._base, account.encode(), link_hash.encode()]
        await self._run("set_friend_link", lua.SET_FRIEND_LINK, keys, args)

    # -- ratings ---------------------------------------------------------------
    async def ratings(self, ladder: str, players: Iterable[str]) -> dict[str, Rating]:
        wanted = [p.encode() for p in players]
        if not wanted:
            return {}
        raw = await self._run(
            "ratings", rk.READ_RATINGS, [rk.ratings(self.keys.base, ladder)], wanted
        )
        return {p: _to_rating(r) for p, r in json.loads(raw).items()}

    async def apply_rated_round(
        self, rnd: RatedRound, seen: dict[str, int], after: dict[str, Rating]
    ) -> Applied:
        base = self.keys.base
        points = chart_points(rnd, after)
        players = sorted(after)
        keys = [
            rk.rated(base, rnd.key),
            rk.ratings(base, rnd.ladder),
            rk.table(base, rnd.ladder),
            rk.log(base, rnd.ladder),
            self.keys.deleted,
            *(rk.chart(base, rnd.ladder, p) for p in players),
        ]
        args = [_round_json(rnd)]
        for p in players:
            r = after[p]
            args += [
                p.encode(),
                b"%d" % seen.get(p, 0),
                _rating_json(r),
                b"%d" % -shown(r),
                _point_json(points[p]),
            ]
        answer = await self._run("rate a round", rk.APPLY, keys, args)
        return Applied(answer.decode() if isinstance(answer, bytes) else answer)

    async def rated_round(self, key: str) -> RatedRound | None:
        raw = await self._run("rated round", lua.GET, [rk.rated(self.keys.base, key)])
        return None if raw is None else RatedRound.from_wire(json.loads(raw))

    async def _list(self, key: bytes) -> list[Any]:
        return [json.loads(item) for item in json.loads(await self._run("list", rk.LIST, [key]))]

    async def rated_rounds(self, ladder: str) -> list[RatedRound]:
        entries = await self._list(rk.log(self.keys.base, ladder))
        return [RatedRound.from_wire(e) for e in entries]

    async def replace_ladder(
        self, ladder: str, rounds: list[RatedRound], read: Sequence[str]
    ) -> bool:
        base = self.keys.base
        ratings, charts = replay_with_chart(rounds)
        args = [base.encode(), ladder.encode(), b"%d" % len(read), *(k.encode() for k in read)]
        args.append(b"%d" % len(rounds))
        for rnd in rounds:
            args += [_round_json(rnd), rnd.key.encode()]
        for p, r in ratings.items():
            points = charts.get(p, [])
            args += [p.encode(), _rating_json(r), b"%d" % -shown(r), b"%d" % len(points)]
            args += [_point_json(pt) for pt in points]
        keys = [rk.ratings(base, ladder), rk.table(base, ladder), rk.log(base, ladder)]
        return bool(await self._run("replace a ladder", rk.REPLACE, keys, args))

    async def ladder_table(self, ladder: str, start: int, count: int) -> list[Standing]:
        if count <= 0:
            return []
        base = self.keys.base
        start = max(start, 0)
        raw = await self._run(
            "ladder",
            rk.TABLE,
            [rk.table(base, ladder), rk.ratings(base, ladder)],
            [b"%d" % start, b"%d" % (start + count - 1)],
        )
        rows = [(p, _to_rating(r)) for p, r in json.loads(raw)]
        return [Standing(p, shown(r), r.rounds, r.provisional) for p, r in rows]

    async def ladder_position(self, ladder: str, player: str) -> int | None:
        rank = await self._run(
            "position", rk.POSITION, [rk.table(self.keys.base, ladder)], [player.encode()]
        )
        return None if int(rank) < 0 else int(rank)

    async def rating_chart(self, ladder: str, player: str) -> list[ChartPoint]:
        entries = await self._list(rk.chart(self.keys.base, ladder, player))
        return [ChartPoint(e["key"], e["t"], e["rating"]) for e in entries]

    async def friend_link(self, link_hash: str) -> str | None:
        raw = await self._run("friend_link", lua.GET, [self.keys.friend_link(link_hash)])
        return raw.decode() if raw else None


def _rating_json(r: Rating) -> bytes:
    return json.dumps(
        {"mu": r.mu, "sigma": r.sigma, "rounds": r.rounds, "last_played": r.last_played}
    ).encode()


def _to_rating(raw: str | bytes) -> Rating:
    return Rating(**json.loads(raw))


def _round_json(rnd: RatedRound) -> bytes:
    return json.dumps(rnd.to_wire()).encode()


def _point_json(pt: ChartPoint) -> bytes:
    return json.dumps(pt.to_wire()).encode()


def _entry_json(entry: DealEntry | RoundEntry) -> bytes:
    """A history entry as kept: its fields, ASCII JSON (so cjson hands it back
    byte for byte inside the list it returns)."""
    return json.dumps(
        {name: getattr(entry, name) for name in entry.__dataclass_fields__}, sort_keys=True
    ).encode()
