"""The room's commit pipeline, with a store the test holds open or shut: commands
decided while an append is in flight wait for it, and go in the next append, all
together; nothing of them — reply, event, refusal, a snapshot taken after them —
reaches anyone before the store has them; a failed append refuses every undurable
command and puts the room back to exactly its durable state."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from protocol.outcomes import view_digest
from server.app import RaceServer
from server.core.records import decode_record
from server.core.room import Room
from server.core.views import room_view
from server.store.base import StoreUnavailable
from server.store.memory import MemoryStore
from tests.support.inprocess import Outbox, running_server
from tests.support.raw_client import Client, player
from tests.support.waiting import eventually


class GatedStore(MemoryStore):
    """The in-memory store, except that while ``held`` appends wait for the test:
    :meth:`open` writes them, :meth:`fail` refuses them (writing nothing)."""

    def __init__(self) -> None:
        super().__init__()
        self.held = False
        self.appends = 0
        self._waiting: list[tuple[asyncio.Future[int], str, list[bytes]]] = []

    def append(self, code: str, records: Sequence[bytes]) -> asyncio.Future[int]:
        self.appends += 1
        if not self.held:
            return super().append(code, records)
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting.append((fut, code, list(records)))
        return fut

    def open(self) -> None:
        self.held = False
        for fut, code, records in self._waiting:
            fut.set_result(super().append(code, records).result())
        self._waiting = []

    def fail(self) -> None:
        self.held = False
        for fut, _code, _records in self._waiting:
            fut.set_exception(StoreUnavailable("failed by the test"))
        self._waiting = []


async def table(server: RaceServer) -> tuple[list[Client], Client, str]:
    """Three players and a spectator, a deal running."""
    ann, bob, cat, sam = [await player(server, n) for n in ("Ann", "Bob", "Cat", "Sam")]
    code = (await ann.ok("create_room", settings={"break_seconds": 0}))["room"]["code"]
    for c in (bob, cat):
        await c.ok("join_room", code=code, role="player")
    await sam.ok("join_room", code=code, role="spectator")
    await ann.ok("start")
    for c in (ann, bob, cat, sam):
        await c.event("deal_started")
    return [ann, bob, cat], sam, code


async def until_pending(server: RaceServer, code: str, n: int) -> None:
    """Until ``n`` commands of the room are decided and wait for the store."""
    host = server.service.rooms[code]
    await eventually(lambda: host.pending >= n, what=f"{n} pending commands")


def frames_since(client: Client, start: int) -> list[dict[str, Any]]:
    return [f.msg for f in client.frames[start:]]


def same_as_replay(server: RaceServer, store: MemoryStore, code: str) -> None:
    """The live room is exactly what its stored log rebuilds, as every member sees it."""
    live = server.service.rooms[code].room
    rebuilt = Room.rebuild(code, (decode_record(r) for r in store._logs[code]))
    now = server.service.clock.now()
    assert rebuilt.seq == live.seq and rebuilt.n_records == live.n_records
    for pid in live.members:
        assert room_view(rebuilt, pid, now) == room_view(live, pid, now)


async def test_commands_wait_for_the_append_in_flight_and_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, outbox = GatedStore(), Outbox(monkeypatch)
    async with running_server(store=store) as server:
        players, sam, code = await table(server)
        seq = (await sam.ok("snapshot"))["room"]["seq"]
        marks = [len(c.frames) for c in (*players, sam)]
        store.held, before, sent = True, store.appends, len(outbox)
        moves = [
            asyncio.create_task(c.request("move", deal=1, move={"kind": "draw"})) for c in players
        ]
        await until_pending(server, code, 3)
        look = asyncio.create_task(sam.request("snapshot"))
        await until_pending(server, code, 4)
        # One append in flight (the first move), the other two decided and queued
        # behind it; nobody has heard of any of them, nor had the snapshot: the
        # server has queued no frame on any connection since the store was held.
        assert store.appends - before == 1
        assert len(outbox) == sent
        store.open()
        replies = await asyncio.gather(*moves)
        assert [r["type"] for r in replies] == ["moved"] * 3
        assert store.appends - before == 2  # the two queued moves went together
        room = (await look)["room"]
        assert room["seq"] == seq + 3  # taken after the three moves, sent after them too
        assert {p: v["moves"] for p, v in room["deal"]["progress"].items()} == {
            c.player: 1 for c in players
        }
        seen = frames_since(sam, marks[3])
        assert [(m["type"], m.get("seq")) for m in seen] == [
            ("progress", seq + 1),
            ("progress", seq + 2),
            ("progress", seq + 3),
            ("snapshot", None),
        ]
        same_as_replay(server, store, code)


async def test_a_refusal_waits_its_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal decided while earlier commands are not durable depends on them
    (here: the deal they ended), so it goes out after their events, in order."""
    store = GatedStore()
    async with running_server(store=store) as server:
        (ann, bob, _cat), _sam, code = await table(server)
        mark = len(bob.frames)
        outbox = Outbox(monkeypatch)
        store.held = True
        moved_on = asyncio.create_task(ann.request("next_deal"))
        await until_pending(server, code, 1)  # next_deal decided first
        late = asyncio.create_task(bob.request("move", deal=1, move={"kind": "draw"}))
        await until_pending(server, code, 2)  # then Bob's move, refused: it waits too
        assert len(outbox) == 0  # nothing sent to anyone, not even the refusal
        store.open()
        assert (await moved_on)["type"] == "ok"
        assert (await late)["code"] == "wrong_deal"
        kinds = [m["type"] for m in frames_since(bob, mark)]
        assert kinds == ["deal_over", "sheet", "deal_started", "error"]


