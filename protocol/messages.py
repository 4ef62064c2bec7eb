"""Every message the server sends, one typed constructor each, and the codes.

docs/protocol.md is the contract; this module is its vocabulary in code. A frame
leaves the server only as a :data:`Message`, and a :data:`Message` is made only
here (it is a distinct type: a dict literal is not one), so the set of message
types the server can produce is :data:`MESSAGE_TYPES`, and the codes it can send
are the members of :class:`ErrorCode`, :class:`protocol.moves.Reason`,
:class:`CloseCode` and :class:`ClosedReason`. tests/test_protocol_docs.py holds
those sets equal to what docs/protocol.md documents, both ways.

Pure: the Python client and the tests read the same codes (the browser client's
copy, client/web/codes.js, is held to :class:`CloseCode` by a test).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import IntEnum, StrEnum
from typing import Any, NewType, TypeVar

from .moves import Reason

__all__ = [
    "MESSAGE_TYPES",
    "CloseCode",
    "ClosedReason",
    "Code",
    "ErrorCode",
    "Message",
    "Reaction",
    "RequestId",
    "Role",
    "account_made",
    "break_started",
    "daily",
    "daily_board",
    "daily_compare",
    "daily_line",
    "deal_log",
    "deal_over",
    "deal_started",
    "devices",
    "error",
    "events",
    "first_finisher",
    "friend_invite",
    "friend_link",
    "friends",
    "ghost_progress",
    "ghosts",
    "history",
    "joined",
    "link_code",
    "members",
    "moved",
    "ok",
    "passkey_added",
    "passkey_options",
    "passkey_removed",
    "passkeys",
    "past_deal",
    "pong",
    "profile",
    "progress",
    "reaction",
    "ready",
    "recovery_codes",
    "removed",
    "room_closed",
    "room_info",
    "round_over",
    "settings",
    "sheet",
    "signed_out",
    "snapshot",
    "welcome",
]

Message = NewType("Message", dict[str, Any])
"""One map the server sends; build it with a constructor below."""

RequestId = int | str | None
"""A request's ``id``, echoed in its reply (protocol/requests.py checks it)."""


class CloseCode(IntEnum):
    """WebSocket close codes the server uses (docs/protocol.md, Close codes)."""

    NORMAL = 1000
    GOING_AWAY = 1001  # shutting down, or the room moved: resume with your token
    PROTOCOL_ERROR = 1002  # a frame that breaks WebSocket's framing (websockets closes it)
    INVALID_DATA = 1007  # a text frame that is not UTF-8 (websockets closes it)
    TOO_BIG = 1009  # a frame over the size limit (websockets closes it)
    SERVER_ERROR = 1011  # sending to this connection failed (a bug); resume
    RESUMED_ELSEWHERE = 4001
    HELLO_FIRST = 4002
    FLOODING = 4008
    TOO_SLOW = 4009
    SIGNED_OUT = 4011  # this device was signed out: its token signs in no more


