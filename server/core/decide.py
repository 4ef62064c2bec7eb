"""Deciding: what a request means for a room, as records. Pure, and read-only.

Every function here inspects a :class:`~server.core.room.Room` and returns a
:class:`~server.core.records.Decision` (records to append) or raises
:class:`~server.core.values.RoomError`; none of them changes the room. What each
room state allows is not decided here but looked up in the lifecycle table
(server/core/lifecycle.py). That is what lets
the shell append the records first and fold them in only once the store holds
them (see server/core/room.py). A move is validated by playing it on a *copy* of the
player's board, which is dropped at once: the commit plays it again on the board
itself (the engine is deterministic, so the outcome is the one decided here).

Consequences are decided together with their cause: the move that ends the last
running board of a deal comes with ``deal_ended`` and the ``break`` (or the next
``deal``, with ``break_seconds`` 0, or ``round_over``), so one append holds them
all and a crash cannot split them. A break ends by the clock (``decide_tick``),
the host (``decide_next_deal``) or the last player's ``ready``.
Time and randomness come in through :class:`Ctx`, from the shell.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from protocol.frozen import quick_init
from protocol.messages import ClosedReason, DealEnd, ErrorCode
from protocol.moves import IllegalMove, Move, Reason, Status, UnreadableMove
from protocol.names import unique_in
from protocol.settings import DealRules, Deals, Scoring, Settings, SettingsError, Spectators
from protocol.sheet import DealEntry, build_sheet
from protocol.strategy import Pace, Style

from . import lifecycle
from . import records as R
from .lifecycle import Action
from .records import Decision, Record
from .room import Room
from .values import (
    MAX_PLAYERS,
    MAX_SPECTATORS,
    Deal,
    LogEntry,
    Role,
    RoomError,
    RoomState,
    SeedWanted,
    break_deadline,
    logged_move,
    people_connected,
    round_deadline,
)

BOT_NAMES = ("Ada", "Bram", "Cleo", "Dov", "Edda", "Finn", "Greta")
"""The bots' first names, taken in turn (``Bot Ada``, …); a name in use gets the
usual suffix."""

__all__ = [
    "BOT_NAMES",
    "Ctx",
    "bot_style",
    "decide_add_bot",
    "decide_close",
    "decide_create",
    "decide_daily",
    "decide_expiry",
    "decide_idle_close",
    "decide_join",
    "decide_leave",
    "decide_move",
    "decide_next_deal",
    "decide_presence",
    "decide_ready",
    "decide_rematch",
    "decide_remove",
    "decide_rename",
    "decide_settings",
    "decide_start",
    "decide_tick",
    "validate_settings",
]


@quick_init
@dataclass(frozen=True, slots=True)
class Ctx:
    """What the shell brings to a decision: the server clock and seed source.

    ``proven`` holds the seeds proven winnable the shell has in hand, by rules,
    each with the solver's winning line (server/rooms/proofs.py); ``coming``, the
    rules whose seed was taken ahead and still waits on a dry pool. A decision
    that would deal a ``deals: winnable`` deal with no seed in hand for its rules
    decides nothing but :class:`SeedWanted` (``Decision.wanted``); one that ends
    a deal whose successor's seed is coming ends it in a break instead, which
    the clock ends by dealing once the seed is there.
    """

    now: int  # ms since the epoch
    draw_seed: Callable[[], str]
    proven: Mapping[DealRules, tuple[str, str]] = field(default_factory=dict)
    coming: AbstractSet[DealRules] = frozenset()


# ---------------------------------------------------------------------- helpers


def _check(room: Room, action: Action) -> None:
    """The lifecycle table's word on ``action`` in the room's state, and, in a
    daily run's room, the daily's (server/core/lifecycle.py)."""
    lifecycle.check(room.state, action)
    if room.daily is not None:
        lifecycle.check_daily(action)


def _member_or_fail(room: Room, actor: str) -> None:
    # A closed room takes nothing more (the lifecycle table's MEMBER row): with
    # commands pipelined, a request may reach it after its close was decided and
    # before members heard of it.
    if actor not in room.members:
        raise RoomError(ErrorCode.NOT_IN_ROOM, "you are not in this room")
    _check(room, Action.MEMBER)


def _host_only(room: Room, actor: str, action: Action) -> None:
    """Who may ask first (member, then host), then whether the state allows it."""
    _member_or_fail(room, actor)
    if room.host != actor:
        raise RoomError(ErrorCode.NOT_HOST, "only the host may do this")
    _check(room, action)


def _next_host(room: Room, leaving: str) -> str | None:
    """The host after ``leaving`` goes: unchanged unless the host leaves; then the
    longest-present connected player, else the longest-present player, else the
    longest-present spectator (so that somebody can still close the room)."""
    if room.host != leaving:
        return room.host
    # A bot never hosts: the role is a person's (a room of bots alone closes).
    rest = [m for m in room.members.values() if m.id != leaving and m.bot is None]
    for pick in (
        lambda m: m.role == Role.PLAYER and m.connected,
        lambda m: m.role == Role.PLAYER,
        lambda m: True,
    ):
        for m in rest:
            if pick(m):
                return m.id
    return None


def _deal_started(
    room: Room, settings: Settings, deal_number: int, ctx: Ctx
) -> R.DealStarted | SeedWanted:
    rules = settings.deal_rules()
    if settings.deals is Deals.WINNABLE:
        # Proven before it is dealt; the line stays in the log, shown once the
        # deal is over for everyone (views.revealed_deal).
        got = ctx.proven.get(rules)
        if got is None:
            return SeedWanted(rules, deal_number, rules in ctx.coming)
        seed, line = got
        return R.DealStarted(deal_number, seed, ctx.now, rules.to_wire(), line)
    return R.DealStarted(deal_number, ctx.draw_seed(), ctx.now, rules.to_wire())


def _close_deal(
    room: Room,
    ctx: Ctx,
    reason: DealEnd,
    *,
    settings: Settings | None = None,
    players_left: int | None = None,
) -> list[Record] | SeedWanted:
    """``deal_ended`` and what follows it: the next deal, or the round's end."""
    deal = room.running
    if deal is None:
        return []
    settings = settings or room.settings
    out: list[Record] = [R.DealEnded(deal.number, ctx.now, reason)]
    ends = round_deadline(settings, room.round_started_at)
    time_up = ends is not None and ctx.now >= ends
    remaining = len(room.round_players) if players_left is None else players_left
    if (
        reason is DealEnd.TIME
        or time_up
        or deal.number >= settings.deals_per_round
        or remaining == 0
    ):
        out.append(R.RoundOver(ctx.now))
    elif settings.break_seconds > 0:
        out.append(R.BreakStarted(ctx.now))
    else:
        dealt = _deal_started(room, settings, deal.number + 1, ctx)
        if isinstance(dealt, SeedWanted):
            if not dealt.coming:
                return dealt
            out.append(R.BreakStarted(ctx.now))  # over at once: the tick deals
        else:
            out.append(dealt)
    return out


