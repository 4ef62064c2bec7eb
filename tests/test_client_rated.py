"""The Python client and rated rooms: the host sets ``rated``, asks the forecast
and a ladder; a bot asked to play a rated room is refused (bots are never
rated), by the library and by ``klondike-race bot``."""

from __future__ import annotations

import pytest

from client import NotRated, ServerError, connect
from client.players import run_bots
from tests.support.inprocess import FakeClock, running_server
from tests.support.processes import bot_command
from tests.support.sessions import next_event, until


async def test_a_rated_room_from_the_client_and_no_bot_in_it() -> None:
    async with running_server(clock=FakeClock(1_800_000_000_000)) as server:
        ann = await connect(server.url, name="Ann")
        bob = await connect(server.url, name="Bob")
        try:
            await ann.take_handle("AnnRated")
            await bob.take_handle("BobRated")
            room = await ann.create_room({"deals_per_round": 1})
            await bob.join_room(room.code)
            await ann.update_settings(rated=True)
            forecast = await ann.forecast()
            assert forecast["ladder"] == "classic-draw1"
            assert {v["predicted"] for v in forecast["players"].values()} <= {1, 2}
            with pytest.raises(ServerError) as refused:
                await ann.request("add_bot", pace="fast")
            assert refused.value.code == "not_ratable"

            with pytest.raises(NotRated):
                await run_bots(server.url, room.code)
            bot = await bot_command(server.url, room.code)
            _, err = await bot.communicate()
            assert bot.returncode == 1
            assert b"bots are never rated" in err

            table = await ann.ladder("classic-draw1", friends=True)
            assert table["top"] == [] and table["position"] is None
            assert table["friends"] == []
        finally:
            await ann.close()
            await bob.close()


async def test_the_client_hands_on_the_rating_changes_of_its_round() -> None:
    """``rating_changes`` keeps the room's last seq (it is aside): the library
    passes it on like any event, not as one its room view held already."""
    async with running_server(clock=FakeClock(1_800_000_000_000)) as server:
        ann = await connect(server.url, name="Ann")
        bob = await connect(server.url, name="Bob")
        try:
            await ann.take_handle("AnnChanged")
            await bob.take_handle("BobChanged")
            room = await ann.create_room({"deals_per_round": 1, "rated": True})
            await bob.join_room(room.code)
            events = ann.events()
            await ann.start()
            for player in (ann, bob):
                await until(player, lambda r: r.my_board is not None)
                await player.resign()
            over, _ = await next_event(events, lambda e: e.type == "round_over")
            changes, _ = await next_event(events, lambda e: e.type == "rating_changes")
            assert changes.seq == over.seq
            assert set(changes["changes"]) == {ann.player, bob.player}
        finally:
            await ann.close()
            await bob.close()