class ErrorCode(StrEnum):
    """The ``code`` of an ``error`` reply, besides the engine's move refusals
    (:class:`protocol.moves.Reason`, whose ``deal_over`` the room uses too)."""

    BAD_FRAME = "bad_frame"
    BAD_REQUEST = "bad_request"
    UNKNOWN_TYPE = "unknown_type"
    UNSUPPORTED_VERSION = "unsupported_version"
    HELLO_FIRST = "hello_first"
    ALREADY_HELLO = "already_hello"
    UNKNOWN_TOKEN = "unknown_token"
    BAD_NAME = "bad_name"
    BAD_SETTING = "bad_setting"
    NO_SUCH_ROOM = "no_such_room"
    ALREADY_IN_ROOM = "already_in_room"
    NOT_IN_ROOM = "not_in_room"
    ROOM_FULL = "room_full"
    NO_SPECTATORS = "no_spectators"
    NOT_HOST = "not_host"
    NOT_A_PLAYER = "not_a_player"
    WRONG_STATE = "wrong_state"
    NO_SUCH_PLAYER = "no_such_player"
    WRONG_DEAL = "wrong_deal"
    WRONG_MOVE_NUMBER = "wrong_move_number"  # carries ``expected``
    RATE_LIMITED = "rate_limited"
    LIMIT_REACHED = "limit_reached"
    BAD_HANDLE = "bad_handle"
    HANDLE_IN_USE = "handle_in_use"
    ALREADY_SIGNED_IN = "already_signed_in"
    NOT_SIGNED_IN = "not_signed_in"
    BAD_CODE = "bad_code"  # unknown, used or expired: one answer, so nothing is told
    BAD_PASSKEY = "bad_passkey"
    STORAGE_UNAVAILABLE = "storage_unavailable"
    STORAGE_UNCERTAIN = "storage_uncertain"
    INTERNAL_ERROR = "internal_error"
    UNKNOWN_HANDLE = "unknown_handle"
    RECORD_PRIVATE = "record_private"
    NO_SUCH_DEAL = "no_such_deal"
    NOT_FRIENDS = "not_friends"
    HANDLE_CHANGE_TOO_SOON = "handle_change_too_soon"  # carries ``retry_after``
    WRONG_HANDLE = "wrong_handle"
    NOT_RATABLE = "not_ratable"  # carries ``players``: those who are not signed in, or bots
    RATED_LOCKED = "rated_locked"  # carries ``field`` when a setting was refused
    DAILY_PLAYED = "daily_played"  # one run a daily: this one is over
    DAILY_NOT_OVER = "daily_not_over"  # daily_compare before one's run is over
    DAY_NOT_OVER = "day_not_over"  # daily_line of a day whose seed is not revealed yet
    CHALLENGE_TAKEN = "challenge_taken"  # one take a challenge a player: this one is over
    CHALLENGE_WITHDRAWN = "challenge_withdrawn"  # its challenger deleted their account
    ALREADY_QUEUED = "already_queued"  # one quick-match queue at a time
    NOT_QUEUED = "not_queued"
    BOTS_NOT_YET = "bots_not_yet"  # carries ``after``: seconds waited before bots are offered


Code = ErrorCode | Reason
"""Any error code: the protocol's own, or the engine's reason for refusing a move."""


class ClosedReason(StrEnum):
    """Why a room closed (the ``room_closed`` event's ``reason``)."""

    HOST = "host"  # the host closed it
    EMPTY = "empty"  # its last member left (that member gets the event)
    IDLE = "idle"  # nobody was connected to it for the idle limit
    EXPIRED = "expired"  # it was never started, and its time to start ran out


class DealEnd(StrEnum):
    """Why a deal ended (its history entry's ``ended_by``): the players see why."""

    ALL_ENDED = "all_ended"  # every player's deal ended (won, resigned, dead) or they left
    HOST = "host"  # the host moved on (``next_deal``)
    TIME = "time"  # the round's time limit ran out


class Role(StrEnum):
    """How a member takes part: a player is dealt in, a spectator watches
    (``join_room``'s ``role``, a snapshot's members)."""

    PLAYER = "player"
    SPECTATOR = "spectator"


class Reaction(StrEnum):
    """What a member may send the room in a tap (``react``): a fixed few, named
    rather than drawn, so every client shows them its own way and no free text
    reaches anyone."""

    CLAP = "clap"
    WOW = "wow"
    LAUGH = "laugh"
    FIRE = "fire"
    WAVE = "wave"
    GG = "gg"


MESSAGE_TYPES: set[str] = set()

_F = TypeVar("_F", bound=Callable[..., Message])


def _message(fn: _F) -> _F:
    """Register a constructor; its name is the message's ``type``."""
    MESSAGE_TYPES.add(fn.__name__)
    return fn


def _make(kind: str, fields: Mapping[str, Any]) -> Message:
    return Message({"type": kind, **fields})


def _aside(kind: str, seq: int, fields: Mapping[str, Any]) -> Message:
    """A room event that is not the room's history (a tick, a reaction, the
    server's own news): it keeps the room's last ``seq`` and says so, so a client
    tells it from an event it already holds without a list of its own
    (docs/protocol.md, "Events that keep the seq")."""
    return _make(kind, {"seq": seq, "aside": True, **fields})


# ---------------------------------------------------------------------- replies


