"""Rounds as a series: a rematch keeps the room's history. Real sockets, a real
``python -m server`` on its embedded store, killed -9 and started again.

Two rounds of one deal each: Ann wins round 1 alone, Cat leaves, round 2 is a
tie (Ann and Bob resign at 0). The series then holds both rounds with their
totals, placings and the scoring they were scored by, match wins of 2, 1 and 0
(a tie counts for each tied winner), and Cat's row under her name. It reaches
every member in ``round_over`` and in the snapshot, is written into the snapshot
record the log is compacted to, and comes back the same after the restart, from
a log that no longer holds either round's records."""

from __future__ import annotations

from typing import Any

from protocol.placings import round_places
from server.core.series import ROUNDS_LISTED, Series
from tests.support.embedded import EmbeddedServer
from tests.support.raw_client import Client, Player, resume
from tests.test_compaction_recovery import stored

SETTINGS = {"scoring": "standard", "deals_per_round": 1, "race_bonus": 0}


async def scores_then_resigns(player: Player, deal: int) -> None:
    """Plays until the score is above 0 (a turn-over or a card to the tableau),
    then resigns: a round this player wins alone, rivals resigning at 0."""
    for _ in range(300):
        await player.play(deal, 1)
        if player.acked and player.acked[-1]["score"] > 0:
            break
    assert player.acked and player.acked[-1]["score"] > 0
    await player.client.ok("move", deal=deal, move={"kind": "resign"})


async def resign(client: Client, deal: int) -> None:
    await client.ok("move", deal=deal, move={"kind": "resign"})


def test_placings_share_ties_and_skip_after_them() -> None:
    totals = {"a": 30, "b": 30, "c": 10, "d": 0}
    assert round_places(totals) == {"a": 1, "b": 1, "c": 3, "d": 4}


def test_an_old_snapshot_record_has_an_empty_series() -> None:
    empty = {"rounds": [], "wins": {}, "names": {}, "earlier_rounds": 0, "earlier_wins": {}}
    assert Series.from_wire(None).to_wire() == empty
    # A record written before series were bounded: no earlier rounds.
    old = {"rounds": [], "wins": {}, "names": {}}
    assert Series.from_wire(old).to_wire() == empty


