"""Every kind of the room log's records, held to the core's tables: each has one
stored ``k``, comes through its stored form unchanged (every optional field set,
so the kinds and fields added since the log fixtures were written are covered
too: tests/test_log_fixtures.py holds the older bytes), enters a state by the
lifecycle table and has its handler in the fold. A kind added to the log and
forgotten in one of these fails here, not as ``internal_error`` in a room."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from protocol.messages import ClosedReason, DealEnd
from protocol.moves import Move, MoveKind
from protocol.settings import DealRules, Settings
from protocol.strategy import Pace, Style
from server.core import records as R
from server.core.lifecycle import TRANSITIONS, next_state
from server.core.room import _FOLD
from server.core.values import Role, RoomState

ROOT = Path(__file__).resolve().parent.parent
RULES = DealRules().to_wire()

SAMPLES: list[R.Record] = [
    R.Created(Settings().to_wire(), "p0", 1_000, ["2026-12-02", "classic-1", "c1"]),
    R.Joined("p1", "Bot Ada", Role.PLAYER, 2_000, Pace.FAST, Style.GREEDY),
    R.Joined("p0", "Ann", Role.SPECTATOR),
    R.Presence("p1", False),
    R.Left("p1", "p0"),
    R.Removed("p1", None),
    R.Renamed("p1", "a deleted player"),
    R.SettingsSet({"scoring": "vegas"}, 3_000),
    R.RoundStarted(4_000, {"p0": -52}),
    R.DealStarted(1, "ab" * 16, 5_000, RULES, "proof-line"),
    R.MovePlayed("p0", 1, 1_250, 7, Move(MoveKind.TABLEAU_TO_TABLEAU, 2, 5, 3)),
    R.DealEnded(1, 6_000, DealEnd.HOST),
    R.BreakStarted(6_000),
    R.Ready("p0"),
    R.RoundOver(7_000),
    R.Closed(ClosedReason.IDLE),
    R.Checkpoint(
        index=9,
        seq=12,
        state=RoomState.BREAK,
        settings=Settings().to_wire(),
        host="p0",
        members=[
            ["p0", "Ann", "player", True, None],
            ["p1", "Bot", "player", True, "fast", "greedy"],
        ],
        round=1,
        round_at=4_000,
        round_players=["p0", "p1"],
        carry={},
        closed=None,
        created_at=1_000,
        ready=["p1"],
        series={"rounds": []},
        daily=["2026-12-02", "classic-1"],
        deals=[
            R.CheckpointDeal(
                number=1,
                seed="ab" * 16,
                at=5_000,
                rules=RULES,
                ended=6_000,
                ended_by="host",
                end_t={"p1": 900},
                first=None,
                logs={"p0": [[1_250, "tableau_tableau", 2, 5, 3]], "p1": []},
                won={},
                proof=None,
            )
        ],
    ),
]


def test_each_record_type_has_its_own_stored_kind() -> None:
    kinds = get_args(R.Record)
    assert {type(r) for r in SAMPLES} == set(kinds)
    assert len({k.KIND for k in kinds}) == len(kinds)


@pytest.mark.parametrize("record", SAMPLES, ids=lambda r: type(r).__name__)
def test_a_record_comes_back_from_its_stored_form_equal_and_in_the_same_bytes(
    record: R.Record,
) -> None:
    data = R.encode_record(record)
    assert R.decode_record(data) == record
    assert R.encode_record(R.decode_record(data)) == data


def test_every_record_type_is_in_the_lifecycle_table_and_the_fold() -> None:
    """:data:`TRANSITIONS` names every kind but the checkpoint (which carries its
    state), and the fold has a handler for every kind."""
    kinds = set(get_args(R.Record))
    assert set(TRANSITIONS) == kinds - {R.Checkpoint}
    assert set(_FOLD) == kinds
    checkpoint = SAMPLES[-1]
    assert isinstance(checkpoint, R.Checkpoint)
    assert next_state(RoomState.LOBBY, checkpoint) is RoomState.BREAK


def test_the_room_state_is_set_in_one_place() -> None:
    """server/core/room.py's ``_enter`` (from :func:`next_state`) and the new
    room's first state: nothing else in server/ assigns a room's state."""
    assigned = re.compile(r"\.state\s*=(?!=)")
    found = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in sorted((ROOT / "server").rglob("*.py"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if assigned.search(line)
    ]
    assert found == [
        "server/core/room.py: self.state = RoomState.LOBBY",
        "server/core/room.py: self.state = lifecycle.next_state(self.state, record)",
    ]
