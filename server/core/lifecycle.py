"""A room's lifecycle: its states, what each state allows and where each record
takes it, as one table each.

h11 keeps its state machine in one table rather than in ifs spread over its
handlers; so does the room. Every decider (server/core/decide.py) asks
:func:`check` once it knows who is asking, and this module is the only place
that refuses a request with ``wrong_state``: a reader finds here, and only here,
which request each state takes. The fold (server/core/room.py) asks
:func:`next_state` for every record it folds in, and assigns the room's state
nowhere else: :data:`TRANSITIONS` is the only place a state is entered.

    lobby --start--> playing --(a deal over, not the round's last)--> break
    break --(break_seconds ran out, host's next_deal, every player ready)--> playing
    playing, break --(last deal over, or time)--> round_over
    round_over --rematch--> playing;      any --(close, last one out, idle)--> closed
"""

from __future__ import annotations

from enum import StrEnum

from protocol.messages import Code, ErrorCode
from protocol.moves import Reason

from . import records as R
from .values import RoomError, RoomState

__all__ = [
    "DAILY_REFUSES",
    "ROUND_UNDER_WAY",
    "TABLE",
    "TRANSITIONS",
    "Action",
    "check",
    "check_daily",
    "next_state",
    "no_players",
    "not_dealt_in",
    "not_in_round",
    "takes",
]


class Action(StrEnum):
    """A member's request, as far as the room's state is concerned."""

    JOIN_AS_PLAYER = "join_as_player"
    JOIN_AS_SPECTATOR = "join_as_spectator"
    MEMBER = "member"  # any request of a member: asked before the request's own row
    LEAVE = "leave"
    SETTINGS = "settings"
    START = "start"
    NEXT_DEAL = "next_deal"
    REMOVE = "remove"
    REMATCH = "rematch"
    CLOSE = "close"
    READY = "ready"
    MOVE = "move"
    RETRY_MOVE = "retry_move"  # a move the player's log already holds, sent again


_L, _P, _B = RoomState.LOBBY, RoomState.PLAYING, RoomState.BREAK
_O, _C = RoomState.ROUND_OVER, RoomState.CLOSED

_GONE = (ErrorCode.NOT_IN_ROOM, "you are not in this room")
_CLOSED = (ErrorCode.NO_SUCH_ROOM, "that room is closed")
_NOT_LOBBY = (ErrorCode.WRONG_STATE, "start is for a room in the lobby; this one is {state}")
_NO_DEAL = (ErrorCode.WRONG_STATE, "no deal is running (the room is {state})")
_NO_BREAK = (ErrorCode.WRONG_STATE, "ready is for the break between deals; the room is {state}")
_IN_BREAK = (Reason.DEAL_OVER, "the deal is over: the next one starts after the break")
_NO_NEXT = (ErrorCode.WRONG_STATE, "no next deal to start (the room is {state})")
_NOT_OVER = (ErrorCode.WRONG_STATE, "rematch is for a finished round; this room is {state}")

Refusal = tuple[Code, str]

TABLE: dict[Action, dict[RoomState, Refusal | None]] = {
    # action:                 lobby       playing     break       round_over  closed
    Action.JOIN_AS_PLAYER: {_L: None, _P: None, _B: None, _O: None, _C: _CLOSED},
    Action.JOIN_AS_SPECTATOR: {_L: None, _P: None, _B: None, _O: None, _C: _CLOSED},
    Action.MEMBER: {_L: None, _P: None, _B: None, _O: None, _C: _GONE},
    Action.LEAVE: {_L: None, _P: None, _B: None, _O: None, _C: _GONE},
    Action.SETTINGS: {_L: None, _P: None, _B: None, _O: None, _C: _GONE},
    Action.START: {_L: None, _P: _NOT_LOBBY, _B: _NOT_LOBBY, _O: _NOT_LOBBY, _C: _GONE},
    Action.NEXT_DEAL: {_L: _NO_NEXT, _P: None, _B: None, _O: _NO_NEXT, _C: _GONE},
    Action.REMOVE: {_L: None, _P: None, _B: None, _O: None, _C: _GONE},
    Action.REMATCH: {_L: _NOT_OVER, _P: _NOT_OVER, _B: _NOT_OVER, _O: None, _C: _GONE},
    Action.CLOSE: {_L: None, _P: None, _B: None, _O: None, _C: _GONE},
    Action.READY: {_L: _NO_BREAK, _P: _NO_BREAK, _B: None, _O: _NO_BREAK, _C: _GONE},
    Action.MOVE: {_L: _NO_DEAL, _P: None, _B: _IN_BREAK, _O: _NO_DEAL, _C: _GONE},
    Action.RETRY_MOVE: {_L: _NO_DEAL, _P: None, _B: None, _O: None, _C: _GONE},
}
"""State × request → None (allowed) or the refusal. ``playing`` always has a
running deal: the record that ends a deal comes with the break, the next deal
or the round's end (server/core/decide.py). A player may join mid-round (in
``playing`` or ``break``) while a seat is free: they sit the running deal out
and are dealt in from the next one. ``next_deal`` while a deal runs ends it (the
break follows); during the break it deals the next one at once. A retried move
is answered for as long as the room keeps the round's logs, so also once the
round is over (the move that ended it is the one most likely to be retried)."""


