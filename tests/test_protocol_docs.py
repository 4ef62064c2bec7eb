"""docs/protocol.md and the server agree on every name a client must know.

The server sends a message only through a constructor of protocol/messages.py
(``Message`` is a distinct type, so mypy refuses any other map), and every code
it sends is a member of an enum there (or of the engine's ``Reason``). So the
sets below are what the server can produce; this test holds each equal to what
docs/protocol.md documents, both ways, and checks that the server really uses
every one of them (nothing documented that cannot happen).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from protocol import messages as M
from protocol import wire
from protocol.moves import Reason

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
SERVER = sorted((ROOT / "server").rglob("*.py"))

# Close codes websockets itself sends for the server: its own close on shutdown
# (1001), refused frames (1002 broken framing, 1007 invalid UTF-8, 1009 too big),
# a normal close (1000).
BY_WEBSOCKETS = {M.CloseCode.NORMAL, M.CloseCode.GOING_AWAY, M.CloseCode.PROTOCOL_ERROR,
                 M.CloseCode.INVALID_DATA, M.CloseCode.TOO_BIG}  # fmt: skip


def section(title: str) -> str:
    """The text of one heading's section, up to the next heading of its level or above."""
    match = re.search(rf"^(#+) {re.escape(title)}\n", DOC, re.M)
    assert match, f"docs/protocol.md has no section {title!r}"
    level = len(match.group(1))
    rest = DOC[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[: end.start()] if end else rest


def first_column(text: str) -> list[str]:
    return re.findall(r"^\| `?([\w ]+?)`? \|", text, re.M)


def server_source() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in SERVER)


def test_message_types_are_the_documented_ones() -> None:
    documented = {
        row for row in first_column(section("Messages the server sends")) if row != "type"
    }
    events = {row for row in first_column(section("Room events")) if row != "type"}
    assert documented == M.MESSAGE_TYPES
    assert events <= documented


# Messages the server sends by splicing frames already encoded, with the function
# that does it (protocol/wire.py): each is checked to make the constructor's map.
SPLICED = {"events": "events_frame"}


def test_every_message_constructor_is_used_by_the_server() -> None:
    source = server_source()
    unused = {
        t for t in M.MESSAGE_TYPES if not re.search(rf"\bM\.{t}\(|\b{SPLICED.get(t, t)}\(", source)
    }
    assert unused == set()


def test_a_spliced_events_frame_is_the_events_message_encoded() -> None:
    batch = [M.progress(s, player="p", deal=1, progress={"moves": s}) for s in range(1, 20)]
    for binary in (True, False):
        for n in (1, 2, 15, 16, 19):
            frames = [wire.encode(m, binary) for m in batch[:n]]
            assert wire.events_frame(frames, binary) == wire.encode(M.events(batch[:n]), binary)


def test_only_protocol_messages_makes_a_message() -> None:
    """``Message(...)`` is called nowhere in server/: frames come from the constructors."""
    calls = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in SERVER
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "Message"
    ]
    assert calls == []


def test_error_codes_are_the_documented_ones() -> None:
    text = section("Errors")
    rows = set(first_column(text)) - {"code", "engine reasons"}
    engine_row = re.search(r"^\| engine reasons \|(.*)\|$", text, re.M)
    assert engine_row
    engine = set(re.findall(r"`(\w+)`", engine_row.group(1)))
    assert engine == {r.value for r in Reason} - rows  # deal_over has its own row
    assert rows | engine == {c.value for c in M.ErrorCode} | {r.value for r in Reason}


def test_every_error_code_is_produced_somewhere() -> None:
    codec = ("wire.py", "requests.py")
    source = server_source() + "".join(
        (ROOT / "protocol" / name).read_text(encoding="utf-8") for name in codec
    )
    unused = {c.name for c in M.ErrorCode if f"ErrorCode.{c.name}" not in source}
    assert unused == set()


def test_close_codes_are_the_documented_ones() -> None:
    documented = {int(c) for c in first_column(section("Close codes")) if c.isdigit()}
    assert documented == {int(c) for c in M.CloseCode}


def test_every_close_code_is_produced_somewhere() -> None:
    source = server_source()
    ours = {c for c in M.CloseCode if f"CloseCode.{c.name}" in source}
    assert ours | BY_WEBSOCKETS == set(M.CloseCode)


def test_room_closed_reasons_are_the_documented_ones() -> None:
    row = re.search(r"^\| `room_closed` \| `reason` \(([^)]*)\)", section("Room events"), re.M)
    assert row
    documented = set(re.findall(r"`(\w+)`", row.group(1)))
    assert documented == {r.value for r in M.ClosedReason}
    source = server_source()
    assert all(f"ClosedReason.{r.name}" in source for r in M.ClosedReason)


def test_the_browser_client_has_the_same_close_codes() -> None:
    text = (ROOT / "client" / "web" / "codes.js").read_text(encoding="utf-8")
    pairs = dict(re.findall(r"^\s+(\w+): (\d+),$", text, re.M))
    assert {name: int(code) for name, code in pairs.items()} == {
        c.name: int(c) for c in M.CloseCode
    }


