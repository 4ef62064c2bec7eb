"""The maps the room sends: room views, deal views, member lists. Pure.

A view builds what it returns and changes nothing: built twice, it is the same
map, and the room is as it was. What is worth keeping between two calls (a past
deal's revealed map, a retried move's reply, a deal's encoded logs) the shell
keeps (server/rooms/memo.py).

This is the one place where room state turns into wire content, so it is the one
place to audit for hidden information (docs/rules.md §8). Boards leave only through the
engine's views: :func:`protocol.views.player_view` (face-up cards only) while a deal
runs, :func:`protocol.views.revealed_view` once it is over for everyone. A player's
own board goes to that player; every board goes to spectators; to players, rivals
are :func:`protocol.views.progress` only, until the deal is over. A player who
joined mid-round sits out the running deal (it is not theirs to play), so they
watch it as a spectator would: :func:`watches`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol, TypeAlias

from protocol import messages as M
from protocol.board import Board
from protocol.messages import Message, Reaction
from protocol.moves import Outcome, Status
from protocol.outcomes import board_digest, move_outcome
from protocol.placings import Finish, deal_places
from protocol.proof import check_proof, moves_from_solver
from protocol.scoring import TimedMove, replay_through
from protocol.settings import Settings
from protocol.sheet import Sheet
from protocol.views import RESULT_FIELDS, outcome_view, player_view, progress, revealed_view

from .series import Series
from .values import MAX_PLAYERS, Deal, Fanout, Member, Role, RoomState, logged_move

__all__ = [
    "Reveal",
    "board_view",
    "deal_logs",
    "deal_over_event",
    "deal_started_event",
    "deal_view",
    "members_event",
    "past_deal",
    "past_summary",
    "progress_of",
    "reaction_event",
    "replayed_move",
    "revealed_deal",
    "room_info",
    "room_view",
    "tick_event",
    "told_move",
    "withheld_deal",
]

SPECTATOR_VIEW = "spectator"
"""``who`` for a view of every board (a player id means that player's own)."""


class RoomLike(Protocol):
    """What the views read of a room (server/core/room.py ``Room``). A protocol
    rather than an import, so the fold and its views import in one direction."""

    code: str
    state: RoomState
    settings: Settings
    host: str | None
    members: dict[str, Member]
    round: int
    round_started_at: int | None
    round_players: list[str]
    deals: list[Deal]
    ready: list[str]
    seq: int
    series: Series
    daily: tuple[str, str] | None

    @property
    def deal(self) -> Deal | None: ...

    @property
    def round_ends_at(self) -> int | None: ...

    @property
    def next_deal_at(self) -> int | None: ...

    @property
    def starts_at(self) -> int | None: ...

    def joining(self, player: str) -> bool: ...

    def score(self, deal: Deal, player: str, now: int) -> int: ...

    def sheet(self, now: int) -> Sheet: ...


def board_view(deal: Deal, player: str) -> dict[str, Any]:
    """``player``'s board as they (and spectators) see it.

    ``logged`` is the length of the player's log of the deal: the number their
    next move carries (docs/protocol.md, ``move``). The board's own ``moves``
    will not do, since an undo takes one off it while the log grows."""
    return {**player_view(deal.replays[player].board), "logged": len(deal.logs[player])}


Told: TypeAlias = tuple[dict[str, Any], str]
"""A move as the wire tells it: its OUTCOME map and the digest of the board after
it (protocol/outcomes.py), the same for its ``moved`` reply and the watchers'
``progress`` event."""


def told_move(board: Board, outcome: Outcome) -> Told:
    """:data:`Told` of the move that left ``board`` as it is."""
    return move_outcome(outcome, board), board_digest(board)


def replayed_move(room: RoomLike, deal: Deal, player: str, n: int) -> tuple[int, Told, int]:
    """What the ``moved`` reply to ``player``'s move ``n`` of ``deal`` said: its
    ``t``, its outcome and digest, and the score after it.

    The room keeps moves, not replies, so a retried move's reply is rebuilt by the
    engine from the seed and the log up to that move. The score is the one the
    reply carried then — the score the move left, with the race bonus if it was
    the deal's first win — counted under the room's scoring now (the same unless
    the host changed scoring or bonus since).

    A replay costs up to a few ms for a long log; the shell keeps the last one
    per player (server/rooms/memo.py)."""
    settings = room.settings
    log = deal.logs[player]
    entries = [log[i] for i in range(n + 1)]
    # ``seq`` only orders wins across players for the sheet; one score ignores it.
    moves = [TimedMove(e[0], i, logged_move(e)) for i, e in enumerate(entries)]
    replay, outcome = replay_through(deal.seed, deal.rules, moves)
    t = moves[-1].t
    score = replay.score(settings.scoring, t)
    if outcome.status is Status.WON and deal.first == player:
        score += settings.race_bonus
    return t, told_move(replay.board, outcome), score


def watches(room: RoomLike, member: Member) -> bool:
    """Whether ``member`` sees the running deal as a spectator does: a spectator,
    or a late friend sitting it out. Never more than a spectator: the deal is not
    theirs to play, and they are dealt in only from the next deal, on a new seed."""
    return member.role == Role.SPECTATOR or room.joining(member.id)


def members_payload(room: RoomLike) -> dict[str, Any]:
    players: list[dict[str, Any]] = []
    spectators: list[dict[str, Any]] = []
    for m in room.members.values():
        entry: dict[str, Any] = {"id": m.id, "name": m.name, "connected": m.connected}
        if m.bot is not None:
            entry["bot"] = m.bot.value
            entry["style"] = m.style.value
        if m.role == Role.SPECTATOR:
            spectators.append(entry)
        else:
            if room.joining(m.id):  # only then: the usual entry stays as it was
                entry["joining"] = True
            players.append(entry)
    return {"players": players, "spectators": spectators, "host": room.host}


def members_event(room: RoomLike, seq: int) -> Message:
    payload = members_payload(room)
    return M.members(
        seq, players=payload["players"], spectators=payload["spectators"], host=room.host
    )


def progress_of(room: RoomLike, deal: Deal, player: str, now: int) -> dict[str, Any]:
    return progress(deal.replays[player].board, room.score(deal, player, now))


def deal_view(room: RoomLike, deal: Deal, who: str | None, now: int) -> dict[str, Any]:
    """A deal as ``who`` may see it: a player id (their own board), ``"spectator"``
    (every board), or None (no board). Once the deal is over for everyone every
    board is on show to all: the revealed boards are in ``history`` anyway."""
    own = who if who is not None and who in deal.replays else None
    every = (who == SPECTATOR_VIEW and room.settings.spectators.see_boards) or deal.over
    boards = {p: board_view(deal, p) for p in deal.replays} if every else {}
    return {
        "number": deal.number,
        "deals": room.settings.deals_per_round,
        "commitment": deal.commitment,
        "started_at": deal.started_at,
        "rules": deal.rules.to_wire(),
        # Whether it was dealt under ``deals: winnable`` (the proof itself stays
        # secret till the deal is over): a change of that setting is pending too.
        "winnable": deal.proof is not None,
        "progress": {p: progress_of(room, deal, p, now) for p in deal.replays},
        "board": board_view(deal, own) if own is not None else None,
        "boards": boards,
    }


def deal_started_event(room: RoomLike, deal: Deal, who: str | None, now: int, seq: int) -> Message:
    return M.deal_started(
        seq,
        deal=deal_view(room, deal, who, now),
        round=room.round,
        round_started_at=room.round_started_at,
        round_ends_at=room.round_ends_at,
    )


def revealed_deal(deal: Deal) -> dict[str, Any]:
    """What is on show of a deal that is over for everyone: its seed and every
    final board (face-down cards too), but not its logs (:func:`deal_logs`).

    Work in the number of boards (and a proof's length): a snapshot shows every
    deal over of the round, so the shell keeps each one's (server/rooms/memo.py)."""
    revealed = {
        "number": deal.number,
        "seed": deal.seed,
        "commitment": deal.commitment,
        "boards": {p: revealed_view(r.board) for p, r in deal.replays.items()},
        "ended_by": deal.ended_by,
    }
    if deal.proof is not None and deal.over:
        # The winning line the deal was proven with, checked again by the engine.
        revealed["proof"] = check_proof(
            deal.seed, deal.rules, moves_from_solver(deal.proof)
        ).to_wire()
    return revealed


def withheld_deal(deal: Deal) -> dict[str, Any]:
    """What is on show of a daily run's deal once the run is over: its player's
    final board as they saw it, and nothing more. Not the seed, not the cards
    never turned, not the proof: the day's deal is everyone's to play until the
    day ends, so a run over (one resigned at once, say) must not tell its
    layout to anyone; the day's seed and proof are revealed with the day (the
    ``daily`` listing, server/daily/schedule.py)."""
    return {
        "number": deal.number,
        "commitment": deal.commitment,
        "boards": {p: board_view(deal, p) for p in deal.replays},
        "ended_by": deal.ended_by,
    }


Reveal = Callable[[Deal], dict[str, Any]]
"""How a view has a past deal's revealed map: :func:`revealed_deal`, or the
shell's kept copy of it (server/rooms/memo.py ``ViewMemo.revealed``)."""


def deal_logs(deal: Deal) -> dict[str, list[dict[str, Any]]]:
    """Every player's log of a deal over for everyone, each move with its ``result``.

    The result is the engine's account of what the move did (the map its
    ``moved`` reply carried), so that clients tell past moves without rules of
    their own. The room keeps it beside each logged move (``Deal.results``, from
    the fold), so nothing is replayed; still, the maps are work in the length of
    the logs, which is why only ``deal_over`` (once, to everyone) and the
    ``deal_log`` request (encoded once per deal and subprotocol, by
    server/rooms/memo.py) carry them, and no snapshot does.
    """
    logs: dict[str, list[dict[str, Any]]] = {}
    n = RESULT_FIELDS
    for p, log in deal.logs.items():
        flat = deal.results[p]
        assert len(flat) == n * len(log)
        results = [
            (flat[i], flat[i + 1], flat[i + 2], flat[i + 3], flat[i + 4], flat[i + 5])
            for i in range(0, len(flat), n)
        ]
        logs[p] = [
            {"t": e[0], "move": _move_map(e[1], e[2], e[3], e[4]), "result": outcome_view(r)}
            for e, r in zip(log, results, strict=True)
        ]
    return logs


@lru_cache(maxsize=4096)
def _move_map(kind: str, src: int, dst: int, count: int) -> dict[str, Any]:
    """A logged move's wire map, one per distinct move, shared by the logs that
    carry it (see protocol/views.py ``outcome_view``: the same reason)."""
    return logged_move((0, kind, src, dst, count)).to_wire()


def past_summary(room: RoomLike, deal: Deal, now: int) -> dict[str, dict[str, Any]]:
    """Each player's deal in a few numbers: the length of their log (what a
    ``deal_log`` reply lists), the move count, how it ended, when (the time of the
    move that ended it, None if it was still being played), its score under the
    room's scoring now (race bonus included, as on the sheet), when they reached
    it (the last move that changed it, 0 if none did) and the placing the engine
    gives those (protocol/placings.py), so that no client ranks anyone."""
    scoring = room.settings.scoring
    scores = {p: room.score(deal, p, now) for p in deal.replays}
    scored = {p: r.scored_at(scoring) for p, r in deal.replays.items()}
    places = deal_places(
        {
            p: Finish(scores[p], r.board.status is Status.WON, scored[p])
            for p, r in deal.replays.items()
        }
    )
    return {
        p: {
            "logged": len(deal.logs[p]),
            "moves": r.board.moves,
            "status": r.board.status.value,
            "finished_t": r.ended_at,
            "score": scores[p],
            "scored_t": scored[p],
            "place": places[p],
        }
        for p, r in deal.replays.items()
    }


def past_deal(
    room: RoomLike, deal: Deal, now: int, *, revealed: Reveal = revealed_deal
) -> dict[str, Any]:
    """A ``history`` entry: the revealed deal and its summary, no logs. Work in
    the number of players, whatever the length of their logs. A daily run's deal
    is withheld instead (:func:`withheld_deal`)."""
    shown = withheld_deal(deal) if room.daily is not None else revealed(deal)
    return {**shown, "summary": past_summary(room, deal, now)}


def deal_over_event(room: RoomLike, deal: Deal, now: int, seq: int) -> Message:
    """``deal_over``: a history entry with every log, sent once to everyone."""
    return M.deal_over(seq, deal={**past_deal(room, deal, now), "logs": deal_logs(deal)})


def _daily_view(room: RoomLike) -> dict[str, Any]:
    """A daily run's date and ladder, and when its clock started: its first
    move, on the server's clock (null before it)."""
    assert room.daily is not None
    deal = room.deal
    log = None if deal is None else next(iter(deal.logs.values()), None)
    first = None if deal is None or not log else deal.started_at + log[0][0]
    return {"date": room.daily[0], "ladder": room.daily[1], "first_move_at": first}


def room_view(
    room: RoomLike,
    member: str,
    now: int,
    finding_deal: int | None = None,
    *,
    revealed: Reveal = revealed_deal,
) -> dict[str, Any]:
    """The room as ``member`` may see it now: the ``room`` of ``joined``, of the
    ``snapshot`` reply and of a resuming ``welcome`` (docs/protocol.md "Room
    view"). ``finding_deal``: the number of the deal the shell is finding a proven
    seed for (``deals: winnable``), if any; ``revealed``: how its past deals'
    revealed maps are had.

    Bounded work per call, however long the round: its past deals come as
    summaries and boards (built once per deal), their logs only on request."""
    m = room.members.get(member)
    role = m.role if m is not None else Role.SPECTATOR
    who = member if m is not None and not watches(room, m) else SPECTATOR_VIEW
    deal = room.deal
    history = [past_deal(room, d, now, revealed=revealed) for d in room.deals if d.over]
    return {
        "code": room.code,
        "seq": room.seq,
        "state": room.state.value,
        "host": room.host,
        "me": member,
        "role": role.value,
        "settings": room.settings.to_wire(),
        **{k: v for k, v in members_payload(room).items() if k != "host"},
        "round": room.round,
        "round_started_at": room.round_started_at,
        "round_ends_at": room.round_ends_at,
        "next_deal_at": room.next_deal_at,
        "ready": list(room.ready),
        "deal": deal_view(room, deal, who, now) if deal is not None else None,
        "sheet": room.sheet(now).to_wire(),
        "history": history,
        "series": room.series.to_wire(),
        "finding_deal": finding_deal,
        "starts_at": room.starts_at,
        # A daily run's room: its daily (server/daily/runs.py); other rooms' views
        # stay as they were.
        **({} if room.daily is None else {"daily": _daily_view(room)}),
    }


def room_info(room: RoomLike) -> dict[str, Any]:
    """What anyone with a room's code may know before joining: nothing of a
    deal but its number, nothing of a member but a player's name."""
    players = [m.name for m in room.members.values() if m.role == Role.PLAYER]
    deal = room.deal
    return {
        "code": room.code,
        "state": room.state.value,
        "players": players,
        "seats": max(0, MAX_PLAYERS - len(players)),
        "spectators": room.settings.spectators.value,
        "round": room.round,
        "deal": deal.number if deal is not None and room.state != RoomState.LOBBY else None,
        "deals": room.settings.deals_per_round,
        "next_deal_at": room.next_deal_at,
        "rated": room.settings.rated,
    }


def reaction_event(
    room: RoomLike, sender: str, reaction: Reaction
) -> tuple[Fanout, dict[str, Member]]:
    """``sender``'s reaction as the room sees it now, and who sees it: every
    member, except that while a deal runs the reaction of one who watches it
    (:func:`watches`: a spectator, or a late friend sitting it out) reaches only
    those who watch. They may see boards no player may, and a reaction is a
    signal: a cheer as a rival nears the end is news of that rival's board.
    Players' reactions tell of nothing hidden. No record: it carries the seq of
    the last event, like a tick."""
    event = Fanout(room.seq, M.reaction(room.seq, player=sender, reaction=reaction))
    member = room.members.get(sender)
    if member is not None and room.state == RoomState.PLAYING and watches(room, member):
        return event, {k: m for k, m in room.members.items() if watches(room, m)}
    return event, dict(room.members)


def tick_event(room: RoomLike, deal: Deal, tick: int, now: int) -> Message:
    """Timed scoring's clock tick: the sheet and the running deal's progress, as
    they stand ``tick`` full 10 s into the deal. It comes from no record, so it
    does not take a seq of its own: it carries the room's current one, and
    ``tick`` says it is a tick (docs/protocol.md "Room events"). A rebuilt room
    therefore numbers its events exactly as the live one did."""
    return M.sheet(
        room.seq,
        sheet=room.sheet(now).to_wire(),
        tick=tick,
        deal=deal.number,
        progress={p: progress_of(room, deal, p, now) for p in deal.replays},
    )