def _end_break(
    room: Room,
    ctx: Ctx,
    *,
    settings: Settings | None = None,
    players_left: int | None = None,
) -> list[Record] | SeedWanted:
    """The break's end: the next deal, or the round's end when the settings
    changed meanwhile say so (its time ran out, fewer deals per round) or nobody
    is left to deal to."""
    deal = room.deal
    if room.state != RoomState.BREAK or deal is None:
        return []
    settings = settings or room.settings
    ends = round_deadline(settings, room.round_started_at)
    time_up = ends is not None and ctx.now >= ends
    remaining = len(room.round_players) if players_left is None else players_left
    if time_up or deal.number >= settings.deals_per_round or remaining == 0:
        return [R.RoundOver(ctx.now)]
    dealt = _deal_started(room, settings, deal.number + 1, ctx)
    return dealt if isinstance(dealt, SeedWanted) else [dealt]


def _then(out: list[Record], more: list[Record] | SeedWanted) -> list[Record] | SeedWanted:
    """``out`` and then ``more``, unless ``more`` waits for a seed: then nothing."""
    return more if isinstance(more, SeedWanted) else [*out, *more]


def _decided(out: list[Record] | SeedWanted) -> Decision:
    return Decision(wanted=out) if isinstance(out, SeedWanted) else Decision(out)


