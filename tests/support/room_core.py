"""A sans-I/O room (server/core/) driven the way the shell drives it, for the
tests of the core: decide, then commit, with the log kept as bytes."""

from __future__ import annotations

import itertools
from typing import Any

from server.core import decide as C
from server.core.records import Decision, decode_record, encode_record
from server.core.room import Room
from server.core.values import Role


class Harness:
    """A room driven like the shell drives it, with the log kept as bytes."""

    def __init__(self, *seeds: str) -> None:
        self.room = Room("ABCDEF")
        self.log: list[bytes] = []
        self.now = 1_000_000
        self.seeds = itertools.chain(seeds, (f"seed-{i}" for i in itertools.count()))
        self.events: list[Any] = []

    def ctx(self) -> C.Ctx:
        return C.Ctx(self.now, lambda: next(self.seeds))

    def run(self, decision: Decision) -> Decision:
        self.log.extend(encode_record(r) for r in decision.records)
        self.events.extend(self.room.commit(decision))
        return decision

    def rebuilt(self) -> Room:
        return Room.rebuild(self.room.code, (decode_record(b) for b in self.log))


def setup_room(h: Harness, players: int = 3, spectators: int = 0, **settings: Any) -> list[str]:
    """A room made by ``p0`` with the other players and the spectators in it.
    Without a break between deals unless ``break_seconds`` says (the tests of
    the break give one): the next deal follows the last one at once."""
    settings = {"break_seconds": 0, **settings}
    ids = [f"p{i}" for i in range(players)]
    h.run(C.decide_create(h.room, ids[0], "P0", settings, h.ctx()))
    for pid in ids[1:]:
        h.run(C.decide_join(h.room, pid, pid.upper(), Role.PLAYER, h.ctx()))
    for i in range(spectators):
        h.run(C.decide_join(h.room, f"s{i}", f"S{i}", Role.SPECTATOR, h.ctx()))
    return ids
