"""Accounts on local disk: ``DIR/accounts.sqlite3`` beside the room store's file.

The embedded default of ``serve`` (server/store/sqlite.py keeps the rooms in the
same data directory). Built the same way, for the same reasons, but simpler, since
accounts are written at a person's pace (a sign-in, a handle, a code), not a
move's:

- *Durable before it returns.* WAL with ``synchronous=FULL``: every method that
  writes has committed (and fsynced) when its coroutine returns, so a ``kill -9``
  loses no account, device or used code that a client was told about.
- *One thread, one connection.* SQLite blocks; every operation runs as one
  transaction in a single writer thread, off the event loop. One thread also
  orders them: a link or recovery code is taken by a ``DELETE … RETURNING`` in
  its own transaction, so two sign-ins with one code cannot both win.
- *One process.* ``DIR/accounts.lock`` is held while open, as the room store holds
  ``DIR/lock``: a second server on the same directory is refused.

The file, its lock and its thread are server/store/sqlite_file.py's, shared with
the daily deals' stores.

Longer than most modules because the interface is wide: the schema, then one
short method per operation of :class:`~server.accounts.store.AccountStore`.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any

from ..ratings.model import (
    Applied,
    ChartPoint,
    RatedRound,
    Rating,
    Standing,
    chart_points,
    replay_with_chart,
    shown,
)
from ..store.sqlite_file import SqliteFile
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
from .store import LadderTotals, add_to_totals, ladders_of, tallies, weeks_of

__all__ = ["ACCOUNTS_DB", "SqliteAccounts"]


ACCOUNTS_DB = "accounts.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    account TEXT PRIMARY KEY,
    player TEXT NOT NULL UNIQUE,
    handle TEXT NOT NULL,
    handle_key TEXT NOT NULL UNIQUE,
    created REAL NOT NULL,
    handle_changed REAL NOT NULL,
    shows_record INTEGER NOT NULL,
    shows_online INTEGER NOT NULL,
    room_code TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS deleted (player TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS devices (
    device TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    created REAL NOT NULL,
    last_used REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS devices_of ON devices (account);
CREATE TABLE IF NOT EXISTS link_codes (
    code_hash TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    expires REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS recovery_codes (
    code_hash TEXT PRIMARY KEY,
    account TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS recovery_of ON recovery_codes (account);
CREATE TABLE IF NOT EXISTS passkeys (
    credential_id BLOB PRIMARY KEY,
    account TEXT NOT NULL,
    public_key BLOB NOT NULL,
    sign_count INTEGER NOT NULL,
    label TEXT NOT NULL,
    created REAL NOT NULL,
    last_used REAL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS passkeys_of ON passkeys (account);
CREATE TABLE IF NOT EXISTS deals (
    player TEXT NOT NULL,
    key TEXT NOT NULL,
    t REAL NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (player, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS deals_by_time ON deals (player, t);
CREATE TABLE IF NOT EXISTS rounds (
    player TEXT NOT NULL,
    key TEXT NOT NULL,
    t REAL NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (player, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rounds_by_time ON rounds (player, t);
CREATE TABLE IF NOT EXISTS totals (
    player TEXT NOT NULL,
    ladder TEXT NOT NULL,
    deals INTEGER NOT NULL,
    wins INTEGER NOT NULL,
    best_seconds REAL,
    moves INTEGER NOT NULL,
    score INTEGER NOT NULL,
    PRIMARY KEY (player, ladder)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS replays (
    key TEXT PRIMARY KEY,
    data BLOB NOT NULL,
    expires REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS friendships (
    lo TEXT NOT NULL,
    hi TEXT NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    state TEXT NOT NULL,
    since REAL NOT NULL,
    PRIMARY KEY (lo, hi)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS friendships_hi ON friendships (hi);
CREATE TABLE IF NOT EXISTS friend_links (
    link_hash TEXT PRIMARY KEY,
    account TEXT NOT NULL UNIQUE
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ratings (
    ladder TEXT NOT NULL,
    player TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    rounds INTEGER NOT NULL,
    last_played REAL,
    shown INTEGER NOT NULL,
    PRIMARY KEY (ladder, player)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ratings_table ON ratings (ladder, shown DESC, player);
CREATE TABLE IF NOT EXISTS rated_rounds (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    ladder TEXT NOT NULL,
    t REAL NOT NULL,
    places TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS rated_rounds_of ON rated_rounds (ladder, seq);
CREATE TABLE IF NOT EXISTS rating_points (
    ladder TEXT NOT NULL,
    player TEXT NOT NULL,
    seq INTEGER NOT NULL,
    key TEXT NOT NULL,
    t REAL NOT NULL,
    rating INTEGER NOT NULL,
    PRIMARY KEY (ladder, player, seq)
) WITHOUT ROWID;
PRAGMA user_version = 1;
"""

