"""Presence decisions: a member is online exactly when a session of theirs is
connected to this node."""

from __future__ import annotations

from collections.abc import Callable

from ..core import decide as D
from ..core.records import Decision
from ..core.room import Room

__all__ = ["presence", "presence_of_all"]


def presence(player: str, connected: bool) -> Callable[[Room, D.Ctx], Decision]:
    return lambda room, _ctx: D.decide_presence(room, player, connected)


def presence_of_all(connected: Callable[[str], bool]) -> Callable[[Room, D.Ctx], Decision]:
    """Every member's presence as ``connected`` says it is, in one decision (a
    rebuilt room, before anything else can reach it)."""

    def decide(room: Room, _ctx: D.Ctx) -> Decision:
        records = []
        for pid in room.members:
            records += D.decide_presence(room, pid, connected(pid)).records
        return Decision(records)

    return decide
