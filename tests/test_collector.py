"""The collector's load: what play leaves for it to scan, and the policy that
keeps its passes short (server/collector.py)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from protocol.strategy import Bot
from protocol.views import player_view
from server.collector import Collector
from server.core import decide as C
from tests.support.inprocess import running_server
from tests.support.raw_client import player
from tests.support.room_core import Harness, setup_room
from tests.support.waiting import eventually


@pytest.fixture
def thawed() -> Iterator[None]:
    """Leave the test process's collector as it was found: nothing frozen."""
    yield
    gc.unfreeze()
    gc.collect()


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_a_move_leaves_no_object_for_the_collector() -> None:
    """A deal's moves are kept flat (its move logs and scoring traces are arrays),
    so playing on adds nothing the collector tracks: on a busy server every such
    object would be scanned by each full pass for as long as the round lasts."""
    h = Harness()
    ids = setup_room(h, players=8)
    h.run(C.decide_start(h.room, ids[0], h.ctx()))
    deal = h.room.running
    assert deal is not None

    def play(moves: int) -> int:
        played = 0
        for step in range(moves):
            pid = ids[step % len(ids)]
            board = deal.replays[pid].board
            if h.room.running is not deal or board.status.value != "playing":
                continue
            h.now += 500
            move = Bot().decide(player_view(board))
            n = len(deal.logs[pid])
            h.run(C.decide_move(h.room, pid, deal.number, n, move, h.ctx()))
            played += 1
        h.events.clear()  # the harness keeps events; the server sends and drops them
        return played

    play(120)  # every board, view and cache of the deal made once
    gc.collect()
    before = len(gc.get_objects())
    played = play(480)
    gc.collect()
    grown = len(gc.get_objects()) - before
    assert played == 480 and h.room.running is deal  # one deal's moves: no new boards
    assert grown <= 10, f"{grown} tracked objects more after {played} moves"


def test_what_lived_a_moment_is_frozen_and_cycles_wait_for_the_full_pass(thawed: None) -> None:
    collector = Collector(full_every=300.0)
    collector.tick(0.0)  # starts with a full collection, then freezes
    assert collector.full_at == 0.0
    frozen = gc.get_freeze_count()
    assert frozen > 0

    cycle = _Node()
    gone = weakref.ref(cycle)
    collector.tick(0.1)  # the next tick: frozen out of every pass
    assert gc.get_freeze_count() > frozen
    del cycle
    gc.collect()
    assert gone() is not None  # frozen: no pass scans it

    collector.tick(299.0)
    assert gone() is not None and collector.full_at == 0.0
    collector.tick(300.0)  # the full collection, everything thawed
    assert gone() is None and collector.full_at == 300.0
    assert gc.get_freeze_count() > 0  # and frozen again after it


def test_a_frozen_object_is_still_freed_by_its_reference_count(thawed: None) -> None:
    collector = Collector()
    collector.tick(0.0)
    kept = _Weakable({"view": [1, 2, 3]})
    gone = weakref.ref(kept)
    collector.tick(1.0)
    assert gone() is not None and gc.get_freeze_count() > 0
    del kept
    assert gone() is None  # no cycle: freed at once, frozen or not


class _Weakable:
    def __init__(self, payload: object) -> None:
        self.payload = payload


async def test_a_closed_connection_leaves_no_reference_cycle() -> None:
    """Every object of a closed connection is freed by its reference count, at
    once: none waits in a cycle for a full collection, which the server runs only
    every half hour (it would hold every room on the core for as long as it walks
    the whole heap). The event loop's own transport may (asyncio's keeps a bound
    method of itself; uvloop's is not a Python object): only the server's objects
    and websockets' are checked."""
    async with running_server() as server:
        clients = [await player(server, f"P{i}") for i in range(3)]
        host = clients[0]
        code = (await host.ok("create_room", settings={"break_seconds": 0}))["room"]["code"]
        for c in clients[1:]:
            await c.ok("join_room", code=code)
        await host.ok("start")
        gc.collect()  # what is garbage by now is not the closed connections'
        for c in clients:
            await c.close()
        await eventually(lambda: not server.service.connections, what="connections gone")
        ours = ours_in_cycles()
    assert ours == [], "\n".join(ours)


_OURS = ("server.", "websockets.", "protocol.")


def ours_in_cycles() -> list[str]:
    """The types of the server's, websockets' and the engine's objects that only a
    full collection would free now: those it finds in cycles (kept, to be named)."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        left = {type(o) for o in gc.garbage}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return sorted(
        f"{t.__module__}.{t.__qualname__}" for t in left if t.__module__.startswith(_OURS)
    )


async def test_a_closed_room_leaves_no_reference_cycle() -> None:
    """A room that closed (its runner, timer, bots and the room itself) is freed
    by reference counts once its last request is answered, like a connection:
    nothing of it waits for the half-hourly full collection."""
    async with running_server() as server:
        host, guest = [await player(server, name) for name in ("Ann", "Bob")]
        settings = {"break_seconds": 0, "scoring": "timed"}
        code = (await host.ok("create_room", settings=settings))["room"]["code"]
        await guest.ok("join_room", code=code)
        await host.ok("add_bot", pace="fast")
        await host.ok("start")
        await host.event("deal_started")
        await host.ok("move", deal=1, move={"kind": "draw"})
        gc.collect()  # what is garbage by now is not the closed room's
        await host.ok("close_room")
        await host.event("room_closed")
        await eventually(lambda: code not in server.service.rooms, what="the room forgotten")
        ours = ours_in_cycles()
    assert ours == [], "\n".join(ours)
