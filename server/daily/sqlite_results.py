"""Daily results on local disk: ``DIR/daily_results.sqlite3`` beside the room
and account stores' files (``serve --data-dir``).

Built as the account store is (server/accounts/sqlite.py): WAL with
``synchronous=FULL``, so a write has been fsynced when its coroutine returns;
one connection in one thread, each operation one transaction, which is what
makes a claim and a result happen once (``INSERT OR IGNORE`` on the run's key,
and the streak folded in the same transaction only when the result is new).
The board is an index on (date, ladder, board score, player): a rank is a count
of the index entries before the run's score, a page a range of it read from the
index alone (then its 50 results by key), and each daily's count of results is
kept beside it, counted in the transaction that keeps a result. A run's line
(results.py ``line_bytes``) is a row of ``lines``, inserted in that same
transaction, and read by key alone. That table has rowids, unlike the others:
a line is a kilobyte or two, and a table without rowids keeps only about 1 KB
of a row in its page, the rest on overflow pages of its own (4 KB for the
little over), where a table with rowids keeps up to 4 KB in the page.

A file written before runs not won were ranked by how far they got (``PRAGMA
user_version`` 0) is brought to the rule of runs once, on opening: each result
kept without its cards home gains them from its line, and its board score is
computed again (:func:`_rank_by_homes`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from ..store.base import StoreUnavailable
from ..store.sqlite_file import SqliteFile
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
    streaks_after,
)

__all__ = ["RESULTS_DB", "SqliteResults"]


RESULTS_DB = "daily_results.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    date TEXT NOT NULL,
    ladder TEXT NOT NULL,
    player TEXT NOT NULL,
    code TEXT NOT NULL,
    PRIMARY KEY (date, ladder, player)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS results (
    date TEXT NOT NULL,
    ladder TEXT NOT NULL,
    player TEXT NOT NULL,
    score INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (date, ladder, player)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lines (
    date TEXT NOT NULL,
    ladder TEXT NOT NULL,
    player TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (date, ladder, player)
);
CREATE TABLE IF NOT EXISTS ghosts (
    date TEXT NOT NULL,
    ladder TEXT NOT NULL,
    player TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (date, ladder, player)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS board ON results (date, ladder, score, player);
CREATE INDEX IF NOT EXISTS runs_of ON results (player);
CREATE TABLE IF NOT EXISTS counts (
    date TEXT NOT NULL,
    ladder TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (date, ladder)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS streaks (
    player TEXT PRIMARY KEY,
    played INTEGER NOT NULL,
    played_day INTEGER NOT NULL,
    won INTEGER NOT NULL,
    won_day INTEGER NOT NULL,
    best_played INTEGER NOT NULL,
    best_won INTEGER NOT NULL
) WITHOUT ROWID;
"""


def _run(data: str) -> RunResult:
    return RunResult.from_json(json.loads(data))


def _data(run: RunResult) -> str:
    return json.dumps(run.to_json(), separators=(",", ":"))


def _ahead(c: sqlite3.Connection, date: str, ladder: str, score: int) -> int:
    sql = (
        "SELECT COUNT(*) FROM results INDEXED BY board WHERE date = ? AND ladder = ? AND score < ?"
    )
    n: int = c.execute(sql, (date, ladder, score)).fetchone()[0]
    return n


_RANKED_BY_HOMES = 1
"""``PRAGMA user_version`` once every result is kept with its cards home and
ranked by them (:func:`_rank_by_homes`); 0 in a file older than that."""


