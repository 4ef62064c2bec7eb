"""The client library through whole races on a live server (python -m server)."""

from __future__ import annotations

import asyncio

import pytest

from client import ServerError, connect
from client.room import RoomEvent
from protocol import verify_commitment
from server.cli import klondike_race as main
from tests.support.sessions import next_event, until


async def test_a_whole_race_through_the_library(live_url: str) -> None:
    async with (
        connect(live_url, name="Ann") as ann,
        connect(live_url, name="Bob", kind="json") as bob,
    ):
        events = ann.events()
        room = await ann.create_room({"deals_per_round": 2, "draw": 3})
        assert (room.state, room.is_host, room.settings["draw"]) == ("lobby", True, 3)
        joined = await bob.join_room(room.code.lower(), "player")  # codes ignore case
        assert joined.me == bob.player and joined.host == ann.player
        await until(ann, lambda r: len(r.players) == 2)

        with pytest.raises(ServerError) as refused:
            await bob.start()
        assert refused.value.code == "not_host"
        with pytest.raises(ServerError) as refused:
            await ann.update_settings(draw=2)
        assert (refused.value.code, refused.value.field) == ("bad_setting", "draw")

        await ann.start()
        await until(bob, lambda r: r.my_board is not None)
        await until(ann, lambda r: r.my_board is not None)
        assert ann.room and bob.room and ann.room.my_board and bob.room.my_board
        assert ann.room.my_board["tableau"] == bob.room.my_board["tableau"]  # identical deal
        commitment = ann.room.deal["commitment"] if ann.room.deal else ""

        with pytest.raises(ServerError) as refused:
            await ann.move({"kind": "tableau_tableau", "from": 0, "to": 0, "count": 1})
        assert refused.value.code == "same_pile"
        moved = await ann.draw()
        assert moved.board["waste"] == 3 and moved.deal == 1
        assert isinstance(moved.latency, float)  # measured; how long is bench/'s business
        assert ann.room.my_board == moved.board
        with pytest.raises(ServerError) as refused:
            await ann.undo()
        assert refused.value.code == "undo_off"

        # Bob sees Ann's progress, never her board.
        await until(
            bob, lambda r: r.deal is not None and r.deal["progress"][ann.player or ""]["moves"] == 1
        )
        assert bob.room.deal and bob.room.deal["boards"] == {}

        await ann.resign()
        await bob.resign()
        await until(ann, lambda r: r.deal_is_over(1))
        revealed = ann.room.history[0]
        assert revealed["commitment"] == commitment
        assert verify_commitment(revealed["seed"], commitment)
        with pytest.raises(ServerError) as refused:
            await ann.move("draw", deal=1)
        assert refused.value.code in ("wrong_deal", "deal_over")

        await until(bob, lambda r: r.deal_number == 2 and r.my_board is not None)
        await ann.next_deal()  # the last deal: the round ends, scored where it stands
        await until(ann, lambda r: r.state == "round_over")
        assert ann.room.sheet and len(ann.room.sheet["rows"]) == 2
        assert set(ann.room.sheet["totals"]) == {ann.player, bob.player}

        # Bob comes back on a new connection with his token; the old one gets 4001.
        token = bob.token
        assert token
        async with connect(live_url, token=token) as bob_again:
            assert bob_again.player == bob.player
            assert bob_again.room and bob_again.room.code == room.code
            await asyncio.wait_for(bob.wait_closed(), 5)
            assert bob.close_code == 4001

            # A resumed snapshot's past deals carry summaries; logs come on request.
            past = bob_again.room.history[0]
            assert "logs" not in past and past["summary"][ann.player]["logged"] == 2
            logs = await bob_again.deal_log(1)
            assert [e["move"]["kind"] for e in logs[ann.player]] == ["draw", "resign"]
            assert [e["move"]["kind"] for e in logs[bob.player or ""]] == ["resign"]
            assert bob_again.room.history[0]["logs"] == logs
            with pytest.raises(ServerError) as refused:
                await bob_again.deal_log(3)
            assert refused.value.code == "wrong_deal"

            await ann.rematch()
            await until(bob_again, lambda r: r.round == 2 and r.my_board is not None)
            assert bob_again.room and bob_again.room.history == []

        # Ann's stream up to the rematch's first deal, the last thing asked of the room.
        _, read = await next_event(
            events, lambda e: e.type == "deal_started" and e.get("round") == 2
        )
        seen = [e for e in read if isinstance(e, RoomEvent)]
        seqs = [e.seq for e in seen if e.type != "snapshot"]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        kinds = {e.type for e in seen}
        assert {"members", "deal_started", "progress", "deal_over", "sheet", "round_over"} <= kinds

        # The revealed seed verifies with the command, and a tampered one does not.
        assert main(["verify", "--seed", revealed["seed"], "--commitment", commitment]) == 0
        tampered = revealed["seed"][:-1] + ("0" if revealed["seed"][-1] != "0" else "1")
        assert main(["verify", "--seed", tampered, "--commitment", commitment]) == 1


async def test_a_dropped_socket_resumes_and_resyncs(live_url: str) -> None:
    async with connect(live_url, name="Cy") as cy:
        events = cy.events()
        room = await cy.create_room({"deals_per_round": 1})
        await cy.start()
        await until(cy, lambda r: r.my_board is not None)
        assert cy._ws is not None
        cy._ws.transport.abort()  # the network goes away, no close frame
        await until(cy, lambda r: cy.stats.reconnects == 1)
        resume, _ = await next_event(
            events, lambda e: e.type == "snapshot" and e.get("reason") == "resume"
        )
        assert isinstance(resume, RoomEvent)
        assert cy.room and cy.room.code == room.code and cy.room.my_board
        moved = await cy.draw()  # the session works again, in the same deal
        assert moved.deal == 1 and cy.stats.drops == 1


async def test_bad_requests_are_typed_errors(live_url: str) -> None:
    async with connect(live_url, name="Di") as di:
        with pytest.raises(ServerError) as refused:
            await di.join_room("ZZZZZZ")
        assert refused.value.code == "no_such_room"
        with pytest.raises(ServerError) as refused:
            await di.draw()
        assert refused.value.code == "not_in_room"
        with pytest.raises(ServerError) as refused:
            await di.request("fly")
        assert refused.value.code == "unknown_type"
        assert await di.ping() > 0
    with pytest.raises(ServerError) as refused:
        await connect(live_url, name="   ")
    assert refused.value.code == "bad_name"
