"""What the server's clock does to a room, through real sockets and a fake clock:
Timed scoring's 10-second ticks reach everybody as record-free ``sheet`` events
(seq unchanged, so a rebuilt room numbers its events exactly as the live one did),
and a room with nobody connected for 30 minutes closes."""

from __future__ import annotations

from typing import Any

from protocol.settings import Scoring
from server.app import RaceServer
from server.core.records import decode_record
from server.core.room import Room
from server.store.memory import MemoryStore
from tests.support.inprocess import FakeClock, Seeds, running_server
from tests.support.ledger import Ledger
from tests.support.raw_client import Client, player
from tests.support.solver import board_from_view, solve
from tests.support.waiting import eventually

SEED = "race-27"  # Thoughtful: tests/support/solver.py finds its moves, so they score


async def nothing_more(clock: FakeClock, client: Client, kind: str) -> None:
    """No ``kind`` event came of the clock's last move: every timer has seen the
    new time (those it woke have sent what they had to), and a ping answered
    after that finds no such event unread."""
    await clock.settled()
    await client.caught_up()
    assert client.unseen(kind) == []


async def test_timed_scoring_ticks_reach_everybody() -> None:
    clock, store, ledger = FakeClock(), MemoryStore(), Ledger()
    async with running_server(clock=clock, store=store, draw_seed=Seeds(SEED)) as server:
        ann, bob, sam = [await player(server, n) for n in ("Ann", "Bob", "Sam")]
        settings = {"scoring": "timed", "variant": "thoughtful"}
        code = (await ann.ok("create_room", settings=settings))["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        await sam.ok("join_room", code=code, role="spectator")
        players = [ann.player, bob.player]
        await ann.ok("start")
        # A round starts with its own, empty, sheet.
        fresh = await sam.event("sheet")
        assert fresh["sheet"]["rows"] == [] and "tick" not in fresh
        start = await ann.event("deal_started")
        ledger.deal_started(start["deal"], SEED, players)
        solution = solve(board_from_view(start["deal"]["board"]))
        assert solution is not None
        reply: dict[str, Any] = {}
        for move in [m.to_wire() for m in solution[:8]]:
            clock.advance(500)
            reply = await ann.ok("move", deal=1, move=move)
            ledger.moved(ann.player or "", reply, move)
        assert reply["score"] >= 20
        last = await sam.event("progress", seq=start["seq"] + 8)

        clock.advance(10_000 - 8 * 500)  # the deal's first full 10 s
        ticks = [await c.event("sheet", tick=1) for c in (ann, bob, sam)]
        assert ticks[0] == ticks[1] == ticks[2]
        tick = ticks[0]
        assert tick["seq"] == last["seq"]  # no seq of its own: it is not a record
        assert tick["deal"] == 1
        assert tick["sheet"] == ledger.sheet(players, Scoring.TIMED, 100, clock.now()).to_wire()
        assert tick["progress"][ann.player]["score"] == reply["score"] - 2
        bob_now = tick["progress"][bob.player]
        assert (bob_now["moves"], bob_now["score"]) == (0, 0)  # clipped at 0

        clock.advance(25_000)  # 35 s: ticks 2 and 3 fall due together, and fold
        tick = await sam.event("sheet")
        assert tick["tick"] == 3 and tick["seq"] == last["seq"]
        assert tick["progress"][ann.player]["score"] == reply["score"] - 6
        await nothing_more(clock, sam, "sheet")
        clock.advance(5_000)  # 40 s: the next sheet is tick 4, none came between
        assert (await sam.event("sheet"))["tick"] == 4

        # The next event numbers on from the last real one.
        await ann.ok("move", deal=1, move=solution[8].to_wire())
        assert (await sam.event("progress"))["seq"] == last["seq"] + 1
        # A rebuilt room (after a restart) numbers exactly where the live one is.
        live = server.service.rooms[code].room
        assert Room.rebuild(code, (decode_record(r) for r in store._logs[code])).seq == live.seq

        # No ticks once the scoring is no longer Timed.
        await ann.ok("update_settings", settings={"scoring": "standard"})
        await sam.event("settings")
        await sam.event("sheet")  # the rescore
        clock.advance(20_000)
        await nothing_more(clock, sam, "sheet")
        for c in (ann, bob, sam):
            await c.close()


async def wait_closed(server: RaceServer, code: str) -> None:
    await eventually(lambda: code not in server.service.rooms)


async def test_idle_rooms_close() -> None:
    clock, store = FakeClock(), MemoryStore()
    async with running_server(clock=clock, store=store) as server:
        idle = server.service.idle_room_ms
        assert idle == 30 * 60_000
        ann, bob = await player(server, "Ann"), await player(server, "Bob")
        code = (await ann.ok("create_room"))["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        room = server.service.rooms[code].room

        await bob.close()
        await eventually(lambda: not room.members[bob.player or ""].connected)
        clock.advance(idle + 1)  # Ann is still here
        await clock.settled()
        assert code in server.service.rooms

        await ann.close()
        host = server.service.rooms[code]
        await eventually(lambda: not any(m.connected for m in host.room.members.values()))
        clock.advance(idle - 1000)
        await clock.settled()
        assert clock.sleepers == 1  # the idle timer looked, and sleeps on
        assert code in server.service.rooms
        # Bob comes back for a moment: the idle clock starts again when he goes.
        back = await Client.open(server.url)
        assert (await back.ok("hello", version=2, token=bob.token))["room"]["code"] == code
        await back.close()
        await eventually(lambda: not any(m.connected for m in host.room.members.values()))
        clock.advance(idle - 1)
        await clock.settled()
        assert clock.sleepers == 1
        assert code in server.service.rooms

        clock.advance(1)
        await wait_closed(server, code)  # closed the normal way: the store forgets it
        assert code not in await store.open_rooms()
        again = await Client.open(server.url)
        welcome = await again.ok("hello", version=2, token=ann.token)
        assert welcome["room"] is None
        assert (await again.request("join_room", code=code, role="player"))["code"] == (
            "no_such_room"
        )
        await again.close()
