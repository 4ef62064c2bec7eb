"""The room core: a room's state as a fold of its records. Sans-I/O.

Nothing here awaits, reads a clock or draws a random number. The shell
(server/rooms/runner.py) asks server/core/decide.py to *decide* what a request means —
a list of records, computed without touching the room — then calls
:meth:`Room.commit`, which folds them in and returns the room events to send. The
shell commits ahead of the store (a room's commands are pipelined), but it holds
every reply and event back until the store holds the records, and when an append
fails it rolls the room back to its durable state (server/core/durable.py). So a move
the store could not take is never seen, and an acknowledged one is never lost.

:meth:`Room.rebuild` folds a whole log the same way (without building events):
after a restart, or on another node, the room comes back exactly, seq included.
:meth:`Room.checkpoint_record` writes the whole state down as one checkpoint record,
and folding it replaces the state, so a log may start at its last checkpoint; and
:meth:`Room.applying` folds a record in steps, so that the shell can rebuild a big
room without holding its event loop.

Events are :class:`Fanout` values: one room event with its ``seq``, and the map each
member gets, tailored to what that member may see (docs/rules.md §8): players get their
own board and their rivals' progress, spectators every board, and nobody a
face-down card, the stock order or a seed before the deal is over for everyone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from protocol import messages as M
from protocol.board import Board
from protocol.deal import commitment
from protocol.messages import ClosedReason, Message
from protocol.moves import Status
from protocol.scoring import TICK_MS, DealReplay, TimedMove
from protocol.settings import DealRules, Scoring, Settings
from protocol.sheet import DealEntry, Sheet, build_sheet
from protocol.strategy import Pace, Style
from protocol.views import logged_result

from . import lifecycle
from . import records as R
from . import views as V
from .records import CheckpointDeal, Decision, Record, encode_record
from .series import Series, round_result
from .values import (
    LOBBY_MS,
    Deal,
    Fanout,
    Member,
    MoveLog,
    Role,
    RoomState,
    break_deadline,
    logged_move,
    round_deadline,
)

__all__ = ["Room"]

_Event = Callable[[int], Fanout]
"""One room event the fold will send, given its seq: built only when the record
is applied (a rebuild numbers it and builds nothing)."""


class Room:
    """A room's whole state. Mutated only by :meth:`apply` (via commit/rebuild)."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.state = RoomState.LOBBY
        self.settings = Settings()
        self.host: str | None = None
        self.members: dict[str, Member] = {}  # insertion order: longest present first
        self.spectators = 0  # how many members watch: counted as they come and go
        self.round = 0
        self.round_started_at: int | None = None
        self.round_players: list[str] = []
        self.deals: list[Deal] = []
        self.carry: dict[str, int] = {}
        self.ready: list[str] = []  # players ready for the next deal, during a break
        self.seq = 0  # last room event's seq
        self.n_records = 0  # records folded in: the next record's index in the log
        self.closed_reason: ClosedReason | None = None
        self.created_at = 0
        self.series = Series()  # the finished rounds, kept across rematches
        # A daily run's (date, ladder): a room of one, made by the server
        # (server/daily/runs.py), that takes nobody else and no change.
        self.daily: tuple[str, str] | None = None
        # A daily-like run taking a challenge: the challenge's id (server/challenges/).
        self.challenge: str | None = None
        self._sheet: tuple[Any, Sheet] | None = None  # see sheet()
        # The move folded last, as the wire tells it, while its decision is
        # committed: commit hands it to the decision, for the move's reply.
        self._told: V.Told | None = None

    # ------------------------------------------------------------------ fold

    @classmethod
    def rebuild(cls, code: str, records: Iterable[Record]) -> Room:
        room = cls(code)
        for record in records:
            room.fold(record)
        return room

    def applying(self, record: Record) -> Iterator[None]:
        """Fold one record in (as on a rebuild: no events), yielding between steps
        of work: a checkpoint replays every board of its round through the engine,
        one board a step, which is what a caller that must not hold its event loop
        needs (server/service/adoption.py folds in slices of a few ms)."""
        if isinstance(record, R.Checkpoint):
            self._enter(record)
            yield from self._restore(record)
        else:
            self.fold(record)

    def commit(
        self, decision: Decision, on_round: Callable[[Room], None] | None = None
    ) -> list[Fanout]:
        """Fold in a decision's records; ``on_round`` sees the room right after a
        ``round`` record, the moment the shell keeps a copy of (server/core/durable.py)."""
        out: list[Fanout] = []
        for record in decision.records:
            out.extend(self.apply(record))
            if on_round is not None and isinstance(record, R.RoundStarted):
                on_round(self)
        decision.told, self._told = self._told, None
        return out

    def apply(self, record: Record) -> list[Fanout]:
        """Fold one record in and build its events."""
        return [make(seq) for seq, make in self._fold(record)]

    def fold(self, record: Record) -> None:
        """Fold one record in without building its events (a rebuild): seq
        advances the same, so a rebuilt room numbers on where it stopped."""
        self._fold(record)

    def _fold(self, record: Record) -> list[tuple[int, _Event]]:
        """The one fold: the record's state change, then its handler's, then its
        events numbered (built or not, by the caller)."""
        handler = _FOLD.get(type(record))
        if handler is None:
            raise ValueError(f"not a room record: {record!r}")
        self._enter(record)
        out = []
        for make in handler(self, record):
            self.seq += 1
            out.append((self.seq, make))
        return out

    def _enter(self, record: Record) -> None:
        """Count the record, and enter the state the lifecycle table gives it:
        the only place the room's state is set."""
        self.state = lifecycle.next_state(self.state, record)
        self.n_records += 1

    def _members(self, seq: int) -> Fanout:
        return Fanout(seq, V.members_event(self, seq))

    def _sheet_at(self, at: int) -> _Event:
        # ``at`` is in every record that changes the sheet (a ``joined`` of
        # before late joins had none; it changed no sheet then).
        return lambda seq: Fanout(seq, M.sheet(seq, sheet=self.sheet(at).to_wire()))

    def _f_created(self, rec: R.Created) -> list[_Event]:
        self.settings = Settings.from_wire(rec.settings)
        self.host = rec.host
        self.created_at = rec.at
        self.daily = None if rec.daily is None else (rec.daily[0], rec.daily[1])
        self.challenge = rec.daily[2] if rec.daily is not None and len(rec.daily) > 2 else None
        return []

    def _f_joined(self, rec: R.Joined) -> list[_Event]:
        player = rec.player
        style = _style(rec.style)
        self._set_member(Member(player, rec.name, rec.role, bot=rec.bot, style=style))
        late = rec.role is Role.PLAYER
        late = late and self.state in (RoomState.PLAYING, RoomState.BREAK)
        if not late:
            return [self._members]
        # A late friend: in the round from now on (a column of the sheet, absent
        # from the deals before), dealt in from the next deal; the members list
        # shows them "joining" until then.
        self.round_players.append(player)
        return [self._members, self._sheet_at(rec.at or 0)]

    def _f_presence(self, rec: R.Presence) -> list[_Event]:
        member = self.members.get(rec.player)
        if member is not None:
            member.connected = bool(rec.on)
        return [self._members]

    def _set_member(self, member: Member) -> None:
        self.members[member.id] = member
        self._count_spectators()

    def _count_spectators(self) -> None:
        self.spectators = sum(m.role == Role.SPECTATOR for m in self.members.values())

    def _drop(self, player: str, host: str | None) -> None:
        self.members.pop(player, None)
        self._count_spectators()
        self.host = host
        self.carry.pop(player, None)
        if player in self.round_players:
            self.round_players.remove(player)
        if player in self.ready:
            self.ready.remove(player)

    def _f_left(self, rec: R.Left) -> list[_Event]:
        self._drop(rec.player, rec.host)
        return [self._members]

    def _f_removed(self, rec: R.Removed) -> list[_Event]:
        self._drop(rec.player, rec.host)
        return [lambda seq: Fanout(seq, M.removed(seq, player=rec.player)), self._members]

    def _f_renamed(self, rec: R.Renamed) -> list[_Event]:
        member = self.members.get(rec.player)
        if member is not None:
            member.name = rec.name
        if rec.player in self.series.names:
            self.series.names[rec.player] = rec.name
        return [self._members]

    def _f_settings(self, rec: R.SettingsSet) -> list[_Event]:
        before = self.settings
        self.settings = now = before.updated(rec.changes)
        round_ends_at, next_deal_at = self.round_ends_at, self.next_deal_at
        out: list[_Event] = [
            lambda seq: Fanout(
                seq,
                M.settings(
                    seq,
                    settings=now.to_wire(),
                    round_ends_at=round_ends_at,
                    next_deal_at=next_deal_at,
                ),
            )
        ]
        rescored = (before.scoring, before.race_bonus) != (now.scoring, now.race_bonus)
        if rescored and self.deals:
            out.append(self._sheet_at(rec.at))
        return out

    def _f_round(self, rec: R.RoundStarted) -> list[_Event]:
        self.round += 1
        self.round_started_at = rec.at
        self.round_players = self.players()
        self.deals = []
        self.carry = dict(rec.carry)
        self.ready = []
        # The new round's empty sheet (its players, banks carried), so that no
        # client keeps showing the last round's.
        return [self._sheet_at(rec.at)]

    def _f_deal(self, rec: R.DealStarted) -> list[_Event]:
        rules = DealRules.from_wire(rec.rules)
        seed = rec.seed
        last = self.deal
        joined = last is not None and any(p not in last.replays for p in self.round_players)
        replays = {p: DealReplay(Board.deal(seed, rules)) for p in self.round_players}
        deal = Deal(
            number=rec.number,
            seed=seed,
            commitment=commitment(seed),
            started_at=rec.at,
            rules=rules,
            replays=replays,
            logs={p: MoveLog() for p in self.round_players},
            results={p: [] for p in self.round_players},
            proof=rec.proof,
        )
        self.deals.append(deal)
        self.ready = []

        def started(seq: int) -> Fanout:
            def view(who: str | None) -> Message:
                return V.deal_started_event(self, deal, who, deal.started_at, seq)

            # Each player gets their own board, spectators every board.
            fan = Fanout(seq, view(None))
            if self.has_spectators():
                fan.spectators = view(V.SPECTATOR_VIEW)
            for p in deal.replays:
                fan.personal[p] = view(p)
            return fan

        # The late friends are dealt in: nobody is "joining" any more.
        return [started, self._members] if joined else [started]

    def _f_move(self, rec: R.MovePlayed) -> list[_Event]:
        deal = self.deals[rec.deal - 1]
        player = rec.player
        replay = deal.replays[player]
        # Played on the board itself, which lives as long as the deal: decide_move
        # tried it on a copy that died at once. Adopting that copy instead would
        # save one apply but leave a dozen new lists a move alive for seconds,
        # which the collector's young passes scan over and over.
        timed = TimedMove(rec.t, rec.index, rec.move)
        outcome = replay.board.apply(timed.move)
        replay.record(timed, outcome)
        deal.logs[player].append(timed.t, timed.move)
        deal.results[player].extend(logged_result(outcome))
        first = outcome.status is Status.WON and deal.first is None
        if first:
            deal.first = player

        def progress(seq: int) -> Fanout:
            now = deal.started_at + timed.t
            seen = V.progress_of(self, deal, player, now)
            # Built with the events, not in a rebuild's fold: for the mover's
            # reply (commit) and the watchers' event, once.
            told = self._told = V.told_move(replay.board, outcome)
            # Rivals see progress only; spectators see the move too, and so do
            # late friends sitting the deal out (server/core/views.py ``watches``).
            fan = Fanout(seq, M.progress(seq, player=player, deal=deal.number, progress=seen))
            sitting_out = [p for p in self.round_players if p not in deal.replays]
            if self.settings.spectators.see_boards and (self.has_spectators() or sitting_out):
                fan.spectators = M.progress(
                    seq,
                    player=player,
                    deal=deal.number,
                    progress=seen,
                    told=told,
                )
                fan.personal.update(dict.fromkeys(sitting_out, fan.spectators))
            return fan

        if not first:
            return [progress]
        bonus = self.settings.race_bonus
        return [
            progress,
            lambda seq: Fanout(
                seq, M.first_finisher(seq, player=player, deal=deal.number, bonus=bonus)
            ),
        ]

    def _f_deal_ended(self, rec: R.DealEnded) -> list[_Event]:
        deal = self.deals[rec.number - 1]
        deal.ended_at = rec.at
        deal.ended_by = rec.reason.value
        for p, replay in deal.replays.items():
            if replay.board.status is Status.PLAYING:
                deal.end_t[p] = deal.t(rec.at)  # scored where they stand
        return [
            lambda seq: Fanout(seq, V.deal_over_event(self, deal, rec.at, seq)),
            self._sheet_at(rec.at),
        ]

    def _f_break(self, rec: R.BreakStarted) -> list[_Event]:
        self.ready = []
        deal = self.deals[-1]
        next_deal_at = self.next_deal_at
        return [
            lambda seq: Fanout(
                seq, M.break_started(seq, deal=deal.number, next_deal_at=next_deal_at, ready=[])
            )
        ]

    def _f_ready(self, rec: R.Ready) -> list[_Event]:
        if rec.player not in self.ready:
            self.ready.append(rec.player)
        ready = list(self.ready)
        return [lambda seq: Fanout(seq, M.ready(seq, player=rec.player, ready=ready))]

    def _f_round_over(self, rec: R.RoundOver) -> list[_Event]:
        sheet = self.sheet(rec.at)
        settings = self.settings
        # A daily run's seed is the day's, kept until the day is over (views.withheld_deal).
        seeds = [] if self.daily is not None else [d.seed for d in self.deals]
        dealt = {p for d in self.deals for p in d.replays}
        rated = settings.rated
        result = round_result(
            self.round,
            rec.at,
            sheet,
            settings.scoring,
            settings.race_bonus,
            seeds,
            settings.deal_rules().ladder if rated else None,
            sorted(dealt - set(sheet.players)) if rated else (),
        )
        self.series.add(result, {m.id: m.name for m in self.members.values()})
        self.ready = []
        series = self.series.to_wire()

        def over(seq: int) -> Fanout:
            return Fanout(
                seq,
                M.round_over(seq, sheet=sheet.to_wire(), winners=sheet.winners, series=series),
            )

        return [over]

    def _f_closed(self, rec: R.Closed) -> list[_Event]:
        reason = self.closed_reason = rec.reason
        return [lambda seq: Fanout(seq, M.room_closed(seq, reason=reason))]

    def _f_checkpoint(self, rec: R.Checkpoint) -> list[_Event]:
        for _ in self._restore(rec):
            pass
        return []

    # ------------------------------------------------------------------ checkpoints

    def checkpoint_record(self) -> R.Checkpoint:
        """The whole state, as the record that would come next in the log (its
        ``index`` is its index there). Everything a fold derives (replays, scores,
        views) is left out: the moves' logs rebuild it."""
        return self._checkpoint([_checkpoint_deal(d) for d in self.deals])

    def _checkpoint(self, deals: list[CheckpointDeal | bytes]) -> R.Checkpoint:
        return R.Checkpoint(
            index=self.n_records,
            seq=self.seq,
            state=self.state,
            settings=self.settings.to_wire(),
            host=self.host,
            members=[_checkpoint_member(m) for m in self.members.values()],
            round=self.round,
            round_at=self.round_started_at,
            round_players=list(self.round_players),
            carry=dict(self.carry),
            closed=self.closed_reason,
            created_at=self.created_at,
            ready=list(self.ready),
            series=self.series.to_wire(),
            daily=None if self.daily is None else [*self.daily, *_some(self.challenge)],
            deals=deals,
        )

    def take_checkpoint(self) -> bytes:
        """:meth:`checkpoint_record` encoded, and folded in: on the room it was taken
        from, a checkpoint changes nothing but the record count, so that is all it
        does here (no board is replayed).

        The bytes decode to :meth:`checkpoint_record` exactly, but a deal that is
        over is encoded once (``Deal.packed``) and handed to the encoder as its
        stored form: a checkpoint at the end of a round's 20th deal encodes one
        deal's logs, not twenty."""
        deals: list[CheckpointDeal | bytes] = []
        for deal in self.deals:
            packed = deal.packed
            if packed is None:
                packed = _checkpoint_deal(deal).packed()
                if deal.over:
                    deal.packed = packed
            deals.append(packed)
        data = encode_record(self._checkpoint(deals))
        self.n_records += 1
        return data

    def _restore(self, rec: R.Checkpoint) -> Iterator[None]:
        """Replace the rest of the state with a checkpoint's (the lifecycle state is
        set by :meth:`_enter`; ``n_records`` is the checkpoint's own index + 1
        whatever it was: the log may start with it). Yields after each board
        replayed."""
        self.settings = Settings.from_wire(rec.settings)
        self.host = rec.host
        self.members = {}
        # A bot's pace came later, its style later still.
        for pid, name, role, on, *bot in rec.members:
            pace = Pace(bot[0]) if bot and bot[0] is not None else None
            style = _style(Style(bot[1]) if len(bot) > 1 else None)
            self._set_member(Member(pid, name, Role(role), bool(on), pace, style))
        self.round = rec.round
        self.round_started_at = rec.round_at
        self.round_players = list(rec.round_players)
        self.carry = dict(rec.carry)
        self.seq = rec.seq
        self.n_records = rec.index + 1
        self.closed_reason = rec.closed
        self.created_at = rec.created_at
        self.series = Series.from_wire(rec.series)
        self.daily = None if rec.daily is None else (rec.daily[0], rec.daily[1])
        self.challenge = rec.daily[2] if rec.daily is not None and len(rec.daily) > 2 else None
        self.ready = list(rec.ready)
        self._sheet = None
        self.deals = []
        for d in rec.deals:
            assert isinstance(d, CheckpointDeal)  # as decoded
            deal = Deal(
                number=d.number,
                seed=d.seed,
                commitment=commitment(d.seed),
                started_at=d.at,
                rules=DealRules.from_wire(d.rules),
                replays={},
                logs={},
                end_t=dict(d.end_t),
                ended_at=d.ended,
                ended_by=d.ended_by,
                first=d.first,
                proof=d.proof,
            )
            self.deals.append(deal)
            for player, entries in d.logs.items():
                replay = DealReplay(Board.deal(deal.seed, deal.rules))
                log = MoveLog(entries)
                results: list[Any] = []
                for entry in log:
                    move = logged_move(entry)
                    outcome = replay.board.apply(move)
                    replay.record(TimedMove(entry[0], 0, move), outcome)
                    results.extend(logged_result(outcome))
                replay.won_seq = d.won.get(player)
                deal.replays[player] = replay
                deal.logs[player] = log
                deal.results[player] = results
                yield

    # ------------------------------------------------------------------ queries

    @property
    def deal(self) -> Deal | None:
        """The running deal, or the last one of the round."""
        return self.deals[-1] if self.deals else None

    @property
    def running(self) -> Deal | None:
        deal = self.deal
        playing = self.state == RoomState.PLAYING
        return deal if deal is not None and not deal.over and playing else None

    @property
    def round_ends_at(self) -> int | None:
        if self.state == RoomState.LOBBY:
            return None
        return round_deadline(self.settings, self.round_started_at)

    @property
    def next_deal_at(self) -> int | None:
        """When the break running ends and the next deal starts (None: no break)."""
        deal = self.deal
        if self.state != RoomState.BREAK or deal is None:
            return None
        return break_deadline(self.settings, deal.ended_at)

    def break_over(self, now: int) -> bool:
        ends = self.next_deal_at
        return ends is not None and now >= ends

    def due(self, now: int) -> bool:
        """Whether the clock has something to do to the room now (its round's time
        ran out, or its break did): what the shell's timer, late or not, asks."""
        return self.time_up(now) or self.break_over(now)

    def joining(self, player: str) -> bool:
        """A player of the round the current deal has no board for: they joined
        after it was dealt, and are dealt in from the next one."""
        deal = self.deal
        return (
            self.state in (RoomState.PLAYING, RoomState.BREAK)
            and player in self.round_players
            and deal is not None
            and player not in deal.replays
        )

    @property
    def expires_at(self) -> int | None:
        """When a room never started closes (None once it has started): so a room
        made and left waiting costs memory for a bounded time, whoever sits in it."""
        return self.created_at + LOBBY_MS if self.state == RoomState.LOBBY else None

    def time_up(self, now: int) -> bool:
        ends = self.round_ends_at
        in_round = self.state in (RoomState.PLAYING, RoomState.BREAK)
        return in_round and ends is not None and now >= ends

    def has_spectators(self) -> bool:
        """Asked on every move (whether a board goes to spectators): counted once
        per join and leave rather than per move."""
        return self.spectators > 0

    def bots(self) -> dict[str, tuple[Pace, Style]]:
        """The bot players, with their paces and styles: the shell plays for them."""
        return {m.id: (m.bot, m.style) for m in self.members.values() if m.bot is not None}

    def players(self) -> list[str]:
        return [m.id for m in self.members.values() if m.role == Role.PLAYER]

    def end_t(self, deal: Deal, now: int) -> dict[str, int]:
        """When each player's deal stops counting, for Timed: as recorded for a
        deal that ended, else now."""
        if deal.over:
            return deal.end_t
        t = deal.t(now)
        return {p: deal.end_t.get(p, t) for p in deal.replays}

    def score(self, deal: Deal, player: str, now: int) -> int:
        """A player's score on a deal so far, race bonus included: read off the
        replay's running totals (protocol/scoring.py), the same work at any
        length of log."""
        t = deal.end_t.get(player, deal.t(now))
        score = deal.replays[player].score(self.settings.scoring, t)
        if deal.first == player:
            score += self.settings.race_bonus
        return score

    def sheet(self, now: int) -> Sheet:
        """The round's sheet at ``now``, rebuilt from the replays by the engine:
        that is what makes a change of scoring rescore everything at once.

        A rebuild reads every deal's running totals (work in the number of deals
        and players, not of moves), and the last sheet is kept until something it
        depends on changes: a record, the scoring, or — under Timed, while a deal
        runs — the number of 10-second ticks."""
        scoring = self.settings.scoring
        running = self.running
        ticks = -1
        if scoring is Scoring.TIMED and running is not None:
            ticks = running.t(now) // TICK_MS
        key = (self.n_records, scoring, self.settings.race_bonus, ticks)
        if self._sheet is not None and self._sheet[0] == key:
            return self._sheet[1]
        entries = [DealEntry(d.replays, self.end_t(d, now)) for d in self.deals]
        sheet = build_sheet(
            self.round_players, entries, scoring, self.settings.race_bonus, self.carry
        )
        self._sheet = (key, sheet)
        return sheet


