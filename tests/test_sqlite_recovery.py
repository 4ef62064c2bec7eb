"""``python -m server`` on its default, embedded store survives kill -9: a real server
process, real WebSocket clients, a race mid-deal, the process killed and started
again on the same port and data directory. Every client resumes with its token onto
the boards, scores and sheet it last saw acknowledged, and the database holds every
acknowledged move exactly once (read with the test's own sqlite3, not the store)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from tests.support.embedded import EmbeddedServer, moves_in_log
from tests.support.processes import all_exited, command_line, descendants
from tests.support.raw_client import Client, Frame, Player


async def resume(url: str, token: str | None) -> tuple[Client, dict[str, Any]]:
    client = await Client.open(url)
    welcome = await client.ok("hello", version=2, token=token)
    return client, welcome


def boards(room: dict[str, Any]) -> dict[str, Any]:
    deal = room["deal"]
    return {"board": deal["board"], "progress": deal["progress"]}


def same_moves(logged: list[dict[str, Any]], acked: list[dict[str, Any]], sent: list[Any]) -> None:
    """The log holds the acknowledged moves, in order, once each."""
    assert len(logged) == len(acked)  # none lost, none applied twice
    for record, reply, move in zip(logged, acked, sent, strict=True):
        assert record["t"] == reply["t"]
        assert record["m"] == move


class Recorder(Player):
    """A :class:`Player` that also keeps the moves it sent, in order."""

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self.sent: list[dict[str, Any]] = []
        original = client.request

        async def request(kind: str, **fields: Any) -> dict[str, Any]:
            if kind == "move":
                self.sent.append(fields["move"])
            return await original(kind, **fields)

        client.request = request  # type: ignore[method-assign]


async def test_kill_9_mid_race_loses_no_acknowledged_move(
    embedded: EmbeddedServer, tmp_path: Path
) -> None:
    ann, bob, cat, sam = [await Client.open(embedded.url) for _ in range(4)]
    for client, name in ((ann, "Ann"), (bob, "Bob"), (cat, "Cat"), (sam, "Sam")):
        await client.hello(name)
    code = (await ann.ok("create_room", settings={"scoring": "standard", "draw": 3}))["room"][
        "code"
    ]
    for c in (bob, cat):
        await c.ok("join_room", code=code, role="player")
    await sam.ok("join_room", code=code, role="spectator")
    await ann.ok("start")
    players = [Recorder(c) for c in (ann, bob, cat)]
    for p in players:
        p.view = (await p.client.event("deal_started"))["deal"]["board"]
    await sam.event("deal_started")
    await asyncio.gather(*(p.play(1, 30) for p in players))  # concurrently: group commits
    assert all(len(p.acked) >= 5 for p in players)
    before = {c.player: (await c.ok("snapshot"))["room"] for c in (ann, bob, cat, sam)}

    await embedded.kill()
    for c in (ann, bob, cat, sam):
        assert await c.closed() == 1006  # no close frame: the process just died
    logged = moves_in_log(embedded.data_dir)[code]
    for p in players:
        assert p.client.player is not None
        same_moves(logged.get(p.client.player, []), p.acked, p.sent)

    await embedded.start()  # same port, same data directory: the room comes back
    after: dict[str, dict[str, Any]] = {}
    resumed: dict[str, Client] = {}
    for c in (ann, bob, cat, sam):
        assert c.player is not None
        client, welcome = await resume(embedded.url, c.token)
        assert welcome["player"] == c.player and welcome["name"] == c.name
        after[c.player], resumed[c.player] = welcome["room"], client
    for pid, room in after.items():
        old = before[pid]
        assert room["code"] == code and room["seq"] > old["seq"]  # + presence records
        assert room["deal"]["started_at"] == old["deal"]["started_at"]
        assert room["deal"]["commitment"] == old["deal"]["commitment"]
        assert boards(room) == boards(old)  # boards and scores
        assert room["sheet"] == old["sheet"]
    for p in players:
        assert p.client.player is not None
        mine = after[p.client.player]["deal"]["board"]
        assert mine == p.view  # the last acknowledged board, exactly
        assert mine["moves"] == len(p.acked)
    assert sam.player is not None
    spectated = after[sam.player]["deal"]["boards"]
    assert spectated == {p.client.player: p.view for p in players}

    # The race goes on from there.
    again = Player(resumed[ann.player or ""])
    again.view = after[ann.player or ""]["deal"]["board"]
    await again.play(1, 1)
    if again.acked:
        assert again.acked[0]["outcome"]["moves"] == len(players[0].acked) + 1
    for client in resumed.values():
        await client.close()


async def test_moves_in_flight_at_the_kill(embedded: EmbeddedServer) -> None:
    """Two rooms, each with moves pipelined when the process dies (killed from the
    frame callback of the 15th acknowledgement). Moves sent but unanswered may or
    may not be in the log; every answered one is, once, where its reply said."""
    acked: dict[str, list[dict[str, Any]]] = {}
    total = 0

    def on_frame(client: Client, frame: Frame) -> None:
        nonlocal total
        if frame.msg.get("type") == "moved":
            assert client.player is not None
            acked.setdefault(client.player, []).append(frame.msg)
            total += 1
            if total == 15:
                embedded.kill_now()

    clients = [await Client.open(embedded.url) for _ in range(2)]
    codes = {}
    for client, name in zip(clients, ("Ann", "Bob"), strict=True):
        await client.hello(name)
        codes[client.player] = (await client.ok("create_room"))["room"]["code"]
        await client.ok("start")
        await client.event("deal_started")
        client.on_frame = on_frame

    async def draws(client: Client) -> list[Any]:
        tasks = [client.request("move", deal=1, move={"kind": "draw"}) for _ in range(40)]
        return await asyncio.gather(*tasks, return_exceptions=True)

    answers = await asyncio.gather(*(draws(c) for c in clients))
    await embedded.exited()
    assert total >= 15
    logged = moves_in_log(embedded.data_dir)
    await embedded.start()
    for client, replies in zip(clients, answers, strict=True):
        pid = client.player
        assert pid is not None
        refused = sum(1 for r in replies if isinstance(r, dict) and r["type"] == "error")
        mine = logged.get(codes[pid], {}).get(pid, [])
        assert len(mine) <= 40 - refused  # nothing applied twice, nothing made up
        for reply in acked.get(pid, []):  # every acknowledged move, at its place
            n = reply["outcome"]["moves"]
            assert n <= len(mine), "an acknowledged move is missing from the log"
            assert mine[n - 1]["t"] == reply["t"]
        _, welcome = await resume(embedded.url, client.token)
        assert welcome["room"]["code"] == codes[pid]
        assert welcome["room"]["deal"]["board"]["moves"] == len(mine)  # the log's board


async def test_kill_9_while_proving_deals_restarts_at_once(embedded: EmbeddedServer) -> None:
    """``deals: winnable`` proves layouts in worker processes. Killed (-9) while one
    winnable room plays and another waits for its first proven deal, the server
    leaves no process behind: its workers end with it, holding nothing of its own
    (the data directory's lock above all), so it starts again on the same
    directory at once, every token resumes and no acknowledged move is lost."""
    ann, bob, cat = [await Client.open(embedded.url) for _ in range(3)]
    for client, name in ((ann, "Ann"), (bob, "Bob"), (cat, "Cat")):
        await client.hello(name)
    code = (await ann.ok("create_room", settings={"deals": "winnable"}))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    # Answered once the first proven seed is dealt: the solver runs at nice 19, so
    # on a loaded machine that takes as long as it takes (no window but the test's).
    await ann.ok("start", timeout=None)
    players = [Recorder(c) for c in (ann, bob)]
    for p in players:
        p.view = (await p.client.event("deal_started"))["deal"]["board"]
    await asyncio.gather(*(p.play(1, 12) for p in players))
    assert all(p.acked for p in players)

    # A second room with other rules: its pool fills from nothing, in a worker.
    other = (await cat.ok("create_room", settings={"deals": "winnable", "draw": 3}))["room"]
    starting = asyncio.ensure_future(cat.request("start", timeout=None))
    finding = asyncio.ensure_future(cat.event("finding_deal", timeout=None, finding=True))
    await asyncio.wait({starting, finding}, return_when=asyncio.FIRST_COMPLETED)
    assert embedded.proc is not None
    left = {pid: command_line(pid) for pid in descendants(embedded.proc.pid)}

    # Its processes are awaited before the server's stderr, which a process it
    # left behind would hold open: the test fails naming them, it does not hang.
    embedded.kill_now()
    await all_exited(set(left))  # every worker ended with the server, by itself
    await embedded.exited()
    assert any("multiprocessing" in line for line in left.values()), left  # spawned
    for task in (starting, finding):
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
    logged = moves_in_log(embedded.data_dir)[code]
    for p in players:
        assert p.client.player is not None
        same_moves(logged.get(p.client.player, []), p.acked, p.sent)

    await embedded.start()  # the same directory: nothing holds its lock
    for p in players:
        client, welcome = await resume(embedded.url, p.client.token)
        assert welcome["room"]["code"] == code
        assert welcome["room"]["deal"]["board"] == p.view
        await client.close()
    again, welcome = await resume(embedded.url, cat.token)
    assert welcome["room"]["code"] == other["code"]
    if welcome["room"]["deal"] is None:  # its start was not acknowledged: start again
        await again.ok("start", timeout=None)
    else:
        assert welcome["room"]["deal"]["commitment"]
    await again.close()


async def test_kill_9_right_after_the_last_joined_loses_no_seat(embedded: EmbeddedServer) -> None:
    """A ``joined`` tells its client it sits in the room, so its session's link to
    the room is stored before that reply leaves. Many rooms are created and joined
    at once, and the process is killed (-9) from the frame callback of the last
    ``joined``: after a restart on the same directory every token resumes into the
    room it was told it sits in, seated there with the role it asked for."""
    hosts = [await Client.open(embedded.url) for _ in range(4)]
    for i, host in enumerate(hosts):
        await host.hello(f"Host {i}")
    codes = [(await h.ok("create_room"))["room"]["code"] for h in hosts]
    # Then all at once: a player and a spectator into each room, and new rooms.
    joiners = [await Client.open(embedded.url) for _ in range(2 * len(codes))]
    creators = [await Client.open(embedded.url) for _ in range(4)]
    for i, client in enumerate(joiners + creators):
        await client.hello(f"Guest {i}")
    seated: dict[str, tuple[Client, str, str]] = {}  # player: (client, room, role)
    for host, code in zip(hosts, codes, strict=True):
        assert host.player is not None
        seated[host.player] = (host, code, "player")
    wanted = len(joiners) + len(creators)

    def on_frame(client: Client, frame: Frame) -> None:
        msg = frame.msg
        if msg.get("type") != "joined":
            return
        assert client.player is not None
        role = "spectator" if client in joiners[1::2] else "player"
        seated[client.player] = (client, msg["room"]["code"], role)
        if len(seated) == len(hosts) + wanted:
            embedded.kill_now()  # right after the last reply: no time to catch up

    for client in joiners + creators:
        client.on_frame = on_frame
    asks = [
        c.request("join_room", code=codes[i // 2], role="spectator" if i % 2 else "player")
        for i, c in enumerate(joiners)
    ] + [c.request("create_room") for c in creators]
    replies = await asyncio.gather(*asks)
    assert all(r["type"] == "joined" for r in replies), replies
    await embedded.exited()

    await embedded.start()  # same directory: every room and every link comes back
    for pid, (client, code, role) in seated.items():
        again, welcome = await resume(embedded.url, client.token)
        assert welcome["player"] == pid
        room = welcome["room"]
        assert room is not None, f"{client.name}'s token resumes into no room"
        assert room["code"] == code
        members = room["players"] if role == "player" else room["spectators"]
        assert pid in {m["id"] for m in members}
        await again.close()


async def test_kill_9_right_after_matched_loses_no_seat(embedded: EmbeddedServer) -> None:
    """``matched`` tells each player the quick-match room they sit in, so their
    accounts hold the room before it leaves: killed (-9) from the frame callback
    of the second ``matched``, the server restarts on the same directory and each
    device's token resumes into that room, seated as a player."""
    clients = [await Client.open(embedded.url) for _ in range(2)]
    told: dict[str, str] = {}  # player: the room its matched named

    def on_frame(client: Client, frame: Frame) -> None:
        if frame.msg.get("type") == "matched":
            assert client.player is not None
            told[client.player] = frame.msg["room"]["code"]
            if len(told) == len(clients):
                embedded.kill_now()  # right after the last one: no time to catch up

    for client, handle in zip(clients, ("Ann", "Bob"), strict=True):
        await client.hello(handle)
        made = await client.ok("take_handle", handle=handle)
        client.token = made["device_token"]
        client.on_frame = on_frame
    for client in clients:
        await client.ok("queue", ladder="classic-draw1")
    await embedded.exited()
    assert len(told) == 2 and len(set(told.values())) == 1

    await embedded.start()
    for client in clients:
        again, welcome = await resume(embedded.url, client.token)
        assert welcome["player"] == client.player
        room = welcome["room"]
        assert room is not None, f"{client.name}'s device resumes into no room"
        assert room["code"] == told[client.player]
        assert client.player in {m["id"] for m in room["players"]}
        await again.close()