def _all_ready_with(room: Room, ready: str | None = None, leaving: str | None = None) -> bool:
    """Whether every player of the round (but ``leaving``) is ready, counting
    ``ready`` as ready: the moment a break ends early."""
    done = {*room.ready, ready}
    rest = [p for p in room.round_players if p != leaving]
    return bool(rest) and all(p in done for p in rest)


def _all_ended_without(room: Room, leaving: str) -> bool:
    """Whether every player of the running deal but ``leaving`` is done."""
    deal = room.running
    if deal is None:
        return False
    for p in room.round_players:
        if p == leaving:
            continue
        replay = deal.replays.get(p)
        if replay is not None and replay.board.status is Status.PLAYING:
            return False
    return True


def _departure(
    room: Room, actor: str, kind: type[R.Left | R.Removed], ctx: Ctx
) -> list[Record] | SeedWanted:
    out: list[Record] = [kind(actor, _next_host(room, actor))]
    if room.daily is not None:
        return _then(_run_over(room, ctx), [*out, R.Closed(ClosedReason.EMPTY)])
    if not any(m.bot is None for m in room.members.values() if m.id != actor):
        # The last person is gone: bots do not play on in a room nobody is in.
        return [*out, R.Closed(ClosedReason.EMPTY)]
    if actor not in room.round_players:
        return out
    left = len(room.round_players) - 1
    if _all_ended_without(room, actor):
        return _then(out, _close_deal(room, ctx, DealEnd.ALL_ENDED, players_left=left))
    if room.state == RoomState.BREAK and (left == 0 or _all_ready_with(room, leaving=actor)):
        return _then(out, _end_break(room, ctx, players_left=left))
    return out


# ---------------------------------------------------------------------- rated rooms

RATED_OPEN = frozenset({"spectators", "break_seconds"})
"""What a rated round lets the host change: nothing that changes the game, its
points or its length, since the placings the round ends with rate its players."""


def _ratable(room: Room, signed: AbstractSet[str]) -> None:
    """A rated room's players are all signed in (``signed``: the players the
    shell found an account for) and none is a bot: bots are never rated."""
    players = room.players()
    bots = [p for p in players if (m := room.members.get(p)) is not None and m.bot is not None]
    guests = [p for p in players if p not in bots and p not in signed]
    if bots or guests:
        why = "bots are never rated" if bots else "every player must be signed in"
        raise RoomError(
            ErrorCode.NOT_RATABLE,
            f"a rated room races signed-in players only: {why}",
            players=bots + guests,
        )


def _rated_round_running(room: Room) -> bool:
    return room.settings.rated and room.round_under_way


# ---------------------------------------------------------------------- membership


def decide_create(
    room: Room,
    actor: str,
    name: str,
    changes: Mapping[str, Any],
    ctx: Ctx,
    signed: AbstractSet[str] = frozenset(),
    starts_at: int | None = None,
) -> Decision:
    """A room, ``actor`` its host and first player. ``starts_at``: a quick
    match's room (the server's), whose first round starts by itself then
    (:func:`decide_tick`)."""
    settings = _settings(Settings(), changes)
    if settings.rated and actor not in signed:
        raise RoomError(
            ErrorCode.NOT_RATABLE,
            "a rated room races signed-in players only: take a handle first",
            players=[actor],
        )
    return Decision(
        [
            R.Created(settings.to_wire(), actor, ctx.now, starts_at=starts_at),
            R.Joined(actor, name, Role.PLAYER),
        ]
    )


