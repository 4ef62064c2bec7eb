"""``klondike-race daily --play`` and ``--board``: today's run from the terminal. ``--play`` plays
one's one run of it with the bot (client/bot.py), as a person's browser would,
and prints the leaderboard at its end; ``--board`` prints a leaderboard
(everyone's or one's friends', today's or a past day's). Signed in with a
device file (see ``klondike-race account``), the run is the account's and so
are its friends; without one, a guest's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .players import BotPlayer
from .session import Session, connect

__all__ = ["board_lines", "daily"]


def board_lines(board: dict[str, Any]) -> list[str]:
    """A leaderboard page as plain lines: the header, each run, one's own rank."""
    who = "friends" if board.get("friends") else "everyone"
    lines = [f"daily {board['date']} {board['ladder']} ({who}): {board['count']} runs"]
    for row in board.get("runs") or []:
        lines.append(_row(row))
    you = board.get("you")
    lines.append(f"you: {_row(you)}" if you else "you: no run over yet")
    return lines


def _row(row: dict[str, Any]) -> str:
    return (
        f"{row['rank']:>4}. {row['name']:<24} {row['result']:<9}"
        f" {row['seconds']:>8.1f} s {row['moves']:>4} moves {row['score']:>5}"
    )


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
    await session.request("daily_start", ladder=ladder)
    room = session.room
    assert room is not None
    report(f"playing the {ladder} daily of {(room.daily or {}).get('date', 'today')}")
    bot = BotPlayer(session, pace=pace, stop=lambda r: r.state in ("round_over", "closed"))
    await bot.play()
    await session.leave_room()
    report(f"run over: {bot.stats.moves} moves")
