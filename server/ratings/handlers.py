"""The rating requests: ``ladder`` (a ladder's tables and one's chart) and
``forecast`` (a room's players on its ladder, and where each is expected to
finish). Anyone who said hello may ask: ratings are kept by public player id,
and a ladder's rows name players by handle (only signed-in players are rated).
"""

from __future__ import annotations

from typing import Any, Protocol

from protocol import messages as M
from protocol.rating_requests import Forecast, LadderRequest
from protocol.requests import Request

from ..accounts.model import FriendState
from ..accounts.store import AccountStore
from ..peer import Peer
from ..rooms.handlers import Front, Handler, on
from ..rooms.runner import Release
from .keeping import RatingKeeper
from .model import Rating, Standing, predicted_places, shown

__all__ = ["AROUND", "RATING_HANDLERS", "TOP"]

TOP = 100  # rows of a ladder's top table
AROUND = 10  # rows each side of one's own position


class Ladders(Front, Protocol):
    accounts: AccountStore
    ratings: RatingKeeper


async def _rows(desk: Ladders, rows: list[Standing], first: int) -> list[dict[str, Any]]:
    names = await desk.accounts.handles([row.player for row in rows])  # one read, not a row's
    return [
        {
            "position": first + i + 1,
            "player": row.player,
            "name": names.get(row.player),
            "rating": row.rating,
            "rounds": row.rounds,
            "provisional": row.provisional,
        }
        for i, row in enumerate(rows)
    ]


async def _ladder(desk: Ladders, conn: Peer, req: LadderRequest) -> None:
    session = desk.session_of(conn)
    store = desk.accounts
    ladder, me = req.ladder, session.player
    await desk.ratings.settled()
    top = await _rows(desk, await store.ladder_table(ladder, 0, TOP), 0)
    position = await store.ladder_position(ladder, me)
    around: list[dict[str, Any]] = []
    if position is not None:
        first = max(position - AROUND, 0)
        rows = await store.ladder_table(ladder, first, position - first + AROUND + 1)
        around = await _rows(desk, rows, first)
    friends = None
    if req.friends and session.account is not None:
        friends_of = [
            f.b if f.a == session.account else f.a
            for f in await store.friendships(session.account)
            if f.state is FriendState.FRIENDS
        ]
        players = [me, *(await store.players(friends_of)).values()]  # one read, not a friend's
        ratings = await store.ratings(ladder, players)
        table = sorted(ratings.items(), key=lambda pr: (-shown(pr[1]), pr[0]))
        standings = [Standing(p, shown(r), r.rounds, r.provisional) for p, r in table]
        friends = await _rows(desk, standings, 0)
    chart = [pt.to_wire() for pt in await store.rating_chart(ladder, me)]
    conn.send(
        M.ladder(
            req.id,
            ladder=ladder,
            top=top,
            around=around,
            position=None if position is None else position + 1,
            friends=friends,
            chart=chart,
        )
    )


async def _forecast(desk: Ladders, conn: Peer, req: Forecast) -> None:
    _, runner = desk.room_of(conn)
    room = runner.room
    ladder = room.settings.deal_rules().ladder
    players = [p for p in room.players() if room.members[p].bot is None]
    # Not from before a round of theirs that is being applied (the last one
    # of this room, typically): its changes first, or say they are pending.
    settled = await desk.ratings.settled_for(players)
    ratings = await desk.accounts.ratings(ladder, players)
    predicted = predicted_places(ratings, players)

    def view(p: str) -> dict[str, Any]:
        r = ratings.get(p, Rating())
        return {**r.to_wire(), "predicted": predicted[p]}

    wire = {p: view(p) for p in players}

    def make() -> Release:
        msg = M.forecast(req.id, ladder=ladder, players=wire, pending=not settled)
        return lambda: conn.send(msg)

    await runner.read(make)


RATING_HANDLERS: dict[type[Request], Handler[Ladders]] = dict(
    [on(LadderRequest, _ladder), on(Forecast, _forecast)]
)