def decide_join(
    room: Room,
    actor: str,
    name: str,
    role: Role,
    ctx: Ctx,
    bot: tuple[Pace, Style] | None = None,
    signed: AbstractSet[str] = frozenset(),
) -> Decision:
    """``actor`` joins as ``role``; ``bot`` (pace and style) is set for a bot player
    the host seats (:func:`decide_add_bot`): it joins the way a person does, under
    the same rules.
    A player may join at any time while a seat is free: mid-round (``playing``
    or ``break``) they are in the round from now on and dealt in from the next
    deal (server/core/room.py, ``_f_joined``)."""
    join = Action.JOIN_AS_PLAYER if role == Role.PLAYER else Action.JOIN_AS_SPECTATOR
    _check(room, join)
    if actor in room.members:
        raise RoomError(ErrorCode.ALREADY_IN_ROOM, "you are in this room already")
    roles = [m.role for m in room.members.values()]
    if role == Role.PLAYER and room.settings.rated:
        if _rated_round_running(room):
            raise RoomError(
                ErrorCode.RATED_LOCKED, "a rated round is running: join it as a spectator"
            )
        if bot is not None:
            raise RoomError(
                ErrorCode.NOT_RATABLE,
                "bots are never rated: a rated room seats none",
                players=[actor],
            )
        if actor not in signed:
            raise RoomError(
                ErrorCode.NOT_RATABLE,
                "a rated room races signed-in players only: take a handle, or watch",
                players=[actor],
            )
    if role == Role.PLAYER:
        if roles.count(Role.PLAYER) >= MAX_PLAYERS:
            raise RoomError(ErrorCode.ROOM_FULL, f"the room has {MAX_PLAYERS} players already")
    else:
        if room.settings.spectators is Spectators.NONE:
            raise RoomError(ErrorCode.NO_SPECTATORS, "this room takes no spectators")
        if roles.count(Role.SPECTATOR) >= MAX_SPECTATORS:
            raise RoomError(
                ErrorCode.ROOM_FULL, f"the room has {MAX_SPECTATORS} spectators already"
            )
    name = unique_in(name, (m.name for m in room.members.values()))
    pace, style = (None, None) if bot is None else bot
    return Decision([R.Joined(actor, name, role, ctx.now, pace, style)])


def decide_add_bot(room: Room, actor: str, bot: str, pace: Pace, ctx: Ctx) -> Decision:
    """The host seats a bot player (id ``bot``, made by the shell) of ``pace``,
    named after the first of :data:`BOT_NAMES` no bot of the room has, with a
    style drawn by :func:`bot_style`; then it is a join as a player like anyone's
    (a full room, or a state that takes no players, refuses it the same way: the
    state is the join's to check)."""
    _member_or_fail(room, actor)
    if room.host != actor:
        raise RoomError(ErrorCode.NOT_HOST, "only the host may do this")
    taken = {m.name for m in room.members.values()}
    first = next((n for n in BOT_NAMES if f"Bot {n}" not in taken), BOT_NAMES[0])
    style = bot_style(room, bot, pace)
    return decide_join(room, bot, f"Bot {first}", Role.PLAYER, ctx, (pace, style))


def bot_style(room: Room, bot: str, pace: Pace) -> Style:
    """The style of a new bot of ``pace``: one that no bot of that pace in the room
    plays yet while there is one (three fast bots are three different players),
    picked by the bot's id, which the shell draws at random (server/ids.py): so
    the draw is the server's randomness, and the decision stays a function of its
    inputs. The style is written in the bot's ``joined`` record."""
    playing = {m.style for m in room.members.values() if m.bot is pace}
    free = [s for s in Style if s not in playing] or list(Style)
    return free[zlib.crc32(bot.encode()) % len(free)]


def decide_leave(room: Room, actor: str, ctx: Ctx) -> Decision:
    _member_or_fail(room, actor)
    return _decided(_departure(room, actor, R.Left, ctx))


def decide_remove(room: Room, actor: str, target: str, ctx: Ctx) -> Decision:
    _host_only(room, actor, Action.REMOVE)
    if target not in room.members:
        raise RoomError(ErrorCode.NO_SUCH_PLAYER, f"{target!r:.40} is not in this room")
    if target == actor:
        raise RoomError(ErrorCode.BAD_REQUEST, "the host leaves with leave_room, not remove_player")
    return _decided(_departure(room, target, R.Removed, ctx))


def decide_presence(room: Room, actor: str, connected: bool) -> Decision:
    member = room.members.get(actor)
    if member is None or member.connected == connected:
        return Decision()
    if not lifecycle.takes(room.state, R.Presence):
        return Decision()
    if member.bot is not None:
        return Decision()  # the server plays for it: it has no connection to lose
    return Decision([R.Presence(actor, connected)])


