"""Several ``serve --redis`` processes on one private redis-server: every node serves
every room, a dead owner's rooms move to another node, Redis itself may restart
mid-race, and no key is left behind without a TTL."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest

from bench.server import LOAD_LIMITS
from server.daily.redis import RedisDaily
from server.daily.schedule import day_of
from tests.support.dailies import publish, winning_moves
from tests.support.processes import RedisServer, ServerProcess, running_servers
from tests.support.raw_client import Client, Player, after, player, resume
from tests.support.redis_proxy import RedisProxy
from tests.support.waiting import eventually

D1 = "classic-draw1"


async def race_on_two_nodes(
    a: ServerProcess, b: ServerProcess
) -> tuple[Client, Client, str, list[Player]]:
    """Ann on node A hosts, Bob on node B plays (relayed to A): five moves each."""
    ann, bob = await player(a.url, "Ann"), await player(b.url, "Bob")
    code = (await ann.ok("create_room"))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    await ann.ok("start")
    players = [Player(ann), Player(bob)]
    for p in players:
        p.view = (await p.client.event("deal_started"))["deal"]["board"]
    await asyncio.gather(*(p.play(1, 5) for p in players))
    return ann, bob, code, players


def lease_holder(redis: RedisServer, code: str) -> str:
    held = redis("GET", f"klondike:room:{code}:lease")
    assert held is not None
    return str(held.decode().rpartition("#")[0])


async def test_spectator_on_another_node(redis: RedisServer, tmp_path: Path) -> None:
    """Players on node A, one spectator on A and one on B: B's spectator gets the
    very same frames, seq for seq, and so do players relayed through B; the
    moves' outcomes keep its boards."""
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann, bob = await player(a.url, "Ann"), await player(a.url, "Bob")
        near, far = await player(a.url, "Near"), await player(b.url, "Far")
        code = (await ann.ok("create_room", settings={"deals_per_round": 1}))["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        await near.ok("join_room", code=code, role="spectator")
        reply = await far.ok("join_room", code=code, role="spectator")
        assert reply["room"]["code"] == code
        await ann.ok("start")
        players = [Player(ann), Player(bob)]
        for p in players:
            p.view = (await p.client.event("deal_started"))["deal"]["board"]
        await asyncio.gather(*(p.play(1, 20) for p in players))
        await ann.ok("close_room")
        await far.event("room_closed")
        await near.event("room_closed")
        seqs = [e["seq"] for e in far.events]
        # From Far's join on, both get every event, tailored alike, in seq order.
        assert far.events == [e for e in near.events if e["seq"] >= seqs[0]]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
        # Spectators see every move: far's boards, kept by the outcomes relayed
        # through B, end where the players' own did.
        boards = dict(next(e for e in far.events if e["type"] == "deal_started")["deal"]["boards"])
        for e in far.events:
            if e["type"] == "progress":
                boards[e["player"]] = after(boards[e["player"]], e)
        assert boards == {p.client.player: p.view for p in players}


async def test_players_on_two_nodes_and_owner_failover(redis: RedisServer, tmp_path: Path) -> None:
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann, bob = await player(a.url, "Ann"), await player(b.url, "Bob")
        sam = await player(b.url, "Sam")
        settings = {"scoring": "standard", "time_limit_minutes": 30}
        code = (await ann.ok("create_room", settings=settings))["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        await sam.ok("join_room", code=code, role="spectator")
        idle = await player(a.url, "Ida")  # a second room on A, whose client will go away
        other = (await idle.ok("create_room"))["room"]["code"]
        await idle.close()
        await ann.ok("start")
        players = [Player(ann), Player(bob)]  # Bob's moves go through B to A
        for p in players:
            p.view = (await p.client.event("deal_started"))["deal"]["board"]
        await asyncio.gather(*(p.play(1, 15) for p in players))
        before = (await sam.ok("snapshot"))["room"]
        a_node = lease_holder(redis, code)
        assert lease_holder(redis, other) == a_node

        a.kill()
        for c in (bob, sam):  # relayed through B: B closes them so they resume
            assert await c.closed() == 1001
        resumed = {}
        for c in (ann, bob, sam):
            back, welcome = await resume(b.url, c.token)
            resumed[c.player] = (back, welcome["room"])
        assert lease_holder(redis, code) != a_node
        for p in players:
            room = resumed[p.client.player][1]
            assert room["deal"]["board"] == p.view
            assert room["round_ends_at"] == before["round_ends_at"]
        assert resumed[sam.player][1]["sheet"] == before["sheet"]
        # Play on, on the new owner.
        players[0].client = resumed[ann.player][0]
        players[1].client = resumed[bob.player][0]
        await asyncio.gather(*(p.play(1, 5) for p in players))
        watcher = resumed[sam.player][0]
        progress = await watcher.event("progress", player=bob.player)
        assert progress["progress"]["moves"] > len(players[1].acked) - 5
        # The room nobody was connected to moved too (the scan).
        await eventually(
            lambda: lease_holder_or_none(redis, other) not in (None, a_node),
            what="the idle room to be taken over",
        )


def lease_holder_or_none(redis: RedisServer, code: str) -> str | None:
    held = redis("GET", f"klondike:room:{code}:lease")
    return None if held is None else str(held.decode().rpartition("#")[0])


async def test_graceful_stop_hands_rooms_over_at_once(redis: RedisServer, tmp_path: Path) -> None:
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann = await player(a.url, "Ann")
        code = (await ann.ok("create_room"))["room"]["code"]
        await ann.ok("start")
        seat = Player(ann)
        seat.view = (await ann.event("deal_started"))["deal"]["board"]
        await seat.play(1, 5)
        a_node = lease_holder(redis, code)
        a.stop()  # SIGTERM: clients get 1001, leases are released
        assert await ann.closed() == 1001
        assert redis("EXISTS", f"klondike:room:{code}:lease") == 0  # no lease to wait out
        _, welcome = await resume(b.url, ann.token)
        assert lease_holder(redis, code) != a_node  # B holds it now
        assert welcome["room"]["deal"]["board"] == seat.view


async def test_redis_restart_mid_race(redis: RedisServer, tmp_path: Path) -> None:
    """Moves while Redis is down get storage_unavailable and are not applied; once
    it is back, service resumes by itself (relayed clients may be asked to resume)."""
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann, bob, _code, players = await race_on_two_nodes(a, b)

        redis.kill()
        for p in players:
            assert p.view is not None
            move = p.bot.decide(p.view).to_wire()
            reply = await p.client.request("move", deal=1, move=move)
            assert reply["type"] == "error" and reply["code"] == "storage_unavailable"
        # Down until both nodes have lost their connections to it (their logs say so).
        await eventually(
            lambda: all("lost the connection to Redis" in n.log_path.read_text() for n in (a, b)),
            what="the nodes to notice that Redis is gone",
        )
        redis.start()

        async def moved(p: Player) -> bool:
            """One try at a move: True once one is acknowledged."""
            client = p.client
            if client.close_code is not None:  # the relay asked it to resume
                url = a.url if client is ann else b.url
                p.client, welcome = await resume(url, client.token)
                p.view = welcome["room"]["deal"]["board"]  # as a client takes it up again
                return False
            assert p.view is not None
            move = p.bot.decide(p.view).to_wire()
            try:
                reply = await p.client.request("move", deal=1, move=move)
            except ConnectionError:
                return False
            if reply["type"] != "moved":
                assert reply["code"] == "storage_unavailable", reply
                return False
            p.acked.append(reply)
            p.view = after(p.view, reply)
            return True

        for p in players:
            await eventually(lambda p=p: moved(p), what="service to resume")
        _, welcome = await resume(a.url, ann.token)
        for p in players:
            if p.client.player == ann.player:
                assert welcome["room"]["deal"]["board"] == p.view
        # Bob's moves as his board counts them: the acknowledged ones, and any whose
        # reply was lost with a connection the relay closed (applied once all the
        # same: the board he resumed with shows it).
        bob_seat = players[1]
        assert bob_seat.view is not None and bob_seat.view["moves"] >= len(bob_seat.acked)
        assert welcome["room"]["deal"]["progress"][bob.player]["moves"] == bob_seat.view["moves"]


PUBLISHED_DAY = re.compile(rb"klondike:daily:\d{4}-\d{2}-\d{2}:[a-z0-9-]+")
RANKED_MARK = b"klondike:daily:ranked_by_homes"  # the results' upgrade, done once for good


def rooms_keys_without_ttl(redis: RedisServer) -> list[bytes]:
    """Keys with no TTL but the published daily deals and the results' upgrade mark."""
    return [
        k for k in redis.keys_without_ttl() if not PUBLISHED_DAY.fullmatch(k) and k != RANKED_MARK
    ]


async def test_key_hygiene(redis: RedisServer, tmp_path: Path) -> None:
    """Leases, logs, the room index and sessions all carry TTLs; nodes store nothing
    (their channels are not keys); a closed room's lease goes at once. The daily
    deals the nodes publish are kept for good, by design (a published day never
    changes, and a revealed one is verified later): they alone have no TTL."""
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann, bob = await player(a.url, "Ann"), await player(b.url, "Bob")
        code = (await ann.ok("create_room"))["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        await ann.ok("start")
        await bob.event("deal_started")
        keep = await player(b.url, "Kim")
        await keep.ok("create_room")
        assert rooms_keys_without_ttl(redis) == []
        await ann.ok("close_room")
        await bob.event("room_closed")
        await eventually(
            lambda: redis("EXISTS", f"klondike:room:{code}:lease") == 0,
            what="the closed room's lease to go",
        )
        keys = {k.decode() for k in redis("KEYS", "*")}
        assert not any(":node:" in k for k in keys)
        assert rooms_keys_without_ttl(redis) == []
        for key in keys:
            if key.endswith(":lease"):
                assert 0 < redis("PTTL", key) <= 3000


async def test_a_relayed_client_goes_from_room_to_room(redis: RedisServer, tmp_path: Path) -> None:
    """Bob sits on B. His first room runs on A (relayed); he leaves and joins a room
    that runs on B itself, then one on A again: each join lands where the room runs."""
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann, kim, bob = (
            await player(a.url, "Ann"),
            await player(b.url, "Kim"),
            await player(b.url, "Bob"),
        )
        on_a = (await ann.ok("create_room"))["room"]["code"]
        on_b = (await kim.ok("create_room"))["room"]["code"]
        assert lease_holder(redis, on_a) != lease_holder(redis, on_b)
        for code, host in ((on_a, ann), (on_b, kim), (on_a, ann)):
            reply = await bob.ok("join_room", code=code, role="player")
            assert reply["room"]["code"] == code
            while bob.player not in [p["id"] for p in (await host.event("members"))["players"]]:
                pass  # the host sees Bob arrive (after the members events before it)
            await bob.ok("leave_room")
        await bob.ok("create_room")  # wherever his requests go, he can host one too
        assert (await bob.ok("snapshot"))["room"]["host"] == bob.player


async def test_frozen_owner_is_fenced_off(redis: RedisServer, tmp_path: Path) -> None:
    """A owner that stops answering (SIGSTOP: its sockets stay open) loses its rooms
    when its leases run out; its relayed clients are sent to resume elsewhere, and
    once it wakes up it cannot write to the room's log any more."""
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann, bob, code, players = await race_on_two_nodes(a, b)
        a_node = lease_holder(redis, code)

        a.freeze()
        assert players[0].view is not None
        late = asyncio.create_task(
            ann.request("move", deal=1, move=players[0].bot.decide(players[0].view).to_wire())
        )
        assert await bob.closed(timeout=10) == 1001  # B stopped hearing from A
        bob2, welcome = await resume(b.url, bob.token)  # B takes the room over
        assert lease_holder(redis, code) != a_node
        assert welcome["room"]["deal"]["board"] == players[1].view
        players[1].client = bob2
        await players[1].play(1, 3)

        a.thaw()
        try:  # sent to A while it was frozen: refused, or lost with the connection
            reply = await late
            assert reply["type"] == "error", reply
            assert reply["code"] in ("storage_unavailable", "not_in_room"), reply
        except ConnectionError:
            pass
        assert await ann.closed() == 1001  # A gave the room up
        ann2, welcome = await resume(a.url, ann.token)  # relayed from A to B now
        # A could not write the late move: the board is the last acknowledged one.
        assert welcome["room"]["deal"]["board"] == players[0].view
        players[0].client = ann2
        await players[0].play(1, 3)
        progress = await bob2.event("progress", player=ann.player)
        assert progress["progress"]["moves"] >= len(players[0].acked) - 2


async def test_a_relayed_host_seats_a_bot_and_everyone_reacts(
    redis: RedisServer, tmp_path: Path
) -> None:
    """Requests whose fields are enums cross the relay as themselves: the host,
    resumed on node B while the room runs on A, seats a bot at a pace; Bob on B
    reacts, and Ann and Sam on A see it."""
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann, sam = await player(a.url, "Ann"), await player(a.url, "Sam")
        bob = await player(b.url, "Bob")
        code = (await ann.ok("create_room"))["room"]["code"]
        await sam.ok("join_room", code=code, role="spectator")
        await bob.ok("join_room", code=code, role="player")
        await ann.close()
        host, _ = await resume(b.url, ann.token)  # relayed from B to A now
        holder = lease_holder(redis, code)  # A's, where Ann made the room
        await host.ok("add_bot", pace="fast")
        members = await sam.event("members")
        while not any(p.get("bot") == "fast" for p in members["players"]):
            members = await sam.event("members")
        await bob.ok("react", reaction="gg")
        for c in (sam, host):
            got = await c.event("reaction")
            assert (got["player"], got["reaction"]) == (bob.player, "gg")
        assert lease_holder(redis, code) == holder  # the room never moved to B


async def test_a_session_opened_again_closes_its_older_connection(
    redis: RedisServer, tmp_path: Path
) -> None:
    """Bob, relayed through B to Ann's room on A, opens his session again: on B,
    then on A. Each time his older connection is closed with 4001, the newer one
    plays on, and the room never sees him go offline: as on one node, one
    connection hands the session to the next."""
    with running_servers(redis, tmp_path, 2) as (a, b):
        ann, bob = await player(a.url, "Ann"), await player(b.url, "Bob")
        code = (await ann.ok("create_room"))["room"]["code"]
        await bob.ok("join_room", code=code, role="player")
        await ann.event("members")  # Bob arrives

        again, welcome = await resume(b.url, bob.token)  # the node he was on
        assert await bob.closed() == 4001
        assert welcome["room"]["code"] == code
        third, welcome = await resume(a.url, bob.token)  # the room's own node
        assert await again.closed() == 4001
        assert welcome["room"]["code"] == code

        await third.ok("react", reaction="gg")
        got = await ann.event("reaction")
        assert got["player"] == bob.player
        await ann.caught_up()
        for event in ann.events:
            if event["type"] == "members":
                seen = {p["id"]: p["connected"] for p in event["players"]}
                assert seen.get(bob.player, True), event  # (before he came: absent)


async def test_a_daily_run_over_on_another_node_is_on_the_board_asked_at_once(
    redis: RedisServer, tmp_path: Path
) -> None:
    """Ann's run is a room on A; she comes back through B (relayed to A) and
    wins it there. Her ``daily_board`` and ``daily_compare``, asked of B the
    moment the run is over, are answered where the run's result is written: her
    run is on the board, once."""
    today = day_of(time.time_ns() // 1_000_000)
    daily = await RedisDaily.from_url(redis.url)
    deal = (await publish(daily, today))[D1]
    await daily.close()
    # A whole winning line as fast as the nodes answer: frames uncapped too.
    with running_servers(redis, tmp_path, 2, LOAD_LIMITS) as (a, b):
        ann = await player(a.url, "Ann")
        room = (await ann.ok("daily_start", ladder=D1))["room"]["code"]
        a_node = lease_holder(redis, room)
        moves = winning_moves(deal)
        assert (await ann.request("move", deal=1, move=moves[0].to_wire()))["type"] == "moved"
        await ann.close()
        back, welcome = await resume(b.url, ann.token)
        assert welcome["room"]["code"] == room
        for move in moves[1:]:
            reply = await back.request("move", deal=1, move=move.to_wire())
            assert reply["type"] == "moved", reply
        await back.event("deal_over")
        assert lease_holder(redis, room) == a_node  # the run ran on A, relayed from B
        board = await back.ok("daily_board", ladder=D1)
        assert board["count"] == 1 and board["you"]["rank"] == 1, board
        assert (await back.ok("daily_compare", ladder=D1))["you"]["result"] == "won"
        await back.close()


async def test_a_run_over_at_a_kill_is_played_on_every_node(
    redis: RedisServer, tmp_path: Path
) -> None:
    """Ann's run is a room on A, which reaches Redis through a proxy: A is killed
    with ``kill -9`` once her resignation is durable and before A hears so, so
    A never writes her result. She signs in on B with a recovery code (a new
    device, in no room) and starts the same daily: ``daily_played``, not her
    finished room again, whoever rebuilds it first (B for her request, or B's
    scan). So on A restarted, and her run is on the board once."""
    today = day_of(time.time_ns() // 1_000_000)
    daily = await RedisDaily.from_url(redis.url)
    deal = (await publish(daily, today))[D1]
    await daily.close()
    proxy = RedisProxy(redis.port)
    await proxy.accept()
    a = ServerProcess(proxy.url, tmp_path / "node1.log")
    b = ServerProcess(redis.url, tmp_path / "node2.log")
    try:
        for node in (a, b):  # from a thread: A connects through the proxy in this loop
            await asyncio.to_thread(node.start)
        ann = await player(a.url, "Ann")
        made = await ann.ok("take_handle", handle="Ann")
        room = (await ann.ok("daily_start", ladder=D1))["room"]["code"]
        move = winning_moves(deal)[0].to_wire()
        assert (await ann.request("move", deal=1, move=move))["type"] == "moved"
        log = f"klondike:room:{room}:log"
        before = redis("LLEN", log)
        proxy.swallow = True
        resign = asyncio.ensure_future(ann.request("move", deal=1, move={"kind": "resign"}))
        await eventually(lambda: redis("LLEN", log) > before, what="the resignation in Redis")
        await asyncio.to_thread(a.kill)
        proxy.swallow = False
        with pytest.raises(ConnectionError):
            await resign
        results = f"klondike:daily:results:{today.isoformat()}:{D1}"
        assert redis("HLEN", results) == 0  # the run is over in its log alone

        phone = await Client.open(b.url)
        welcome = await phone.ok("hello", version=2, recovery=made["recovery_codes"][0])
        assert welcome["room"] is None
        reply = await phone.request("daily_start", ladder=D1)
        assert (reply["type"], reply.get("code")) == ("error", "daily_played"), reply

        await asyncio.to_thread(a.start)
        again = await Client.open(a.url)
        await again.ok("hello", version=2, device=welcome["device_token"])
        reply = await again.request("daily_start", ladder=D1)
        assert (reply["type"], reply.get("code")) == ("error", "daily_played"), reply
        board = await again.ok("daily_board", ladder=D1)
        assert board["count"] == 1 and board["you"]["result"] == "resigned", board
        await again.close()
    finally:
        for node in (a, b):
            await asyncio.to_thread(node.kill)
        await proxy.close()
    for node in (a, b):  # a bug on a node shows in its log even when clients cope
        text = node.log_path.read_text()
        assert "Traceback" not in text and " ERROR " not in text, text[-4000:]
