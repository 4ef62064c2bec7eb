"""Published days on local disk: ``DIR/daily.sqlite3`` beside the other stores.

Built like server/accounts/sqlite.py, for the same reasons: WAL with
``synchronous=FULL`` (a day is durable when :meth:`SqliteDaily.publish`
returns, so a ``kill -9`` right after cannot lose a commitment that was
shown), one thread and one connection off the event loop, and
``DIR/daily.lock`` held while open so a second process cannot write the same
days. ``publish`` is ``INSERT OR IGNORE`` and a read of the row in one
transaction: the first deal kept for a day is the one answered ever after.
"""

from __future__ import annotations

import sqlite3
from datetime import date
from typing import Any

from ..store.sqlite_file import SqliteFile
from .schedule import DailyDeal

__all__ = ["DAILY_DB", "SqliteDaily"]


DAILY_DB = "daily.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS daily (
    day TEXT NOT NULL,
    ladder TEXT NOT NULL,
    seed TEXT NOT NULL,
    line TEXT NOT NULL,
    commitment TEXT NOT NULL,
    published REAL NOT NULL,
    PRIMARY KEY (day, ladder)
) WITHOUT ROWID;
PRAGMA user_version = 1;
"""
_COLUMNS = "day, ladder, seed, line, commitment, published"


def _deal(row: Any) -> DailyDeal:
    day, ladder, seed, line, digest, published = row
    return DailyDeal(date.fromisoformat(day), ladder, seed, line, digest, published)


class SqliteDaily(SqliteFile):
    """:class:`~server.daily.store.DailyStore` on SQLite; not usable until
    :meth:`open` (or use :meth:`at`)."""

    FILE = DAILY_DB
    SCHEMA = _SCHEMA
    WHAT = "daily deals"

    async def publish(self, deal: DailyDeal) -> DailyDeal:
        day = deal.day.isoformat()

        def run(c: sqlite3.Connection) -> Any:
            c.execute(
                f"INSERT OR IGNORE INTO daily ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                (day, deal.ladder, deal.seed, deal.line, deal.commitment, deal.published),
            )
            return c.execute(
                f"SELECT {_COLUMNS} FROM daily WHERE day = ? AND ladder = ?", (day, deal.ladder)
            ).fetchone()

        return _deal(await self._tx(run))

    async def days(self, first: date, last: date) -> list[DailyDeal]:
        rows = await self._tx(
            lambda c: c.execute(
                f"SELECT {_COLUMNS} FROM daily WHERE day BETWEEN ? AND ? ORDER BY day, ladder",
                (first.isoformat(), last.isoformat()),
            ).fetchall()
        )
        return [_deal(r) for r in rows]