_OPEN = (_L, _P, _B, _O)  # every state but closed
_SAME = {s: s for s in _OPEN}

TRANSITIONS: dict[type[R.Record], dict[RoomState, RoomState]] = {
    # record:          {state it may come in: the state after it}
    R.Created: {_L: _L},
    R.Joined: _SAME,
    R.Presence: _SAME,
    R.Left: _SAME,
    R.Removed: _SAME,
    R.Renamed: _SAME,
    R.SettingsSet: _SAME,
    R.RoundStarted: {_L: _P, _O: _P},
    R.DealStarted: {_P: _P, _B: _P},
    R.MovePlayed: {_P: _P},
    R.DealEnded: {_P: _P},  # the break, next deal or round's end comes with it
    R.BreakStarted: {_P: _B},
    R.Ready: {_B: _B},
    R.RoundOver: {_P: _O, _B: _O},
    R.Closed: {s: _C for s in _OPEN},
}
"""Record kind × the state it is folded in → the state after it. A pair missing
here is a log no decider writes, and the fold refuses it. A checkpoint is not
here: it replaces the whole state, its own included (:func:`next_state`)."""

ROUND_UNDER_WAY: frozenset[RoomState] = frozenset((_P, _B))
"""The states of a round under way: a deal running, or the break between two.
A player who joins now is in the round (dealt in from the next deal), its time
limit runs, and a rated round locks its settings (server/core/decide.py)."""


DAILY_REFUSES: frozenset[Action] = frozenset(
    {
        Action.JOIN_AS_PLAYER,
        Action.JOIN_AS_SPECTATOR,
        Action.SETTINGS,
        Action.START,
        Action.NEXT_DEAL,
        Action.REMOVE,
        Action.REMATCH,
        Action.READY,
    }
)
"""What a daily run's room (a room of one the server made, ``Room.daily``)
refuses in any state: nobody joins it, watches it or is seated in it, its
settings are the daily's, and its one deal is dealt once. Leaving or closing it
ends the run (server/core/decide.py)."""


def check_daily(action: Action) -> None:
    """Raise the refusal of ``action`` in a daily run's room, if it has one."""
    if action in DAILY_REFUSES:
        raise RoomError(
            ErrorCode.WRONG_STATE, "this is a daily run: a room of one, dealt once, as it is"
        )


def takes(state: RoomState, kind: type[R.Record]) -> bool:
    """Whether a room in ``state`` takes a record of ``kind`` at all (a decider
    with nothing to refuse, like a presence change in a closed room, writes none)."""
    return state in TRANSITIONS[kind]


def next_state(state: RoomState, record: R.Record) -> RoomState:
    """The room's state once ``record`` is folded in (the fold's only way to set it)."""
    if isinstance(record, R.Checkpoint):
        return record.state
    after = TRANSITIONS[type(record)].get(state)
    if after is None:
        raise ValueError(f"a {record.KIND} record in a {state.value} room")
    return after


def check(state: RoomState, action: Action) -> None:
    """Raise the table's refusal for ``action`` in ``state``, if it has one."""
    refusal = TABLE[action][state]
    if refusal is not None:
        code, message = refusal
        raise RoomError(code, message.format(state=state.value))


def no_players() -> RoomError:
    """A round cannot start with nobody to deal to (the host may be a spectator
    once every player has left)."""
    return RoomError(ErrorCode.WRONG_STATE, "a round needs at least one player")


def not_in_round() -> RoomError:
    """Ready from a member the round has no seat for (a spectator)."""
    return RoomError(ErrorCode.NOT_A_PLAYER, "only the round's players get ready")


def not_dealt_in() -> RoomError:
    """A player the running deal has no board for (they joined after it began)."""
    return RoomError(ErrorCode.WRONG_STATE, "you are not dealt into this deal")
