"""Fuzzing the decoder and every handler: whatever a client sends, it gets an
answer, and the server logs no error.

Everything a client sends is hostile (protocol/wire.py): a frame that is not a
map, a map of the wrong shape, a request whose fields hold the wrong types or
absurd values, for any request type or none. Each must be answered — an ``error``
with a documented code, or the reply docs/protocol.md names for its request —
and none may reach the server's log as an ERROR or an exception: that is how a
handler's unhandled ``KeyError`` would show (the connection answers it with
``internal_error`` and logs the traceback). The frames go over real sockets to an
in-process server, in both subprotocols, from a player of a room with a running
deal, so that the room handlers are reached with a room to act on.

Hypothesis draws the frames; the examples are few and small (well under a minute
in all), and each failure shrinks to the shortest list of frames that shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import messages as M
from protocol.moves import MoveKind, Reason
from protocol.requests import REQUESTS, parse_request
from protocol.settings import Settings
from protocol.wire import (
    JSON,
    MSGPACK,
    Encoded,
    WireError,
    decode,
    encode,
    encode_value,
    encode_with,
)
from tests.support.inprocess import running_server
from tests.support.raw_client import TIMEOUT, Client, player

CODES = {c.value for c in M.ErrorCode} | {r.value for r in Reason}


def _replies() -> dict[str, str]:
    """Each request's reply type, as docs/protocol.md's "Messages the server
    sends" gives it (``reply to `a`, `b```); every other request is answered "ok"."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text("utf-8")
    replies: dict[str, str] = {}
    for kind, says in re.findall(r"^\| `(\w+)` \| reply to ([^|]*)\|", doc, re.M):
        for request in re.findall(r"`(\w+)`", says.split("(")[0]):
            replies[request] = kind
    return replies


REPLIES = _replies()

# Stand-ins for this example's room code, player id, running (or last) deal, the
# deal before it, and the next move number.
ROOM, ME, DEAL, PAST, N = "<room>", "<me>", "<deal>", "<past>", "<n>"

# ---------------------------------------------------------------------- values

# What both subprotocols carry: msgpack takes 64-bit integers, JSON no NaN.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)
small = st.integers(-2, 12)
moves = st.fixed_dictionaries(
    {"kind": st.sampled_from([k.value for k in MoveKind]) | values},
    optional={"from": small | values, "to": small | values, "count": small | values},
)
setting_values = st.one_of(
    small,
    st.sampled_from(["standard", "vegas", "timed", "classic", "double", "live", "none"]),
    values,
)
room_settings = st.dictionaries(
    st.sampled_from(sorted(Settings().to_wire())) | st.text(max_size=8),
    setting_values,
    max_size=3,
)

# The fields requests take, each with plausible values and hostile ones.
FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "id": st.integers(-(2**60), 2**60) | values,
    "version": st.integers(0, 2) | values,
    "name": st.text(max_size=40) | values,
    "token": st.text(max_size=40) | values,
    "settings": room_settings | values,
    "code": st.sampled_from([ROOM, "ZZZZZZ", ""]) | values,
    "role": st.sampled_from(["player", "spectator", "host"]) | values,
    "player": st.sampled_from([ME, "pNOBODY"]) | values,
    "deal": st.integers(-1, 3) | values,
    "n": st.integers(-1, 40) | st.integers(2**53 - 2, 2**63 - 1) | values,
    "move": moves | values,
    "junk": values,
}
hostile = st.fixed_dictionaries(
    {"type": st.sampled_from(sorted(REQUESTS)) | values},
    optional=FIELDS,
)

# Well-formed requests, mostly meant to be accepted, so that the handlers are
# reached with their fields right and the room goes through deals and rounds.
legal_moves = st.fixed_dictionaries(
    {"kind": st.sampled_from(["draw"] * 5 + ["resign"] * 2 + ["recycle", "undo", "auto_complete"])}
) | st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["waste_tableau", "tableau_foundation", "tableau_tableau"]),
        "from": st.integers(0, 6),
        "to": st.integers(0, 6),
        "count": st.integers(1, 3),
    }
)
VALID: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "hello": {"version": st.just(1), "name": st.text(min_size=1, max_size=12)},
    "ping": {},
    "create_room": {"settings": room_settings},
    "join_room": {
        "code": st.sampled_from([ROOM, "ZZZZZZ"]),
        "role": st.sampled_from(["player", "spectator"]),
    },
    "leave_room": {},
    "update_settings": {"settings": room_settings},
    "start": {},
    "next_deal": {},
    "remove_player": {"player": st.sampled_from([ME, "pNOBODY"])},
    "rematch": {},
    "close_room": {},
    "move": {
        "deal": st.sampled_from([DEAL, DEAL, DEAL, 1, 2]),
        "n": st.sampled_from([N, N, N, 0, 3]),
        "move": legal_moves,
    },
    "snapshot": {},
    "deal_log": {"deal": st.sampled_from([PAST, PAST, DEAL, 0, 3])},
    "ready": {},
    "room_info": {"code": st.sampled_from([ROOM, "ZZZZZZ"])},
}
# Moves most often, so that deals are played, end, and their logs are asked for.
well_formed = st.sampled_from(sorted(VALID) + ["move"] * 8 + ["deal_log"] * 2).flatmap(
    lambda kind: st.fixed_dictionaries(
        {"type": st.just(kind), "id": st.integers(0, 2**53), **VALID[kind]},
        optional={"junk": values},
    )
)
FRAMES: dict[str, st.SearchStrategy[Any]] = {
    "map": well_formed,
    "hostile": hostile,
    "value": values,
    "bytes": st.binary(max_size=64),
    "text": st.text(max_size=64),
}
# Well-formed requests most of the time (a flat one_of would not weigh them so).
frames = st.sampled_from(["map"] * 6 + ["hostile", "value", "bytes", "text"]).flatmap(
    lambda kind: st.tuples(st.just(kind), FRAMES[kind])
)


