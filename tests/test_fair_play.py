"""The fair-play spectator setting, over real sockets: live boards, boards only
after the deal, or no spectators at all; and it applies at once."""

from __future__ import annotations

from typing import Any

from server.app import RaceServer
from tests.support.inprocess import running_server
from tests.support.raw_client import Client, player
from tests.support.reference_race import beside_a_race


async def room_with(server: RaceServer, spectators: str) -> tuple[Client, Client, str]:
    ann, bob = await player(server, "Ann"), await player(server, "Bob")
    code = (await ann.ok("create_room", settings={"spectators": spectators}))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    return ann, bob, code


def boards_in(frame: dict[str, Any]) -> bool:
    """Whether a frame shows any player's board, or a move on one (the
    spectator's own view has none)."""
    if frame.get("type") == "progress":
        return "outcome" in frame
    deal = frame.get("deal") if frame.get("type") == "deal_started" else None
    room = frame.get("room")
    if room is not None:
        deal = room.get("deal")
    return bool(deal and deal.get("boards"))


async def test_after_deal_spectators_see_progress_and_no_board_until_the_end() -> None:
    async with running_server() as server, beside_a_race(server):
        ann, bob, code = await room_with(server, "after_deal")
        sam = await player(server, "Sam")
        await sam.ok("join_room", code=code, role="spectator")
        await ann.ok("start")
        await sam.event("deal_started")
        await ann.ok("move", deal=1, move={"kind": "draw"})
        seen = await sam.event("progress", player=ann.player)
        assert seen["progress"]["moves"] == 1
        assert not any(boards_in(f.msg) for f in sam.frames)
        snap = await sam.ok("snapshot")
        assert not boards_in(snap)
        await ann.ok("move", deal=1, move={"kind": "resign"})
        await bob.ok("move", deal=1, move={"kind": "resign"})
        over = await sam.event("deal_over")
        assert set(over["deal"]["boards"]) == {ann.player, bob.player}


async def test_live_is_the_default_and_shows_every_board() -> None:
    async with running_server() as server, beside_a_race(server):
        ann, bob = await player(server, "Ann"), await player(server, "Bob")
        code = (await ann.ok("create_room"))["room"]["code"]
        assert (await ann.ok("snapshot"))["room"]["settings"]["spectators"] == "live"
        sam = await player(server, "Sam")
        await sam.ok("join_room", code=code, role="spectator")
        await ann.ok("start")
        started = await sam.event("deal_started")
        assert set(started["deal"]["boards"]) == {ann.player}
        await ann.ok("move", deal=1, move={"kind": "draw"})
        assert "outcome" in await sam.event("progress", player=ann.player)
        del bob


async def test_no_spectators_refuses_them_and_removes_those_watching() -> None:
    async with running_server() as server, beside_a_race(server):
        ann, _bob, code = await room_with(server, "live")
        sam = await player(server, "Sam")
        await sam.ok("join_room", code=code, role="spectator")
        await ann.ok("update_settings", settings={"spectators": "none"})
        removed = await sam.event("removed")
        assert removed["player"] == sam.player
        assert (await sam.request("snapshot"))["code"] == "not_in_room"
        refused = await sam.request("join_room", code=code, role="spectator")
        assert refused["code"] == "no_spectators"
        assert (await sam.ok("join_room", code=code, role="player"))["type"] == "joined"


async def test_the_change_applies_at_once_mid_deal() -> None:
    async with running_server() as server, beside_a_race(server):
        ann, _bob, code = await room_with(server, "live")
        sam = await player(server, "Sam")
        await sam.ok("join_room", code=code, role="spectator")
        await ann.ok("start")
        await sam.event("deal_started")
        await ann.ok("update_settings", settings={"spectators": "after_deal"})
        changed = await sam.event("settings")
        assert changed["settings"]["spectators"] == "after_deal"
        await ann.ok("move", deal=1, move={"kind": "draw"})
        assert "outcome" not in await sam.event("progress", player=ann.player)
        assert not boards_in(await sam.ok("snapshot"))
