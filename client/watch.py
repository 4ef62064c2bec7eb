"""``klondike-race watch``: a room live in the terminal, as a spectator sees it.

:func:`render_room` is a pure function of a :class:`~client.room.RoomView` (and
the clock, passed in), so tests render a room into a recording console and read
the text back; :func:`watch` only joins, and redraws on every event. Output that
is no terminal (a file, a pipe) gets plain lines instead, one for each update as it
comes (:class:`Transcript`): a live display there writes nothing until it stops.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from protocol.messages import Role
from protocol.placings import moment_text, placing_text

from .room import RoomEvent, RoomView
from .session import connect

__all__ = ["Transcript", "live_totals", "render_room", "status_line", "watch"]

_STATUS_STYLE = {"won": "bold green", "resigned": "yellow", "dead": "red", "playing": "cyan"}
# A reaction in words, as the browser says it beside its emoji (terminals may not
# draw emoji).
_REACTION_WORDS = {
    "clap": "bravo",
    "wow": "wow",
    "laugh": "ha!",
    "fire": "on fire",
    "wave": "hi",
    "gg": "good game",
}


def _header(room: RoomView, now_ms: int) -> Text:
    s = room.settings
    deal = room.deal
    text = Text()
    text.append(f"Room {room.code}", style="bold")
    text.append(f"  {room.state}")
    if room.round:
        text.append(f"  round {room.round}")
    if deal:
        text.append(f"  deal {deal.get('number')}/{deal.get('deals', s.get('deals_per_round'))}")
        clock = _deal_clock(room, now_ms)
        if clock is not None:
            text.append(f"  ·  deal clock {clock}", style="bold")
    text.append(
        f"  ·  {s.get('scoring', 'standard')}, draw {s.get('draw', 1)}, "
        f"{s.get('variant', 'classic')}, bonus {s.get('race_bonus', 100)}"
    )
    if room.round_ends_at and room.state == "playing":
        left = max(0, (int(room.round_ends_at) - now_ms) // 1000)
        text.append(f"  ·  {left // 60}:{left % 60:02d} left", style="bold magenta")
    if room.winners and room.state == "round_over":
        text.append(f"\nRound won by {_winners(room)}", style="bold green")
        text.append(f"\nPlacings: {_placings(room)}")
    if room.finding_deal is not None:
        text.append(f"\nFinding a winnable deal for deal {room.finding_deal}…", style="yellow")
    return text


def _winners(room: RoomView) -> str:
    return ", ".join(room.name_of(w) for w in room.winners)


def _placings(room: RoomView) -> str:
    """The round's placings by the sheet, as ``=1st Ann 240, =1st Bob 240``."""
    sheet = room.sheet or {}
    places: dict[str, int] = sheet.get("places") or {}
    totals: dict[str, int] = sheet.get("totals") or {}
    ranked = sorted(places, key=lambda p: places[p])
    return ", ".join(
        f"{placing_text(places, p)} {room.name_of(p)} {totals.get(p, 0)}" for p in ranked
    )