def test_deal_end_reasons_are_the_documented_ones() -> None:
    """A history entry's ``ended_by`` says why its deal ended, in the documented words."""
    text = section("Room view")
    match = re.search(r"with `END` why the deal ended:(.*?);", text, re.S)
    assert match
    documented = set(re.findall(r"`(\w+)` \(", match.group(1)))
    assert documented == {r.value for r in M.DealEnd}
    source = server_source()
    assert all(f"DealEnd.{r.name}" in source for r in M.DealEnd)


def test_the_browser_has_words_for_every_code() -> None:
    """client/web/words.js turns each code into a sentence for people: every code
    the server can send has one (the code itself stays on the wire)."""
    text = (ROOT / "client" / "web" / "words.js").read_text(encoding="utf-8")
    body = text[text.index("export const TEXTS = {") : text.index("\n};", text.index("TEXTS"))]
    worded = set(re.findall(r"^  (\w+):", body, re.M))
    assert {c.value for c in M.ErrorCode} | {r.value for r in Reason} <= worded


def _top_level(text: str) -> str:
    """``text`` without what is in parentheses (which may nest)."""
    depth, kept = 0, []
    for ch in text:
        depth += ch == "("
        if depth == 0:
            kept.append(ch)
        depth -= ch == ")" and depth > 0
    return "".join(kept)


def _documented_fields(cell: str) -> dict[str, str]:
    """A request table's field cell: each field with what the docs say of it
    (its parenthesis, or what follows its colon)."""
    head, _, after_colon = _top_level(cell).partition(":")
    names = re.findall(r"`(\w+)`", head)
    notes: dict[str, str] = {}
    for name in names:
        start = cell.index(f"`{name}`") + len(name) + 2
        rest = cell[start:].lstrip()
        if rest.startswith("("):
            depth = 0
            for i, ch in enumerate(rest):
                depth += (ch == "(") - (ch == ")")
                if depth == 0:
                    notes[name] = rest[1:i]
                    break
        else:
            notes[name] = after_colon
    return notes


def test_the_room_requests_are_the_documented_ones_with_their_fields() -> None:
    """The request tables ("Rooms", "Accounts", "Profile and history", "Friends", "Daily
    deal", "Challenges", "Quick match") against the
    codec (protocol/requests.py): the same requests, the same fields, "optional"
    exactly where the codec takes a request without the field, and for a field
    naming an enum member, its members and default."""
    from enum import Enum

    from protocol.requests import REQUESTS, parse_request, request_message
    from protocol.wire import WireError
    from tests.support.requests import ALTERNATIVES, SAMPLES

    pattern = r"^\| `(\w+)` \| (.+?) \| .+? \| .+? \|$"
    titles = (
        "Rooms",
        "Accounts",
        "Profile and history",
        "Friends",
        "Ratings",
        "Daily deal",
        "Challenges",
        "Quick match",
    )
    table = dict(row for title in titles for row in re.findall(pattern, section(title), re.M))
    assert set(table) == set(REQUESTS) - {"hello", "ping"}
    for title in (
        "`hello` (must come first)",
        '`ping` → `{"type": "pong", "id": n, "now": server_ms}`',
    ):
        section(title)
    for kind, cell in table.items():
        full = request_message(parse_request({"type": kind, **SAMPLES[kind]}))
        fields = {k: v for k, v in full.items() if k not in ("type", "id")}
        notes = _documented_fields(cell) if cell != "–" else {}
        assert set(notes) == set(fields) | set(ALTERNATIVES.get(kind, {})), kind
        notes = {name: note for name, note in notes.items() if name in fields}
        for name, note in notes.items():
            without = {"type": kind, **{k: v for k, v in fields.items() if k != name}}
            try:
                default = getattr(parse_request(without), name)
            except WireError:
                default = None
            assert note.startswith("optional") == (default is not None), (kind, name)
            value = getattr(parse_request(full), name)
            if isinstance(value, Enum):
                named = re.findall(r"`(\w+)`", note)
                assert named == [m.value for m in type(value)], (kind, name)
                said = re.findall(r"`(\w+)` \(default\)", note)
                assert said == ([default.value] if isinstance(default, Enum) else []), (kind, name)


def test_the_events_that_keep_the_seq_are_the_ones_marked_aside() -> None:
    """The page lists in one place the events that keep the room's last ``seq``,
    and the server marks exactly those (``"aside": true``, protocol/messages.py
    ``_aside``), so a client needs neither a list of its own nor a guess."""
    text = section("Events that keep the seq")
    listed = set(re.findall(r"^\| `(\w+)`", text, re.M))
    module = ast.parse((ROOT / "protocol" / "messages.py").read_text(encoding="utf-8"))
    marked = {
        fn.name
        for fn in module.body
        if isinstance(fn, ast.FunctionDef)
        and any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "_aside"
            for node in ast.walk(fn)
        )
    }
    assert listed == marked
    assert marked <= M.MESSAGE_TYPES
    # Every other event takes the room's next seq: none of them is made aside.
    tick = M.sheet(7, sheet={}, tick=1, deal=1, progress={})
    assert tick["aside"] is True and tick["seq"] == 7
    assert "aside" not in M.sheet(7, sheet={})
