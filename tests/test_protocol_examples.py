"""Every example frame of docs/protocol.md, held to what the server really sends.

A client is written from the page's examples as much as from its prose, so each
example in a fenced ``json`` block must be a frame the server accepts (a
request) or sends (a reply, an event, or a part of one, such as a board view).
One session (a real in-process server on a clock the test moves; every frame
over real sockets) plays through what the examples show: a Timed race watched
by a spectator and a rated round after it, friends, records, challenges, a
daily run with a ghost and its day's end, a quick match, a device signed in by
a link code. Each example request is sent as the page writes it (only the
values that name something of this session, such as a room's code, are this
session's) and must get the reply the page promises; each example reply, event
or part is held to the real one by shape: the same ``type``, the same keys at
every depth (values such as ids, tokens and times differ), where ``…`` in a map
means "more keys" (or, in a map keyed by player ids, "more players") and a
placeholder such as ``SETTINGS`` stands for what its own example shows. A new
example the session does not produce fails the test until it does.

Then every connection's frames, in the order they came, are taken by the rule of
"Events that keep the seq", as a client written from the page does: no gap, no
event dropped but those a room view it holds already covers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from protocol.board import Board
from protocol.moves import IllegalMove, Move, MoveKind, Reason
from protocol.requests import REQUESTS
from protocol.settings import DealRules
from protocol.views import player_view
from server.daily.schedule import day_start
from tests.support.dailies import publish, winning_moves
from tests.support.inprocess import UNLIMITED, FakeClock, Seeds, running_server
from tests.support.raw_client import Client

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
DAY_MS = 86_400_000
D1 = "classic-draw1"

# ---------------------------------------------------------------- the examples


class _Hole:
    """A placeholder of the page (``SETTINGS``, ``{DEAL_RULES}``, ``…`` as a
    value): stands for whatever its own example shows."""

    def __repr__(self) -> str:
        return "HOLE"


HOLE = _Hole()


@dataclass
class Shape:
    """A map of an example: its keys and what each holds; ``more`` when it ends
    with ``…`` (further keys, or further players)."""

    fields: dict[str, Any]
    more: bool = False


_TOKEN = re.compile(
    r"""\s*(?:
      (?P<comment>//[^\n]*)
    | (?P<string>"(?:[^"\\]|\\.)*")
    | (?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
    | (?P<literal>true|false|null)\b
    | (?P<punct>[{}\[\]:,])
    | (?P<more>…|\.\.\.)
    | (?P<hole>[A-Za-z_][A-Za-z_0-9]*…?)
    )""",
    re.X,
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, at = [], 0
    while at < len(text.rstrip()):
        match = _TOKEN.match(text, at)
        assert match, f"cannot read the example at {text[at : at + 40]!r}"
        at = match.end()
        kind = match.lastgroup
        assert kind is not None
        if kind != "comment":
            out.append((kind, match.group(kind)))
    return out


class _Reader:
    """The page's example JSON: JSON, with placeholders, ``…`` and comments."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.at] if self.at < len(self.tokens) else ("end", "")

    def take(self, want: str | None = None) -> tuple[str, str]:
        token = self.peek()
        assert want is None or token[1] == want, f"expected {want!r}, got {token}"
        self.at += 1
        return token

    def values(self) -> list[Any]:
        out = []
        while self.peek()[0] != "end":
            out.append(self.value())
        return out

    def value(self) -> Any:
        kind, text = self.take()
        if kind == "string":
            return text[1:-1]
        if kind == "number":
            return float(text) if "." in text or "e" in text.lower() else int(text)
        if kind == "literal":
            return {"true": True, "false": False, "null": None}[text]
        if kind in ("hole", "more"):
            return HOLE
        if text == "[":
            return self._list()
        assert text == "{", f"unexpected {text!r}"
        return self._map()

    def _list(self) -> list[Any]:
        items: list[Any] = []
        while self.peek()[1] != "]":
            if self.peek()[0] == "more":
                self.take()
            else:
                items.append(self.value())
            if self.peek()[1] == ",":
                self.take()
        self.take("]")
        return items

    def _map(self) -> Any:
        fields: dict[str, Any] = {}
        more = whole_hole = False
        while self.peek()[1] != "}":
            kind, text = self.take()
            if kind == "more":
                more = True
            elif kind == "hole" and self.peek()[1] != ":":
                whole_hole = True  # {DEAL_RULES}
            else:
                self.take(":")
                # A key that is a placeholder (``id``) stands for a player's id.
                fields[text[1:-1] if kind == "string" else "pID"] = self.value()
                more = more or kind == "hole"
            if self.peek()[1] == ",":
                self.take()
        self.take("}")
        if whole_hole or (more and not fields):
            return HOLE
        return Shape(fields, more)


# What the page's examples that are no whole frame are, by their first key.
PARTS = {
    "variant": "board view",
    "handle": "FRIEND",
    "code": "room view",
    "number": "deal",
    "t": "LOGGED_MOVE",
    "rounds": "series",
    "key": "DEAL_ENTRY",
}


def _request_fields(kind: str) -> set[str]:
    return {f.name for f in dataclasses.fields(REQUESTS[kind])} - {"id"}


def _is_request(frame: Shape) -> bool:
    kind = frame.fields["type"]
    return kind in REQUESTS and set(frame.fields) - {"type", "id"} <= _request_fields(kind)


def examples() -> dict[str, Shape]:
    """Every example of the page's ``json`` blocks, named: a frame by its type,
    ``request`` for a request, and its number among the examples of that name
    (``hello request 3``, ``welcome 2``); a part by what it is (``board view``)."""
    named: dict[str, Shape] = {}
    seen: Counter[str] = Counter()
    for block in re.findall(r"^ *```json\n(.*?)^ *```", DOC, re.M | re.S):
        for value in _Reader(block).values():
            assert isinstance(value, Shape), block
            if "type" in value.fields:
                kind = value.fields["type"]
                base = f"{kind} request" if _is_request(value) else kind
                seen[base] += 1
                name = f"{base} {seen[base]}"
            else:
                name = PARTS[next(iter(value.fields))]
            assert name not in named, name
            named[name] = value
    return named


EXAMPLES = examples()

# ---------------------------------------------------------------- the shapes

_PLAYER_ID = re.compile(r"^p[0-9A-Z]+$|^pID$")


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def mismatches(doc: Any, real: Any, at: str = "") -> list[str]:
    """Where ``real`` is not of the shape the example ``doc`` shows (empty: it is)."""
    if isinstance(doc, _Hole) or doc is None or real is None:
        return []  # a placeholder, or a null the page shows where a value may be
    if isinstance(doc, Shape):
        return _map_mismatches(doc, real, at)
    if isinstance(doc, list):
        return _list_mismatches(doc, real, at)
    if _kind(doc) != _kind(real):
        return [f"{at}: {_kind(doc)} in the page, {_kind(real)} in the frame"]
    return []


def _map_mismatches(doc: Shape, real: Any, at: str) -> list[str]:
    if not isinstance(real, dict):
        return [f"{at}: a map in the page, {_kind(real)} in the frame"]
    if not doc.fields:
        return []  # ``{}``: a map, empty in the example
    if all(_PLAYER_ID.match(k) for k in doc.fields):  # keyed by player ids
        odd = [k for k in real if not _PLAYER_ID.match(k)]
        if odd:
            return [f"{at}: keyed by player ids in the page, by {odd} in the frame"]
        like = next(iter(doc.fields.values()))
        return [m for k, v in real.items() for m in mismatches(like, v, f"{at}.{k}")]
    missing = sorted(set(doc.fields) - set(real))
    extra = [] if doc.more else sorted(set(real) - set(doc.fields))
    out = [f"{at}: the frame lacks {missing}"] if missing else []
    out += [f"{at}: the page lacks {extra}"] if extra else []
    for key in doc.fields.keys() & real.keys():
        out += mismatches(doc.fields[key], real[key], f"{at}.{key}")
    return out


def _list_mismatches(doc: list[Any], real: Any, at: str) -> list[str]:
    """A list's entries in the page are examples of its entries: each must be
    like one of the frame's, to every depth, and each of the frame's entries must
    have the keys of one of them (its values may differ: one move for another)."""
    if not isinstance(real, list):
        return [f"{at}: a list in the page, {_kind(real)} in the frame"]
    if not doc:
        return []
    if not real:
        shown = any(isinstance(d, Shape | list) for d in doc)
        return [f"{at}: the page shows entries, the frame has none to compare"] if shown else []
    out = []
    for d in doc:
        tries = [mismatches(d, item, f"{at}[{i}]") for i, item in enumerate(real)]
        if all(tries):
            out += min(tries, key=len)
    for i, item in enumerate(real):
        if not any(_like_at_the_top(d, item) for d in doc):
            out.append(f"{at}[{i}]: like no entry of the page")
    return out


def _like_at_the_top(doc: Any, real: Any) -> bool:
    if isinstance(doc, Shape) and isinstance(real, dict):
        return not _map_mismatches(Shape(dict.fromkeys(doc.fields, HOLE), doc.more), real, "")
    return not mismatches(doc, real)


# ---------------------------------------------------------------- the session

# The requests whose reply goes by another name (the page's request tables); every
# other request is answered by a reply of its own name.
REPLY = {
    "hello": "welcome",
    "move": "moved",
    "add_bot": "ok",
    "react": "ok",
    "daily_start": "joined",
}


@dataclass
class Record:
    """What the session got: the real counterpart of each example, the reply to
    each example request (the first, when it is sent more than once), every
    connection (each keeps its frames in the order they came), and the
    connection a resume replaced with the new one's welcome."""

    real: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    clients: list[Client] = field(default_factory=list)
    replaced: list[tuple[Client, dict[str, Any]]] = field(default_factory=list)

    async def connect(self, server: Any) -> Client:
        client = await Client.open(server.url)
        self.clients.append(client)
        return client

    async def open(self, server: Any, name: str) -> Client:
        """A new connection that said hello as ``name``."""
        client = await self.connect(server)
        await client.hello(name)
        return client

    async def ask(self, client: Client, example: str, **values: Any) -> dict[str, Any]:
        """Send the example request ``example`` as the page writes it, with
        ``values`` for the fields that name something of this session; the reply."""
        doc = EXAMPLES[example].fields
        assert set(values) <= set(doc) - {"type", "id"}, (example, values)
        fields = {k: values.get(k, v) for k, v in doc.items() if k not in ("type", "id")}
        assert HOLE not in fields.values(), f"{example}: fill in {fields}"
        reply = await client.request(doc["type"], **fields)
        self.answers.setdefault(example, reply)
        return reply


@dataclass
class Plan:
    """A seed whose deal lets the examples' moves be played: a tableau-to-tableau
    move at once; after it, a move refused for both colour and rank; and a card
    for its foundation some draws on."""

    seed: str
    first: Move
    refused: Move
    draws: int


def plan() -> Plan:
    for i in range(1000):
        seed = f"docs-example-{i}"
        board = Board.deal(seed, DealRules())  # the race's rules: classic, draw one
        first = next(
            (m for m in board.legal_moves() if m.kind is MoveKind.TABLEAU_TO_TABLEAU), None
        )
        if first is None:
            continue
        board.apply(first)
        refused = None
        for src in range(7):
            for dst in range(7):
                move = Move(MoveKind.TABLEAU_TO_TABLEAU, src, dst, 1)
                try:
                    board.copy().apply(move)
                except IllegalMove as exc:
                    both = (Reason.NOT_ALTERNATING_COLOUR, Reason.NOT_ONE_LOWER)
                    if exc.broken == both and refused is None:
                        refused = move
        for draws in range(1, 25):
            board.apply(Move(MoveKind.DRAW))
            if Move(MoveKind.WASTE_TO_FOUNDATION) in board.legal_moves():
                if refused is not None:
                    return Plan(seed, first, refused, draws)
                break
    raise AssertionError("no seed lets the examples' moves be played")


HELD = dataclasses.replace(UNLIMITED, progress_delay=3600.0)  # a frame that goes at once takes them


async def signed_in(record: Record, server: Any, handle: str) -> Client:
    client = await record.open(server, handle)
    made = await client.ok("take_handle", handle=handle)
    client.token = made["device_token"]
    return client


def expect(reply: dict[str, Any], kind: str, example: str = "") -> dict[str, Any]:
    assert reply["type"] == kind, f"{example or kind}: answered {reply}"
    return reply


async def session() -> Record:
    record = Record()
    first_day = dt.date(2026, 12, 1)
    clock = FakeClock(day_start(first_day) + DAY_MS // 2)
    the_plan = plan()
    async with running_server(clock=clock, limits=HELD, draw_seed=Seeds(the_plan.seed)) as server:
        for day in (first_day, first_day + dt.timedelta(days=1)):
            await publish(server.service.daily.store, day)
        ann, bob = await _room(record, server, clock, the_plan)
        await _records(record, server, ann, bob)
        await _daily(record, server, clock)
        await _quick_match(record, server)
        await _link(record, server)
        clock.advance(DAY_MS)  # the daily's day is over
        await clock.settled()
        kit = await record.open(server, "Kit")
        record.real["daily 1"] = expect(await record.ask(kit, "daily request 1"), "daily")
        line = await record.ask(kit, "daily_line request 1", date=first_day.isoformat())
        record.real["daily_line 1"] = expect(line, "daily_line")
        for client in record.clients:
            if client.close_code is None:
                await client.close()
    return record


async def _room(
    record: Record, server: Any, clock: FakeClock, the_plan: Plan
) -> tuple[Client, Client]:
    """A Timed race of Ann and Bob, Sam watching: moves, a refusal of each kind,
    a reaction, a tick, Sam back on a new connection; both resign, and again in a
    rated round."""
    ann = await record.connect(server)
    welcome = expect(await record.ask(ann, "hello request 1"), "welcome", "hello request 1")
    record.real["welcome 1"] = welcome
    ann.name, ann.player = "Ann", welcome["player"]
    ann.token = (await ann.ok("take_handle", handle="Ann"))["device_token"]
    bob = await signed_in(record, server, "Bob")
    sam = await record.open(server, "Sam")
    await bob.ok("befriend", handle="Ann")
    await ann.ok("answer_friend", handle="Bob", accept=True)

    settings = {"scoring": "timed", "deals_per_round": 1, "break_seconds": 0}
    code = (await ann.ok("create_room", settings=settings))["room"]["code"]
    await bob.ok("join_room", code=code, role="player")
    await sam.ok("join_room", code=code, role="spectator")
    await ann.ok("start")
    started = await ann.event("deal_started")
    dealt = player_view(Board.deal(the_plan.seed, DealRules()))
    assert started["deal"]["board"]["tableau"] == dealt["tableau"]  # the planned deal
    snap = (await ann.ok("snapshot"))["room"]
    record.real["room view"] = snap
    record.real["deal"] = snap["deal"]
    record.real["board view"] = snap["deal"]["board"]
    info = await record.ask(sam, "room_info request 1", code=code)
    record.real["room_info 1"] = expect(info, "room_info")

    moved = await record.ask(ann, "move request 1", deal=1, n=0, move=the_plan.first.to_wire())
    record.real["moved 1"] = expect(moved, "moved", "move request 1")
    refused = await record.ask(ann, "move request 1", deal=1, n=1, move=the_plan.refused.to_wire())
    assert refused.get("code") == "not_alternating_colour", refused
    record.real["error 1"] = refused
    wrong = await record.ask(ann, "move request 1", deal=1, n=2, move={"kind": "draw"})
    assert wrong.get("code") == "wrong_move_number", wrong
    record.real["error 2"] = wrong
    for n in range(1, the_plan.draws + 1):
        await ann.ok("move", deal=1, n=n, move={"kind": "draw"})
    home = await ann.ok("move", deal=1, n=the_plan.draws + 1, move={"kind": "waste_foundation"})

    # The progress events waited; a ping's pong takes them along, batched.
    for watcher in (bob, sam):
        await watcher.caught_up()
    record.real["events 1"] = next(b for b in bob.batches if len(b["events"]) >= 2)
    record.real["progress 1"] = bob.last("progress")
    told = [e for e in sam.events if e["type"] == "progress" and "outcome" in e]
    home_told = [e for e in told if e["outcome"]["move"]["kind"] == "waste_foundation"]
    assert [e["digest"] for e in home_told] == [home["digest"]]
    record.real["progress 2"] = home_told[0]

    expect(await record.ask(bob, "react request 1"), "ok", "react request 1")
    await ann.event("reaction")
    clock.advance(10_000)  # a Timed tick
    await clock.settled()
    record.real["sheet 1"] = await ann.event("sheet", tick=1)

    # Sam comes back on a new connection while Ann's last move waits for the old one.
    await ann.ok("move", deal=1, n=the_plan.draws + 2, move={"kind": "draw"})
    again = await record.connect(server)
    resumed = expect(await record.ask(again, "hello request 2", token=sam.token), "welcome")
    assert await sam.closed() == 4001
    again.name, again.token, again.player = sam.name, sam.token, sam.player
    record.replaced.append((sam, resumed))
    sam = again

    for p in (ann, bob):
        await p.ok("move", deal=1, move={"kind": "resign"})
    record.real["deal_over 1"] = await bob.event("deal_over")
    record.real["series"] = (await bob.event("round_over"))["series"]
    logs = expect(await record.ask(bob, "deal_log request 1"), "deal_log")
    record.real["deal_log 1"] = logs
    record.real["LOGGED_MOVE"] = logs["logs"][ann.player][0]

    # A rated round next, each resigning: the ratings it changes.
    await ann.ok("update_settings", settings={"rated": True})
    await ann.ok("rematch")
    for p in (ann, bob):
        await p.event("deal_started")
        await p.ok("move", deal=1, move={"kind": "resign"})
    for c in (ann, bob, sam):
        await c.event("rating_changes")

    friends = (await bob.ok("friends"))["friends"]
    record.real["FRIEND"] = next(f for f in friends if f["handle"] == "Ann")
    await ann.ok("invite_friend", handle="Bob")
    record.real["friend_invite 1"] = await bob.notice("friend_invite")
    for c in (ann, bob, sam):
        await c.ok("snapshot")
    return ann, bob


async def _records(record: Record, server: Any, ann: Client, bob: Client) -> None:
    """Ann's record of the race, a challenge made of it and taken by Cyd, and a
    room Gus seats a bot in."""
    history = expect(await record.ask(ann, "history request 1"), "history")
    record.real["history 1"] = history
    entry = history["deals"][0]
    record.real["DEAL_ENTRY"] = entry
    expect(await record.ask(bob, "history request 2"), "history", "history request 2")
    past = await record.ask(ann, "past_deal request 1", key=entry["key"])
    record.real["past_deal 1"] = expect(past, "past_deal")

    made = expect(await record.ask(ann, "challenge request 1", key=entry["key"]), "challenge")
    record.real["challenge 1"] = made
    cyd = await record.open(server, "Cyd")
    info = await record.ask(cyd, "challenge_info request 1", code=made["code"])
    record.real["challenge_info 1"] = expect(info, "challenge_info")
    await cyd.ok("challenge_start", code=made["code"])
    await cyd.event("ghosts")
    await cyd.ok("move", deal=1, move={"kind": "resign"})
    await cyd.event("deal_over")
    await cyd.ok("leave_room")
    listed = expect(await record.ask(ann, "challenges request 1"), "challenges")
    record.real["challenges 1"] = listed

    record.real["profile 1"] = expect(await record.ask(ann, "profile request 1"), "profile")
    expect(await record.ask(bob, "profile request 2"), "profile", "profile request 2")

    gus = await record.open(server, "Gus")
    await gus.ok("create_room")
    expect(await record.ask(gus, "add_bot request 1"), "ok", "add_bot request 1")
    await gus.event("members")
    await gus.ok("leave_room")


async def _daily(record: Record, server: Any, clock: FakeClock) -> None:
    """Eve wins the day's draw-one deal; Fay races her ghost, resigns, and looks
    at the board and at how she compares."""
    deal = await server.service.daily.deal(server.service.daily.today(), D1)
    moves = winning_moves(deal)
    eve = await record.open(server, "Eve")
    expect(await record.ask(eve, "daily_start request 1"), "joined", "daily_start request 1")
    for move in moves:
        clock.advance(1000)
        await eve.ok("move", deal=1, move=move.to_wire())
    await eve.event("deal_over")
    await eve.ok("leave_room")

    fay = await record.open(server, "Fay")
    await fay.ok("daily_start", ladder=D1)
    record.real["ghosts 1"] = await fay.event("ghosts")
    await fay.ok("move", deal=1, move=moves[0].to_wire())
    while not fay.unseen("ghost_progress"):
        clock.advance(1000)
        await clock.settled()
        await fay.caught_up()
    record.real["ghost_progress 1"] = await fay.event("ghost_progress")
    await fay.ok("move", deal=1, move={"kind": "resign"})
    await fay.event("deal_over")
    board = expect(await record.ask(fay, "daily_board request 1"), "daily_board")
    record.real["daily_board 1"] = board
    record.real["daily_compare 1"] = await fay.ok("daily_compare", ladder=D1)
    await fay.ok("leave_room")


async def _quick_match(record: Record, server: Any) -> None:
    """Hal and Ivy queue and are matched at once: a room counting down."""
    hal, ivy = [await signed_in(record, server, h) for h in ("Hal", "Ivy")]
    for c in (hal, ivy):
        await c.ok("queue", ladder=D1)
    for c in (hal, ivy):
        await c.notice("matched")
        await c.event("countdown")
        await c.ok("leave_room")


async def _link(record: Record, server: Any) -> None:
    """Dee signs a second device in with a link code."""
    dee = await signed_in(record, server, "Dee")
    code = (await dee.ok("link_code"))["code"]
    phone = await record.connect(server)
    phone.name = "Dee's phone"
    welcome = await record.ask(phone, "hello request 3", link=code)
    record.real["welcome 2"] = expect(welcome, "welcome", "hello request 3")
    assert await dee.closed() == 4001


# ---------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def record() -> Record:
    return asyncio.run(session())


def test_every_example_is_held_to_a_real_frame(record: Record) -> None:
    requests = {name for name in EXAMPLES if " request " in name}
    assert set(record.answers) == requests
    assert set(record.real) == set(EXAMPLES) - requests


def test_every_example_request_gets_the_reply_the_page_names(record: Record) -> None:
    got = {name: reply["type"] for name, reply in record.answers.items()}
    kinds = {name: EXAMPLES[name].fields["type"] for name in record.answers}
    assert got == {name: REPLY.get(kind, kind) for name, kind in kinds.items()}


def test_every_example_has_the_keys_of_the_real_frame(record: Record) -> None:
    found = {name: mismatches(EXAMPLES[name], real) for name, real in record.real.items()}
    assert {name: wrong for name, wrong in found.items() if wrong} == {}


ROOM_VIEWS = ("joined", "snapshot", "welcome", "matched")


def by_the_rule(frames: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """One connection's frames taken in order as the page's "Events that keep
    the seq" tells a client to: what went wrong, and the events aside applied.
    An event without ``aside`` is applied at the last ``seq`` + 1 and dropped at
    or below the seq of the last room view (which held it already); an event
    aside is applied at the last ``seq``; events before the first room view are
    dropped, and that view must hold them. Anything else is a gap or a loss."""
    problems: list[str] = []
    aside: list[dict[str, Any]] = []
    early: list[dict[str, Any]] = []  # before the room view that seats the client
    last = view = None
    for msg in frames:
        kind = msg.get("type")
        if kind in ROOM_VIEWS:
            room = msg.get("room")
            if isinstance(room, dict):
                if kind == "snapshot" and last != room["seq"]:
                    problems.append(f"a snapshot at seq {room['seq']}, the events at {last}")
                problems += [f"{e['type']} at {e['seq']} before a view of {room['seq']}"
                             for e in early if e["seq"] > room["seq"]]  # fmt: skip
                early.clear()
                last = view = room["seq"]
            continue
        if "seq" not in msg or "id" in msg:
            continue
        seq = msg["seq"]
        if last is None or view is None:
            early.append(msg)
        elif msg.get("aside") is True and seq == last:
            aside.append(msg)
        elif "aside" not in msg and seq == last + 1:
            last = seq
        elif "aside" not in msg and seq <= view:
            pass  # one's own joining or coming back, which the room view shows
        else:
            problems.append(f"{kind} at seq {seq}: the last at {last}, the view's at {view}")
    return problems, aside


def test_a_client_taking_events_by_the_pages_rule_loses_none(record: Record) -> None:
    problems, aside = [], []
    for client in record.clients:
        wrong, kept = by_the_rule([f.msg for f in client.frames])
        problems += [f"{client.name}: {p}" for p in wrong]
        aside += kept
    assert problems == []
    kinds = {m["type"] for m in aside}
    assert kinds == {"sheet", "reaction", "rating_changes", "ghosts", "ghost_progress", "countdown"}


def test_a_replaced_connection_sends_only_what_the_new_room_view_holds(record: Record) -> None:
    ((old, welcome),) = record.replaced
    seq = welcome["room"]["seq"]
    events = [f.msg for f in old.frames if "seq" in f.msg and "id" not in f.msg]
    assert events and all(e["seq"] <= seq for e in events)
    assert old.close_code == 4001
    # The held progress of the last move before the resume reached the old connection.
    last = events[-1]
    assert last["type"] == "progress" and last["outcome"]["move"]["kind"] == "draw"
    board = welcome["room"]["deal"]["boards"][last["player"]]
    assert board["moves"] == last["progress"]["moves"]
