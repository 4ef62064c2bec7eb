"""A rated round's ``rating_changes`` go to its room only (docs/protocol.md,
"Ratings"): a player who left it before the round was applied, and is in a
room of their own by then, is not sent them there, where the page would take
them for that room's round."""

from __future__ import annotations

from tests.support.inprocess import FakeClock, running_server
from tests.test_rated_rooms import QUICK, held_ratings, rated_round_over


async def test_rating_changes_do_not_follow_a_player_into_their_next_room() -> None:
    async with running_server(clock=FakeClock(1_800_000_000_000)) as server:
        asked, gate = held_ratings(server)
        (ann, bob, _cat), _code = await rated_round_over(server.url)
        await asked.wait()  # being applied, held: Bob moves on meanwhile
        await bob.ok("leave_room")
        await bob.ok("create_room", settings=QUICK)
        gate.set()
        changes = (await ann.event("rating_changes"))["changes"]
        assert bob.player in changes  # his round, rated
        # Sent to the rated room's members at once: anything sent to Bob with
        # them would have reached him before the answer to his ping.
        await bob.caught_up()
        assert [e for e in bob.events if e["type"] == "rating_changes"] == []