def decide_rename(room: Room, player: str, name: str) -> Decision:
    """Name ``player`` anew wherever the room names them; nothing when it does
    not name them at all, or names them so already, or is closed."""
    member = room.members.get(player)
    named = member.name if member is not None else room.series.names.get(player)
    if named is None or named == name or not lifecycle.takes(room.state, R.Renamed):
        return Decision()
    return Decision([R.Renamed(player, name)])


def decide_close(room: Room, actor: str, ctx: Ctx | None = None) -> Decision:
    """The host closes the room; a daily run's (with ``ctx``, the time) ends its
    run first."""
    _host_only(room, actor, Action.CLOSE)
    over = _run_over(room, ctx) if ctx is not None else []
    return Decision([*over, R.Closed(ClosedReason.HOST)])


def decide_idle_close(room: Room, ctx: Ctx) -> Decision:
    """The shell's timer found nobody connected for the idle limit (it keeps the
    time: the room does not record when members drop). Close the room the normal
    way, unless someone came back meanwhile."""
    if not lifecycle.takes(room.state, R.Closed) or people_connected(room.members.values()):
        return Decision()
    return _decided(_then(_run_over(room, ctx), [R.Closed(ClosedReason.IDLE)]))


# ---------------------------------------------------------------------- daily runs


def decide_daily(
    room: Room,
    player: str,
    name: str,
    daily: tuple[str, str],
    settings: Settings,
    dealt: tuple[str, str | None],
    ctx: Ctx,
    challenge: str | None = None,
) -> Decision:
    """A daily run's room, made whole in one decision: created with the daily's
    settings, ``player`` seated as its one player, and its one deal dealt from
    the daily's seed (and its proof): one append, so no run is left half made.
    The run's clock starts at its first move, not here (server/daily/runs.py).
    A take of a challenge is such a run, its challenge's id kept with the daily."""
    if room.n_records:
        raise RoomError(ErrorCode.INTERNAL_ERROR, "a daily run's room is made once")
    seed, proof = dealt
    rules = settings.deal_rules().to_wire()
    return Decision(
        [
            R.Created(
                settings.to_wire(),
                player,
                ctx.now,
                [*daily, *([] if challenge is None else [challenge])],
            ),
            R.Joined(player, name, Role.PLAYER),
            R.RoundStarted(ctx.now, {}),
            R.DealStarted(1, seed, ctx.now, rules, proof),
        ]
    )


def _run_over(room: Room, ctx: Ctx) -> list[Record]:
    """In a daily run's room whose deal runs, what ends it before the room is
    left or closed (its player scored where they stand, the run over as a
    resignation would end it); elsewhere, nothing: a room closes as it is."""
    if room.daily is None or room.running is None:
        return []
    out = _close_deal(room, ctx, DealEnd.HOST)
    assert not isinstance(out, SeedWanted)  # one deal a round: its end deals nothing
    return out


def decide_expiry(room: Room, ctx: Ctx) -> Decision:
    """A room never started closes once its time to start ran out (the shell's
    timer asks at :attr:`Room.expires_at`), connected members or not."""
    expires = room.expires_at
    if expires is None or ctx.now < expires:
        return Decision()
    return Decision([R.Closed(ClosedReason.EXPIRED)])


# ---------------------------------------------------------------------- settings, rounds


def validate_settings(changes: Mapping[str, Any]) -> Settings:
    """Room settings from a partial map, or ``bad_setting`` naming the field."""
    return _settings(Settings(), changes)


def _settings(base: Settings, changes: Mapping[str, Any]) -> Settings:
    try:
        return base.updated(changes)
    except SettingsError as exc:
        raise RoomError(ErrorCode.BAD_SETTING, exc.message, field=exc.field) from None


