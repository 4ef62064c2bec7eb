"""The client's subcommands of ``klondike-race``: bot, watch, loadtest, verify,
account, daily.

Each command is a thin shell over an importable coroutine (client.players,
client.watch, client.load, client.verify, client.daily), so tests and benches call the same
code without a subprocess.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Awaitable, Coroutine
from typing import Any

from protocol.settings import Variant

from .errors import ClientError, NotRated, ServerError

__all__ = ["add_commands"]


def add_commands(sub: Any) -> None:
    """Add ``bot``, ``watch``, ``loadtest``, ``verify``, ``account`` and ``daily``
    to the CLI's subparsers."""
    p = sub.add_parser("bot", help="seat bot players in a room")
    p.add_argument("--url", required=True, help="server, e.g. ws://127.0.0.1:8765/ws")
    p.add_argument("--room", required=True, help="the room's join code")
    p.add_argument("--count", type=int, default=1, help="how many bots (default 1)")
    p.add_argument(
        "--pace",
        type=float,
        default=0.6,
        help="mean seconds between moves (default 0.6, human-like); 0 = flat out",
    )
    p.add_argument("--name", default="bot", help="name prefix (bot-1, bot-2, …)")
    p.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="leave after this many rounds (default 0: until the room closes)",
    )
    p.set_defaults(func=_bot)

    p = sub.add_parser("watch", help="watch a room live as a spectator")
    p.add_argument("--url", required=True, help="server, e.g. ws://127.0.0.1:8765/ws")
    p.add_argument("--room", required=True, help="the room's join code")
    p.add_argument(
        "--name", default="watcher", help="your name among the spectators (default watcher)"
    )
    p.add_argument(
        "--device-file",
        metavar="PATH",
        help="watch signed in to your account, with the device token kept in PATH"
        " (see the account command); --name is then not used",
    )
    p.set_defaults(func=_watch)

    p = sub.add_parser(
        "account",
        help="sign this device in to your account (a link code the first time) and show it",
    )
    p.add_argument("--url", required=True, help="server, e.g. ws://127.0.0.1:8765/ws")
    p.add_argument(
        "--device-file",
        required=True,
        metavar="PATH",
        help="where this device's token is kept (written 0600 on the first sign-in)",
    )
    codes = p.add_mutually_exclusive_group()
    codes.add_argument(
        "--link",
        metavar="CODE",
        help="a link code from a signed-in device (its account page): signs this device in",
    )
    codes.add_argument(
        "--recovery", metavar="CODE", help="one of your recovery codes (used up): signs in"
    )
    p.add_argument(
        "--label", default="cli", help="this device's name in your list of devices (default cli)"
    )
    p.add_argument(
        "--sign-out",
        action="store_true",
        help="sign this device out (its token, and so the file, works no more)",
    )
    p.set_defaults(func=_account)

    p = sub.add_parser("loadtest", help="drive rooms with flat-out bots and measure")
    p.add_argument("--url", required=True, help="server, e.g. ws://127.0.0.1:8765/ws")
    p.add_argument("--rooms", type=int, default=10, help="rooms to create (default 10)")
    p.add_argument("--players", type=int, default=4, help="players per room (1 … 8)")
    p.add_argument("--spectators", type=int, default=0, help="spectators per room")
    p.add_argument("--duration", type=float, default=30.0, help="seconds of play")
    p.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="moves a second from all bots together (default 0: as fast as answered)",
    )
    p.add_argument(
        "--rate-limit",
        type=float,
        default=50.0,
        metavar="N",
        help="the server's frames/s per connection (its --rate-limit, default 50): "
        "each bot stays under it; 0 = none",
    )
    p.add_argument(
        "--draw", type=int, choices=(1, 3), default=1, help="the rooms' draw (default 1)"
    )
    p.add_argument(
        "--variant",
        choices=[v.value for v in Variant],
        default="classic",
        help="the rooms' variant (default classic)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON only")
    p.set_defaults(func=_loadtest)

    p = sub.add_parser(
        "verify",
        help="check a revealed seed against its commitment (and a winnable deal's solution)",
    )
    p.add_argument("--seed", help="the seed revealed when the deal was over")
    p.add_argument(
        "--commitment",
        help="the hex digest sent at deal start (all 64 hex digits)",
    )
    p.add_argument(
        "--daily",
        metavar="DATE",
        help="instead of --seed and --commitment: fetch the revealed daily deals of DATE"
        " (YYYY-MM-DD, UTC) from --url and check each against its saved commitment and its proof",
    )
    p.add_argument(
        "--saved",
        metavar="FILE",
        help="with --daily: the commitments saved earlier by 'daily --fetch FILE'",
    )
    p.add_argument("--url", help="with --daily: the server, e.g. ws://127.0.0.1:8765/ws")
    p.add_argument(
        "--variant",
        choices=[v.value for v in Variant],
        default="classic",
        help="the deal's variant, for the layout shown (default classic)",
    )
    p.add_argument(
        "--solution",
        metavar="FILE_OR_JSON",
        help="a winning line to replay: the revealed deal's proof (or the whole"
        " revealed deal, or a list of moves) as JSON, or a file holding it",
    )
    p.add_argument(
        "--draw",
        type=int,
        choices=(1, 3),
        default=1,
        help="the deal's draw (with --solution; default 1)",
    )
    p.add_argument(
        "--pass-limit",
        type=int,
        default=0,
        metavar="P",
        help="the deal's passes through the stock, 0 = no limit (default 0)",
    )
    p.add_argument(
        "--no-foundation-to-tableau",
        dest="foundation_to_tableau",
        action="store_false",
        help="the deal forbids foundation-to-tableau moves",
    )
    p.set_defaults(func=_verify)

    p = sub.add_parser(
        "daily",
        help="list the daily deals (the commitments of the days ahead, the seeds of past"
        " ones); or play today's with the bot (--play), or show a leaderboard (--board)",
    )
    p.add_argument("--url", required=True, help="server, e.g. ws://127.0.0.1:8765/ws")
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--fetch",
        metavar="FILE",
        help="also keep the commitments in FILE (added to what it holds; a day kept there"
        " is never overwritten), for 'verify --daily DATE --saved FILE' once the day is over",
    )
    what.add_argument("--play", action="store_true", help="play your one run of it with the bot")
    what.add_argument("--board", action="store_true", help="print its leaderboard")
    p.add_argument(
        "--ladder",
        default="classic-draw1",
        choices=("classic-draw1", "classic-draw3"),
        help="--play, --board: which daily (default classic-draw1)",
    )
    p.add_argument("--date", help="--board: a past day's (YYYY-MM-DD; default today)")
    p.add_argument("--friends", action="store_true", help="--board: your friends' runs and yours")
    p.add_argument("--pace", type=float, default=0.0, help="--play: seconds between moves")
    p.add_argument("--name", default="daily-bot", help="--play, --board: your name as a guest")
    p.add_argument(
        "--device-file",
        metavar="PATH",
        help="--play, --board: as your account, with the device token kept in PATH"
        " (see the account command)",
    )
    p.set_defaults(func=_daily)


