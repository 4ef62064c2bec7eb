"""No frame ever tells anybody what they may not know (docs/rules.md §8).

Whole races are played by bots over real sockets, with a drop and resume, snapshot
requests and a spectator joining mid-deal. Every frame every client received is
kept. Afterwards the deals' seeds and logs (revealed at each deal's end) let the
test replay every board and check each frame against what its receiver could see
at the moment it was sent:

- a player: no card that is face down or in the stock on their own board (the
  layout is the same for everyone, so a rival's face-up card counts too);
- a spectator: no card that no player has had face up yet;
- players never get a rival's board, and nobody a seed, before the deal is over;
- a late friend sitting out the running deal (a player of the round who joined
  after it was dealt) no more than a spectator: the spectator's check, and every
  event the same map a spectator got.

"At the moment it was sent" is measured in moves: a client's frames arrive in the
order they were sent, each accepted move shows up as a ``moved`` reply (the
player's own) or a ``progress`` event (everyone's), and a snapshot tells how many
moves each player has made.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from client.bot import RESIGN, Bot
from protocol.board import Board
from protocol.moves import Move
from protocol.settings import DealRules
from protocol.views import hidden_cards
from tests.support.inprocess import running_server
from tests.support.raw_client import JSON, Client, Frame, after, player

CARD = re.compile(r"^[A2-9TJQK][CDHS]$")
CARD_IN_TEXT = re.compile(r"\b[A2-9TJQK][CDHS]\b")
SNAPSHOTS = ("welcome", "joined", "snapshot")


def cards_in(value: Any, out: set[str]) -> set[str]:
    if isinstance(value, str):
        if CARD.match(value):
            out.add(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k == "message" and isinstance(v, str):
                out.update(CARD_IN_TEXT.findall(v))
            else:
                cards_in(v, out)
    elif isinstance(value, list):
        for v in value:
            cards_in(v, out)
    return out


class Replica:
    """Every board of every deal, replayed from the revealed seeds and logs."""

    def __init__(self, frames: list[list[Frame]]) -> None:
        self.rules: dict[tuple[int, int], DealRules] = {}
        self.seeds: dict[tuple[int, int], str] = {}
        self.logs: dict[tuple[int, int], dict[str, list[dict[str, Any]]]] = {}
        for stream in frames:
            rnd = 0
            for f in stream:
                m = f.msg
                if m["type"] in SNAPSHOTS and m.get("room"):
                    rnd = m["room"]["round"]
                if m["type"] == "deal_started":
                    rnd = m["round"]
                    self.rules[rnd, m["deal"]["number"]] = DealRules.from_wire(m["deal"]["rules"])
                if m["type"] == "deal_over":
                    key = (rnd, m["deal"]["number"])
                    self.seeds[key] = m["deal"]["seed"]
                    self.logs[key] = m["deal"]["logs"]

    def hidden(self, key: tuple[int, int], player: str, moves: int) -> set[str]:
        board = Board.deal(self.seeds[key], self.rules[key])
        for entry in self.logs[key][player][:moves]:
            board.apply(Move.from_wire(entry["move"]))
        return hidden_cards(board)


def playing(role: str, me: str, counts: dict[str, int]) -> bool:
    """Whether ``me`` plays the running deal (``counts``: its players' moves)."""
    return role == "player" and me in counts


def sat_out_as_a_spectator(sitter: list[Frame], spectator: list[Frame]) -> int:
    """Every event the late friend got while sitting out (up to the deal they are
    dealt in) is one the spectator got too, the same map; return how many."""
    seen: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for f in spectator:
        if "seq" in f.msg and "id" not in f.msg:
            seen.setdefault((f.msg["seq"], f.msg["type"]), []).append(f.msg)
    compared = 0
    for f in sitter:
        m = f.msg
        if m["type"] == "deal_started":
            break
        if "seq" in m and "id" not in m:
            assert m in seen.get((m["seq"], m["type"]), []), f"more than a spectator got: {m}"
            compared += 1
    return compared


def check_stream(frames: list[Frame], me: str, role: str, replica: Replica) -> int:
    """Check one client's frames; return how many card-bearing frames it checked."""
    checked = 0
    rnd = 0
    running: int | None = None  # the deal in play, not yet over
    counts: dict[str, int] = {}
    over_at = {}  # seed -> index of its deal_over in this stream
    for i, f in enumerate(frames):
        if f.msg["type"] == "deal_over":
            over_at[f.msg["deal"]["seed"]] = i
    for i, f in enumerate(frames):
        m = f.msg
        kind = m["type"]
        scope: Any = m
        if kind in SNAPSHOTS and m.get("room"):
            room = m["room"]
            rnd = room["round"]
            role = room["role"]
            deal = room["deal"]
            scope, running = None, None
            if deal is not None and room["state"] == "playing":
                running = deal["number"]
                counts = {p: pr["moves"] for p, pr in deal["progress"].items()}
                scope = deal
                if playing(role, me, counts):
                    assert deal["boards"] == {}, "a rival board in a snapshot"
                else:
                    assert deal["board"] is None, "a board of their own to one not dealt in"
        elif kind == "deal_started":
            rnd, running = m["round"], m["deal"]["number"]
            counts = dict.fromkeys(m["deal"]["progress"], 0)
            if playing(role, me, counts):
                assert m["deal"]["boards"] == {}
        elif kind == "moved":
            counts[me] += 1
        elif kind == "progress":
            if m["player"] != me:
                counts[m["player"]] += 1
            if playing(role, me, counts):
                assert "board" not in m, "a rival's board sent to a player mid-deal"
                assert "outcome" not in m, "a rival's move sent to a player mid-deal"
        elif kind == "deal_over":
            running = None
        if kind in ("deal_over", "sheet", "round_over") or running is None or scope is None:
            continue
        key = (rnd, running)
        if key not in replica.seeds:
            continue  # the round was cut short; nothing to check against
        seed = replica.seeds[key]
        raw = f.raw.encode() if isinstance(f.raw, str) else f.raw
        assert seed.encode() not in raw, f"seed of deal {key} sent before it was over"
        assert over_at.get(seed, len(frames)) > i
        shown = cards_in(scope, set())
        if not shown:
            continue
        if playing(role, me, counts):
            hidden = replica.hidden(key, me, counts[me])
        else:  # a spectator, or a late friend sitting the deal out
            hidden = set.intersection(*(replica.hidden(key, p, n) for p, n in counts.items()))
        leaked = shown & hidden
        assert not leaked, f"{kind} to {role} {me} shows hidden {sorted(leaked)}: {m}"
        checked += 1
    return checked


async def play_deal(
    clients: dict[str, Client], number: int, boards: dict[str, Any], cap: int
) -> None:
    async def one(pid: str) -> None:
        bot = Bot()
        for i in range(cap):
            board = boards[pid]
            if board["status"] != "playing":
                return
            move = bot.decide(board) if i < cap - 1 else RESIGN
            if i % 37 == 5:
                await clients[pid].request("snapshot")
            reply = await clients[pid].request("move", deal=number, move=move.to_wire())
            if reply["type"] != "moved":
                return
            boards[pid] = after(board, reply)

    await asyncio.gather(*(one(pid) for pid in clients))


async def test_no_frame_leaks_hidden_information() -> None:
    async with running_server() as server:
        every: list[tuple[Client, str]] = []
        host = await player(server, "Host")
        code = (await host.ok("create_room", settings={"deals_per_round": 2, "break_seconds": 0}))[
            "room"
        ]["code"]
        guests = [await player(server, n, JSON if n == "Jo" else None) for n in ("Jo", "Kim")]
        for g in guests:
            await g.ok("join_room", code=code, role="player")
        watcher = await player(server, "Watch", JSON)
        await watcher.ok("join_room", code=code, role="spectator")
        every += [(host, "player"), (guests[0], "player"), (guests[1], "player")]
        every.append((watcher, "spectator"))

        for rnd, settings in enumerate(({"draw": 1}, {"draw": 3, "stock_passes": 2})):
            await host.ok("update_settings", settings=settings)
            await host.ok("rematch" if rnd else "start")
            for number in (1, 2):
                clients = {c.player or "": c for c in (host, *guests)}
                boards = {}
                for pid, c in clients.items():
                    start = await c.event("deal_started")
                    assert start["deal"]["number"] == number
                    boards[pid] = start["deal"]["board"]
                if rnd == 0 and number == 1:
                    # Kim drops after a few moves and resumes; a latecomer watches.
                    kim = guests[1]
                    bot = Bot()
                    for _ in range(5):
                        move = bot.decide(boards[kim.player or ""])
                        wire = move.to_wire() if move != RESIGN else {"kind": "draw"}
                        reply = await kim.ok("move", deal=1, move=wire)
                        boards[kim.player or ""] = after(boards[kim.player or ""], reply)
                    kim.ws.transport.abort()
                    back = await Client.open(server.url)
                    welcome = await back.ok("hello", version=2, token=kim.token)
                    back.player, back.token = kim.player, kim.token
                    assert welcome["room"]["deal"]["board"] == boards[kim.player or ""]
                    guests[1] = clients[kim.player or ""] = back
                    every.append((back, "player"))
                    late = await player(server, "Late")
                    await late.ok("join_room", code=code, role="spectator")
                    every.append((late, "spectator"))
                    # A late friend sits this deal out, watching, and plays the next.
                    dan = await player(server, "Dan")
                    joined = await dan.ok("join_room", code=code, role="player")
                    assert joined["room"]["deal"]["board"] is None
                    assert set(joined["room"]["deal"]["boards"]) == set(clients)
                    guests.append(dan)
                    every.append((dan, "player"))
                await play_deal(clients, number, boards, cap=120)
                await host.event("deal_over")
            await host.event("round_over")

        # Every frame of the race has reached everyone still connected: the last one
        # is the second round's end, the same event (seq) for all.
        last = host.last("round_over")
        assert last is not None
        for client, _ in every:
            if client is not host and client.close_code is None:
                await client.event("round_over", seq=last["seq"])
        assert sat_out_as_a_spectator(dan.frames, watcher.frames) > 20
        replica = Replica([c.frames for c, _ in every])
        assert len(replica.seeds) == 4
        checked = 0
        for client, role in every:
            checked += check_stream(client.frames, client.player or "", role, replica)
        assert checked > 500


async def test_a_late_friend_watches_only_as_a_spectator_would() -> None:
    """Under ``after_deal`` a late friend sitting out sees progress only, as a
    spectator does; under ``live`` the boards, and then their reactions reach
    only those who watch (a cheer would be news of a board), until the deal ends."""
    async with running_server() as server:
        ann = await player(server, "Ann")
        code = (
            await ann.ok(
                "create_room",
                settings={"deals_per_round": 2, "break_seconds": 0, "spectators": "after_deal"},
            )
        )["room"]["code"]
        sam = await player(server, "Sam")
        await sam.ok("join_room", code=code, role="spectator")
        await ann.ok("start")
        await ann.event("deal_started")
        dan = await player(server, "Dan")
        deal = (await dan.ok("join_room", code=code, role="player"))["room"]["deal"]
        assert (deal["board"], deal["boards"]) == (None, {})
        await ann.ok("move", deal=1, move={"kind": "draw"})
        assert "outcome" not in await dan.event("progress")

        await ann.ok("update_settings", settings={"spectators": "live"})
        deal = (await dan.ok("snapshot"))["room"]["deal"]
        assert deal["board"] is None and set(deal["boards"]) == {ann.player}
        await ann.ok("move", deal=1, move={"kind": "draw"})
        seen = await dan.event("progress")
        assert seen == await sam.event("progress", seq=seen["seq"])
        assert "outcome" in seen and "digest" in seen

        await dan.ok("react", reaction="wow")
        assert (await sam.event("reaction"))["player"] == dan.player
        await ann.caught_up()
        assert ann.unseen("reaction") == []
        await ann.ok("move", deal=1, move={"kind": "resign"})
        await dan.event("deal_started")  # dealt in: a player now, their own board only
        await dan.ok("react", reaction="gg")
        assert (await ann.event("reaction"))["player"] == dan.player