def decide_settings(
    room: Room,
    actor: str,
    changes: Mapping[str, Any],
    ctx: Ctx,
    signed: AbstractSet[str] = frozenset(),
) -> Decision:
    """Scoring and race bonus rescore at once (the fold sends a new sheet); the
    rules of play apply from the next deal, because each deal records its own; a
    time limit counts from the round's start, so shortening it may end the round."""
    _host_only(room, actor, Action.SETTINGS)
    settings = _settings(room.settings, changes)
    if _rated_round_running(room) or ("rated" in changes and room.round_under_way):
        locked = sorted(set(changes) - RATED_OPEN) if room.settings.rated else ["rated"]
        if locked:
            raise RoomError(
                ErrorCode.RATED_LOCKED,
                f"{locked[0]} cannot change while a rated round runs"
                if room.settings.rated
                else "a round is running: rated is set before a round starts",
                field=locked[0],
            )
    if settings.rated and not room.settings.rated:
        _ratable(room, signed)
    wire = settings.to_wire()
    valid = {k: wire[k] for k in changes}
    out: list[Record] = [R.SettingsSet(valid, ctx.now)]
    if settings.spectators is Spectators.NONE and room.settings.spectators is not Spectators.NONE:
        for m in room.members.values():  # no spectators: those watching leave
            if m.role == Role.SPECTATOR and m.id != actor:
                out.append(R.Removed(m.id, room.host))
    ends = round_deadline(settings, room.round_started_at)
    if room.running is not None and ends is not None and ctx.now >= ends:
        return _decided(_then(out, _close_deal(room, ctx, DealEnd.TIME, settings=settings)))
    elif room.state == RoomState.BREAK:
        # The break's length, the round's time limit and its number of deals
        # apply at once: a break they end now ends now.
        deal = room.deal
        assert deal is not None  # a break follows a deal
        over = deal.number >= settings.deals_per_round or (ends is not None and ctx.now >= ends)
        next_at = break_deadline(settings, deal.ended_at)
        if over or (next_at is not None and ctx.now >= next_at):
            # Should its deal want a proven seed, the clock's tick deals it (the
            # shell's timer, re-armed by this change, waits for the seed): the
            # settings apply now all the same.
            more = _end_break(room, ctx, settings=settings)
            if not isinstance(more, SeedWanted):
                out += more
    return Decision(out)


def decide_start(
    room: Room, actor: str, ctx: Ctx, signed: AbstractSet[str] = frozenset()
) -> Decision:
    _host_only(room, actor, Action.START)
    if room.settings.rated:
        _ratable(room, signed)
    return _new_round(room, {}, ctx)


def decide_rematch(
    room: Room, actor: str, ctx: Ctx, signed: AbstractSet[str] = frozenset()
) -> Decision:
    """A new round; each player's cumulative Vegas bank is carried into it."""
    _host_only(room, actor, Action.REMATCH)
    if room.settings.rated:
        _ratable(room, signed)
    entries = [DealEntry(d.replays, room.end_t(d, ctx.now)) for d in room.deals]
    bank = build_sheet(
        room.round_players, entries, Scoring.CUMULATIVE_VEGAS, room.settings.race_bonus, room.carry
    ).totals
    carry = {p: bank.get(p, 0) for p in room.players()}
    return _new_round(room, carry, ctx)


def _new_round(room: Room, carry: dict[str, int], ctx: Ctx) -> Decision:
    if not room.players():
        raise lifecycle.no_players()
    dealt = _deal_started(room, room.settings, 1, ctx)
    if isinstance(dealt, SeedWanted):
        return Decision(wanted=dealt)
    return Decision([R.RoundStarted(ctx.now, carry), dealt])


def decide_next_deal(room: Room, actor: str, ctx: Ctx) -> Decision:
    """While a deal runs: end it (players still playing are scored where they
    stand), which starts the break; during the break: the next deal, at once."""
    _host_only(room, actor, Action.NEXT_DEAL)
    if room.state == RoomState.BREAK:
        return _decided(_end_break(room, ctx))
    return _decided(_close_deal(room, ctx, DealEnd.HOST))


def decide_ready(room: Room, actor: str, ctx: Ctx) -> Decision:
    """A player of the round is ready for the next deal; the last one to be
    ready starts it at once. Saying it twice changes nothing."""
    _member_or_fail(room, actor)
    _check(room, Action.READY)
    if actor not in room.round_players:
        raise lifecycle.not_in_round()
    if actor in room.ready:
        return Decision()
    out: list[Record] = [R.Ready(actor)]
    if _all_ready_with(room, ready=actor):
        return _decided(_then(out, _end_break(room, ctx)))
    return Decision(out)


