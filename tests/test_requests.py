"""One codec for every request, both ways (protocol/requests.py), and the cluster relay
using exactly it: every request type a client may send crosses from its edge node to
the node that runs its room and arrives equal to what the edge parsed.

The samples (tests/support/requests.py) are keyed by the codec's own table
(``REQUESTS``): a request added to the protocol fails here until it has a sample,
so it cannot miss the trip through the relay.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from protocol.account_requests import ACCOUNT_REQUESTS
from protocol.daily_requests import DAILY_AT_THE_EDGE, DailyBoard, DailyCompare
from protocol.friend_requests import AT_THE_EDGE
from protocol.messages import Reaction, Role
from protocol.moves import Move, MoveKind, UnreadableMove
from protocol.requests import (
    REQUESTS,
    AddBot,
    CreateRoom,
    Hello,
    JoinRoom,
    MoveRequest,
    Ping,
    Request,
    parse_request,
    request_message,
)
from protocol.strategy import Pace
from protocol.wire import WireError
from server.accounts.friend_handlers import FRIEND_HANDLERS
from server.accounts.handlers import ACCOUNT_HANDLERS
from server.accounts.history_handlers import HISTORY_HANDLERS
from server.app import RaceServer
from server.challenges.requests import CHALLENGE_HANDLERS
from server.cluster.relay import RemoteConn
from server.daily.handlers import DAILY_HANDLERS
from server.daily.run_handlers import RUN_HANDLERS
from server.matchmaking.handlers import QUICK_HANDLERS
from server.peer import Peer
from server.ratings.handlers import RATING_HANDLERS
from server.rooms.handlers import ROOM_HANDLERS
from server.service.dispatch import HANDLERS
from server.store.redis import RedisStore
from tests.support.inprocess import running_server
from tests.support.processes import RedisServer
from tests.support.raw_client import player
from tests.support.requests import SAMPLES


def test_every_request_type_has_a_sample() -> None:
    assert set(SAMPLES) == set(REQUESTS)


def test_every_request_type_has_one_handler() -> None:
    """Each type the codec parses goes to exactly one handler (a type in two of
    the tables the dispatch merges would go to whichever came last)."""
    tables = [
        ROOM_HANDLERS,
        ACCOUNT_HANDLERS,
        HISTORY_HANDLERS,
        FRIEND_HANDLERS,
        RATING_HANDLERS,
        DAILY_HANDLERS,
        RUN_HANDLERS,
        CHALLENGE_HANDLERS,
        QUICK_HANDLERS,
    ]
    handled = [Hello, Ping, *(kind for table in tables for kind in table)]
    assert sorted(k.TYPE for k in handled) == sorted(REQUESTS)
    assert set(HANDLERS) == set(REQUESTS.values())


@pytest.mark.parametrize("kind", sorted(REQUESTS))
@pytest.mark.parametrize("rid", [None, 0, -(2**53), "a-string-id"])
def test_a_request_makes_the_map_it_was_parsed_from(kind: str, rid: int | str | None) -> None:
    message = {"type": kind} | ({} if rid is None else {"id": rid}) | SAMPLES[kind]
    request = parse_request(message)
    assert (type(request), request.TYPE, request.id) == (REQUESTS[kind], kind, rid)
    assert request_message(request) == message
    assert parse_request(request_message(request)) == request


def test_typed_fields() -> None:
    join = parse_request({"type": "join_room", "code": "AB", "role": "spectator"})
    assert join == JoinRoom(None, "AB", Role.SPECTATOR)
    move = parse_request({"type": "move", "id": 4, **SAMPLES["move"]})
    assert move == MoveRequest(4, 1, Move(MoveKind.TABLEAU_TO_TABLEAU, 2, 5, 3), 7)
    react = parse_request({"type": "react", "reaction": "gg"})
    assert getattr(react, "reaction", None) is Reaction.GG


def test_optional_fields_take_their_documented_default() -> None:
    """docs/protocol.md, "Rooms": ``role`` defaults to ``player``, ``pace`` to
    ``steady``, ``settings`` of ``create_room`` to none changed."""
    assert parse_request({"type": "join_room", "code": "AB"}) == JoinRoom(None, "AB", Role.PLAYER)
    assert parse_request({"type": "add_bot"}) == AddBot(None, Pace.STEADY)
    assert parse_request({"type": "create_room"}) == CreateRoom(None, {})
    assert parse_request({"type": "create_room", "settings": None}) == CreateRoom(None, {})


def test_a_move_is_canonical_once_parsed() -> None:
    """Fields a move's kind does not use are dropped: a retry compares moves, and
    the relay sends the move the edge parsed, not the map the client sent."""
    sent = {"type": "move", "deal": 1, "n": 0, "move": {"kind": "draw", "from": 3, "count": 9}}
    request = parse_request(sent)
    assert request == MoveRequest(None, 1, Move(MoveKind.DRAW), 0)
    assert request_message(request)["move"] == {"kind": "draw"}


@pytest.mark.parametrize(
    "move",
    [
        {"kind": "jump"},
        {},
        {"kind": "waste_tableau"},  # no 'to'
        {"kind": "tableau_tableau", "from": 1, "to": 2, "count": "3"},
        {"kind": "waste_tableau", "to": True},
    ],
)
def test_a_move_the_engine_cannot_read_is_kept_to_be_refused_in_turn(move: Any) -> None:
    """Not refused by the codec: ``bad_move`` is an engine reason, which comes
    after the room's refusals (docs/protocol.md, ``move``). It crosses the relay
    as it came."""
    message = {"type": "move", "deal": 1, "move": move, "n": 0}
    request = parse_request(message)
    assert isinstance(request, MoveRequest) and isinstance(request.move, UnreadableMove)
    assert request.move.refusal().code == "bad_move"
    assert request_message(request) == message
    assert parse_request(request_message(request)) == request


def test_a_move_that_is_not_a_map_is_a_bad_request() -> None:
    with pytest.raises(WireError) as refused:
        parse_request({"type": "move", "deal": 1, "n": 0, "move": "draw"})
    assert refused.value.code.value == "bad_request"


# ---------------------------------------------------------------------- the relay


@asynccontextmanager
async def two_nodes(redis: RedisServer) -> AsyncIterator[tuple[RaceServer, RaceServer]]:
    """Two clustered nodes in this process, on the test's own redis-server."""

    async def store() -> RedisStore:
        return await RedisStore.from_url(redis.url, timeout=1.0)

    async with (
        running_server(store_factory=store, clustered=True) as a,
        running_server(store_factory=store, clustered=True) as b,
    ):
        yield a, b


