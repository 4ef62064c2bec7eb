"""The room core's value types: members, deals, events, decisions, refusals.

Kept apart from the fold (server/room.py) so that the deciding side
(server/commands.py) and the views (server/roomviews.py) share them without
importing each other. Sans-I/O like the rest of the core.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from protocol.board import Board
from protocol.moves import Move, MoveKind, Outcome
from protocol.scoring import DealReplay
from protocol.settings import DealRules

from .records import Record

__all__ = [
    "CLOSED",
    "LOBBY",
    "MAX_PLAYERS",
    "MAX_SPECTATORS",
    "PLAYER",
    "PLAYING",
    "ROUND_OVER",
    "SPECTATOR",
    "Deal",
    "Decision",
    "Fanout",
    "LogEntry",
    "Member",
    "RoomError",
    "log_entry",
    "logged_move",
]

PLAYER = "player"
SPECTATOR = "spectator"
MAX_PLAYERS = 8
MAX_SPECTATORS = 100

LOBBY = "lobby"
PLAYING = "playing"
ROUND_OVER = "round_over"
CLOSED = "closed"


class RoomError(Exception):
    """A request the room refuses; ``code`` is the protocol's error code."""

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra


@dataclass(slots=True)
class Member:
    id: str
    name: str
    role: str
    connected: bool = True


# One accepted move in a deal's log: (t, kind, from, to, count). A tuple of atoms
# rather than objects, because a busy server holds a few hundred thousand of them
# and the garbage collector skips such tuples, where it would scan every object
# on each full collection (a pause that grows with the log).
LogEntry = tuple[int, str, int, int, int]


def log_entry(t: int, move: Move) -> LogEntry:
    return (t, move.kind.value, move.src, move.dst, move.count)


def logged_move(entry: LogEntry) -> Move:
    return Move(MoveKind(entry[1]), entry[2], entry[3], entry[4])


@dataclass(slots=True)
class Deal:
    """One deal of the current round: a replay per player, and its timed logs."""

    number: int
    seed: str
    commitment: str
    started_at: int
    rules: DealRules
    replays: dict[str, DealReplay]
    logs: dict[str, list[LogEntry]]
    end_t: dict[str, int] = field(default_factory=dict)  # stopped by time or host
    ended_at: int | None = None
    first: str | None = None  # first winner
    scores: dict[str, tuple[Any, int]] = field(default_factory=dict)  # see Room.score
    views: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)  # board_view

    @property
    def over(self) -> bool:
        return self.ended_at is not None

    def board(self, player: str) -> Board | None:
        replay = self.replays.get(player)
        return None if replay is None else replay.board

    def t(self, now: int) -> int:
        return max(0, now - self.started_at)


@dataclass(slots=True)
class Fanout:
    """One room event: its seq and the map each member gets.

    A member gets ``personal[id]`` if there is one, else the map for their role
    if there is one, else ``everyone``. The shell encodes each distinct map once.
    """

    seq: int
    everyone: dict[str, Any]
    players: dict[str, Any] | None = None
    spectators: dict[str, Any] | None = None
    personal: dict[str, dict[str, Any]] = field(default_factory=dict)

    def for_member(self, member: Member) -> dict[str, Any]:
        msg = self.personal.get(member.id)
        if msg is not None:
            return msg
        if member.role == SPECTATOR and self.spectators is not None:
            return self.spectators
        if member.role == PLAYER and self.players is not None:
            return self.players
        return self.everyone


@dataclass(slots=True)
class Decision:
    """What a request means: records to persist, and what to reply once they are.

    ``prepared`` maps a move record's index in ``records`` to the board the move
    was validated on (a copy) and its outcome, so that :meth:`Room.commit` adopts
    the validated board instead of playing the move a second time.
    """

    records: list[Record] = field(default_factory=list)
    reply: str = "ok"  # "ok", "joined", "moved" or "none"
    prepared: dict[int, tuple[Board, Outcome]] = field(default_factory=dict)
    deal: int = 0  # for "moved": the deal the move was for
    outcome: Outcome | None = None