_ACCOUNT_COLUMNS = (
    "account, player, handle, created, handle_changed, shows_record, shows_online, room_code"
)
_DEVICE_COLUMNS = "device, account, label, created, last_used"
_PASSKEY_COLUMNS = "credential_id, account, public_key, sign_count, label, created, last_used"


def _account(row: Any) -> Account | None:
    if row is None:
        return None
    account, player, handle, created, changed, record, online, room = row
    return Account(account, player, handle, created, changed, bool(record), bool(online), room)


def _device(row: Any) -> Device | None:
    return None if row is None else Device(*row)


def _passkey(row: Any) -> Passkey | None:
    if row is None:
        return None
    credential, account, key, count, label, created, used = row
    return Passkey(bytes(credential), account, bytes(key), count, label, created, used)


class SqliteAccounts(SqliteFile):
    """:class:`~server.accounts.store.AccountStore` on SQLite; see the module
    docstring. Not usable until :meth:`open` (or use :meth:`at`)."""

    FILE = ACCOUNTS_DB
    SCHEMA = _SCHEMA
    WHAT = "accounts"

    # -- accounts --------------------------------------------------------------
    async def create_account(self, account: Account) -> bool:
        a = account
        sql = (
            "INSERT OR IGNORE INTO accounts (account, player, handle, handle_key, created,"
            " handle_changed, shows_record, shows_online, room_code)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )
        args = (a.account, a.player, a.handle, handle_key(a.handle), a.created, a.handle_changed,
                int(a.shows_record), int(a.shows_online), a.room_code)  # fmt: skip
        return await self._changes(sql, args) == 1

    async def account(self, account: str) -> Account | None:
        sql = f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE account = ?"
        return _account(await self._one(sql, (account,)))

    async def account_by_handle(self, key: str) -> Account | None:
        sql = f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE handle_key = ?"
        return _account(await self._one(sql, (key,)))

    async def account_by_player(self, player: str) -> Account | None:
        sql = f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE player = ?"
        return _account(await self._one(sql, (player,)))

    async def handles(self, players: Sequence[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(players))
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        rows = await self._all(
            f"SELECT player, handle FROM accounts WHERE player IN ({marks})", tuple(wanted)
        )
        return {p: h for p, h in rows}

    async def players(self, accounts: Sequence[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(accounts))
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        rows = await self._all(
            f"SELECT account, player FROM accounts WHERE account IN ({marks})", tuple(wanted)
        )
        return {a: p for a, p in rows}

    async def update_account(self, account: Account) -> bool:
        a = account
        sql = (
            "UPDATE OR IGNORE accounts SET handle = ?, handle_key = ?, created = ?,"
            " handle_changed = ?, shows_record = ?, shows_online = ?, room_code = ?"
            " WHERE account = ?"
        )
        args = (a.handle, handle_key(a.handle), a.created, a.handle_changed,
                int(a.shows_record), int(a.shows_online), a.room_code, a.account)  # fmt: skip
        return await self._changes(sql, args) == 1

    async def set_room(self, account: str, room_code: str | None) -> None:
        await self._changes(
            "UPDATE accounts SET room_code = ? WHERE account = ?", (room_code, account)
        )

    async def delete_account(self, account: str) -> None:
        def run(c: sqlite3.Connection) -> None:
            row = c.execute("SELECT player FROM accounts WHERE account = ?", (account,)).fetchone()
            if row is None:
                return
            player = row[0]
            c.execute("INSERT OR IGNORE INTO deleted (player) VALUES (?)", (player,))
            for table in ("accounts", "devices", "link_codes", "recovery_codes", "passkeys",
                          "friend_links"):  # fmt: skip
                c.execute(f"DELETE FROM {table} WHERE account = ?", (account,))
            c.execute("DELETE FROM friendships WHERE a = ? OR b = ?", (account, account))
            for table in ("deals", "rounds", "totals", "ratings", "rating_points"):
                c.execute(f"DELETE FROM {table} WHERE player = ?", (player,))

        await self._tx(run)

    async def is_deleted(self, player: str) -> bool:
        return await self._one("SELECT 1 FROM deleted WHERE player = ?", (player,)) is not None

    # -- devices ---------------------------------------------------------------
    async def add_device(self, token_hash: str, device: Device) -> None:
        d = device
        sql = (
            "INSERT OR REPLACE INTO devices (device, account, token_hash, label, created,"
            " last_used) VALUES (?, ?, ?, ?, ?, ?)"
        )
        await self._changes(sql, (d.device, d.account, token_hash, d.label, d.created, d.last_used))

    async def device_by_token(self, token_hash: str) -> Device | None:
        sql = f"SELECT {_DEVICE_COLUMNS} FROM devices WHERE token_hash = ?"
        return _device(await self._one(sql, (token_hash,)))

    async def devices(self, account: str) -> list[Device]:
        sql = f"SELECT {_DEVICE_COLUMNS} FROM devices WHERE account = ? ORDER BY created, device"
        return [Device(*row) for row in await self._all(sql, (account,))]

    async def touch_device(self, device: str, t: float) -> None:
        await self._changes("UPDATE devices SET last_used = ? WHERE device = ?", (t, device))

    async def remove_device(self, device: str) -> bool:
        return await self._changes("DELETE FROM devices WHERE device = ?", (device,)) == 1

    # -- one-time codes ----------------------------------------------------------
    async def put_link_code(self, code_hash: str, link: LinkCode) -> None:
        sql = "INSERT OR REPLACE INTO link_codes (code_hash, account, expires) VALUES (?, ?, ?)"
        await self._changes(sql, (code_hash, link.account, link.expires))

    async def take_link_code(self, code_hash: str) -> LinkCode | None:
        sql = "DELETE FROM link_codes WHERE code_hash = ? RETURNING account, expires"
        row = await self._one(sql, (code_hash,))
        return None if row is None else LinkCode(row[0], row[1])

    async def set_recovery_codes(self, account: str, code_hashes: list[str]) -> None:
        def run(c: sqlite3.Connection) -> None:
            c.execute("DELETE FROM recovery_codes WHERE account = ?", (account,))
            c.executemany(
                "INSERT OR REPLACE INTO recovery_codes (code_hash, account) VALUES (?, ?)",
                [(h, account) for h in code_hashes],
            )

        await self._tx(run)

    async def take_recovery_code(self, code_hash: str) -> str | None:
        sql = "DELETE FROM recovery_codes WHERE code_hash = ? RETURNING account"
        row = await self._one(sql, (code_hash,))
        return None if row is None else str(row[0])

    async def recovery_codes_left(self, account: str) -> int:
        sql = "SELECT COUNT(*) FROM recovery_codes WHERE account = ?"
        return int((await self._one(sql, (account,)))[0])

    # -- passkeys ----------------------------------------------------------------
    async def add_passkey(self, passkey: Passkey) -> bool:
        p = passkey
        sql = f"INSERT OR IGNORE INTO passkeys ({_PASSKEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"
        args = (p.credential_id, p.account, p.public_key, p.sign_count, p.label, p.created,
                p.last_used)  # fmt: skip
        return await self._changes(sql, args) == 1

    async def passkey(self, credential_id: bytes) -> Passkey | None:
        sql = f"SELECT {_PASSKEY_COLUMNS} FROM passkeys WHERE credential_id = ?"
        return _passkey(await self._one(sql, (credential_id,)))

    async def passkeys(self, account: str) -> list[Passkey]:
        sql = (
            f"SELECT {_PASSKEY_COLUMNS} FROM passkeys WHERE account = ?"
            " ORDER BY created, credential_id"
        )
        return [p for row in await self._all(sql, (account,)) if (p := _passkey(row))]

    async def use_passkey(self, credential_id: bytes, sign_count: int, t: float) -> bool:
        sql = (
            "UPDATE passkeys SET sign_count = ?, last_used = ? WHERE credential_id = ?"
            " AND (sign_count < ? OR (sign_count = 0 AND ? = 0))"
        )
        return await self._changes(sql, (sign_count, t, credential_id, sign_count, sign_count)) == 1

    async def remove_passkey(self, credential_id: bytes) -> bool:
        sql = "DELETE FROM passkeys WHERE credential_id = ?"
        return await self._changes(sql, (credential_id,)) == 1

    # -- history -----------------------------------------------------------------
    async def add_history(
        self, player: str, deals: list[DealEntry], rounds: list[RoundEntry]
    ) -> None:
        def run(c: sqlite3.Connection) -> None:
            if c.execute("SELECT 1 FROM deleted WHERE player = ?", (player,)).fetchone():
                return  # a room folded after the deletion brings nothing back
            for entry in deals:
                added = c.execute(
                    "INSERT OR IGNORE INTO deals (player, key, t, data) VALUES (?, ?, ?, ?)",
                    (player, entry.key, entry.t, json.dumps(dataclasses.asdict(entry))),
                ).rowcount
                if added != 1:
                    continue  # kept already: counted already
                for tally in tallies(entry):
                    row = c.execute(
                        "SELECT ladder, deals, wins, best_seconds, moves, score FROM totals"
                        " WHERE player = ? AND ladder = ?",
                        (player, tally),
                    ).fetchone()
                    t = add_to_totals(LadderTotals(*row) if row else None, entry, tally)
                    c.execute(
                        "INSERT OR REPLACE INTO totals (player, ladder, deals, wins,"
                        " best_seconds, moves, score) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (player, t.ladder, t.deals, t.wins, t.best_seconds, t.moves, t.score),
                    )
            c.executemany(
                "INSERT OR IGNORE INTO rounds (player, key, t, data) VALUES (?, ?, ?, ?)",
                [(player, r.key, r.t, json.dumps(dataclasses.asdict(r))) for r in rounds],
            )

        await self._tx(run)

    async def deal_history(self, player: str, before: float | None, limit: int) -> list[DealEntry]:
        rows = await self._all(
            "SELECT data FROM deals WHERE player = ? AND t < ? ORDER BY t DESC, key DESC LIMIT ?",
            (player, float("inf") if before is None else before, limit),
        )
        return [DealEntry(**json.loads(data)) for (data,) in rows]

    async def round_history(
        self, player: str, before: float | None, limit: int
    ) -> list[RoundEntry]:
        rows = await self._all(
            "SELECT data FROM rounds WHERE player = ? AND t < ? ORDER BY t DESC, key DESC LIMIT ?",
            (player, float("inf") if before is None else before, limit),
        )
        return [RoundEntry(**json.loads(data)) for (data,) in rows]

    async def totals(self, player: str) -> list[LadderTotals]:
        return ladders_of(await self._tallies(player))

    async def weeks(self, player: str, since: float) -> list[LadderTotals]:
        return weeks_of(await self._tallies(player), since)

    async def _tallies(self, player: str) -> list[LadderTotals]:
        """Every tally of the player: ladders and weeks (a year holds 52 weeks)."""
        rows = await self._all(
            "SELECT ladder, deals, wins, best_seconds, moves, score FROM totals WHERE player = ?",
            (player,),
        )
        return [LadderTotals(*row) for row in rows]

    async def put_replay(self, key: str, replay: bytes, expires: float) -> None:
        def run(c: sqlite3.Connection) -> None:
            c.execute("DELETE FROM replays WHERE expires <= ?", (time.time(),))
            c.execute(
                "INSERT OR REPLACE INTO replays (key, data, expires) VALUES (?, ?, ?)",
                (key, replay, expires),
            )

        await self._tx(run)

    async def replay(self, key: str) -> bytes | None:
        sql = "SELECT data FROM replays WHERE key = ? AND expires > ?"
        row = await self._one(sql, (key, time.time()))
        return None if row is None else bytes(row[0])

    # -- friends -----------------------------------------------------------------
    async def set_friendship(self, friendship: Friendship) -> None:
        f = friendship
        lo, hi = sorted((f.a, f.b))
        sql = (
            "INSERT OR REPLACE INTO friendships (lo, hi, a, b, state, since)"
            " VALUES (?, ?, ?, ?, ?, ?)"
        )
        await self._changes(sql, (lo, hi, f.a, f.b, f.state.value, f.since))

    async def remove_friendship(self, a: str, b: str) -> bool:
        lo, hi = sorted((a, b))
        sql = "DELETE FROM friendships WHERE lo = ? AND hi = ?"
        return await self._changes(sql, (lo, hi)) == 1

    async def friendships(self, account: str) -> list[Friendship]:
        rows = await self._all(
            "SELECT a, b, state, since FROM friendships WHERE lo = ? OR hi = ?"
            " ORDER BY since, a, b",
            (account, account),
        )
        return [Friendship(a, b, FriendState(state), since) for a, b, state, since in rows]

    async def set_friend_link(self, account: str, link_hash: str) -> None:
        def run(c: sqlite3.Connection) -> None:
            c.execute("DELETE FROM friend_links WHERE account = ?", (account,))
            c.execute(
                "INSERT OR REPLACE INTO friend_links (link_hash, account) VALUES (?, ?)",
                (link_hash, account),
            )

        await self._tx(run)

    async def friend_link(self, link_hash: str) -> str | None:
        row = await self._one("SELECT account FROM friend_links WHERE link_hash = ?", (link_hash,))
        return None if row is None else str(row[0])

    # -- ratings ---------------------------------------------------------------
    async def ratings(self, ladder: str, players: Iterable[str]) -> dict[str, Rating]:
        wanted = list(players)

        def run(c: sqlite3.Connection) -> dict[str, Rating]:
            out: dict[str, Rating] = {}
            for p in wanted:
                row = c.execute(
                    "SELECT mu, sigma, rounds, last_played FROM ratings"
                    " WHERE ladder = ? AND player = ?",
                    (ladder, p),
                ).fetchone()
                if row is not None:
                    out[p] = Rating(*row)
            return out

        return await self._tx(run)

    async def apply_rated_round(
        self, rnd: RatedRound, seen: dict[str, int], after: dict[str, Rating]
    ) -> Applied:
        def run(c: sqlite3.Connection) -> Applied:
            if c.execute("SELECT 1 FROM rated_rounds WHERE key = ?", (rnd.key,)).fetchone():
                return Applied.ALREADY
            for p in after:
                row = c.execute(
                    "SELECT rounds FROM ratings WHERE ladder = ? AND player = ?", (rnd.ladder, p)
                ).fetchone()
                if (row[0] if row else 0) != seen.get(p, 0):
                    return Applied.STALE
            _log_rated(c, rnd, after)
            return Applied.NEW

        return await self._tx(run)

    async def rated_round(self, key: str) -> RatedRound | None:
        row = await self._one(
            "SELECT key, ladder, t, places FROM rated_rounds WHERE key = ?", (key,)
        )
        return None if row is None else _rated(row)

    async def rated_rounds(self, ladder: str) -> list[RatedRound]:
        rows = await self._all(
            "SELECT key, ladder, t, places FROM rated_rounds WHERE ladder = ? ORDER BY seq",
            (ladder,),
        )
        return [_rated(row) for row in rows]

    async def replace_ladder(
        self, ladder: str, rounds: list[RatedRound], read: Sequence[str]
    ) -> bool:
        ratings, charts = replay_with_chart(rounds)

        def run(c: sqlite3.Connection) -> bool:
            logged = c.execute(
                "SELECT key FROM rated_rounds WHERE ladder = ? ORDER BY seq", (ladder,)
            ).fetchall()
            if [k for (k,) in logged] != list(read):
                return False
            for table in ("ratings", "rated_rounds", "rating_points"):
                c.execute(f"DELETE FROM {table} WHERE ladder = ?", (ladder,))
            gone = _deleted(c, list(ratings))
            seq_of: dict[str, int] = {}
            for rnd in rounds:
                seq_of[rnd.key] = (
                    c.execute(
                        "INSERT INTO rated_rounds (key, ladder, t, places) VALUES (?, ?, ?, ?)",
                        (rnd.key, rnd.ladder, rnd.t, json.dumps(rnd.places)),
                    ).lastrowid
                    or 0
                )
            c.executemany(
                "INSERT INTO rating_points (ladder, player, seq, key, t, rating)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (ladder, p, seq_of[pt.key], pt.key, pt.t, pt.rating)
                    for p, points in charts.items()
                    if p not in gone
                    for pt in points
                ],
            )
            _put_ratings(c, ladder, {p: r for p, r in ratings.items() if p not in gone})
            return True

        return await self._tx(run)

    async def ladder_table(self, ladder: str, start: int, count: int) -> list[Standing]:
        rows = await self._all(
            "SELECT player, shown, rounds FROM ratings WHERE ladder = ?"
            " ORDER BY shown DESC, player LIMIT ? OFFSET ?",
            (ladder, max(count, 0), max(start, 0)),
        )
        return [Standing(p, n, k, Rating(rounds=k).provisional) for p, n, k in rows]

    async def ladder_position(self, ladder: str, player: str) -> int | None:
        def run(c: sqlite3.Connection) -> int | None:
            row = c.execute(
                "SELECT shown FROM ratings WHERE ladder = ? AND player = ?", (ladder, player)
            ).fetchone()
            if row is None:
                return None
            ahead: int = c.execute(
                "SELECT COUNT(*) FROM ratings WHERE ladder = ?"
                " AND (shown > ? OR (shown = ? AND player < ?))",
                (ladder, row[0], row[0], player),
            ).fetchone()[0]
            return ahead

        return await self._tx(run)

    async def rating_chart(self, ladder: str, player: str) -> list[ChartPoint]:
        rows = await self._all(
            "SELECT key, t, rating FROM rating_points WHERE ladder = ? AND player = ? ORDER BY seq",
            (ladder, player),
        )
        return [ChartPoint(*row) for row in rows]


def _rated(row: Any) -> RatedRound:
    key, ladder, t, places = row
    return RatedRound(key, ladder, t, json.loads(places))


def _put_ratings(c: sqlite3.Connection, ladder: str, ratings: dict[str, Rating]) -> None:
    c.executemany(
        "INSERT OR REPLACE INTO ratings (ladder, player, mu, sigma, rounds, last_played, shown)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(ladder, p, r.mu, r.sigma, r.rounds, r.last_played, shown(r)) for p, r in ratings.items()],
    )


def _deleted(c: sqlite3.Connection, players: list[str]) -> set[str]:
    return {
        p for p in players if c.execute("SELECT 1 FROM deleted WHERE player = ?", (p,)).fetchone()
    }


def _log_rated(c: sqlite3.Connection, rnd: RatedRound, after: dict[str, Rating]) -> None:
    gone = _deleted(c, list(after))
    after = {p: r for p, r in after.items() if p not in gone}
    seq = c.execute(
        "INSERT INTO rated_rounds (key, ladder, t, places) VALUES (?, ?, ?, ?)",
        (rnd.key, rnd.ladder, rnd.t, json.dumps(rnd.places)),
    ).lastrowid
    c.executemany(
        "INSERT INTO rating_points (ladder, player, seq, key, t, rating) VALUES (?, ?, ?, ?, ?, ?)",
        [
            (rnd.ladder, p, seq, pt.key, pt.t, pt.rating)
            for p, pt in chart_points(rnd, after).items()
        ],
    )
    _put_ratings(c, rnd.ladder, after)
