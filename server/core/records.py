"""The room log's records: one small frozen type per kind, and their bytes.

A room is event-sourced: its state is a fold of its records (server/core/room.py), so a
record holds a *decision*, never something the fold would have to re-decide with
information it does not have. The seed of a deal is drawn by the shell and written
into :class:`DealStarted`; the new host is chosen when the old one leaves and
written into :class:`Left`; a deal's rules are resolved from the settings at deal
time and written into :class:`DealStarted`. Replaying the log through the same
fold therefore rebuilds the room exactly, seq numbers included, on this node or
another.

Like h11's events, each kind of record is a frozen, slotted dataclass, so that a
record built with a missing or misspelt field fails where it is built, and the
fold dispatches on the record's type. :func:`encode_record` and
:func:`decode_record` are the one way each to the stored form: a msgpack map with
the kind under ``"k"`` and short keys (moves dominate the log). The stored form is
the log's format, which outlives processes, so it only grows: new keys, never new
meanings. Each type's fields name their key (``_meta``); a field marked ``omit`` is
left out while it is None, as it was before it existed; a key missing from an
older record reads as the field's default.

==================== ============ ================================================
type                 ``k``        keys
==================== ============ ================================================
:class:`Created`     created      ``settings`` (full map), ``host``, ``at``; a
                                  daily run's room has ``daily``: [date, ladder];
                                  a quick match's room has ``starts``: when its
                                  first deal starts by itself (missing in rooms
                                  made before it was kept: none counts down)
:class:`Joined`      joined       ``p``, ``name``, ``role`` (``player`` /
                                  ``spectator``), ``at``; a bot player has
                                  ``bot``, its pace (the server plays for it),
                                  and ``style``, how it chooses (missing in
                                  bots seated before styles: ``methodical``)
:class:`Presence`    presence     ``p``, ``on`` (a connection dropped or came back)
:class:`Left`        left         ``p``, ``host`` (the host after it; may be the same)
:class:`Removed`     removed      ``p``, ``host``
:class:`Renamed`     renamed      ``p``, ``name`` (the name the room shows from now
                                  on: a member's, or a past round's row; written
                                  when their account is deleted)
:class:`SettingsSet` settings     ``changes`` (partial map, already validated), ``at``
:class:`RoundStarted` round       ``at``, ``carry`` ({player: cumulative Vegas bank})
:class:`DealStarted` deal         ``n``, ``seed``, ``at``, ``rules`` (DealRules map);
                                  with ``deals: winnable``, ``proof`` (the solver's
                                  winning line, protocol/proof.py)
:class:`MovePlayed`  move         ``p``, ``d`` (deal number), ``t`` (ms into the
                                  deal), ``s`` (acceptance order: the record's index
                                  in the log), ``m`` (move map)
:class:`DealEnded`   deal_ended   ``n``, ``at``, ``reason`` (``all_ended`` / ``host``
                                  / ``time``)
:class:`BreakStarted` break       ``at`` (a deal over and not the round's last: the
                                  next deal starts ``break_seconds`` after its end)
:class:`Ready`       ready        ``p`` (a player of the round is ready for the next deal)
:class:`RoundOver`   round_over   ``at`` (its fold adds the round's result to the
                                  series, server/core/series.py)
:class:`Closed`      closed       ``reason`` (``host`` / ``empty`` / ``idle`` /
                                  ``expired``)
:class:`Checkpoint`    snapshot     ``r`` (the record's own index in the log), ``seq``,
                                  ``state``, ``settings``, ``host``, ``members``
                                  ([id, name, role, connected, bot pace or nil]
                                  in order, and a bot's style after its pace,
                                  missing in checkpoints written before styles),
                                  ``round``, ``round_at``,
                                  ``round_players``, ``carry``, ``closed`` (reason
                                  or nil), ``created_at``, ``ready`` (the players
                                  ready in a break, in order), ``series`` (the
                                  finished rounds, ``Series.to_wire``; missing in
                                  checkpoints written before rooms kept one),
                                  ``daily`` (a daily run's room: [date, ladder]),
                                  ``starts`` (a quick match's room: as in
                                  ``created``),
                                  ``deals``: the current round's
                                  (:class:`CheckpointDeal`)
==================== ============ ================================================

A :class:`CheckpointDeal` is ``n``, ``seed``, ``at``, ``rules``, ``ended`` (at, or
nil), ``ended_by`` (the ``deal_ended`` reason, or nil), ``end_t``, ``first``,
``logs`` ({player: [[t, kind, from, to, count], …]}, every player dealt in, in
order), ``won`` ({player: the ``s`` of their winning move}) and ``proof`` (the
winning line of a winnable deal, or nil).

A checkpoint (its stored kind is ``snapshot``) is the room's whole state as of
that point, written by the shell (server/rooms/runner.py) after the records that
end a deal or start a round. It decides nothing: folding it *replaces* the room's
state with the one it holds (replays are rebuilt from the logs by the engine), so
folding a log from its last checkpoint gives exactly the room the whole log gives,
and the store may drop every record before a checkpoint
(:meth:`server.store.base.Store.compact`): a room that played for hours is taken
over from a checkpoint and a short tail. Its ``r`` keeps
the log's numbering (moves' ``s``, the record count) unchanged across that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar

import msgpack  # type: ignore[import-untyped]

from protocol.frozen import quick_init
from protocol.messages import ClosedReason, DealEnd
from protocol.moves import Move, Outcome
from protocol.strategy import Pace, Style

from .values import Role, RoomState, SeedWanted

__all__ = [
    "BreakStarted",
    "Checkpoint",
    "CheckpointDeal",
    "Closed",
    "Created",
    "DealEnded",
    "DealStarted",
    "Decision",
    "Joined",
    "Left",
    "MovePlayed",
    "Presence",
    "Ready",
    "Record",
    "Removed",
    "Renamed",
    "RoundOver",
    "RoundStarted",
    "SettingsSet",
    "decode_record",
    "encode_record",
]

_Wire = tuple[Callable[[Any], Any], Callable[[Any], Any]]  # to the stored value, and back


def _meta(key: str, *, omit: bool = False, wire: _Wire | None = None) -> dict[str, Any]:
    """A field's metadata: stored under ``key``; see the module docstring."""
    return {"key": key, "omit": omit, "wire": wire}


