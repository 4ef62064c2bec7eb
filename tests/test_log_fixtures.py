"""Logs written by an earlier release fold to the rooms they folded to then.

The fixtures (tests/fixtures/logs/, written by tests/support/make_log_fixtures.py
through the embedded store and Redis) are real room logs: several deals, breaks,
a late join, a bot, a member dropping and coming back, a winnable deal after a
rematch, a closed room, compaction. A release must take over the rooms the one
before it left in the store, so every change to the records or the fold is held
to them: same room, same snapshot record, same snapshot for every member, and
each record's bytes written back exactly as they were read.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from server.core.records import decode_record, encode_record
from server.core.room import Room
from server.service.adoption import fold_room
from tests.support.log_fixtures import FIXTURES, describe, read_log

EXPECTED: dict[str, Any] = json.loads((FIXTURES / "expected.json").read_text())

# Settings added since the fixtures were written, at the value every older room
# has: a room folded from an older log shows them so, and nothing else changes.
SETTINGS_ADDED = {"rated": False}
# Room view fields added since, likewise: no room of an older log counts down.
VIEW_ADDED = {"starts_at": None}
# A past deal's summary fields added since: an older deal_over record has no
# moment each player reached their score, read as the deal's start (its
# placings were stored with it and stay as they were).
SUMMARY_ADDED = {"scored_t": 0}


def _as_now(described: dict[str, Any]) -> dict[str, Any]:
    """``described`` (as the fixtures recorded it) with the settings added since."""
    out = json.loads(json.dumps(described))
    holders = [out["room"], out["snapshot_record"], *out["views"].values()]
    for holder in holders:
        if isinstance(holder, dict) and isinstance(holder.get("settings"), dict):
            holder["settings"] = {**holder["settings"], **SETTINGS_ADDED}
    out["views"] = {m: {**view, **VIEW_ADDED} for m, view in out["views"].items()}
    for view in out["views"].values():
        for past in view.get("history", ()):
            for player, summary in past.get("summary", {}).items():
                past["summary"][player] = {**SUMMARY_ADDED, **summary}
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_a_stored_log_folds_to_the_room_it_folded_to_when_written(name: str) -> None:
    expected = _as_now(EXPECTED[name])
    data = read_log(FIXTURES / f"{name}.msgpack")
    room, _ = await fold_room(expected["code"], data)  # as a server rebuilds a room
    got = describe(room, expected["now"])
    for part in ("room", "snapshot_record", "views"):
        assert got[part] == expected[part], part


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_record_is_written_back_byte_for_byte(name: str) -> None:
    data = read_log(FIXTURES / f"{name}.msgpack")
    assert data or name.endswith(".stored")  # a closed room's log may be gone
    for raw in data:
        assert encode_record(decode_record(raw)) == raw


@pytest.mark.parametrize("store", ["sqlite", "redis"])
@pytest.mark.parametrize("room", ["long", "short"])
def test_the_whole_log_and_the_compacted_one_give_one_room(store: str, room: str) -> None:
    whole = _as_now(EXPECTED[f"{store}-{room}.appended"])
    data = read_log(FIXTURES / f"{store}-{room}.appended.msgpack")
    rebuilt = Room.rebuild(whole["code"], map(decode_record, data))
    assert describe(rebuilt, whole["now"]) == {
        k: whole[k] for k in ("room", "snapshot_record", "views")
    }
    stored = _as_now(EXPECTED[f"{store}-{room}.stored"])
    if stored["room"]["n_records"]:  # not dropped with its room
        assert stored["room"] == whole["room"]
        assert stored["views"] == whole["views"]