def _run(coro: Coroutine[Any, Any, int]) -> int:
    """Run a command's coroutine; turn the expected failures into a message and 1."""
    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:
        return 130
    except ServerError as exc:
        print(f"klondike-race: the server refused: {exc.code}: {exc.message}", file=sys.stderr)
    except (ClientError, OSError) as exc:
        print(f"klondike-race: connection failed: {exc}", file=sys.stderr)
    except NotRated as exc:
        print(f"klondike-race: {exc}", file=sys.stderr)
    return 1


async def _until_signal(work: Awaitable[Any]) -> int:
    """Await ``work`` unless SIGINT (Ctrl-C) or SIGTERM comes first, which cancels
    it: its own teardown then leaves the room and closes the connection cleanly.
    0 when it ended by itself (raising what it raised), else 128 + the signal's
    number, as a shell reports a signal."""
    task = asyncio.ensure_future(work)
    signals: list[signal.Signals] = []

    def interrupted(signum: signal.Signals) -> None:
        if not task.done():  # else it ended by itself: its own ending stands
            signals.append(signum)
            task.cancel()

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, interrupted, signum)
    try:
        await task
    except asyncio.CancelledError:
        if not signals:
            raise
    return 128 + signals[0] if signals else 0


def _bot(args: argparse.Namespace) -> int:
    from .players import BotStats, rounds_played, run_bots

    async def main() -> int:
        """Play, and sum up last whatever ends it: the rounds asked for, the room
        closing, a failure, or a signal."""
        stop = rounds_played(args.rounds) if args.rounds > 0 else None
        stats = BotStats()
        try:
            return await _until_signal(
                run_bots(
                    args.url,
                    args.room,
                    args.count,
                    pace=args.pace,
                    name=args.name,
                    stop=stop,
                    report=lambda line: print(line, flush=True),
                    stats=stats,
                )
            )
        finally:
            print(stats.summary(args.count), flush=True)

    return _run(main())