@_message
def welcome(
    rid: RequestId,
    *,
    version: int,
    token: str,
    player: str,
    name: str,
    room: Any,
    account: Mapping[str, Any] | None = None,
    device_token: str | None = None,
) -> Message:
    """``account``: the own-account view of a signed-in session (null for a
    guest); ``device_token`` only when this hello made a new device."""
    fields = {"id": rid, "version": version, "token": token, "player": player, "name": name}
    new_device = {} if device_token is None else {"device_token": device_token}
    return _make("welcome", {**fields, "room": room, "account": account, **new_device})


@_message
def pong(rid: RequestId, *, now: int) -> Message:
    return _make("pong", {"id": rid, "now": now})


@_message
def joined(rid: RequestId, *, room: Mapping[str, Any]) -> Message:
    return _make("joined", {"id": rid, "room": room})


@_message
def ok(rid: RequestId) -> Message:
    return _make("ok", {"id": rid})


@_message
def snapshot(rid: RequestId, *, room: Mapping[str, Any]) -> Message:
    return _make("snapshot", {"id": rid, "room": room})


@_message
def moved(
    rid: RequestId,
    *,
    deal: int,
    t: int,
    outcome: Mapping[str, Any],
    digest: str,
    score: int,
) -> Message:
    """``outcome`` is protocol.outcomes ``move_outcome``, ``digest`` the board's
    after it: the mover applies one to its view and checks it by the other."""
    return _make(
        "moved",
        {"id": rid, "deal": deal, "t": t, "outcome": outcome, "digest": digest, "score": score},
    )


@_message
def deal_log(rid: RequestId, *, deal: int, logs: Any) -> Message:
    """``logs`` maps each player to their log, or is that map already encoded
    (protocol/wire.py ``Encoded``, sent with ``encode_with``): a past deal's logs
    are encoded once for every member who asks."""
    return _make("deal_log", {"id": rid, "deal": deal, "logs": logs})


@_message
def profile(rid: RequestId, *, profile: Mapping[str, Any]) -> Message:
    return _make("profile", {"id": rid, "profile": profile})


@_message
def ladder(
    rid: RequestId,
    *,
    ladder: str,
    top: Sequence[Mapping[str, Any]],
    around: Sequence[Mapping[str, Any]],
    position: int | None,
    friends: Sequence[Mapping[str, Any]] | None,
    chart: Sequence[Mapping[str, Any]],
) -> Message:
    """A ladder's tables: rows ``{position, player, name, rating, rounds,
    provisional}``; ``position`` (from 1) is the requester's, null when unrated;
    ``chart`` their shown rating after each rated round."""
    fields = {"ladder": ladder, "top": top, "around": around, "position": position}
    return _make("ladder", {"id": rid, **fields, "friends": friends, "chart": chart})


@_message
def forecast(rid: RequestId, *, ladder: str, players: Mapping[str, Any], pending: bool) -> Message:
    """Each player's rating on the room's ladder and predicted placing;
    ``pending``: a rated round of theirs is still being applied (the ratings
    are from before it)."""
    fields = {"id": rid, "ladder": ladder, "players": players, "pending": pending}
    return _make("forecast", fields)


@_message
def history(rid: RequestId, *, deals: Sequence[Mapping[str, Any]], next: float | None) -> Message:
    """A page of deals, newest first; ``next`` is the ``before`` of the page
    after it (None: there is none)."""
    return _make("history", {"id": rid, "deals": deals, "next": next})


@_message
def past_deal(rid: RequestId, *, deal: Mapping[str, Any]) -> Message:
    return _make("past_deal", {"id": rid, "deal": deal})


@_message
def challenge(rid: RequestId, *, code: str, url: str) -> Message:
    """A challenge made: its code (the link's reference, shown to no one else)
    and the link to send."""
    return _make("challenge", {"id": rid, "code": code, "url": url})


@_message
def challenge_info(rid: RequestId, *, challenge: Mapping[str, Any]) -> Message:
    """A challenge as its link shows it (the challenger's result once one's run is over)."""
    return _make("challenge_info", {"id": rid, "challenge": challenge})


@_message
def challenges(rid: RequestId, *, challenges: Sequence[Mapping[str, Any]]) -> Message:
    """The challenges one made and took, newest first, with both results."""
    return _make("challenges", {"id": rid, "challenges": challenges})