def _rank_by_homes(c: sqlite3.Connection) -> None:
    """Results kept before runs not won were ranked by how far they got, with
    their cards home and the moment the last went home, as their lines tell
    them, and their board scores by the rule of runs now: once, in the
    transaction that marks the file as done."""
    if c.execute("PRAGMA user_version").fetchone()[0] >= _RANKED_BY_HOMES:
        return
    rows = c.execute(
        "SELECT results.date, results.ladder, results.player, results.data, lines.data"
        " FROM results LEFT JOIN lines USING (date, ladder, player)"
        " WHERE json_extract(results.data, '$.home') IS NULL"
    ).fetchall()
    for date, ladder, player, data, line in rows:
        run = _run(data)
        if not run.won and line is not None:
            run = run.with_line(line_from_bytes(line))
        c.execute(
            "UPDATE results SET score = ?, data = ? WHERE date = ? AND ladder = ? AND player = ?",
            (run.board_score, _data(run), date, ladder, player),
        )
    c.execute(f"PRAGMA user_version = {_RANKED_BY_HOMES}")


class SqliteResults(SqliteFile):
    """:class:`~server.daily.results.ResultStore` on SQLite; see the module
    docstring. Not usable until :meth:`open` (or use :meth:`at`)."""

    FILE = RESULTS_DB
    SCHEMA = _SCHEMA
    WHAT = "daily results"

    async def open(self) -> None:
        await super().open()
        try:
            await self._tx(_rank_by_homes)
        except StoreUnavailable:
            await self.close()
            raise

    async def claim(self, date: str, ladder: str, player: str, code: str) -> RunClaim:
        def run(c: sqlite3.Connection) -> RunClaim:
            key = (date, ladder, player)
            c.execute("INSERT OR IGNORE INTO claims VALUES (?, ?, ?, ?)", (*key, code))
            return _claimed(c, key) or RunClaim(code, False)

        return await self._tx(run)

    async def claimed(self, date: str, ladder: str, player: str) -> RunClaim | None:
        return await self._tx(lambda c: _claimed(c, (date, ladder, player)))

    async def keep_ghosts(
        self, date: str, ladder: str, player: str, ghosts: GhostChoice
    ) -> GhostChoice:
        def run(c: sqlite3.Connection) -> GhostChoice:
            key = (date, ladder, player)
            c.execute(
                "INSERT OR IGNORE INTO ghosts VALUES (?, ?, ?, ?)", (*key, json.dumps(ghosts))
            )
            return _ghosts(c, key) or []

        return await self._tx(run)

    async def kept_ghosts(self, date: str, ladder: str, player: str) -> GhostChoice | None:
        return await self._tx(lambda c: _ghosts(c, (date, ladder, player)))

    async def add_result(self, result: RunResult, line: Sequence[TimedEntry]) -> bool:
        r = result
        packed = line_bytes(line)

        def run(c: sqlite3.Connection) -> bool:
            key = (r.date, r.ladder, r.player)
            claim = c.execute(
                "SELECT code FROM claims WHERE date = ? AND ladder = ? AND player = ?", key
            ).fetchone()
            if claim is None or claim[0] != r.code:
                return False
            sql = "INSERT OR IGNORE INTO results VALUES (?, ?, ?, ?, ?)"
            if c.execute(sql, (*key, r.board_score, _data(r))).rowcount != 1:
                return False
            c.execute("INSERT INTO lines VALUES (?, ?, ?, ?)", (*key, packed))
            c.execute(
                "INSERT INTO counts VALUES (?, ?, 1)"
                " ON CONFLICT (date, ladder) DO UPDATE SET n = n + 1",
                (r.date, r.ladder),
            )
            row = c.execute(
                "SELECT played, played_day, won, won_day, best_played, best_won"
                " FROM streaks WHERE player = ?",
                (r.player,),
            ).fetchone()
            s = streaks_after(Streaks(*row) if row else Streaks(), r.day, r.won)
            c.execute(
                "INSERT OR REPLACE INTO streaks VALUES (?, ?, ?, ?, ?, ?, ?)",
                (r.player, s.played, s.played_day, s.won, s.won_day, s.best_played, s.best_won),
            )
            return True

        return await self._tx(run)

    async def rank(self, date: str, ladder: str, player: str) -> RankedRun | None:
        def run(c: sqlite3.Connection) -> RankedRun | None:
            sql = "SELECT score, data FROM results WHERE date = ? AND ladder = ? AND player = ?"
            row = c.execute(sql, (date, ladder, player)).fetchone()
            if row is None:
                return None
            return 1 + _ahead(c, date, ladder, row[0]), _run(row[1])

        return await self._tx(run)

    async def board(self, date: str, ladder: str, start: int, limit: int) -> list[RankedRun]:
        def run(c: sqlite3.Connection) -> list[RankedRun]:
            # The page's players from the board index alone (it holds the score
            # and the key: skipping to a deep page reads no result), then theirs.
            sql = (
                "SELECT score, player FROM results INDEXED BY board"
                " WHERE date = ? AND ladder = ? ORDER BY score, player LIMIT ? OFFSET ?"
            )
            rows = c.execute(sql, (date, ladder, limit, start)).fetchall()
            if not rows:
                return []
            marks = ", ".join("?" * len(rows))
            data = dict(
                c.execute(
                    f"SELECT player, data FROM results"
                    f" WHERE date = ? AND ladder = ? AND player IN ({marks})",
                    (date, ladder, *(p for _, p in rows)),
                ).fetchall()
            )
            first = 1 + _ahead(c, date, ladder, rows[0][0])
            return ranked([_run(data[p]) for _, p in rows], first, start)

        return await self._tx(run)

    async def results_of(self, date: str, ladder: str, players: Sequence[str]) -> list[RunResult]:
        if not players:
            return []
        marks = ", ".join("?" * len(players))
        sql = f"SELECT data FROM results WHERE date = ? AND ladder = ? AND player IN ({marks})"
        rows = await self._tx(lambda c: c.execute(sql, (date, ladder, *players)).fetchall())
        return [_run(data) for (data,) in rows]

    async def lines(
        self, date: str, ladder: str, players: Sequence[str]
    ) -> dict[str, list[TimedEntry]]:
        if not players:
            return {}
        marks = ", ".join("?" * len(players))
        sql = (
            f"SELECT player, data FROM lines WHERE date = ? AND ladder = ? AND player IN ({marks})"
        )
        rows = await self._tx(lambda c: c.execute(sql, (date, ladder, *players)).fetchall())
        return {player: line_from_bytes(data) for player, data in rows}

    async def runs_of(self, player: str) -> list[RunResult]:
        sql = "SELECT data FROM results WHERE player = ?"
        rows = await self._tx(lambda c: c.execute(sql, (player,)).fetchall())
        return [_run(data) for (data,) in rows]

    async def count(self, date: str, ladder: str) -> int:
        sql = "SELECT n FROM counts WHERE date = ? AND ladder = ?"
        row = await self._tx(lambda c: c.execute(sql, (date, ladder)).fetchone())
        return int(row[0]) if row else 0

    async def streaks(self, player: str) -> Streaks:
        sql = (
            "SELECT played, played_day, won, won_day, best_played, best_won"
            " FROM streaks WHERE player = ?"
        )
        row = await self._tx(lambda c: c.execute(sql, (player,)).fetchone())
        return Streaks(*row) if row else Streaks()


def _claimed(c: sqlite3.Connection, key: tuple[str, str, str]) -> RunClaim | None:
    row = c.execute(
        "SELECT code, EXISTS (SELECT 1 FROM results WHERE date = ? AND ladder = ? AND player = ?)"
        " FROM claims WHERE date = ? AND ladder = ? AND player = ?",
        (*key, *key),
    ).fetchone()
    return None if row is None else RunClaim(row[0], bool(row[1]))


def _ghosts(c: sqlite3.Connection, key: tuple[str, str, str]) -> GhostChoice | None:
    sql = "SELECT data FROM ghosts WHERE date = ? AND ladder = ? AND player = ?"
    row = c.execute(sql, key).fetchone()
    return None if row is None else [(kind, player) for kind, player in json.loads(row[0])]