def _enum(kind: type[StrEnum]) -> _Wire:
    return (lambda v: v.value, kind)


def _maybe_enum(kind: type[StrEnum]) -> _Wire:
    return (lambda v: None if v is None else v.value, lambda v: None if v is None else kind(v))


_MOVE: _Wire = (Move.to_wire, Move.from_wire)
_ROLE, _PACE, _STYLE = _enum(Role), _maybe_enum(Pace), _maybe_enum(Style)
_DEAL_END, _CLOSED, _MAYBE_CLOSED = _enum(DealEnd), _enum(ClosedReason), _maybe_enum(ClosedReason)
_STATE = _enum(RoomState)


def _deals(data: Sequence[Mapping[str, Any]]) -> list[CheckpointDeal]:
    return [_from_map(CheckpointDeal, d) for d in data]


@dataclass(frozen=True, slots=True)
class Created:
    KIND: ClassVar[str] = "created"
    settings: Mapping[str, Any] = field(metadata=_meta("settings"))
    host: str = field(metadata=_meta("host"))
    at: int = field(metadata=_meta("at"))
    # A daily run's room (its date and ladder): a room of one the server made,
    # which takes no one else and no change (server/core/decide.py). A third
    # element: the run is a take of that challenge (server/challenges/).
    daily: Sequence[str] | None = field(default=None, metadata=_meta("daily", omit=True))
    # A quick match's room (server/matchmaking/queues.py): when its first deal
    # starts by itself. In the log, so that a room rebuilt after a crash, on
    # this node or another, counts down to the same moment (server/rooms/timer.py).
    starts_at: int | None = field(default=None, metadata=_meta("starts", omit=True))


@dataclass(frozen=True, slots=True)
class Joined:
    KIND: ClassVar[str] = "joined"
    player: str = field(metadata=_meta("p"))
    name: str = field(metadata=_meta("name"))
    role: Role = field(metadata=_meta("role", wire=_ROLE))
    # None only in the room's first record (its host, joined as it is created).
    at: int | None = field(default=None, metadata=_meta("at", omit=True))
    bot: Pace | None = field(default=None, metadata=_meta("bot", omit=True, wire=_PACE))
    style: Style | None = field(default=None, metadata=_meta("style", omit=True, wire=_STYLE))


@dataclass(frozen=True, slots=True)
class Presence:
    KIND: ClassVar[str] = "presence"
    player: str = field(metadata=_meta("p"))
    on: bool = field(metadata=_meta("on"))


@dataclass(frozen=True, slots=True)
class Left:
    KIND: ClassVar[str] = "left"
    player: str = field(metadata=_meta("p"))
    host: str | None = field(metadata=_meta("host"))


@dataclass(frozen=True, slots=True)
class Removed:
    KIND: ClassVar[str] = "removed"
    player: str = field(metadata=_meta("p"))
    host: str | None = field(metadata=_meta("host"))


@dataclass(frozen=True, slots=True)
class Renamed:
    """The room names a player anew wherever it names them (a member, a past
    round's row). Written when the player's account is deleted, so the room's
    views, its sheet and the replays built from it later say "a deleted player"
    and a rebuild from the log says so again."""

    KIND: ClassVar[str] = "renamed"
    player: str = field(metadata=_meta("p"))
    name: str = field(metadata=_meta("name"))