@_message
def account_made(
    rid: RequestId,
    *,
    account: Mapping[str, Any],
    device_token: str,
    recovery_codes: Sequence[str],
) -> Message:
    """The reply to ``take_handle``: the one time the codes are shown."""
    fields = {"account": account, "device_token": device_token, "recovery_codes": recovery_codes}
    return _make("account_made", {"id": rid, **fields})


@_message
def daily(rid: RequestId, *, today: str, days: Sequence[Mapping[str, Any]]) -> Message:
    """The published days (server/daily/schedule.py ``public_view``): a seed and
    its proof only for a day that is over."""
    return _make("daily", {"id": rid, "today": today, "days": days})


@_message
def daily_board(
    rid: RequestId,
    *,
    date: str,
    ladder: str,
    friends: bool,
    runs: Sequence[Mapping[str, Any]],
    you: Mapping[str, Any] | None,
    count: int,
    next: int | None,
) -> Message:
    """A page of a daily's leaderboard, ranked by the one rule of runs
    (protocol/placings.py ``run_key``); ``you`` is the asker's own row (None:
    no run of theirs is over), ``next`` the ``before`` of the page after."""
    return _make(
        "daily_board",
        {
            "id": rid,
            "date": date,
            "ladder": ladder,
            "friends": friends,
            "runs": runs,
            "you": you,
            "count": count,
            "next": next,
        },
    )


@_message
def daily_compare(rid: RequestId, *, date: str, ladder: str, compare: Mapping[str, Any]) -> Message:
    """One's run over against the day's leader's: timings only (server/daily/ghosts.py)."""
    return _make("daily_compare", {"id": rid, "date": date, "ladder": ladder, **compare})


@_message
def daily_line(rid: RequestId, *, date: str, ladder: str, deal: Mapping[str, Any]) -> Message:
    """The leader's run of a day over, as ``past_deal`` gives a deal (server/daily/ghosts.py)."""
    return _make("daily_line", {"id": rid, "date": date, "ladder": ladder, "deal": deal})


@_message
def account(rid: RequestId, *, account: Mapping[str, Any]) -> Message:
    """The own-account view as it now stands (``change_handle``, ``account_settings``)."""
    return _make("account", {"id": rid, "account": account})


@_message
def account_export(rid: RequestId, *, data: Mapping[str, Any]) -> Message:
    return _make("account_export", {"id": rid, "data": data})


@_message
def account_deleted(rid: RequestId) -> Message:
    """Sent before the connection closes with 4011."""
    return _make("account_deleted", {"id": rid})


@_message
def link_code(rid: RequestId, *, code: str, expires: float, url: str, qr: str) -> Message:
    return _make("link_code", {"id": rid, "code": code, "expires": expires, "url": url, "qr": qr})


@_message
def devices(rid: RequestId, *, devices: Sequence[Mapping[str, Any]]) -> Message:
    return _make("devices", {"id": rid, "devices": devices})


@_message
def signed_out(rid: RequestId, *, count: int) -> Message:
    return _make("signed_out", {"id": rid, "count": count})


@_message
def recovery_codes(rid: RequestId, *, codes: Sequence[str]) -> Message:
    return _make("recovery_codes", {"id": rid, "codes": codes})


@_message
def passkey_options(rid: RequestId, *, options: Mapping[str, Any]) -> Message:
    """WebAuthn's options as JSON (``PublicKeyCredentialCreationOptionsJSON`` or
    ``…RequestOptionsJSON``), for ``parseCreationOptionsFromJSON`` and its kin."""
    return _make("passkey_options", {"id": rid, "options": options})


@_message
def passkey_added(rid: RequestId, *, passkey: Mapping[str, Any]) -> Message:
    return _make("passkey_added", {"id": rid, "passkey": passkey})


@_message
def passkeys(rid: RequestId, *, passkeys: Sequence[Mapping[str, Any]]) -> Message:
    return _make("passkeys", {"id": rid, "passkeys": passkeys})


@_message
def passkey_removed(rid: RequestId, *, passkey: str) -> Message:
    return _make("passkey_removed", {"id": rid, "passkey": passkey})