def _deal_clock(room: RoomView, now_ms: int) -> str | None:
    """The running deal's time so far (m:ss), as on the browser's HUD; None once
    it is over for everyone (the watcher did not see exactly when)."""
    deal = room.deal
    started = deal.get("started_at") if deal else None
    if not isinstance(started, int) or room.state != "playing" or room.deal_is_over():
        return None
    seconds = max(0, (now_ms - started) // 1000)
    return f"{seconds // 60}:{seconds % 60:02d}"


def live_totals(room: RoomView) -> dict[str, int]:
    """Each player's round total now: the sheet's, with the running deal's score
    added while the deal runs. The server sends a sheet only when a deal ends (or
    the scoring changes), so without this the totals would stand still all deal."""
    sheet = room.sheet or {}
    totals = {str(p): int(t) for p, t in (sheet.get("totals") or {}).items()}
    deal = room.deal
    if not deal or room.state != "playing" or room.deal_is_over():
        return totals
    rows: list[dict[str, Any]] = sheet.get("rows") or []
    i = int(deal.get("number", 0)) - 1
    if i < 0 or i > len(rows):
        return totals  # rows missing in between: the next sheet brings them
    carry: dict[str, Any] = sheet.get("carry") or {}
    for pid, prog in (deal.get("progress") or {}).items():
        before = rows[i - 1].get("cells", {}).get(pid, {}).get("total") if i > 0 else None
        base = int(before if before is not None else (0 if i > 0 else carry.get(pid, 0)))
        bonus = int(room.settings.get("race_bonus", 0)) if room.first_finisher == pid else 0
        totals[str(pid)] = base + int(prog.get("score", 0)) + bonus
    return totals


def _scoreboard(room: RoomView) -> Table:
    deal = room.deal or {}
    cards = 104 if room.settings.get("variant") == "double" else 52
    progress: dict[str, Any] = deal.get("progress", {})
    totals = live_totals(room)
    table = Table(title="Players", expand=True)
    for column in ("Player", "Deal score", "Home", "", "Moves", "Status", "Total"):
        table.add_column(column, justify="left" if column in ("Player", "") else "right")
    for member in room.players:
        pid = str(member.get("id"))
        prog = progress.get(pid, {})
        home = int(prog.get("home", 0))
        status = str(prog.get("status", "-")) if prog else "-"
        name = Text(str(member.get("name", pid)))
        if pid == room.host:
            name.append(" (host)", style="dim")
        if not member.get("connected", True):
            name.append(" (away)", style="red")
        if pid == room.first_finisher:
            name.append(" ★", style="bold yellow")
        table.add_row(
            name,
            str(prog.get("score", "-")) if prog else "-",
            f"{home}/{cards}",
            ProgressBar(total=cards, completed=home, width=20),
            str(prog.get("moves", "-")) if prog else "-",
            Text(status, style=_STATUS_STYLE.get(status, "")),
            str(totals.get(pid, 0)),
        )
    return table


def _sheet(room: RoomView) -> Table | None:
    sheet = room.sheet or {}
    rows: list[dict[str, Any]] = sheet.get("rows") or []
    ids = [str(p) for p in sheet.get("players") or [p.get("id") for p in room.players]]
    if not rows:
        return None
    table = Table(title="Score sheet (deal score / running total)", expand=True)
    table.add_column("Deal", justify="right")
    for pid in ids:
        table.add_column(room.name_of(pid), justify="right")
    for n, row in enumerate(rows, 1):
        cells: dict[str, Any] = row.get("cells") or {}
        out: list[RenderableType] = [str(n)]
        for pid in ids:
            cell = cells.get(pid)
            if not cell:
                out.append("-")
                continue
            mark = " ★" if row.get("first") == pid else ""
            out.append(f"{cell.get('score', 0)} / {cell.get('total', 0)}{mark}")
        table.add_row(*out)
    totals = sheet.get("totals") or {}
    table.add_row("Total", *(Text(str(totals.get(pid, 0)), style="bold") for pid in ids))
    places = sheet.get("places") or {}
    if places:
        table.add_row("Place", *(placing_text(places, pid) for pid in ids))
    return table


def _results(room: RoomView, past: dict[str, Any]) -> Text:
    """The last deal over, as the break shows it: everyone by the placing the
    server sent, and the seed with its whole commitment (a cut one is no use to
    ``klondike-race verify``)."""
    summary: dict[str, Any] = past.get("summary") or {}
    places = {p: int(s.get("place", 0)) for p, s in summary.items()}
    ranked = sorted(summary, key=lambda p: places[p])

    def told(p: str) -> str:
        """How the deal ended for them, and when they last scored if that alone
        placed them apart from another on the same score (docs/rules.md §7.1)."""
        s = summary[p]
        won = s.get("status") == "won"
        timed = any(
            (o.get("score"), o.get("status") == "won") == (s.get("score"), won)
            and places[q] != places[p]
            for q, o in summary.items()
        )
        when = f", last scored {moment_text(int(s.get('scored_t', 0)))}" if timed else ""
        return f"{s.get('status', 'playing')}{when}"

    text = Text(f"Deal {past.get('number')}", style="bold")
    if ranked:
        text.append(" results: ")
        text.append(
            ", ".join(
                f"{placing_text(places, p)} {room.name_of(p)} {summary[p].get('score', 0)}"
                f" ({told(p)})"
                for p in ranked
            )
        )
    # The commitment on a line of its own: 64 digits fit an 80-column terminal
    # whole, so it is copied as one piece.
    text.append(f"\nseed {past.get('seed')}, commitment\n{past.get('commitment')}", style="dim")
    return text


def render_room(room: RoomView, now_ms: int | None = None) -> RenderableType:
    """Everything a spectator wants at a glance: header, players, the sheet, seeds."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    parts: list[RenderableType] = [_header(room, now), _scoreboard(room)]
    sheet = _sheet(room)
    if sheet is not None:
        parts.append(sheet)
    if room.history:
        parts.append(_results(room, room.history[-1]))
    if room.spectators:
        names = ", ".join(str(m.get("name")) for m in room.spectators)
        parts.append(Text(f"Watching: {names}", style="dim"))
    if room.reactions:
        said = ", ".join(
            f"{room.name_of(p)}: {_REACTION_WORDS.get(r, r)}" for p, r in room.reactions
        )
        parts.append(Text(f"Reactions: {said}", style="italic"))
    return Panel(Group(*parts), title="klondike-race", border_style="blue")


def status_line(room: RoomView) -> str:
    """The room at a glance in one line: what the panel shows but the score sheet
    and the clocks (a line is written when something changed, not as time passes)."""
    cards = 104 if room.settings.get("variant") == "double" else 52
    where = f"Room {room.code} {room.state}"
    if room.round:
        where += f", round {room.round}"
    deal = room.deal
    if deal:
        deals = deal.get("deals", room.settings.get("deals_per_round"))
        where += f", deal {deal.get('number')}/{deals}"
    parts = [where]
    if room.winners and room.state == "round_over":
        parts.append(f"won by {_winners(room)}; placings: {_placings(room)}")
    progress: dict[str, Any] = (deal or {}).get("progress") or {}
    totals = live_totals(room)
    players: list[str] = []
    for member in room.players:
        pid = str(member.get("id"))
        name = str(member.get("name", pid))
        if pid == room.host:
            name += " (host)"
        if not member.get("connected", True):
            name += " (away)"
        if pid == room.first_finisher:
            name += " ★"
        line = f"{name} {totals.get(pid, 0)}"
        prog = progress.get(pid)
        if prog:
            moves = int(prog.get("moves", 0))
            line += (
                f" [{prog.get('home', 0)}/{cards} home, {moves} move{'' if moves == 1 else 's'},"
                f" {prog.get('status', 'playing')}]"
            )
        players.append(line)
    parts.append("players: " + (", ".join(players) or "none"))
    if room.spectators:
        parts.append("watching: " + ", ".join(str(m.get("name")) for m in room.spectators))
    if room.finding_deal is not None:
        parts.append(f"finding a winnable deal for deal {room.finding_deal}")
    return " · ".join(parts)


@dataclass(slots=True)
class Transcript:
    """The room in plain lines, for output that is no terminal: the status line
    whenever it changed, a reaction when one is made, and each deal's results with
    its seed and whole commitment once, the deals over before the watcher came
    included (the room view's ``history`` holds them)."""

    told: set[tuple[int, int]] = field(default_factory=set)  # (round, deal) results written
    last: str = ""  # the status line written last

    def lines(self, room: RoomView, event: RoomEvent) -> list[str]:
        """The lines for ``event``, already folded into ``room``."""
        out: list[str] = []
        status = status_line(room)
        if status != self.last:
            out.append(status)
            self.last = status
        if event.type == "reaction" and room.reactions:
            who, said = room.reactions[-1]
            out.append(f"{room.name_of(who)}: {_REACTION_WORDS.get(said, said)}")
        for past in room.history:
            deal = (room.round, int(past.get("number", 0)))
            if deal not in self.told:
                self.told.add(deal)
                out.append(_results(room, past).plain)
        return out


async def watch(
    url: str,
    code: str,
    *,
    name: str = "watcher",
    console: Console | None = None,
    device_file: str | None = None,
) -> int:
    """Join ``code`` as a spectator and redraw on every event until the room ends;
    signed in to an account with the token in ``device_file``, if given. However
    it ends (the room closed, or cancelled: a signal), it leaves the room."""
    if device_file is not None:
        from .device_file import DeviceFile, sign_in

        session = await sign_in(url, DeviceFile(device_file))
    else:
        session = await connect(url, name=name)
    console = console or Console()
    try:
        events = session.events()
        room = await session.join_room(code, Role.SPECTATOR)
        if not console.is_terminal:
            transcript = Transcript()
            async for event in events:
                if session.room is None:
                    break
                for line in transcript.lines(session.room, event):
                    console.out(line, highlight=False)  # flushed: a reader sees it now
                if session.room.state == "closed" or session.room.removed:
                    break
            return 0
        last = [room]  # the room drawn: the session's, or the last one it had

        def current() -> RenderableType:
            last[0] = session.room or last[0]
            return render_room(last[0])

        # Drawn afresh at every refresh, not only on events, so the deal clock
        # and the round's time left tick between moves.
        with Live(console=console, refresh_per_second=2, get_renderable=current) as live:
            async for _ in events:
                if session.room is None:
                    break
                live.refresh()
                if session.room.state == "closed" or session.room.removed:
                    break
    finally:
        await session.leave()
    return 0