def arrivals(node: RaceServer) -> list[Request]:
    """Every request ``node`` runs for a client of another node, as it gets it from
    the relay (:class:`RemoteConn` hands each to the service's ``handle``)."""
    arrived: list[Request] = []
    handle: Callable[[Peer, Request], Awaitable[None]] = node.service.handle

    async def recorded(conn: Peer, req: Request) -> None:
        if isinstance(conn, RemoteConn):
            arrived.append(req)
        await handle(conn, req)

    node.service.handle = recorded  # type: ignore[method-assign]
    return arrived


async def test_every_request_crosses_the_relay_and_arrives_equal(redis: RedisServer) -> None:
    async with two_nodes(redis) as (a, b):
        arrived = arrivals(a)
        ann = await player(a.url, "Ann")
        code = (await ann.ok("create_room"))["room"]["code"]
        bob = await player(b.url, "Bob")  # B's client; the room runs on A
        # Bob's join opens the tunnel; then every sample, his own room's code in
        # those that name one (a second join is refused: he is in a room).
        sent = [{"type": "join_room", "code": code, "role": "spectator"}]
        for kind, fields in SAMPLES.items():
            sent.append({"type": kind, **fields} | ({"code": code} if "code" in fields else {}))
        for message in sent:
            reply = await bob.request(
                message["type"], **{k: v for k, v in message.items() if k != "type"}
            )
            message["id"] = reply["id"]
        # Account requests, the friends requests but invite_friend, and the daily
        # requests but daily_start are answered by the client's own node, never
        # relayed; but daily_board and daily_compare go where the client's room
        # runs (a run just over has its result written there).
        at_the_edge = {*ACCOUNT_REQUESTS, *AT_THE_EDGE, *DAILY_AT_THE_EDGE} - {
            DailyBoard,
            DailyCompare,
        }
        relayed = [m for m in sent if m["type"] not in {k.TYPE for k in at_the_edge}]
        assert arrived == [parse_request(m) for m in relayed]
        assert {type(r) for r in arrived} == set(REQUESTS.values()) - at_the_edge
        # The relay carried them: a spectator who then left, on the owner's books.
        assert bob.player not in a.service.rooms[code].room.members


async def test_a_move_the_engine_cannot_read_is_refused_in_its_turn(redis: RedisServer) -> None:
    """Relayed like any move, and refused by the room that runs it: ``bad_move``
    for a player of the running deal, the room's own refusal first otherwise."""
    async with two_nodes(redis) as (a, b):
        arrived = arrivals(a)
        ann = await player(a.url, "Ann")
        code = (await ann.ok("create_room"))["room"]["code"]
        bob = await player(b.url, "Bob")
        sam = await player(b.url, "Sam")
        await bob.ok("join_room", code=code)  # role left out: a player
        await sam.ok("join_room", code=code, role="spectator")
        members = a.service.rooms[code].room.members
        assert members[str(bob.player)].role is Role.PLAYER
        assert members[str(sam.player)].role is Role.SPECTATOR
        jump = {"kind": "jump"}
        reply = await bob.request("move", deal=1, n=0, move=jump)
        assert reply["code"] == "wrong_state"  # not started: the room refuses first
        await ann.ok("start")
        await bob.event("deal_started")
        reply = await sam.request("move", deal=1, n=0, move=jump)
        assert reply["code"] == "not_a_player"
        reply = await bob.request("move", deal=2, n=0, move=jump)
        assert reply["code"] == "wrong_deal"
        reply = await bob.request("move", deal=1, n=0, move=jump)
        assert (reply["code"], "jump" in reply["message"]) == ("bad_move", True)
        moves = [r for r in arrived if isinstance(r, MoveRequest)]
        assert len(moves) == 4 and all(isinstance(r.move, UnreadableMove) for r in moves)
