"""Room logs written by a real server, kept as test fixtures (tests/fixtures/logs/),
and what they fold to.

The room log outlives the code that wrote it: a room written by one release is
taken over by the next. So the logs are recorded once, by the server as it was
(tests/support/make_log_fixtures.py, through both durable stores), together
with what folding them gave then (:func:`describe`); tests/test_log_fixtures.py
folds them with the code as it is and compares.

A fixture file is a msgpack array of the records' bytes, as the store was given
them: ``*.appended.msgpack`` every record the room's runner appended, in order
(the whole log, as if never compacted), ``*.stored.msgpack`` what the store held
at the end (compacted: from a snapshot on).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]

from server.core.records import encode_record
from server.core.room import Room
from server.core.views import room_view

__all__ = ["FIXTURES", "describe", "read_log", "write_log"]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "logs"


def write_log(path: Path, records: list[bytes]) -> None:
    path.write_bytes(msgpack.packb(records, use_bin_type=True))


def read_log(path: Path) -> list[bytes]:
    records: list[bytes] = msgpack.unpackb(path.read_bytes(), raw=False)
    return records


def _plain(value: Any) -> Any:
    """As JSON has it (tuples as lists, keys as strings, bytes in hex), to compare
    with the file."""
    return json.loads(json.dumps(value, default=_hex))


def _hex(value: object) -> str:
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"{type(value).__name__} in a room's description")


def describe(room: Room, now: int) -> dict[str, Any]:
    """Everything a fold leaves in a room, as plain data: its state, every deal's
    logs, results, scores and boards, the snapshot record it would write, and
    the snapshot each member would be sent at ``now``."""
    deals = []
    for deal in room.deals:
        deals.append(
            {
                "number": deal.number,
                "seed": deal.seed,
                "commitment": deal.commitment,
                "started_at": deal.started_at,
                "rules": deal.rules.to_wire(),
                "ended_at": deal.ended_at,
                "ended_by": deal.ended_by,
                "end_t": deal.end_t,
                "first": deal.first,
                "proof": deal.proof,
                "logs": {p: list(log) for p, log in deal.logs.items()},
                "results": deal.results,
                "boards": {p: r.board.status.value for p, r in deal.replays.items()},
                "won": {p: r.won_seq for p, r in deal.replays.items()},
                "scores": {p: room.score(deal, p, now) for p in deal.replays},
            }
        )
    state = {
        "code": room.code,
        "state": room.state.value,
        "seq": room.seq,
        "n_records": room.n_records,
        "settings": room.settings.to_wire(),
        "host": room.host,
        "members": [
            [m.id, m.name, m.role.value, m.connected, None if m.bot is None else m.bot.value]
            for m in room.members.values()
        ],
        "spectators": room.spectators,
        "round": room.round,
        "round_started_at": room.round_started_at,
        "round_players": room.round_players,
        "carry": room.carry,
        "ready": room.ready,
        "closed_reason": None if room.closed_reason is None else room.closed_reason.value,
        "created_at": room.created_at,
        "series": room.series.to_wire(),
        "deals": deals,
        "sheet": room.sheet(now).to_wire(),
    }
    views = {pid: room_view(room, pid, now) for pid in room.members}
    # The snapshot record in its stored form, decoded as plain msgpack.
    stored = msgpack.unpackb(encode_record(room.checkpoint_record()), raw=False)
    return _plain({"room": state, "snapshot_record": stored, "views": views})
