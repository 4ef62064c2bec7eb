"""A client's view of one room: the last room view the server sent, with every
event since folded in.

The server sends the whole room view (its ``room`` map) in ``joined``, in the
``snapshot`` reply and in a resuming ``welcome``, then numbered events. Boards
are kept by the outcomes of moves (protocol/outcomes.py): the player's own from
its ``moved`` replies, every player's (when this member watches them) from the
``progress`` events, each checked by its digest; a board that no longer matches
marks the view :attr:`RoomView.stale`, and the session takes a snapshot. Folding the
events into the view here, in one place, means the bot, the watcher and the load
tester all read the same, always-current view instead of each re-deriving it from
the event stream. The maps stay as the wire has them (docs/protocol.md "Room
view"), so nothing is lost when the server adds a field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from protocol.outcomes import OutcomeMismatch, apply_outcome, view_digest

__all__ = ["RoomEvent", "RoomView"]

KEPT_REACTIONS = 5  # the reactions a RoomView keeps: a glance, not a log


@dataclass(frozen=True, slots=True)
class RoomEvent:
    """A room event as the wire has it (``data`` is the whole frame).

    ``seq`` is None only for the synthetic ``snapshot`` event of a resume that
    found the session outside any room.
    """

    type: str
    seq: int | None
    data: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


@dataclass(slots=True)
class RoomView:
    """The room as this member sees it: named like the server's view of the room
    for a member (server/core/views.py ``room_view``), which it starts from. ``seq``
    is the last event folded in."""

    code: str
    seq: int
    state: str
    host: str | None
    me: str
    role: str
    settings: dict[str, Any]
    players: list[dict[str, Any]]
    spectators: list[dict[str, Any]]
    round: int
    round_started_at: int | None
    round_ends_at: int | None
    deal: dict[str, Any] | None
    sheet: dict[str, Any] | None
    history: list[dict[str, Any]]
    next_deal_at: int | None = None  # during a break: when the next deal starts
    ready: list[str] = field(default_factory=list)  # players ready, during a break
    first_finisher: str | None = None  # of the running deal, once someone won it
    winners: list[str] = field(default_factory=list)
    removed: bool = False  # this member was removed by the host
    # deals: winnable: the deal the server is finding a proven seed for, if any
    finding_deal: int | None = None
    # The last few reactions, (member, reaction), oldest first: the room's moment,
    # not its history (no room view holds them).
    reactions: list[tuple[str, str]] = field(default_factory=list)
    # A daily run's room: {"date", "ladder"} (docs/protocol.md, "Daily runs").
    daily: dict[str, Any] | None = None
    # A quick match's room: when its first deal starts by itself (``countdown``).
    starts_at: int | None = None
    # A board kept by outcomes no longer matches the server's digest (or an
    # outcome did not fit it): this view is not to be trusted; take a snapshot.
    stale: bool = False

    @classmethod
    def from_wire(cls, view: Mapping[str, Any]) -> RoomView:
        """The ``room`` map of ``joined``, ``snapshot`` or ``welcome``."""
        deal = view.get("deal")
        sheet = view.get("sheet")
        return cls(
            code=str(view.get("code", "")),
            seq=int(view.get("seq", 0)),
            state=str(view.get("state", "lobby")),
            host=view.get("host"),
            me=str(view.get("me", "")),
            role=str(view.get("role", "player")),
            settings=_dict(view.get("settings")),
            players=[_dict(p) for p in _list(view.get("players"))],
            spectators=[_dict(p) for p in _list(view.get("spectators"))],
            round=int(view.get("round") or 0),
            round_started_at=view.get("round_started_at"),
            round_ends_at=view.get("round_ends_at"),
            deal=_deal(deal) if isinstance(deal, Mapping) else None,
            sheet=_dict(sheet) if isinstance(sheet, Mapping) else None,
            history=[_dict(h) for h in _list(view.get("history"))],
            winners=[str(w) for w in _list(_dict(sheet).get("winners"))],
            finding_deal=view.get("finding_deal"),
            next_deal_at=view.get("next_deal_at"),
            ready=[str(p) for p in _list(view.get("ready"))],
            daily=_dict(view["daily"]) if isinstance(view.get("daily"), Mapping) else None,
            starts_at=view.get("starts_at"),
        )

    # ---------------------------------------------------------------- queries

    @property
    def deal_number(self) -> int | None:
        """The number of the running (or last) deal, None before the first."""
        return int(self.deal["number"]) if self.deal else None

    @property
    def my_board(self) -> dict[str, Any] | None:
        """This player's own board view in the current deal (None for spectators)."""
        if not self.deal:
            return None
        board = self.deal.get("board")
        return board if isinstance(board, dict) else None

    @property
    def joining(self) -> bool:
        """This player sits the current deal out: they joined the room after it
        was dealt, and are dealt in from the next one."""
        return self.role == "player" and self.deal is not None and self.my_board is None

    @property
    def is_host(self) -> bool:
        return self.host == self.me

    def deal_is_over(self, number: int | None = None) -> bool:
        """Whether deal ``number`` (default: the current one) is over for everyone."""
        n = self.deal_number if number is None else number
        return any(h.get("number") == n for h in self.history)

    def name_of(self, player: str) -> str:
        """A member's display name, or the id itself when unknown (e.g. removed)."""
        for member in (*self.players, *self.spectators):
            if member.get("id") == player:
                return str(member.get("name", player))
        return player

    # ---------------------------------------------------------------- updates

    def apply(self, event: Mapping[str, Any]) -> None:
        """Fold one room event (docs/protocol.md "Room events") into the state."""
        kind = event.get("type")
        seq = event.get("seq")
        if isinstance(seq, int):
            self.seq = seq
        if kind == "members":
            self.players = [_dict(p) for p in _list(event.get("players"))]
            self.spectators = [_dict(p) for p in _list(event.get("spectators"))]
            self.host = event.get("host", self.host)
        elif kind == "countdown":
            self.starts_at = event.get("starts_at")
        elif kind == "settings":
            self.settings = _dict(event.get("settings"))
            if "round_ends_at" in event:  # a new time limit applies to the running round
                self.round_ends_at = event["round_ends_at"]
            if "next_deal_at" in event:  # so does a new length of break
                self.next_deal_at = event["next_deal_at"]
        elif kind == "deal_started":
            new_round = event.get("round")
            if isinstance(new_round, int) and new_round != self.round:
                self.round = new_round
                self.history = []
                self.winners = []
            self.round_started_at = event.get("round_started_at", self.round_started_at)
            self.round_ends_at = event.get("round_ends_at", self.round_ends_at)
            self.deal = _deal(_dict(event.get("deal")))
            self.state = "playing"
            self.first_finisher = None
            self.finding_deal = None
        elif kind == "reaction":
            said = (str(event.get("player")), str(event.get("reaction")))
            self.reactions = [*self.reactions[-(KEPT_REACTIONS - 1) :], said]
        elif kind == "finding_deal":
            deal = event.get("deal")
            self.finding_deal = deal if event.get("finding") and isinstance(deal, int) else None
            self.next_deal_at = None
            self.ready = []
        elif kind == "progress":
            self._progress(event)
        elif kind == "first_finisher":
            if self.deal_number == event.get("deal"):
                self.first_finisher = event.get("player")
        elif kind == "deal_over":
            over = _dict(event.get("deal"))
            self.history = [h for h in self.history if h.get("number") != over.get("number")]
            self.history.append(over)
        elif kind == "sheet":
            self.sheet = _dict(event.get("sheet"))
            progress = event.get("progress")
            if "tick" in event and self.deal and self.deal_number == event.get("deal"):
                for player, p in _dict(progress).items():
                    self.deal["progress"][str(player)] = _dict(p)
        elif kind == "break_started":
            self.state = "break"
            self.next_deal_at = event.get("next_deal_at")
            self.ready = [str(p) for p in _list(event.get("ready"))]
        elif kind == "ready":
            self.ready = [str(p) for p in _list(event.get("ready"))]
        elif kind == "round_over":
            self.sheet = _dict(event.get("sheet")) or self.sheet
            self.winners = [str(w) for w in _list(event.get("winners"))]
            self.state = "round_over"
            self.next_deal_at = None
            self.ready = []
        elif kind == "removed":
            gone = event.get("player")
            self.players = [p for p in self.players if p.get("id") != gone]
            self.spectators = [p for p in self.spectators if p.get("id") != gone]
            if gone == self.me:
                self.removed = True
        elif kind == "room_closed":
            self.state = "closed"

    def _progress(self, event: Mapping[str, Any]) -> None:
        if not self.deal or self.deal_number != event.get("deal"):
            return
        player = str(event.get("player"))
        self.deal["progress"][player] = _dict(event.get("progress"))
        if "outcome" in event:
            boards = self.deal["boards"]
            board = boards.get(player)
            if isinstance(board, dict):
                boards[player] = self._follow(board, event)
            else:
                self.stale = True  # a move on a board this view does not hold

    def apply_moved(self, reply: Mapping[str, Any], n: int) -> None:
        """Apply the outcome of this player's move number ``n`` (a ``moved``
        reply) to their board. A view that shows the move already (a room view
        sent after it, as on resuming, then the original reply to the retry) is
        only checked against the digest."""
        if not self.deal or self.deal_number != reply.get("deal"):
            return
        board = self.deal.get("board")
        logged = board.get("logged") if isinstance(board, dict) else None
        if isinstance(board, dict) and logged == n:
            self.deal["board"] = self._follow(board, reply)
        elif isinstance(board, dict) and logged == n + 1:
            self.stale = self.stale or view_digest(board) != reply.get("digest")
        else:
            self.stale = True

    def _follow(self, board: dict[str, Any], told: Mapping[str, Any]) -> dict[str, Any]:
        """``board`` after the outcome ``told`` carries, checked by its digest."""
        try:
            after = apply_outcome(board, told["outcome"])
            if view_digest(after) == told.get("digest"):
                return after
        except (OutcomeMismatch, LookupError, TypeError, AttributeError):
            pass  # an outcome that does not fit the board: the view is not the server's
        self.stale = True
        return board


def _deal(deal: Mapping[str, Any]) -> dict[str, Any]:
    """A deal map with its optional parts present, so updates need no checks."""
    out = dict(deal)
    out["progress"] = _dict(deal.get("progress"))
    out["boards"] = _dict(deal.get("boards"))
    return out
