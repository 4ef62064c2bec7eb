"""The room core's value types: states, roles, members, deals, events, refusals.

The leaf of the core: the fold (server/core/room.py), the deciders
(server/core/decide.py), the lifecycle table (server/core/lifecycle.py) and the
views (server/core/views.py) all share these without importing each other.
Sans-I/O like the rest of the core.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from protocol.board import Board
from protocol.messages import Code, Message, Role
from protocol.moves import Move, MoveKind
from protocol.scoring import DealReplay
from protocol.settings import DealRules, Settings
from protocol.strategy import Pace, Style

__all__ = [
    "MAX_PLAYERS",
    "MAX_SPECTATORS",
    "Deal",
    "Fanout",
    "LogEntry",
    "Member",
    "MoveLog",
    "Role",
    "RoomError",
    "RoomState",
    "SeedWanted",
    "break_deadline",
    "logged_move",
    "people_connected",
    "round_deadline",
]

MAX_PLAYERS = 8
MAX_SPECTATORS = 100
LOBBY_MS = 2 * 60 * 60_000  # a room never started closes this long after it was made


class RoomState(StrEnum):
    """The room's lifecycle state (server/core/lifecycle.py says what each allows)."""

    LOBBY = "lobby"
    PLAYING = "playing"
    BREAK = "break"  # between two deals of a round: the last one's results on show
    ROUND_OVER = "round_over"
    CLOSED = "closed"


def round_deadline(settings: Settings, round_started_at: int | None) -> int | None:
    """When a round's time limit runs out (None: no limit, or no round). The
    limit counts from the round's start, so a change of it applies at once."""
    minutes = settings.time_limit_minutes
    if not minutes or round_started_at is None:
        return None
    return round_started_at + minutes * 60_000


def break_deadline(settings: Settings, deal_ended_at: int | None) -> int | None:
    """When a break ends and the next deal starts: ``break_seconds`` after the
    deal ended. Counted from the deal's end, so a change of the setting applies
    to a break already running."""
    if deal_ended_at is None:
        return None
    return deal_ended_at + settings.break_seconds * 1000


@dataclass(frozen=True, slots=True)
class SeedWanted:
    """A decision would deal deal ``number``, ``deals: winnable``, under ``rules``,
    and the shell has no proven seed for them in hand: nothing is decided
    (``Decision.wanted``). The shell's runner gets one (from its pool of proven
    seeds, waiting while it is dry: server/rooms/seeds.py) and decides again;
    deciding changes nothing, so deciding again is safe. ``coming``: a seed for
    them was taken ahead and waits on a dry pool."""

    rules: DealRules
    number: int
    coming: bool = False


class RoomError(Exception):
    """A request the room refuses; ``code`` is the protocol's error code."""

    def __init__(self, code: Code, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra


@dataclass(slots=True)
class Member:
    """One member of a room. ``bot`` is a bot player's pace (None: a person) and
    ``style`` how it chooses (a person's is never read): the server plays for it
    (server/rooms/bots.py), and it is always connected."""

    id: str
    name: str
    role: Role
    connected: bool = True
    bot: Pace | None = None
    style: Style = Style.METHODICAL


def people_connected(members: Iterable[Member]) -> bool:
    """Whether a person is connected: bots do not keep a room from going idle."""
    return any(m.connected and m.bot is None for m in members)


# One accepted move in a deal's log, as the log hands it out: (t, kind, from, to,
# count).
LogEntry = tuple[int, str, int, int, int]

_KINDS = list(MoveKind)
_KIND_NAMES = tuple(kind.value for kind in _KINDS)  # read a move at a time: no enum property
# By kind, and so by its value too (a StrEnum member is its string).
_KIND_INDEX: dict[str, int] = {kind: i for i, kind in enumerate(_KINDS)}
_STRIDE = 5


class MoveLog:
    """One player's log of one deal: their accepted moves, in order, with their ``t``.

    Kept flat, five machine integers a move in one array, rather than an object a
    move: a busy server holds every move of every deal of its running rounds, and
    each object would be one more for the collector to count and, on its full
    passes, to walk. Entries are handed out as :data:`LogEntry` tuples.
    """

    __slots__ = ("_flat",)

    def __init__(self, entries: Iterable[Sequence[Any]] = ()) -> None:
        self._flat = array("q")
        for e in entries:
            self._flat.extend((e[0], _KIND_INDEX[e[1]], e[2], e[3], e[4]))

    def append(self, t: int, move: Move) -> None:
        self._flat.extend((t, _KIND_INDEX[move.kind], move.src, move.dst, move.count))

    def __len__(self) -> int:
        return len(self._flat) // _STRIDE

    def __getitem__(self, i: int) -> LogEntry:
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("move log index out of range")
        t, kind, src, dst, count = self._flat[_STRIDE * i : _STRIDE * i + _STRIDE]
        return (t, _KIND_NAMES[kind], src, dst, count)

    def __iter__(self) -> Iterator[LogEntry]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MoveLog) and self._flat == other._flat

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"MoveLog({list(self)!r})"

    @property
    def last_t(self) -> int:
        """The ``t`` of the last move (0 for an empty log)."""
        return self._flat[-_STRIDE] if self._flat else 0


def logged_move(entry: LogEntry) -> Move:
    return Move(MoveKind(entry[1]), entry[2], entry[3], entry[4])


@dataclass(slots=True, weakref_slot=True)
class Deal:
    """One deal of the current round: a replay per player, and its timed logs.

    A value: what views build from it is kept, where it is kept at all, by the
    shell (server/rooms/memo.py, by a weak reference, hence the slot)."""

    number: int
    seed: str
    commitment: str
    started_at: int
    rules: DealRules
    replays: dict[str, DealReplay]
    logs: dict[str, MoveLog]
    # What each logged move did (protocol.views.LoggedResult), flattened: move i's
    # is results[p][RESULT_FIELDS * i:][:RESULT_FIELDS]. The revealed deal's logs
    # carry it, told without replaying the deal (views.deal_logs).
    results: dict[str, list[Any]] = field(default_factory=dict)
    end_t: dict[str, int] = field(default_factory=dict)  # stopped by time or host
    ended_at: int | None = None
    ended_by: str | None = None  # protocol.messages.DealEnd: why it ended (nil: not yet)
    first: str | None = None  # first winner
    proof: str | None = None  # deals: winnable — the solver's winning line, secret till over
    # The deal in a checkpoint record, encoded once it is over (it changes no more):
    # a checkpoint late in a round re-encodes only the running deal.
    packed: bytes | None = None

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

    A member gets ``personal[id]`` if there is one, else ``spectators`` if they
    watch and there is one, else ``everyone``. The shell encodes each distinct map
    once.
    """

    seq: int
    everyone: Message
    spectators: Message | None = None
    personal: dict[str, Message] = field(default_factory=dict)

    def for_member(self, member: Member) -> Message:
        msg = self.personal.get(member.id)
        if msg is not None:
            return msg
        if member.role == Role.SPECTATOR and self.spectators is not None:
            return self.spectators
        return self.everyone