async def test_failed_append_refuses_everything_undurable_and_rolls_back() -> None:
    store = GatedStore()
    async with running_server(store=store) as server:
        players, sam, code = await table(server)
        ann, bob, cat = players
        acked = {c.player: await c.ok("move", deal=1, move={"kind": "draw"}) for c in players}
        seq = (await sam.ok("snapshot"))["room"]["seq"]
        for c in players:  # their moves' progress waits (docs/protocol.md "Batched events")
            await c.caught_up()
        marks = [len(c.frames) for c in (*players, sam)]
        store.held = True
        moves = [
            asyncio.create_task(c.request("move", deal=1, move={"kind": "draw"}))
            for c in (ann, bob)
        ]
        await until_pending(server, code, 2)
        refused = asyncio.create_task(cat.request("move", deal=2, move={"kind": "draw"}))
        await until_pending(server, code, 3)
        look = asyncio.create_task(sam.request("snapshot"))
        await until_pending(server, code, 4)
        store.fail()
        replies = [*(await asyncio.gather(*moves)), await refused]
        # Every command after the last durable one is refused, the wrong deal too:
        # it was judged against a room that never was.
        assert [r.get("code") for r in replies] == ["storage_unavailable"] * 3
        room = (await look)["room"]  # a read is answered from the durable room
        assert room["seq"] == seq
        assert all(p["moves"] == 1 for p in room["deal"]["progress"].values())
        # Nothing of the refused moves reached anyone: no event at all.
        for c, m in zip((*players, sam), marks, strict=True):
            assert all("seq" not in f or f["type"] == "snapshot" for f in frames_since(c, m))
        for c in players:
            board = (await c.ok("snapshot"))["room"]["deal"]["board"]
            assert view_digest(board) == acked[c.player]["digest"]
        same_as_replay(server, store, code)
        # And the room carries on from there, numbering on from the durable seq.
        await ann.ok("move", deal=1, move={"kind": "draw"})
        assert (await sam.event("progress", seq=seq + 1))["player"] == ann.player
        same_as_replay(server, store, code)


async def test_rollback_across_rounds() -> None:
    """The durable state is kept from the start of the current round on
    (server/core/durable.py): a rollback lands exactly, whether the failed append held
    the round's start or came after it."""
    store = GatedStore()
    async with running_server(store=store) as server:
        ann, bob = await player(server, "Ann"), await player(server, "Bob")
        code = (await ann.ok("create_room", settings={"deals_per_round": 1}))["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        await ann.ok("start")
        for c in (ann, bob):
            await c.event("deal_started")
            await c.ok("move", deal=1, move={"kind": "resign"})
        await ann.event("round_over")

        store.held = True
        rematch = asyncio.create_task(ann.request("rematch"))
        await until_pending(server, code, 1)
        store.fail()
        assert (await rematch)["code"] == "storage_unavailable"
        assert (await bob.ok("snapshot"))["room"]["state"] == "round_over"
        same_as_replay(server, store, code)

        await ann.ok("rematch")
        await bob.event("deal_started", round=2)
        for c in (ann, bob):
            await c.ok("move", deal=1, move={"kind": "draw"})
        store.held = True
        moves = [
            asyncio.create_task(c.request("move", deal=1, move={"kind": "draw"}))
            for c in (ann, bob)
        ]
        await until_pending(server, code, 2)
        store.fail()
        assert [(await m)["code"] for m in moves] == ["storage_unavailable"] * 2
        room = (await bob.ok("snapshot"))["room"]
        assert room["round"] == 2 and room["deal"]["board"]["moves"] == 1
        same_as_replay(server, store, code)