def _watch(args: argparse.Namespace) -> int:
    from .watch import watch

    return _run(
        _until_signal(watch(args.url, args.room, name=args.name, device_file=args.device_file))
    )


def _account(args: argparse.Namespace) -> int:
    from .device_file import DeviceFile, sign_in

    async def main() -> int:
        try:
            session = await sign_in(
                args.url,
                DeviceFile(args.device_file),
                link=args.link,
                recovery=args.recovery,
                label=args.label,
            )
        except ValueError as exc:
            print(f"klondike-race: {exc}", file=sys.stderr)
            return 2
        async with session:
            account = session.account or {}
            print(f"signed in as {account.get('handle')} (player {session.player})")
            if args.sign_out:
                await session.sign_out()
                print("this device is signed out")
                return 0
            for device in await session.devices():
                here = " (this device)" if device["current"] else ""
                print(f"  {device['device']}  {device['label'] or '-'}{here}")
        return 0

    return _run(main())


def _loadtest(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from .load import LoadProgress, run_load

    settings = {"draw": args.draw, "variant": args.variant}
    console = Console(stderr=True)

    async def main() -> int:
        # Redrawn on each of the load's ticks, not by rich's own refresh thread,
        # which would take the GIL from the bots ten times a second.
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=args.json,
            auto_refresh=False,
        ) as bar:
            task = bar.add_task("starting", total=args.duration)

            def show(p: LoadProgress) -> None:
                rate = p.moves / p.elapsed if p.elapsed > 0 else 0.0
                bar.update(
                    task,
                    completed=p.elapsed,
                    refresh=True,
                    description=(
                        f"{p.moves} moves ({rate:.0f}/s), {p.errors} errors, {p.disconnects} drops"
                    ),
                )

            report = await run_load(
                args.url,
                args.rooms,
                args.players,
                args.spectators,
                args.duration,
                rate=args.rate,
                rate_limit=args.rate_limit,
                settings=settings,
                on_progress=show,
            )
        if args.json:
            print(json.dumps(report.to_dict()))
        else:
            _print_report(report.to_dict())
        return 0 if report.ok else 1

    return _run(main())