@_message
def error(rid: RequestId, code: Code, message: str, **extra: Any) -> Message:
    """``extra``: ``field`` for ``bad_setting``, ``supported`` for
    ``unsupported_version``, ``expected`` for ``wrong_move_number``."""
    return _make("error", {"id": rid, "code": code.value, "message": message, **extra})


@_message
def friends(rid: RequestId, *, friends: Sequence[Mapping[str, Any]]) -> Message:
    """The requester's friends and open requests, each as they may see it
    (docs/protocol.md, "Friends"); every friends request but two replies with it."""
    return _make("friends", {"id": rid, "friends": friends})


@_message
def friend_link(rid: RequestId, *, link: str, url: str, qr: str) -> Message:
    """A new friend link: the secret, the page's address with it, and that
    address as an SVG QR code."""
    return _make("friend_link", {"id": rid, "link": link, "url": url, "qr": qr})


@_message
def friend_invite(*, sender: str, player: str, room: str, role: Role) -> Message:
    """A friend (handle ``sender``, player id ``player``) asks you to their room
    ``room``, as ``role``. Not a room event: no seq, no id."""
    fields = {"from": sender, "player": player, "room": room, "role": role.value}
    return _make("friend_invite", fields)


@_message
def queued(rid: RequestId, *, ladder: str, position: int, waited: float) -> Message:
    """In ``ladder``'s quick-match queue: ``position`` from 1 (the longest waiter
    first) and the seconds waited."""
    return _make("queued", {"id": rid, "ladder": ladder, "position": position, "waited": waited})


@_message
def matched(*, ladder: str, rated: bool, room: Mapping[str, Any], starts_at: int) -> Message:
    """The queue made a room and seated you in it (``room``: its view for you);
    its first deal starts at ``starts_at``. Not a room event: no seq, no id."""
    fields = {"ladder": ladder, "rated": rated, "room": room, "starts_at": starts_at}
    return _make("matched", fields)


@_message
def bots_offered(*, ladder: str, waited: float) -> Message:
    """Alone in the queue long enough: ``accept_bots`` is open. No seq, no id."""
    return _make("bots_offered", {"ladder": ladder, "waited": waited})


# ---------------------------------------------------------------------- room events


@_message
def members(
    seq: int,
    *,
    players: Sequence[Mapping[str, Any]],
    spectators: Sequence[Mapping[str, Any]],
    host: str | None,
) -> Message:
    return _make(
        "members", {"seq": seq, "players": players, "spectators": spectators, "host": host}
    )


@_message
def settings(
    seq: int,
    *,
    settings: Mapping[str, Any],
    round_ends_at: int | None,
    next_deal_at: int | None = None,
) -> Message:
    """``next_deal_at``: when the running break ends (a change of ``break_seconds``
    moves it), else null."""
    fields = {"round_ends_at": round_ends_at, "next_deal_at": next_deal_at}
    return _make("settings", {"seq": seq, "settings": settings, **fields})


@_message
def deal_started(
    seq: int,
    *,
    deal: Mapping[str, Any],
    round: int,
    round_started_at: int | None,
    round_ends_at: int | None,
) -> Message:
    times = {"round_started_at": round_started_at, "round_ends_at": round_ends_at}
    return _make("deal_started", {"seq": seq, "deal": deal, "round": round, **times})


@_message
def events(batch: Sequence[Message]) -> Message:
    """Room events that waited to leave together (docs/protocol.md "Batched
    events"), in seq order. The server splices their frames as encoded
    (protocol/wire.py ``events_frame``), which is this map encoded."""
    return _make("events", {"events": list(batch)})


@_message
def progress(
    seq: int,
    *,
    player: str,
    deal: int,
    progress: Mapping[str, Any],
    told: tuple[Mapping[str, Any], str] | None = None,
) -> Message:
    """``told`` (the move's outcome and digest, as its ``moved`` reply has them)
    only for those who watch the boards (docs/protocol.md, Room events)."""
    fields: dict[str, Any] = {"seq": seq, "player": player, "deal": deal, "progress": progress}
    if told is not None:
        fields["outcome"], fields["digest"] = told
    return _make("progress", fields)