_FOLD: dict[type, Any] = {
    R.Created: Room._f_created,
    R.Joined: Room._f_joined,
    R.Presence: Room._f_presence,
    R.Left: Room._f_left,
    R.Removed: Room._f_removed,
    R.Renamed: Room._f_renamed,
    R.SettingsSet: Room._f_settings,
    R.RoundStarted: Room._f_round,
    R.DealStarted: Room._f_deal,
    R.MovePlayed: Room._f_move,
    R.DealEnded: Room._f_deal_ended,
    R.BreakStarted: Room._f_break,
    R.Ready: Room._f_ready,
    R.RoundOver: Room._f_round_over,
    R.Closed: Room._f_closed,
    R.Checkpoint: Room._f_checkpoint,
}


def _style(style: Style | None) -> Style:
    """A member's style as recorded: a bot seated before bots had styles (no
    ``style`` in its record) plays the one every bot played then."""
    return Style.METHODICAL if style is None else style


def _checkpoint_member(m: Member) -> list[Any]:
    """A member as a checkpoint lists it: a person as before bots, a bot with its
    pace and then its style."""
    if m.bot is None:
        return [m.id, m.name, m.role.value, m.connected, None]
    return [m.id, m.name, m.role.value, m.connected, m.bot.value, m.style.value]


def _checkpoint_deal(deal: Deal) -> CheckpointDeal:
    """One deal of a checkpoint: what it was dealt from and its moves' logs."""
    return CheckpointDeal(
        number=deal.number,
        seed=deal.seed,
        at=deal.started_at,
        rules=deal.rules.to_wire(),
        ended=deal.ended_at,
        ended_by=deal.ended_by,
        end_t=dict(deal.end_t),
        first=deal.first,
        logs={p: [list(e) for e in log] for p, log in deal.logs.items()},
        won={p: r.won_seq for p, r in deal.replays.items() if r.won_seq is not None},
        proof=deal.proof,  # deals: winnable: the line it was proven with
    )


def _some(value: str | None) -> list[str]:
    return [] if value is None else [value]