def _print_report(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Load test", show_header=False)
    lat = report["latency_ms"]
    rows = [
        (
            "rooms × players + spectators",
            f"{report['rooms']} × {report['players']} + {report['spectators']}",
        ),
        ("elapsed", f"{report['elapsed']:.1f} s"),
        ("moves acknowledged", str(report["moves"])),
        ("moves/s", f"{report['moves_per_s']:.1f}"),
        (
            "move→ack p50 / p95 / p99 / max",
            f"{lat['p50']:.1f} / {lat['p95']:.1f} / {lat['p99']:.1f} / {lat['max']:.1f} ms",
        ),
        ("unacknowledged moves", str(report["unacknowledged"])),
        ("errors", ", ".join(f"{k} {v}" for k, v in report["errors"].items()) or "0"),
        ("disconnects / resyncs", f"{report['disconnects']} / {report['resyncs']}"),
        ("room events received", str(report["events"])),
        ("deals finished", ", ".join(f"{k} {v}" for k, v in report["deals"].items()) or "0"),
    ]
    for key, value in rows:
        table.add_row(key, value)
    Console().print(table)
    print("OK" if report["ok"] else "FAILED: some moves were never acknowledged")


def _verify(args: argparse.Namespace) -> int:
    from protocol.settings import DealRules

    from .verify import load_solution, verify, verify_solution

    if args.daily is not None:
        return _verify_daily(args)
    if args.seed is None or args.commitment is None:
        print("klondike-race: verify needs --seed and --commitment, or --daily", file=sys.stderr)
        return 2
    variant = Variant(args.variant)
    if args.solution is None:
        ok, text = verify(args.seed, args.commitment, variant)
    else:
        try:
            solution = load_solution(args.solution)
        except ValueError as exc:
            print(f"klondike-race: {exc}", file=sys.stderr)
            return 2
        if args.pass_limit < 0:
            print("klondike-race: --pass-limit is 0 (no limit) or more", file=sys.stderr)
            return 2
        rules = DealRules(variant, args.draw, args.pass_limit, False, args.foundation_to_tableau)
        ok, text = verify_solution(args.seed, args.commitment, rules, solution)
    print(text)
    return 0 if ok else 1


def _daily(args: argparse.Namespace) -> int:
    import time

    if args.play or args.board:
        return _daily_run(args)

    from .daily import SavedDays, fetch_days

    async def main() -> int:
        saved = None
        if args.fetch is not None:
            try:
                saved = SavedDays.load(args.fetch)
            except ValueError as exc:
                print(f"klondike-race: {exc}", file=sys.stderr)
                return 2
        listing = await fetch_days(args.url)
        print(f"server day (UTC): {listing['today']}")
        for day in listing["days"]:
            shown = f"seed {day['seed']}" if "seed" in day else f"commitment {day['commitment']}"
            print(f"  {day['date']}  {day['ladder']:<14}  {shown}")
        if saved is None:
            return 0
        new, changed = saved.add(listing, time.time())
        saved.save()
        print(f"saved {new} new commitment(s) in {saved.path} ({len(saved.days)} kept)")
        for key in changed:
            print(f"CHANGED: {key}: the server shows another commitment than the one kept")
        return 1 if changed else 0

    return _run(main())


def _daily_run(args: argparse.Namespace) -> int:
    from .daily_run import daily

    return _run(
        daily(
            args.url,
            args.ladder,
            play=args.play,
            name=args.name,
            device_file=args.device_file,
            date=args.date,
            friends=args.friends,
            pace=args.pace,
            report=lambda line: print(line, flush=True),  # each ghost's line as it moves
        )
    )


def _verify_daily(args: argparse.Namespace) -> int:
    import datetime

    from .daily import SavedDays, fetch_days, verify_day

    try:
        day = datetime.date.fromisoformat(args.daily).isoformat()
    except ValueError:
        print(f"klondike-race: --daily {args.daily!r} is not a date (YYYY-MM-DD)", file=sys.stderr)
        return 2
    if args.url is None:
        print("klondike-race: verify --daily needs --url (the server)", file=sys.stderr)
        return 2
    try:
        saved = SavedDays.load(args.saved) if args.saved is not None else None
    except ValueError as exc:
        print(f"klondike-race: {exc}", file=sys.stderr)
        return 2

    async def main() -> int:
        ok, text = verify_day(await fetch_days(args.url), day, saved)
        print(text)
        return 0 if ok else 1

    return _run(main())