def decide_tick(room: Room, ctx: Ctx) -> Decision:
    """What the clock does, checked by the shell's timer (and before requests):
    the round's time limit runs out (the deal, or the break, ends the round), or
    the break does (the next deal), or a quick match's countdown does (its first
    round, as the host's ``start`` would). Its players were ratable when seated
    (a rated room seats no bot and no guest: :func:`decide_join`), so a rated
    room starts rated with no account to look up."""
    if room.countdown_over(ctx.now):
        return _new_round(room, {}, ctx)
    if room.time_up(ctx.now):
        if room.state == RoomState.BREAK:
            return Decision([R.RoundOver(ctx.now)])
        return _decided(_close_deal(room, ctx, DealEnd.TIME))
    if room.break_over(ctx.now):
        return _decided(_end_break(room, ctx))
    return Decision()


# ---------------------------------------------------------------------- moves


def _logged(room: Room, actor: str, deal_number: int, n: int) -> tuple[Deal, LogEntry] | None:
    """The move at index ``n`` of ``actor``'s log of deal ``deal_number`` of this round,
    if that log is longer than ``n``: the move a request with that move number repeats."""
    for deal in room.deals:
        if deal.number == deal_number:
            log = deal.logs.get(actor)
            return (deal, log[n]) if log is not None and n < len(log) else None
    return None


def _wrong_number(n: int, expected: int, why: str) -> RoomError:
    return RoomError(
        ErrorCode.WRONG_MOVE_NUMBER,
        f"move number {n} {why}; your next move is number {expected}",
        expected=expected,
    )


def _readable(move: Move | UnreadableMove) -> Move:
    if isinstance(move, UnreadableMove):
        refusal = move.refusal()
        raise RoomError(refusal.reason, refusal.message)
    return move


def decide_move(
    room: Room, actor: str, deal_number: int, n: int, sent: Move | UnreadableMove, ctx: Ctx
) -> Decision:
    """A move is the ``n``-th of the player's log of deal ``deal_number`` (docs/protocol.md,
    ``move``). The next one (``n`` = the log's length) is played; one the log holds
    already, sent again with the same move, is a retry: no records, and the
    decision names the logged move so that the reply is the original one. That
    holds while the room keeps the round's deals, even once the deal or the round
    is over, because the move that ended it is as likely to be retried as any.
    Any other ``n`` is refused with the player's position, so a client that lost
    track resyncs instead of having a move applied to a board it has not seen."""
    member = room.members.get(actor)
    if member is None:
        raise RoomError(ErrorCode.NOT_IN_ROOM, "you are not in this room")
    if member.role != Role.PLAYER:
        raise RoomError(ErrorCode.NOT_A_PLAYER, "spectators watch; they do not move")
    past = _logged(room, actor, deal_number, n)
    if past is not None:
        _check(room, Action.RETRY_MOVE)
        deal, entry = past
        if _readable(sent) != logged_move(entry):
            raise _wrong_number(n, len(deal.logs[actor]), "is another move in your log")
        return Decision(deal_number=deal_number, retry=n)
    _check(room, Action.MOVE)
    running = room.running
    assert running is not None  # a playing room has a running deal (lifecycle.TABLE)
    if deal_number != running.number:
        raise RoomError(
            ErrorCode.WRONG_DEAL, f"deal {deal_number} is not running; deal {running.number} is"
        )
    replay = running.replays.get(actor)
    if replay is None:
        raise lifecycle.not_dealt_in()
    if replay.board.status is not Status.PLAYING:
        raise RoomError(Reason.DEAL_OVER, f"your deal is over ({replay.board.status.value})")
    log = running.logs[actor]
    if n != len(log):
        raise _wrong_number(n, len(log), "is ahead of your log")
    move = _readable(sent)
    board = replay.board.copy()
    try:
        outcome = board.apply(move)
    except IllegalMove as exc:
        raise RoomError(exc.reason, exc.message, reasons=[r.value for r in exc.broken]) from None
    t = max(running.t(ctx.now), log.last_t)
    out: list[Record] = [R.MovePlayed(actor, deal_number, t, room.n_records, move)]
    if outcome.status is not Status.PLAYING and _all_ended_without(room, actor):
        more = _close_deal(room, ctx, DealEnd.ALL_ENDED)
        if isinstance(more, SeedWanted):
            return Decision(wanted=more)
        out += more
    return Decision(out, deal_number=deal_number, outcome=outcome)