@dataclass(frozen=True, slots=True)
class SettingsSet:
    KIND: ClassVar[str] = "settings"
    changes: Mapping[str, Any] = field(metadata=_meta("changes"))
    at: int = field(metadata=_meta("at"))


@dataclass(frozen=True, slots=True)
class RoundStarted:
    KIND: ClassVar[str] = "round"
    at: int = field(metadata=_meta("at"))
    carry: Mapping[str, int] = field(metadata=_meta("carry"))


@dataclass(frozen=True, slots=True)
class DealStarted:
    KIND: ClassVar[str] = "deal"
    number: int = field(metadata=_meta("n"))
    seed: str = field(metadata=_meta("seed"))
    at: int = field(metadata=_meta("at"))
    rules: Mapping[str, Any] = field(metadata=_meta("rules"))
    proof: str | None = field(default=None, metadata=_meta("proof", omit=True))


@quick_init
@dataclass(frozen=True, slots=True)
class MovePlayed:
    KIND: ClassVar[str] = "move"
    player: str = field(metadata=_meta("p"))
    deal_number: int = field(metadata=_meta("d"))
    t: int = field(metadata=_meta("t"))
    index: int = field(metadata=_meta("s"))
    move: Move = field(metadata=_meta("m", wire=_MOVE))


@dataclass(frozen=True, slots=True)
class DealEnded:
    KIND: ClassVar[str] = "deal_ended"
    number: int = field(metadata=_meta("n"))
    at: int = field(metadata=_meta("at"))
    reason: DealEnd = field(metadata=_meta("reason", wire=_DEAL_END))


@dataclass(frozen=True, slots=True)
class BreakStarted:
    KIND: ClassVar[str] = "break"
    at: int = field(metadata=_meta("at"))


@dataclass(frozen=True, slots=True)
class Ready:
    KIND: ClassVar[str] = "ready"
    player: str = field(metadata=_meta("p"))


@dataclass(frozen=True, slots=True)
class RoundOver:
    KIND: ClassVar[str] = "round_over"
    at: int = field(metadata=_meta("at"))


@dataclass(frozen=True, slots=True)
class Closed:
    KIND: ClassVar[str] = "closed"
    reason: ClosedReason = field(metadata=_meta("reason", wire=_CLOSED))


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointDeal:
    """One deal of a :class:`Checkpoint`: what it was dealt from and its moves' logs."""

    number: int = field(metadata=_meta("n"))
    seed: str = field(metadata=_meta("seed"))
    at: int = field(metadata=_meta("at"))
    rules: Mapping[str, Any] = field(metadata=_meta("rules"))
    ended: int | None = field(metadata=_meta("ended"))
    # Checkpoints written before these were kept do not hold them.
    ended_by: str | None = field(default=None, metadata=_meta("ended_by"))
    end_t: Mapping[str, int] = field(metadata=_meta("end_t"))
    first: str | None = field(metadata=_meta("first"))
    logs: Mapping[str, Sequence[Sequence[Any]]] = field(metadata=_meta("logs"))
    won: Mapping[str, int] = field(metadata=_meta("won"))
    proof: str | None = field(default=None, metadata=_meta("proof"))

    def packed(self) -> bytes:
        """Its stored form, as a checkpoint holds it (see :attr:`Checkpoint.deals`)."""
        data: bytes = msgpack.packb(_to_map(self), use_bin_type=True)
        return data


@dataclass(frozen=True, slots=True)
class Checkpoint:
    KIND: ClassVar[str] = "snapshot"
    index: int = field(metadata=_meta("r"))
    seq: int = field(metadata=_meta("seq"))
    state: RoomState = field(metadata=_meta("state", wire=_STATE))
    settings: Mapping[str, Any] = field(metadata=_meta("settings"))
    host: str | None = field(metadata=_meta("host"))
    members: Sequence[Sequence[Any]] = field(metadata=_meta("members"))
    round: int = field(metadata=_meta("round"))
    round_at: int | None = field(metadata=_meta("round_at"))
    round_players: Sequence[str] = field(metadata=_meta("round_players"))
    carry: Mapping[str, int] = field(metadata=_meta("carry"))
    closed: ClosedReason | None = field(metadata=_meta("closed", wire=_MAYBE_CLOSED))
    created_at: int = field(default=0, metadata=_meta("created_at"))
    ready: Sequence[str] = field(default=(), metadata=_meta("ready"))
    series: Mapping[str, Any] | None = field(default=None, metadata=_meta("series"))
    daily: Sequence[str] | None = field(default=None, metadata=_meta("daily", omit=True))
    starts_at: int | None = field(default=None, metadata=_meta("starts", omit=True))
    # Each deal, or its stored form (CheckpointDeal.packed) when the writer has it
    # already: a deal over changes no more, so a checkpoint late in a round encodes
    # only the running deal (Room.take_checkpoint). Decoded, always CheckpointDeal.
    deals: Sequence[CheckpointDeal | bytes] = field(
        default=(), metadata=_meta("deals", wire=(list, _deals))
    )


