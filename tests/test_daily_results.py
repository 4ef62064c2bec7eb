"""Daily results in each store (memory, SQLite, Redis) and across a ``kill -9``:
claims are taken once, a result counts once and only from the room its claim
names, the board ranks by the one rule of runs with shared ranks and pages,
streaks fold days in a row; and a run over before a crash is counted once
after the restart (the rebuilt room writes its result again)."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from hypothesis import given

from protocol.moves import Move, MoveKind
from protocol.settings import DealRules
from server.daily import sqlite_results
from server.daily.memory_results import MemoryResults
from server.daily.redis import RedisDaily
from server.daily.redis_results import RedisResults
from server.daily.results import (
    LINE_KINDS,
    ResultStore,
    RunResult,
    TimedEntry,
    day_number,
    homes_of_line,
    line_bytes,
    pack_line,
    unpack_line,
)
from server.daily.schedule import day_of
from server.daily.sqlite_results import SqliteResults
from tests.support.dailies import publish, published_on_disk, winning_moves
from tests.support.embedded import EmbeddedServer
from tests.support.processes import UNCAPPED, RedisServer, ServerProcess
from tests.support.raw_client import player, resume
from tests.test_engine_properties import SETTINGS, any_rules, choices, play, seeds

DAY = "2026-12-02"
D1 = "classic-draw1"


@asynccontextmanager
async def each_store(
    kind: str, tmp_path: Path, redis: RedisServer | None
) -> AsyncIterator[ResultStore]:
    if kind == "memory":
        yield MemoryResults()
    elif kind == "sqlite":
        store = await SqliteResults.at(tmp_path / "data")
        try:
            yield store
        finally:
            await store.close()
    else:
        assert redis is not None
        got = await RedisResults.from_url(redis.url)
        try:
            yield got
        finally:
            await got.close()


def run(
    player: str,
    result: str,
    ms: int,
    moves: int,
    date: str = DAY,
    *,
    home: int = 0,
    score: int = 0,
    home_ms: int = 0,
) -> RunResult:
    """A run; a won one has every card home, the last with its winning move."""
    if result == "won":
        home, home_ms = 52, ms
    name = player.title()
    return RunResult(
        date, D1, player, name, result, ms, moves, score, home, home_ms, 0.0, f"R-{player}"
    )


def line_of(r: RunResult) -> list[TimedEntry]:
    """A line of the run's length, its moves timed apart (one each second)."""
    return [(i * 1000, "draw", 0, 0, 1) for i in range(r.moves)]


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_each_store_claims_counts_and_ranks_alike(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    redis = request.getfixturevalue("redis") if kind == "redis" else None
    async with each_store(kind, tmp_path, redis) as store:
        runs = [
            # Resigned at once with 7 cards home: below every run that got further.
            run("ann", "resigned", 3_000, 9, home=7, score=85, home_ms=2_500),
            run("bea", "won", 90_000, 120),
            run("cyd", "won", 60_000, 130),
            run("dan", "won", 60_000, 130),  # the same as cyd: a shared rank
            run("eve", "won", 60_000, 110),  # as fast, fewer moves: ahead
            # 15 cards home in 49 s, then ten minutes more to a dead end.
            run("fay", "dead", 600_000, 200, home=15, score=160, home_ms=49_000),
            # As far, the last card home later: behind fay, however soon it left.
            run("hal", "stopped", 60_000, 60, home=15, score=160, home_ms=52_000),
            # Equal to fay on all the rule reads, its time and moves aside: shared.
            run("ivy", "resigned", 70_000, 80, home=15, score=160, home_ms=49_000),
        ]
        # A result counts only from the room its claim names.
        assert not await store.add_result(runs[0], line_of(runs[0]))
        for r in runs:
            claim = await store.claim(DAY, D1, r.player, r.code)
            assert (claim.code, claim.over) == (r.code, False)
            assert (await store.claim(DAY, D1, r.player, "OTHER")).code == r.code  # once
        other_room = RunResult(DAY, D1, "ann", "Ann", "won", 1, 1, 0, 52, 1, 0.0, "OTHER")
        assert not await store.add_result(other_room, [(0, "resign", 0, 0, 1)])
        assert await store.lines(DAY, D1, ["ann"]) == {}  # nor is its line kept
        for r in runs:
            assert await store.add_result(r, line_of(r))
            assert not await store.add_result(r, [])  # written again: counted once
        claimed = await store.claimed(DAY, D1, "ann")
        assert claimed is not None and claimed.over
        assert await store.claimed(DAY, D1, "nobody") is None
        assert await store.count(DAY, D1) == 8

        board = await store.board(DAY, D1, 0, 10)
        assert [(rank, r.player) for rank, r in board][:1] == [(1, "eve")]
        assert sorted((rank, r.player) for rank, r in board[1:3]) == [(2, "cyd"), (2, "dan")]
        assert [(rank, r.player) for rank, r in board[3:4]] == [(4, "bea")]
        assert sorted((rank, r.player) for rank, r in board[4:6]) == [(5, "fay"), (5, "ivy")]
        assert [(rank, r.player) for rank, r in board[6:]] == [(7, "hal"), (8, "ann")]
        page = await store.board(DAY, D1, 2, 2)  # a page starting inside a tie
        assert [rank for rank, _ in page] == [2, 4]
        assert [rank for rank, _ in await store.board(DAY, D1, 5, 2)] == [5, 7]
        assert await store.board(DAY, D1, 8, 10) == []
        ranked = await store.rank(DAY, D1, "dan")
        assert ranked is not None and ranked[0] == 2 and ranked[1] == runs[3]
        assert await store.rank(DAY, D1, "ann") == (8, runs[0])
        assert await store.rank(DAY, D1, "ivy") == (5, runs[7])
        assert await store.rank(DAY, D1, "nobody") is None
        assert await store.runs_of("bea") == [runs[1]]
        assert await store.runs_of("nobody") == []
        some = await store.results_of(DAY, D1, ["bea", "nobody", "fay"])
        assert sorted(r.player for r in some) == ["bea", "fay"]

        # Streaks: days in a row, by UTC day; a second run the same day adds none.
        day = day_number(DAY)
        for i, result in enumerate(["won", "won", "resigned", "won"]):
            date = (dt.date.fromisoformat(DAY) + dt.timedelta(i + 1)).isoformat()
            r = run("gus", result, 1000, 10, date)
            await store.claim(date, D1, "gus", r.code)
            assert await store.add_result(r, line_of(r))
        assert len(await store.runs_of("gus")) == 4
        s = await store.streaks("gus")
        assert (s.played, s.played_day, s.won, s.won_day) == (4, day + 4, 1, day + 4)
        assert (s.best_played, s.best_won) == (4, 2)
        assert (await store.streaks("nobody")).played == 0


def kept_before(r: RunResult) -> tuple[str, int]:
    """A result as the version before runs not won were ranked by how far they
    got kept it: its JSON without cards home, and its board score the win in
    bit 47 above the time and the moves, whatever the run did."""
    data = {k: v for k, v in r.to_json().items() if k not in ("home", "home_ms")}
    lost = 0 if r.won else 1
    return json.dumps(data, separators=(",", ":")), (lost << 47) | (r.ms << 20) | r.moves


def lines_before() -> dict[str, tuple[RunResult, list[TimedEntry]]]:
    """Runs kept before, with their lines: a win; one resigned at once with 7
    cards home; one that got 15 home by 49 s (one taken back and played home
    again on the way) and then drew for ten minutes before it was dead; one as
    far whose last card went home at 52 s, that left soon after."""
    quick = [(i * 300, "tableau_foundation", i % 7, 0, 1) for i in range(7)]
    far = [(i * 3_000, "waste_foundation", 0, 0, 1) for i in range(15)]  # the 15th at 42 s
    far += [(45_000, "foundation_tableau", 0, 3, 1), (49_000, "tableau_foundation", 3, 0, 1)]
    far += [(49_000 + i * 10_000, "draw", 0, 0, 1) for i in range(1, 56)]
    as_far = [(i * 3_000, "waste_foundation", 0, 0, 1) for i in range(14)]
    as_far += [(52_000, "tableau_foundation", 2, 0, 1), (55_000, "resign", 0, 0, 1)]
    won = [(i * 1_000, "tableau_foundation", i % 7, 0, 1) for i in range(90)]
    return {
        "ann": (run("ann", "won", 89_000, 90), won),
        "bob": (run("bob", "resigned", 3_000, 8, score=85), [*quick, (3_000, "resign", 0, 0, 1)]),
        "cyd": (run("cyd", "dead", 599_000, 72, score=160), far),
        "dan": (run("dan", "stopped", 60_000, 16, score=160), as_far),
    }


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
async def test_results_kept_before_are_ranked_by_how_far_they_got_once_opened(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A store written the way the version before wrote it (results without
    cards home, board scores by time for every run): opened, each result gains
    its cards home and the moment the last went home from its line, and the
    board ranks by the rule of runs: the run resigned at once with 7 home goes
    below the two that got 15 home, the earlier of those first. Done once (the
    file's ``user_version``, a mark in Redis); a run written after ranks among
    them."""
    redis: RedisServer | None = request.getfixturevalue("redis") if kind == "redis" else None
    kept = lines_before()
    if kind == "sqlite":
        (tmp_path / "data").mkdir()
        with sqlite3.connect(tmp_path / "data" / "daily_results.sqlite3") as db:
            db.executescript(sqlite_results._SCHEMA)
            for player, (r, line) in kept.items():
                data, score = kept_before(r)
                db.execute("INSERT INTO claims VALUES (?, ?, ?, ?)", (DAY, D1, player, r.code))
                db.execute(
                    "INSERT INTO results VALUES (?, ?, ?, ?, ?)", (DAY, D1, player, score, data)
                )
                db.execute(
                    "INSERT INTO lines VALUES (?, ?, ?, ?)", (DAY, D1, player, line_bytes(line))
                )
            db.execute("INSERT INTO counts VALUES (?, ?, ?)", (DAY, D1, len(kept)))
    else:
        assert redis is not None
        d = f"klondike:daily:{{}}:{DAY}:{D1}"
        for player, (r, line) in kept.items():
            data, score = kept_before(r)
            redis("HSET", d.format("claims"), player, r.code)
            redis("HSET", d.format("results"), player, data)
            redis("ZADD", d.format("board"), score, player)
            redis("HSET", d.format("lines"), player, line_bytes(line))
            redis("SADD", f"klondike:daily:runs:{player}", d.format("results"))
    async with each_store(kind, tmp_path, redis) as store:
        board = await store.board(DAY, D1, 0, 10)
        assert [(rank, r.player) for rank, r in board] == [
            (1, "ann"), (2, "cyd"), (3, "dan"), (4, "bob"),
        ]  # fmt: skip
        homes = {r.player: (r.home, r.home_ms) for _, r in board}
        assert homes == {
            "ann": (52, 89_000), "bob": (7, 1_800), "cyd": (15, 49_000), "dan": (15, 52_000)
        }  # fmt: skip
        assert await store.rank(DAY, D1, "bob") == (4, board[3][1])
        # A run written now, by the rule of runs, among them.
        eve = run("eve", "resigned", 9_000, 20, home=15, score=160, home_ms=50_000)
        await store.claim(DAY, D1, "eve", eve.code)
        assert await store.add_result(eve, [])
        assert [r.player for _, r in await store.board(DAY, D1, 0, 10)] == [
            "ann", "cyd", "eve", "dan", "bob",
        ]  # fmt: skip
    if kind == "sqlite":
        with sqlite3.connect(tmp_path / "data" / "daily_results.sqlite3") as db:
            assert db.execute("PRAGMA user_version").fetchone() == (1,)
    else:
        assert redis is not None
        assert redis("GET", "klondike:daily:ranked_by_homes") == b"1"
    # Opened again: nothing to do, and the same board.
    async with each_store(kind, tmp_path, redis) as store:
        again = [(rank, r.player) for rank, r in await store.board(DAY, D1, 0, 10)]
        assert again == [(1, "ann"), (2, "cyd"), (3, "eve"), (4, "dan"), (5, "bob")]


async def test_a_run_over_before_kill_9_is_counted_once_after_the_restart(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    deal = (await published_on_disk(data))[D1]
    server = EmbeddedServer(data)
    await server.start()
    try:
        ann = await player(server.url, "Ann")
        ann.token = (await ann.ok("take_handle", handle="Ann"))["device_token"]
        await ann.ok("daily_start", ladder=D1)
        for move in winning_moves(deal):
            assert (await ann.request("move", deal=1, move=move.to_wire()))["type"] == "moved"
        await ann.event("deal_over")
        first = await ann.ok("daily_board", ladder=D1)
        assert first["count"] == 1 and first["you"]["result"] == "won"
        await ann.close()

        await server.kill()  # kill -9: no shutdown at all
        await server.start()  # the room is rebuilt from its log; its result written again
        back, welcome = await resume(server.url, ann.token)
        daily = welcome["room"]["daily"]
        assert (daily["date"], daily["ladder"]) == (deal.day.isoformat(), D1)
        again = await back.ok("daily_board", ladder=D1)
        assert again["count"] == 1 and again["you"] == first["you"]
        assert set(again["runs"][0]) == {"rank", "player", "name", "result", "seconds", "moves",
                                         "score", "home", "home_seconds"}  # fmt: skip
        assert again["you"]["home"] == 52
        assert again["you"]["home_seconds"] == again["you"]["seconds"]  # the winning move
        streaks = (await back.ok("profile"))["profile"]["streaks"]
        assert streaks["played"] == 1 and streaks["won"] == 1
        # Its line was kept once, by the write that counted it, and is its moves.
        (run,) = (await back.ok("export_account"))["data"]["daily"]["runs"]
        wire = [m.to_wire() for m in winning_moves(deal)]
        assert [Move(MoveKind(k), a, b, n).to_wire() for _, k, a, b, n in run["line"]] == wire
        assert [t for t, *_ in run["line"]] == sorted(t for t, *_ in run["line"])
        await back.ok("leave_room")
        reply = await back.request("daily_start", ladder=D1)
        assert reply.get("code") == "daily_played", reply
        await back.close()
    finally:
        await server.kill()
    text = server.log()
    assert "Traceback" not in text and " ERROR " not in text, text[-4000:]


async def test_on_redis_a_run_over_before_kill_9_is_counted_once_after_the_restart(
    tmp_path: Path, redis: RedisServer
) -> None:
    """The same through ``serve --redis``: the results in Redis's sorted set,
    the room taken over again once its lease has lapsed."""
    today = day_of(time.time_ns() // 1_000_000)
    daily = await RedisDaily.from_url(redis.url)
    deal = (await publish(daily, today))[D1]
    await daily.close()
    node = ServerProcess(
        redis.url, tmp_path / "node.log", options=[*UNCAPPED, "--rate-limit", "100000"]
    )
    node.start()
    try:
        ann = await player(node.url, "Ann")
        ann.token = (await ann.ok("take_handle", handle="Ann"))["device_token"]
        await ann.ok("daily_start", ladder=D1)
        for move in winning_moves(deal):
            reply = await ann.request("move", deal=1, move=move.to_wire())
            assert reply["type"] == "moved", reply
        await ann.event("deal_over")
        first = await ann.ok("daily_board", ladder=D1)
        assert first["count"] == 1 and first["you"]["rank"] == 1
        await ann.close()

        node.kill()
        node.start()
        back, welcome = await resume(node.url, ann.token)
        daily = welcome["room"]["daily"]
        assert (daily["date"], daily["ladder"]) == (today.isoformat(), D1)
        again = await back.ok("daily_board", ladder=D1)
        assert again["count"] == 1 and again["you"] == first["you"]
        assert (await back.ok("profile"))["profile"]["streaks"]["played"] == 1
        lines = f"klondike:daily:lines:{today.isoformat()}:{D1}"
        assert redis("HLEN", lines) == 1  # written once, with the result
        (run,) = (await back.ok("export_account"))["data"]["daily"]["runs"]
        assert len(run["line"]) == len(winning_moves(deal))
        await back.ok("leave_room")
        assert (await back.request("daily_start", ladder=D1)).get("code") == "daily_played"
        await back.close()
    finally:
        node.kill()


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_each_store_keeps_a_runs_line_apart_from_its_result(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A run's ghost is its line: every store gives it back as written, kept
    by the write that counts the result (never by one that does not), and
    apart from it: the result, its rank and the board carry ranking fields
    only, and no line is read with them."""
    redis = request.getfixturevalue("redis") if kind == "redis" else None
    async with each_store(kind, tmp_path, redis) as store:
        moves = [
            (0, "draw", 0, 0, 1),
            (900, "waste_tableau", 0, 3, 1),
            (1_000, "tableau_tableau", 8, 2, 13),  # double klondike's ninth pile, a run of 13
            (71_000, "foundation_tableau", 7, 8, 1),  # over a minute later
            (72_500, "resign", 0, 0, 1),
        ]
        ann = run("ann", "resigned", 72_500, 5)
        bea = run("bea", "won", 60_000, 3)
        await store.claim(DAY, D1, "ann", ann.code)
        await store.claim(DAY, D1, "bea", bea.code)
        assert await store.add_result(ann, moves)
        assert not await store.add_result(ann, moves[:1])  # counted once: the line stays
        assert await store.add_result(bea, [])
        assert await store.lines(DAY, D1, ["ann", "bea", "nobody"]) == {"ann": moves, "bea": []}
        assert await store.lines(DAY, D1, []) == {}
        assert await store.results_of(DAY, D1, ["ann"]) == [ann]
        page = await store.board(DAY, D1, 0, 2)
        assert [r for _, r in page] == [bea, ann]
        assert await store.rank(DAY, D1, "ann") == (2, ann)
        assert set(ann.to_json()) == {
            "date", "ladder", "player", "name", "result", "ms", "moves", "score", "home",
            "home_ms", "ended", "code",
        }  # fmt: skip
    if kind == "redis":
        assert redis is not None
        key = f"klondike:daily:results:{DAY}:{D1}"
        assert json.loads(redis("HGET", key, "ann")) == ann.to_json()  # the page's hash: no line
        assert len(redis("HGET", f"klondike:daily:lines:{DAY}:{D1}", "ann")) < 5 * 6
    if kind == "sqlite":
        with sqlite3.connect(tmp_path / "data" / "daily_results.sqlite3") as db:
            (data,) = db.execute("SELECT data FROM results WHERE player = 'ann'").fetchone()
            assert json.loads(data) == ann.to_json()
            (line,) = db.execute("SELECT data FROM lines WHERE player = 'ann'").fetchone()
            assert len(line) < 5 * 6  # packed: about 5 bytes a move


def test_a_line_packs_every_move_kind_and_refuses_what_does_not_fit() -> None:
    """The packed kinds are stored data: every move kind has its number, and a
    move whose fields overflow theirs is refused, never kept wrong."""
    assert set(LINE_KINDS) == {kind.value for kind in MoveKind}
    line = [(i * 700, kind, i % 10, (i * 3) % 9, 1 + i % 13) for i, kind in enumerate(LINE_KINDS)]
    assert unpack_line(pack_line(line)) == line
    with pytest.raises(ValueError):
        pack_line([(0, "tableau_tableau", 16, 0, 1)])


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_each_store_keeps_a_runs_ghosts_as_first_chosen(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The ghosts kept for a run are the first chosen, whatever is chosen after."""
    redis = request.getfixturevalue("redis") if kind == "redis" else None
    first = [("friend", "bea"), ("leader", "cyd")]
    async with each_store(kind, tmp_path, redis) as store:
        assert await store.kept_ghosts(DAY, D1, "ann") is None
        assert await store.keep_ghosts(DAY, D1, "ann", first) == first
        assert await store.keep_ghosts(DAY, D1, "ann", [("leader", "dan")]) == first
        assert await store.keep_ghosts(DAY, D1, "bob", []) == []
        assert await store.kept_ghosts(DAY, D1, "bob") == []
    if kind != "memory":  # opened again: still those
        async with each_store(kind, tmp_path, redis) as store:
            assert await store.kept_ghosts(DAY, D1, "ann") == first


async def test_a_run_resumed_after_kill_9_races_the_ghosts_it_started_with(
    tmp_path: Path,
) -> None:
    """Cyd's run starts racing Bob's (the leader then); Dan's win leads the day
    after; the server is killed (``kill -9``) and started again: Cyd, back in
    the run, races Bob's run still, as the leader it was, not Dan's."""
    data = tmp_path / "data"
    deal = (await published_on_disk(data))[D1]
    server = EmbeddedServer(data)
    await server.start()
    try:
        bob = await player(server.url, "Bob")
        await bob.ok("daily_start", ladder=D1)
        assert (await bob.request("move", deal=1, move={"kind": "resign"}))["type"] == "moved"
        await bob.event("deal_over")
        await bob.close()
        cyd = await player(server.url, "Cyd")
        cyd.token = (await cyd.ok("take_handle", handle="Cyd"))["device_token"]
        await cyd.ok("daily_start", ladder=D1)
        listed = (await cyd.event("ghosts"))["ghosts"]
        assert [(g["name"], g["kind"]) for g in listed] == [("Bob", "leader")]
        await cyd.close()
        dan = await player(server.url, "Dan")
        await dan.ok("daily_start", ladder=D1)
        for move in winning_moves(deal):
            assert (await dan.request("move", deal=1, move=move.to_wire()))["type"] == "moved"
        await dan.event("deal_over")
        board = await dan.ok("daily_board", ladder=D1)
        assert [r["name"] for r in board["runs"]] == ["Dan", "Bob"]  # Dan leads now
        await dan.close()

        await server.kill()  # kill -9
        await server.start()
        back, welcome = await resume(server.url, cyd.token)
        assert welcome["room"]["daily"]["ladder"] == D1
        again = (await back.event("ghosts"))["ghosts"]
        assert [(g["name"], g["kind"]) for g in again] == [("Bob", "leader")]
        await back.close()
    finally:
        await server.kill()


@SETTINGS
@given(seed=seeds, rules=any_rules, picks=choices)
def test_a_lines_moves_tell_its_cards_home_as_the_engine_does(
    seed: str, rules: DealRules, picks: list[int]
) -> None:
    """What a result kept before its cards home were gains from its line (the
    kinds of its moves, no card) is what the engine's replay of it says, undos,
    foundation-to-tableau moves and auto-completes included."""
    for game, _ in play(seed, rules, picks):
        line = [(m.t, m.move.kind.value, m.move.src, m.move.dst, m.move.count) for m in game.log]
        assert homes_of_line(line, rules.variant.cards) == (game.board.home, game.live.home_at)
