"""``klondike-race daily --play`` and ``--board``: today's run from the terminal. ``--play`` plays
one's one run of it with the bot (client/bot.py), as a person's browser would,
printing a line for each of its ghosts as it advances (``ghosts``,
``ghost_progress``: the runs it races, at their pace), and prints the
leaderboard at its end; ``--board`` prints a leaderboard
(everyone's or one's friends', today's or a past day's). Signed in with a
device file (see ``klondike-race account``), the run is the account's and so
are its friends; without one, a guest's."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from protocol.placings import moment_text

from .players import BotPlayer
from .room import RoomEvent
from .session import Session, connect

__all__ = ["board_lines", "daily", "ghost_line"]


def board_lines(board: dict[str, Any]) -> list[str]:
    """A leaderboard page as plain lines: the header, each run, one's own rank.
    Runs not won that the server ranked apart on the moment their last card
    went home alone (docs/rules.md §7.1) say that moment."""
    who = "friends" if board.get("friends") else "everyone"
    lines = [f"daily {board['date']} {board['ladder']} ({who}): {board['count']} runs"]
    runs = board.get("runs") or []
    for row in runs:
        timed = any(_apart_by_time(row, other) for other in runs)
        moment = moment_text(round(row["home_seconds"] * 1000))
        lines.append(_row(row) + (f" (last card home {moment})" if timed else ""))
    you = board.get("you")
    lines.append(f"you: {_row(you)}" if you else "you: no run over yet")
    return lines


def _apart_by_time(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two runs not won, as far and on the same score, ranked apart."""
    same = (a["home"], a["score"]) == (b["home"], b["score"])
    return "won" not in (a["result"], b["result"]) and same and a["rank"] != b["rank"]


def _row(row: dict[str, Any]) -> str:
    return (
        f"{row['rank']:>4}. {row['name']:<24} {row['result']:<9}"
        f" {row['seconds']:>8.1f} s {row['moves']:>4} moves {row['home']:>3} home"
        f" {row['score']:>5}"
    )


def ghost_line(number: int, kind: str, name: str, progress: dict[str, Any]) -> str:
    """A ghost where it stands: its number, whose run, its moves, cards home, score."""
    line = (
        f"ghost {number} {kind} {name}: {progress['moves']} moves,"
        f" {progress['home']} home, score {progress['score']}"
    )
    if progress.get("finished"):
        status = progress.get("status")
        line += f", {status}" if status != "playing" else ", stopped"
    return line


async def _follow_ghosts(events: AsyncIterator[RoomEvent], report: Callable[[str], None]) -> None:
    """A line for each ghost when they are listed, and one each time one moves."""
    ghosts: dict[int, tuple[str, str]] = {}
    async for event in events:
        frame = event.data
        if event.type == "ghosts":
            for g in frame.get("ghosts") or []:
                ghosts[g["ghost"]] = (g["kind"], g["name"])
                report(ghost_line(g["ghost"], g["kind"], g["name"], g["progress"]))
        elif event.type == "ghost_progress" and frame.get("ghost") in ghosts:
            kind, name = ghosts[frame["ghost"]]
            report(ghost_line(frame["ghost"], kind, name, frame["progress"]))


async def _open(url: str, name: str, device_file: str | None) -> Any:
    if device_file is not None:
        from .device_file import DeviceFile, sign_in

        return await sign_in(url, DeviceFile(device_file))
    return await connect(url, name=name)


async def daily(
    url: str,
    ladder: str,
    *,
    play: bool,
    name: str = "daily-bot",
    device_file: str | None = None,
    date: str | None = None,
    friends: bool = False,
    pace: float = 0.0,
    report: Callable[[str], None] = print,
) -> int:
    """Play today's run (``play``) and print its leaderboard, or only print one."""
    opened = await _open(url, name, device_file)
    async with opened as session:
        if play:
            await _play(session, ladder, pace, report)
        fields: dict[str, Any] = {"ladder": ladder, "friends": friends}
        if date is not None and not play:
            fields["date"] = date
        board = await session.request("daily_board", **fields)
        for line in board_lines(board):
            report(line)
    return 0


async def _play(session: Session, ladder: str, pace: float, report: Callable[[str], None]) -> None:
    events = session.events()  # subscribed before the start: its ghosts come right after
    await session.request("daily_start", ladder=ladder)
    room = session.room
    assert room is not None
    report(f"playing the {ladder} daily of {(room.daily or {}).get('date', 'today')}")
    follow = asyncio.create_task(_follow_ghosts(events, report))
    try:
        bot = BotPlayer(session, pace=pace, stop=lambda r: r.state in ("round_over", "closed"))
        await bot.play()
    finally:
        follow.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await follow
    await session.leave_room()
    report(f"run over: {bot.stats.moves} moves")