async def test_two_rounds_with_a_rematch_make_a_durable_series(embedded: EmbeddedServer) -> None:
    ann, bob, cat = [await Client.open(embedded.url) for _ in range(3)]
    for client, name in ((ann, "Ann"), (bob, "Bob"), (cat, "Cat")):
        await client.hello(name)
    code = (await ann.ok("create_room", settings=SETTINGS))["room"]["code"]
    for c in (bob, cat):
        await c.ok("join_room", code=code, role="player")
    a, b, c_ = ann.player, bob.player, cat.player
    assert a and b and c_

    # Round 1: Ann scores and resigns, Bob and Cat resign at 0.
    await ann.ok("start")
    first = Player(ann)
    first.view = (await ann.event("deal_started"))["deal"]["board"]
    await scores_then_resigns(first, 1)
    ann_total = first.acked[-1]["score"]
    await resign(bob, 1)
    await resign(cat, 1)
    over = [await x.event("round_over") for x in (ann, bob, cat)]
    series = over[0]["series"]
    assert all(o["series"] == series for o in over)  # the same to everyone
    (one,) = series["rounds"]
    assert one["round"] == 1 and one["scoring"] == "standard" and one["race_bonus"] == 0
    assert one["winners"] == [a] == over[0]["winners"]
    assert one["totals"] == {a: ann_total, b: 0, c_: 0} == over[0]["sheet"]["totals"]
    assert one["places"] == {a: 1, b: 2, c_: 2}
    assert [d["number"] for d in one["deals"]] == [1]
    assert one["deals"][0]["cells"][a]["score"] == ann_total
    assert one["deals"][0]["cells"][b]["status"] == "resigned"
    assert series["wins"] == {a: 1, b: 0, c_: 0}
    snap = (await bob.ok("snapshot"))["room"]
    assert snap["series"] == series
    assert one["deals"][0]["seed"] == snap["history"][0]["seed"]  # revealed already

    # Cat leaves; a rematch; round 2 ends in a tie at 0.
    await cat.ok("leave_room")
    await ann.ok("rematch")
    for x in (ann, bob):
        started = await x.event("deal_started")
        assert started["round"] == 2
    await resign(ann, 1)
    await resign(bob, 1)
    over2 = [await x.event("round_over") for x in (ann, bob)]
    series = over2[0]["series"]
    assert over2[1]["series"] == series
    assert [r["round"] for r in series["rounds"]] == [1, 2]
    assert series["rounds"][0] == one  # round 1 as it ended, Cat's row included
    two = series["rounds"][1]
    assert two["players"] == [a, b] and two["totals"] == {a: 0, b: 0}
    assert two["winners"] == [a, b] and two["places"] == {a: 1, b: 1}
    assert series["wins"] == {a: 2, b: 1, c_: 0}  # a shared win counts for each
    assert series["names"] == {a: "Ann", b: "Bob", c_: "Cat"}  # Cat left, her name stays
    before = (await ann.ok("snapshot"))["room"]
    assert before["series"] == series
    assert before["history"] and before["history"][0]["number"] == 1  # round 2's deal only

    # A write after round 2's end: the compaction queued ahead of it is done.
    await ann.ok("update_settings", settings={"race_bonus": 5})
    records = stored(embedded.data_dir, code)
    assert records[0]["k"] == "snapshot"
    assert not any(r["k"] in ("move", "round", "round_over") for r in records)
    assert records[0]["series"] == series  # the compacted log keeps it in its snapshot

    await embedded.kill()
    await embedded.start()
    for old in (ann, bob):
        again, welcome = await resume(embedded.url, old.token)
        room: dict[str, Any] = welcome["room"]
        assert room["series"] == series
        assert room["state"] == "round_over" and room["round"] == 2
        await again.close()

    # And the series goes on after the restart: round 3, Bob wins alone.
    ann3, _ = await resume(embedded.url, ann.token)
    bob3, _ = await resume(embedded.url, bob.token)
    await ann3.ok("rematch")
    third = Player(bob3)
    third.view = (await bob3.event("deal_started"))["deal"]["board"]
    await scores_then_resigns(third, 1)
    await resign(ann3, 1)
    final = (await ann3.event("round_over"))["series"]
    assert [r["round"] for r in final["rounds"]] == [1, 2, 3]
    assert final["rounds"][2]["winners"] == [b]
    assert final["wins"] == {a: 2, b: 2, c_: 0}
    for x in (ann3, bob3):
        await x.close()


async def test_a_long_series_lists_its_last_rounds_and_counts_every_win(
    embedded: EmbeddedServer,
) -> None:
    """However long a room rematches, its series lists the last ROUNDS_LISTED
    rounds and keeps the rest as a count and their wins: a snapshot stays small,
    and match wins still count every round, across a kill -9 and a restart.
    Round 1 Ann wins alone; the rounds after it are ties (both resign at 0)."""
    ann, bob = [await Client.open(embedded.url) for _ in range(2)]
    await ann.hello("Ann")
    await bob.hello("Bob")
    code = (await ann.ok("create_room", settings=SETTINGS))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    a, b = ann.player, bob.player
    assert a and b
    rounds = ROUNDS_LISTED + 2
    for number in range(1, rounds + 1):
        await ann.ok("start" if number == 1 else "rematch")
        deal = await ann.event("deal_started")
        await bob.event("deal_started")
        if number == 1:
            first = Player(ann)
            first.view = deal["deal"]["board"]
            await scores_then_resigns(first, 1)
        else:
            await resign(ann, 1)
        await resign(bob, 1)
        series = (await bob.event("round_over"))["series"]
        listed = [r["round"] for r in series["rounds"]]
        assert listed == list(range(max(1, number - ROUNDS_LISTED + 1), number + 1))
        assert series["earlier_rounds"] == number - len(listed)
        assert series["wins"] == {a: number, b: number - 1}  # every round counted
    assert series["earlier_wins"] == {a: 2, b: 1}  # rounds 1 (Ann alone) and 2 (a tie)
    assert series["names"] == {a: "Ann", b: "Bob"}
    assert (await ann.ok("snapshot"))["room"]["series"] == series

    await ann.ok("update_settings", settings={"race_bonus": 5})  # a write: compacted
    await embedded.kill()
    await embedded.start()
    again, welcome = await resume(embedded.url, ann.token)
    assert welcome["room"]["series"] == series
    await again.close()