Record = (
    Created
    | Joined
    | Presence
    | Left
    | Removed
    | Renamed
    | SettingsSet
    | RoundStarted
    | DealStarted
    | MovePlayed
    | DealEnded
    | BreakStarted
    | Ready
    | RoundOver
    | Closed
    | Checkpoint
)

# Per type: its fields as (attribute, key, omit when None, to the stored value,
# back from it), in the order the keys are stored.
_Spec = tuple[tuple[str, str, bool, Callable[[Any], Any] | None, Callable[[Any], Any] | None], ...]


def _spec(cls: type) -> _Spec:
    out = []
    for f in fields(cls):
        wire = f.metadata["wire"]
        enc, dec = wire if wire is not None else (None, None)
        out.append((f.name, f.metadata["key"], f.metadata["omit"], enc, dec))
    return tuple(out)


_TYPES: tuple[type[Record], ...] = (
    Created,
    Joined,
    Presence,
    Left,
    Removed,
    Renamed,
    SettingsSet,
    RoundStarted,
    DealStarted,
    MovePlayed,
    DealEnded,
    BreakStarted,
    Ready,
    RoundOver,
    Closed,
    Checkpoint,
)
_SPECS: dict[type, _Spec] = {cls: _spec(cls) for cls in (*_TYPES, CheckpointDeal)}
_BY_KIND: dict[str, type[Record]] = {cls.KIND: cls for cls in _TYPES}


def _to_map(value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for attr, key, omit, enc, _ in _SPECS[type(value)]:
        v = getattr(value, attr)
        if omit and v is None:
            continue
        out[key] = v if enc is None else enc(v)
    return out


def _from_map(cls: type[Any], data: Mapping[str, Any]) -> Any:
    kwargs = {}
    for attr, key, _, _, dec in _SPECS[cls]:
        if key in data:
            v = data[key]
            kwargs[attr] = v if dec is None else dec(v)
    return cls(**kwargs)


def encode_record(record: Record) -> bytes:
    """A record's stored form: the msgpack map ``{"k": kind, key: value, …}``."""
    if isinstance(record, Checkpoint):
        return _encode_checkpoint(record)
    data: bytes = msgpack.packb({"k": record.KIND, **_to_map(record)}, use_bin_type=True)
    return data


def _encode_checkpoint(record: Checkpoint) -> bytes:
    """A checkpoint's ``deals`` go last, each spliced in as its stored form: the
    very bytes :func:`msgpack.packb` gives the whole map, without encoding again
    the deals whose bytes are known."""
    fields_ = _to_map(record)
    deals = fields_.pop("deals")
    packer = msgpack.Packer(use_bin_type=True)
    parts = [
        packer.pack_map_header(len(fields_) + 2),
        packer.pack("k"),
        packer.pack(Checkpoint.KIND),
    ]
    for k, v in fields_.items():
        parts.append(packer.pack(k))
        parts.append(packer.pack(v))
    parts.append(packer.pack("deals"))
    parts.append(packer.pack_array_header(len(deals)))
    parts.extend(d if isinstance(d, bytes) else d.packed() for d in deals)
    return b"".join(parts)


def decode_record(data: bytes) -> Record:
    """The record ``data`` stores; ValueError if it is none."""
    raw = msgpack.unpackb(data, raw=False, strict_map_key=False)
    kind = raw.get("k") if isinstance(raw, dict) else None
    cls = _BY_KIND.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError("not a room record")
    try:
        record: Record = _from_map(cls, raw)
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"not a {cls.KIND} record: {exc}") from None
    return record


@dataclass(slots=True)
class Decision:
    """What a request means: records to persist, and what to reply once they are.

    ``retry`` is set (and ``records`` empty) when a move request repeats one the
    player's log already holds: the index of that move in the log of deal
    ``deal_number``, so
    the reply can be the original one, rebuilt from the log. ``wanted`` is set
    (and ``records`` empty) when the decision waits for a proven seed.
    """

    records: list[Record] = field(default_factory=list)
    deal_number: int = 0  # for "moved": the deal the move was for
    outcome: Outcome | None = None
    retry: int | None = None
    wanted: SeedWanted | None = None
    # Set by the commit of a move: its OUTCOME map and digest as the wire tells
    # them (server/core/views.py ``told_move``), built once by the fold for the
    # watchers' event and the mover's reply alike.
    told: tuple[dict[str, Any], str] | None = None
