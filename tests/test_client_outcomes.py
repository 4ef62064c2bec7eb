"""The Python client keeps boards by outcomes, through a real server.

A player and a spectator play and watch whole deals (the player's bot, undos
now and then) against a server process. After every move the player's own board,
kept by its ``moved`` replies, and the spectator's copy of it, kept by the
``progress`` events, are each exactly the board a snapshot gives at that point;
neither client needed a snapshot on the way. A board that stops matching its
digest (here made wrong on purpose, as a bug in a client would) leads the client
to a snapshot, and play goes on from it.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from client import Session, connect
from client.bot import RESIGN, Bot
from protocol.moves import Move, MoveKind
from tests.support.sessions import until


@asynccontextmanager
async def a_watched_room(url: str, **settings: Any) -> AsyncIterator[tuple[Session, ...]]:
    """Ann's one-deal room, running; Sam watching it; Tim, another spectator,
    only there to ask for snapshots."""
    async with (
        connect(url, name="Ann") as ann,
        connect(url, name="Sam") as sam,
        connect(url, name="Tim") as tim,
    ):
        room = await ann.create_room({"deals_per_round": 1, **settings})
        await sam.join_room(room.code, "spectator")
        await tim.join_room(room.code, "spectator")
        await ann.start()
        await until(ann, lambda r: r.my_board is not None)
        await until(sam, lambda r: bool(r.deal and r.deal["boards"]))
        yield ann, sam, tim


async def the_board(tim: Session, player: str) -> dict[str, Any]:
    """``player``'s board as a snapshot has it now."""
    room = await tim.snapshot()
    assert room.deal is not None
    board: dict[str, Any] = room.deal["boards"][player]
    return board


async def watched(sam: Session, player: str, logged: int) -> dict[str, Any]:
    """The spectator's copy of ``player``'s board once it holds ``logged`` moves.
    Its ``progress`` events wait a moment on the server to leave together; a ping
    takes them along ahead of its pong (docs/protocol.md, "Batched events")."""
    await sam.request("ping")
    room = await until(
        sam, lambda r: r.deal is not None and r.deal["boards"][player]["logged"] >= logged
    )
    assert room.deal is not None
    board: dict[str, Any] = room.deal["boards"][player]
    return board


@pytest.mark.parametrize(
    "settings",
    [
        {"variant": "classic", "draw": 1, "undo": True},
        {"variant": "classic", "draw": 3, "stock_passes": 2, "undo": True},
        {"variant": "thoughtful", "draw": 3, "undo": True},
        {"variant": "double", "draw": 1, "undo": True},
    ],
    ids=["classic-1", "classic-3", "thoughtful-3", "double-1"],
)
async def test_boards_kept_by_outcomes_are_the_snapshots(
    live_url: str, settings: dict[str, Any]
) -> None:
    rng = random.Random(str(settings))
    kinds: set[str] = set()
    # A deal is the server's random one: one the bot is stuck in (draws and
    # recycles only) is followed by another, until the moves cover an undo and
    # at least four kinds.
    for _ in range(6):
        await play_and_compare(live_url, settings, rng, kinds)
        if {"draw", "undo"} <= kinds and len(kinds) >= 4:
            break
    assert {"draw", "undo"} <= kinds and len(kinds) >= 4


async def play_and_compare(
    url: str, settings: dict[str, Any], rng: random.Random, kinds: set[str]
) -> None:
    """One deal played by the bot with undos now and then; after every move the
    player's and the spectator's boards, kept by outcomes, are a snapshot's."""
    async with a_watched_room(url, **settings) as (ann, sam, tim):
        me = ann.player
        assert me is not None
        bot = Bot(search_budget=0)
        for _ in range(150):
            mine = ann.room.my_board if ann.room else None
            assert mine is not None
            if mine["status"] != "playing":
                break
            # An undo at its first chance, then now and then.
            if mine["can_undo"] and ("undo" not in kinds or rng.random() < 0.2):
                move = Move(MoveKind.UNDO)
            else:
                move = bot.decide(mine)
                passes_left = not mine["pass_limit"] or mine["passes"] < mine["pass_limit"]
                if move == RESIGN and mine["stock"]:  # play on through the stock
                    move = Move(MoveKind.DRAW)
                elif move == RESIGN and mine["waste"] and passes_left:
                    move = Move(MoveKind.RECYCLE)
            moved = await ann.move(move)
            kinds.add(moved.outcome["move"]["kind"])
            truth = await the_board(tim, me)
            assert moved.board == truth
            assert ann.room is not None and ann.room.my_board == truth
            assert await watched(sam, me, truth["logged"]) == truth
        # Kept by the outcomes alone: no snapshot was needed on the way.
        for session in (ann, sam):
            assert (session.stats.mismatches, session.stats.resyncs) == (0, 0)


async def test_a_board_that_does_not_match_its_digest_is_taken_again(live_url: str) -> None:
    async with a_watched_room(live_url, variant="classic", draw=3) as (ann, sam, tim):
        me = ann.player
        assert me is not None and ann.room is not None and sam.room is not None
        await ann.move("draw")
        await watched(sam, me, 1)

        # The player's own board goes wrong (a face-down count no outcome
        # touches): the next reply's digest tells, and the client takes a snapshot.
        mine = ann.room.my_board
        assert mine is not None
        mine["tableau"][6]["down"] += 1
        moved = await ann.move("draw")
        assert ann.stats.mismatches == 1
        truth = await the_board(tim, me)
        assert moved.board == truth and ann.room.my_board == truth
        assert truth["tableau"][6]["down"] == 6 and truth["logged"] == 2

        # The spectator's copy goes wrong: the next progress event's digest tells.
        assert sam.room.deal is not None
        sam.room.deal["boards"][me]["foundations"][0] = "KS"
        moved = await ann.move("draw")  # numbered from the snapshot: accepted
        assert moved.board["logged"] == 3
        truth = await the_board(tim, me)
        assert await watched(sam, me, 3) == truth
        await until(
            sam, lambda r: not r.stale and r.deal is not None and r.deal["boards"][me] == truth
        )
        assert (sam.stats.mismatches, ann.stats.mismatches) == (1, 1)
