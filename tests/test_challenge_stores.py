"""Challenges in each store (memory, SQLite, Redis), with the same promises: a
challenge is kept once, a take claimed once (a second attempt finds the first's
room), its result kept once and only from the room its take names; and what
the disk stores hold is there after they are opened again; and through a
node on Redis killed and started again."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from server.challenges.memory import MemoryChallenges
from server.challenges.model import Challenge, Take, challenge_id, new_challenge_code
from server.challenges.redis import RedisChallenges
from server.challenges.sqlite import SqliteChallenges
from server.challenges.store import ChallengeStore
from server.daily.redis import RedisDaily
from server.daily.results import RunResult
from server.daily.schedule import day_of
from tests.support.dailies import publish, winning_moves
from tests.support.processes import UNCAPPED, RedisServer, ServerProcess
from tests.support.raw_client import player, resume

D1 = "classic-draw1"


@asynccontextmanager
async def each_store(
    kind: str, tmp_path: Path, redis: RedisServer | None
) -> AsyncIterator[ChallengeStore]:
    store: ChallengeStore
    if kind == "memory":
        yield MemoryChallenges()
        return
    if kind == "sqlite":
        store = await SqliteChallenges.at(tmp_path / "data")
    else:
        assert redis is not None
        store = await RedisChallenges.from_url(redis.url)
    try:
        yield store
    finally:
        await store.close()


def run(player: str, result: str, code: str) -> RunResult:
    home, home_ms = (52, 61_500) if result == "won" else (12, 40_000)
    return RunResult("", "classic-draw1", player, player.title(), result, 61_500, 90, 310,
                     home, home_ms, 1.5, code)  # fmt: skip


def made(challenger: str, source: str) -> Challenge:
    code = new_challenge_code()
    rules = {"variant": "classic", "draw": 1, "pass_limit": 0, "undo": False,
             "foundation_to_tableau": True}  # fmt: skip
    return Challenge(challenge_id(code), challenger, source, "race-27", rules,
                     run(challenger, "won", "ROOM-A"),
                     ((0, "draw", 0, 0, 1), (400, "tableau_tableau", 3, 5, 2)), 1.25)  # fmt: skip


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_each_store_keeps_challenges_and_counts_a_take_once(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    redis = request.getfixturevalue("redis") if kind == "redis" else None
    one, two = made("ann", "K-1/1/1"), made("ann", "daily/2026-12-02/classic-draw1")
    async with each_store(kind, tmp_path, redis) as store:
        for c in (one, one, two):  # a second add changes nothing
            await store.add(c)
        assert await store.get(one.id) == one and await store.get("nothing") is None
        assert sorted(c.id for c in await store.made_by("ann")) == sorted([one.id, two.id])
        assert await store.made_from("K-1/1/1") == [one]
        assert await store.made_by("cyd") == [] and await store.made_from("K-9/1/1") == []

        # Two attempts of one player: the first room claimed is the take.
        first = await store.take(one.id, "cyd", "ROOM-C", 10.0)
        again = await store.take(one.id, "cyd", "ROOM-X", 11.0)
        assert (first.code, first.result) == ("ROOM-C", None) and again == first
        other = await store.take(one.id, "dan", "ROOM-D", 12.0)
        assert other.code == "ROOM-D"

        # A result counts only from the take's room, and once.
        assert not await store.add_result(one.id, run("cyd", "won", "ROOM-X"))
        assert not await store.add_result(two.id, run("cyd", "won", "ROOM-C"))  # not taken
        assert await store.add_result(one.id, run("cyd", "resigned", "ROOM-C"))
        assert not await store.add_result(one.id, run("cyd", "won", "ROOM-C"))
        (taken,) = await store.taken_by("cyd")
        assert taken.challenge == one.id and taken.result == run("cyd", "resigned", "ROOM-C")
        assert (await store.take(one.id, "cyd", "ROOM-Y", 13.0)).result == taken.result
        takes = {t.player: t for t in await store.takes_of(one.id)}
        assert set(takes) == {"cyd", "dan"} and takes["dan"].result is None
        assert await store.takes_of(two.id) == [] and await store.taken_by("eve") == []

    if kind != "memory":  # opened again: all of it is there
        async with each_store(kind, tmp_path, redis) as store:
            assert await store.get(one.id) == one
            (taken,) = await store.taken_by("cyd")
            assert taken.result == run("cyd", "resigned", "ROOM-C")


async def test_on_redis_a_take_is_kept_through_a_node_killed(
    tmp_path: Path, redis: RedisServer
) -> None:
    """Through ``serve --redis``: a challenge made and taken on a node, its
    take over, the node killed (``kill -9``) and started again: the challenge
    and the take's result are there, once, and a second take is refused."""
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
        await ann.ok("take_handle", handle="Ann")
        await ann.ok("daily_start", ladder=D1)
        for move in winning_moves(deal):
            assert (await ann.request("move", deal=1, move=move.to_wire()))["type"] == "moved"
        await ann.event("deal_over")
        code = (await ann.ok("challenge", key=f"daily/{today.isoformat()}/{D1}"))["code"]
        await ann.close()

        cyd = await player(node.url, "Cyd")
        cyd.token = (await cyd.ok("take_handle", handle="Cyd"))["device_token"]
        for start, fields in (("daily_start", {"ladder": D1}), ("challenge_start", {"code": code})):
            await cyd.ok(start, **fields)
            assert (await cyd.request("move", deal=1, move={"kind": "resign"}))["type"] == "moved"
            await cyd.event("deal_over")
            await cyd.ok("leave_room")
        (row,) = (await cyd.ok("challenges"))["challenges"]
        assert row["takes"][0]["result"]["result"] == "resigned"
        await cyd.close()

        node.kill()
        node.start()
        back, _ = await resume(node.url, cyd.token)
        assert (await back.ok("challenges"))["challenges"] == [row]
        reply = await back.request("challenge_start", code=code)
        assert reply.get("code") == "challenge_taken", reply
        await back.close()
    finally:
        node.kill()


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_each_store_withdraws_a_players_challenges_and_keeps_their_takes(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """An account deleted: the challenges it made go (and from their deal's
    list), their ids kept as withdrawn; others' challenges and every take stay."""
    redis = request.getfixturevalue("redis") if kind == "redis" else None
    one, two = made("ann", "K-1/1/1"), made("ann", "daily/2026-12-02/classic-draw1")
    bobs = made("bob", "K-1/1/1")
    async with each_store(kind, tmp_path, redis) as store:
        for c in (one, two, bobs):
            await store.add(c)
        await store.take(one.id, "cyd", "ROOM-C", 10.0)
        assert await store.add_result(one.id, run("cyd", "won", "ROOM-C"))
        await store.take(bobs.id, "ann", "ROOM-A2", 11.0)
        assert not await store.withdrawn(one.id)
        for _ in range(2):  # done again: nothing changes
            await store.withdraw("ann")
        assert await store.get(one.id) is None and await store.get(two.id) is None
        assert await store.withdrawn(one.id) and await store.withdrawn(two.id)
        assert not await store.withdrawn(bobs.id) and not await store.withdrawn("nothing")
        assert await store.made_by("ann") == []
        assert await store.made_from("K-1/1/1") == [bobs]
        assert await store.get(bobs.id) == bobs
        (taken,) = await store.taken_by("cyd")  # the taker's run stays theirs
        assert taken.result == run("cyd", "won", "ROOM-C")
        assert [t.code for t in await store.taken_by("ann")] == ["ROOM-A2"]
    if kind != "memory":  # opened again: still withdrawn
        async with each_store(kind, tmp_path, redis) as store:
            assert await store.withdrawn(one.id) and await store.get(one.id) is None


def test_a_challenge_kept_before_lines_were_packed_apart_still_loads() -> None:
    """The release before kept a challenge's timed moves as text inside its run
    (``t,kind,from,to,count``, ``;`` between) and no ``line`` of its own; a store
    holding one must still load it, with the same moves for its ghost."""
    now = made("ann", "daily/2026-12-01/classic-draw1")
    old = now.to_json()
    del old["line"]
    old["run"] = {**old["run"], "line": "0,draw,0,0,1;400,tableau_tableau,3,5,2"}
    assert Challenge.from_json(old) == now


def test_results_kept_before_their_cards_home_were_have_them_as_best_told() -> None:
    """A challenge kept before results held their cards home gains them from
    its line (two home, the last at 1.5 s); a take's result, kept with no line,
    as its result alone tells them: a won run every card, the last with its
    winning move; any other none (so it is placed by its score among those
    with none)."""
    line = (
        (0, "draw", 0, 0, 1),
        (900, "waste_foundation", 0, 0, 1),
        (1_500, "tableau_foundation", 2, 0, 1),
        (4_000, "resign", 0, 0, 1),
    )
    kept = dataclasses.replace(made("ann", "K-1/1/1"), run=run("ann", "resigned", "ROOM-A"))
    kept = dataclasses.replace(kept, line=line)
    old = kept.to_json()
    old["run"] = {k: v for k, v in old["run"].items() if k not in ("home", "home_ms")}
    assert Challenge.from_json(old).run == dataclasses.replace(kept.run, home=2, home_ms=1_500)
    for result, homes in (("won", (52, 61_500)), ("resigned", (0, 0))):
        take = Take("id", "cyd", "ROOM-C", 1.0, run("cyd", result, "ROOM-C"))
        data = take.to_json()
        data["result"] = {k: v for k, v in data["result"].items() if k not in ("home", "home_ms")}
        back = Take.from_json(data).result
        assert back is not None and (back.home, back.home_ms) == homes