def substitute(value: Any, code: str, client: Client) -> Any:
    if value == ROOM:
        return code
    if value == ME:
        return client.player
    if isinstance(value, dict):
        started = client.last("deal_started")
        running = started["deal"]["number"] if started else 1
        if value.get("deal") in (DEAL, PAST):
            value = {**value, "deal": running - (value["deal"] == PAST)}
        if value.get("n") == N and isinstance(value.get("deal"), int):
            value = {**value, "n": client.logged.get(value["deal"], 0)}
        return {k: substitute(v, code, client) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------- the decoder


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200) | st.builds(msgpack.packb, values), binary=st.booleans())
def test_the_decoder_refuses_any_bytes_with_a_wire_error_only(data: bytes, binary: bool) -> None:
    frame: bytes | str = data if binary else data.decode("utf-8", "replace")
    for kind in (binary, not binary):  # the right frame kind, and the wrong one
        try:
            msg = decode(frame, kind)
        except WireError as exc:
            assert exc.code.value in CODES
            continue
        try:
            parse_request(msg)
        except WireError as exc:
            assert exc.code.value in CODES


@settings(max_examples=200, deadline=None)
@given(message=st.dictionaries(st.text(max_size=8), values, max_size=5), late=values)
def test_a_spliced_value_makes_the_very_frame_encode_makes(
    message: dict[str, Any], late: Any
) -> None:
    """``encode_with`` (a deal's logs encoded once) is byte for byte ``encode``."""
    message = {k: v for k, v in message.items() if k != "logs"}
    whole = {**message, "logs": late}
    for binary in (True, False):
        spliced = encode_with({**message, "logs": encode_value(late, binary)}, binary)
        assert spliced == encode(whole, binary)
        assert decode(spliced, binary) == json.loads(json.dumps(whole)) or binary
    with pytest.raises(TypeError):
        encode_with({"logs": Encoded(b"\x90")}, False)


# ---------------------------------------------------------------------- the server


async def answer(client: Client, before: int) -> dict[str, Any]:
    """The first frame after ``before`` that is not a room event: the answer."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while True:
        for frame in client.frames[before:]:
            if "seq" not in frame.msg:
                return frame.msg
        if client.close_code is not None:
            raise AssertionError(f"closed with {client.close_code} before an answer")
        if loop.time() > deadline:
            raise AssertionError("no answer")
        client._arrived.clear()
        with contextlib.suppress(TimeoutError):  # the deadline is checked above
            await asyncio.wait_for(client._arrived.wait(), deadline - loop.time())


def check_answer(sent: Any, got: dict[str, Any]) -> None:
    kind = got.get("type")
    if kind == "error":
        assert got.get("code") in CODES, got
        assert got["code"] != M.ErrorCode.INTERNAL_ERROR.value, (sent, got)
        return
    assert isinstance(sent, dict), (sent, got)  # only a request has another answer
    assert kind == REPLIES.get(sent.get("type"), "ok"), (sent, got)
    if "id" in sent:
        assert got.get("id") == sent["id"], (sent, got)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(proto=st.sampled_from([MSGPACK, JSON]), sent=st.lists(frames, min_size=1, max_size=16))
async def test_every_frame_is_answered_and_nothing_is_logged_as_an_error(
    caplog: pytest.LogCaptureFixture, proto: str, sent: list[tuple[str, Any]]
) -> None:
    caplog.clear()
    caplog.set_level(logging.WARNING)
    async with running_server() as server:
        host = await player(server, "Host", proto)
        joined = await host.ok(
            "create_room", settings={"undo": True, "deals_per_round": 3, "break_seconds": 0}
        )
        code = joined["room"]["code"]
        await host.ok("start")
        # Deal 1 is over from the start (a past deal for deal_log), deal 2 runs.
        await host.ok("move", deal=1, move={"kind": "resign"})
        while (await host.event("deal_started"))["deal"]["number"] != 2:
            pass
        assert host.player is not None
        for kind, value in sent:
            before = len(host.frames)
            if kind in ("map", "hostile"):
                value = substitute(value, code, host)
            data = value if kind in ("bytes", "text") else encode(value, host.binary)
            await host.send_raw(data)
            check_answer(None if kind in ("bytes", "text") else value, await answer(host, before))
        pong = await host.request("ping")  # still served
        assert pong["type"] == "pong"
        await host.close()
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [r.getMessage() for r in bad]