@_message
def countdown(seq: int, *, starts_at: int) -> Message:
    """A quick-match room starts by itself at ``starts_at`` (aside: the seq of
    the last event)."""
    return _aside("countdown", seq, {"starts_at": starts_at})


@_message
def ghosts(seq: int, *, deal: int, ghosts: Sequence[Mapping[str, Any]]) -> Message:
    """A daily run's ghosts and where each stands now. Shell state, not history:
    aside, with the seq of the last event."""
    return _aside("ghosts", seq, {"deal": deal, "ghosts": ghosts})


@_message
def ghost_progress(seq: int, *, deal: int, ghost: int, progress: Mapping[str, Any]) -> Message:
    """A ghost's move come due on the run's clock: what a rival's ``progress``
    holds. Aside, like ``ghosts``."""
    return _aside("ghost_progress", seq, {"deal": deal, "ghost": ghost, "progress": progress})


@_message
def first_finisher(seq: int, *, player: str, deal: int, bonus: int) -> Message:
    return _make("first_finisher", {"seq": seq, "player": player, "deal": deal, "bonus": bonus})


@_message
def deal_over(seq: int, *, deal: Mapping[str, Any]) -> Message:
    return _make("deal_over", {"seq": seq, "deal": deal})


@_message
def sheet(
    seq: int,
    *,
    sheet: Mapping[str, Any],
    tick: int | None = None,
    deal: int | None = None,
    progress: Mapping[str, Any] | None = None,
) -> Message:
    """A new sheet; a Timed **tick** also carries ``tick``, ``deal`` and ``progress``,
    and is aside: the seq of the last event rather than a new one."""
    if tick is not None:
        return _aside(
            "sheet", seq, {"tick": tick, "deal": deal, "sheet": sheet, "progress": progress}
        )
    return _make("sheet", {"seq": seq, "sheet": sheet})


@_message
def break_started(
    seq: int, *, deal: int, next_deal_at: int | None, ready: Sequence[str]
) -> Message:
    """Deal ``deal`` is over and the room pauses until ``next_deal_at``."""
    return _make(
        "break_started", {"seq": seq, "deal": deal, "next_deal_at": next_deal_at, "ready": ready}
    )


@_message
def ready(seq: int, *, player: str, ready: Sequence[str]) -> Message:
    """``player`` is ready for the next deal; ``ready`` is everyone ready so far."""
    return _make("ready", {"seq": seq, "player": player, "ready": ready})


@_message
def room_info(rid: RequestId, *, info: Mapping[str, Any]) -> Message:
    return _make("room_info", {"id": rid, **info})


@_message
def round_over(
    seq: int, *, sheet: Mapping[str, Any], winners: Sequence[str], series: Mapping[str, Any]
) -> Message:
    """The round's final sheet and winners, and the room's series with this round in it."""
    return _make("round_over", {"seq": seq, "sheet": sheet, "winners": winners, "series": series})


@_message
def rating_changes(seq: int, *, round: int, ladder: str, changes: Mapping[str, Any]) -> Message:
    """A rated round's rating changes, once applied (after its ``round_over``):
    per player ``{before, after, change, rounds, provisional}``. Shell state, not
    history: aside, with the seq of the last event."""
    return _aside("rating_changes", seq, {"round": round, "ladder": ladder, "changes": changes})


@_message
def removed(seq: int, *, player: str) -> Message:
    return _make("removed", {"seq": seq, "player": player})


@_message
def finding_deal(seq: int, *, deal: int, finding: bool) -> Message:
    """``deals: winnable``: deal ``deal`` waits for a proven seed (``finding``), or
    stopped waiting undealt. Shell state, not history: aside, like a Timed tick,
    with the seq of the last event rather than a new one."""
    return _aside("finding_deal", seq, {"deal": deal, "finding": finding})


@_message
def reaction(seq: int, *, player: str, reaction: Reaction) -> Message:
    """A member's reaction. The room's moment, not its history: aside, like a
    Timed tick, with the seq of the last event rather than a new one."""
    return _aside("reaction", seq, {"player": player, "reaction": reaction.value})


@_message
def room_closed(seq: int, *, reason: ClosedReason) -> Message:
    return _make("room_closed", {"seq": seq, "reason": reason.value})
