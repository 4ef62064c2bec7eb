"""The ``klondike-race`` command: ``serve`` from here, the client's subcommands
from client/commands.py.

The entry point lives on the server's side because it is the side that may see
both: client/ imports nothing from server/ (tests/test_layering.py), so the
client adds its own subparsers (``bot``, ``watch``, ``loadtest``, ``verify``) and
this file only registers both sides and dispatches. ``python -m server`` is
``serve`` alone.

Stores: the embedded SQLite store is the default, so that a plain ``serve`` keeps
its rooms and sessions across a restart or a crash (server/store/sqlite.py), in
``--data-dir`` (default ``./klondike-data``, relative to the working directory, or
``$KLONDIKE_DATA_DIR``). ``--memory`` keeps everything in this process, for
development and tests; ``--redis URL`` (or ``KLONDIKE_REDIS_URL``) selects the Redis
store, imported only then so that the server runs without it, and lets several nodes
share it. ``--memory`` and ``--redis`` exclude each other; ``--memory`` also overrides
``KLONDIKE_REDIS_URL``.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .net.clock import Clock
from .net.connection import Limits

__all__ = [
    "add_ratings",
    "add_serve",
    "build_parser",
    "klondike_race",
    "main",
    "package_version",
    "serve_command",
]


def add_serve(sub: Any) -> None:
    parser = sub.add_parser("serve", help="run the race server", description=__doc__)
    configure(parser)


def add_ratings(sub: Any) -> None:
    parser = sub.add_parser(
        "ratings",
        help="remove a rated result and replay its ladder, or check a ladder (operator)",
        description="The operator's hand on the ladders (server/ratings/operator.py): on the"
        " embedded store, with the server stopped; on Redis, at any time.",
    )
    act = parser.add_mutually_exclusive_group(required=True)
    act.add_argument(
        "--remove", metavar="ROUND_KEY", help="remove this rated round and replay its ladder"
    )
    act.add_argument(
        "--check", metavar="LADDER", help="replay LADDER and compare it with the stored ratings"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--redis",
        default=os.environ.get("KLONDIKE_REDIS_URL") or None,
        metavar="URL",
        help="the ratings in Redis at URL (env KLONDIKE_REDIS_URL)",
    )
    where.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="the embedded store's data directory (default ./klondike-data or $KLONDIKE_DATA_DIR)",
    )
    parser.set_defaults(func=ratings_command)


def ratings_command(args: argparse.Namespace) -> int:
    import asyncio

    from .ratings.operator import check_ladder, remove_result
    from .store.base import StoreUnavailable

    async def run() -> int:
        if args.redis:
            from .accounts.redis import RedisAccounts

            store: Any = await RedisAccounts.from_url(args.redis)
        else:
            from .accounts.sqlite import SqliteAccounts
            from .store.sqlite import SqliteStore

            data_dir = Path(args.data_dir) if args.data_dir else SqliteStore.default_dir()
            store = await SqliteAccounts.at(data_dir)
        try:
            if args.remove is not None:
                removed = await remove_result(store, args.remove)
                if removed is None:
                    print(f"no rated round {args.remove}")
                    return 1
                print(f"removed {removed.key}; ladder {removed.ladder} replayed")
                return 0
            differ = await check_ladder(store, args.check)
            print(f"ladder {args.check}: " + (f"differs for {differ}" if differ else "as replayed"))
            return 1 if differ else 0
        finally:
            await store.close()

    try:
        return asyncio.run(run())
    except StoreUnavailable as exc:
        raise SystemExit(f"ratings: {exc}") from None


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8765, help="port for WebSocket and HTTP (0 picks a free one)"
    )
    stores = parser.add_mutually_exclusive_group()
    stores.add_argument(
        "--redis",
        default=os.environ.get("KLONDIKE_REDIS_URL") or None,
        metavar="URL",
        help="keep rooms and sessions in Redis at URL, shared by any number of nodes"
        " (env KLONDIKE_REDIS_URL)",
    )
    stores.add_argument(
        "--memory",
        action="store_true",
        help="keep rooms and sessions in this process only: a restart forgets them (development)",
    )
    parser.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="the embedded store's directory, used when neither --memory nor --redis is"
        " given (default ./klondike-data in the working directory, or env"
        " KLONDIKE_DATA_DIR); it keeps rooms and sessions across restarts and kill -9",
    )
    parser.add_argument(
        "--origin",
        action="append",
        default=[],
        metavar="URL",
        help="a browser origin besides the server's own that may open the game socket "
        "(e.g. https://cards.example.org; repeat for more)",
    )
    parser.add_argument(
        "--tls-cert",
        type=Path,
        default=None,
        metavar="FILE",
        help="serve HTTPS and WSS on the port with this certificate chain (PEM), e.g. one "
        "from mkcert for the LAN name, so passkeys work for friends on the LAN; with --tls-key",
    )
    parser.add_argument(
        "--tls-key",
        type=Path,
        default=None,
        metavar="FILE",
        help="the private key (PEM) of --tls-cert",
    )
    parser.add_argument(
        "--rp-id",
        type=_rp_id,
        default=None,
        metavar="DOMAIN",
        help="the domain passkeys are made for (WebAuthn's RP ID), e.g. cards.example.org; "
        "set it when the page is reached by several names or served from an --origin "
        "(default: the name in each request's Host, right for localhost and one LAN name)",
    )
    parser.add_argument(
        "--metrics",
        type=_address,
        default=None,
        metavar="HOST:PORT",
        help="serve /metrics on a listener of its own at HOST:PORT, to any peer "
        "(default: on the game port, to loopback peers only)",
    )
    parser.add_argument(
        "--rate-limit",
        type=float,
        default=50.0,
        metavar="N",
        help="frames a second per connection, bursts of 2N (default 50; benchmarks raise it)",
    )
    d = Limits()
    parser.add_argument(
        "--progress-delay",
        type=float,
        default=d.progress_delay,
        metavar="S",
        help="seconds a progress event may wait to leave batched with others"
        f" (default {d.progress_delay:g}; 0: each at once)",
    )
    for flag, field, what in (
        ("--connections-per-address", "connections_per_address", "open connections"),
        ("--sessions-per-minute", "sessions_per_minute", "new sessions a minute"),
        ("--rooms-per-minute", "rooms_per_minute", "new rooms a minute"),
        ("--join-codes-per-minute", "wrong_codes_per_minute", "wrong join codes a minute"),
        ("--sign-ups-per-minute", "sign_ups_per_minute", "handles taken a minute"),
        ("--sign-ins-per-minute", "sign_ins_per_minute", "failed sign-ins a minute"),
        (
            "--link-codes-per-minute",
            "wrong_link_codes_per_minute",
            "wrong link, recovery or challenge codes a minute",
        ),
        ("--friend-asks-per-minute", "friend_asks_per_minute", "friend requests and invitations"),
    ):
        default = getattr(d, field)
        parser.add_argument(
            flag,
            dest=field,
            type=int,
            default=default,
            metavar="N",
            help=f"{what} allowed per client address (default {default})",
        )
    parser.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="NET",
        help="a proxy (address or network, e.g. 172.16.0.0/12) whose X-Forwarded-For names "
        "the client; repeat for more (default: none, the socket's peer is the client)",
    )
    parser.set_defaults(func=serve_command)


def _rp_id(text: str) -> str:
    """A domain name as WebAuthn takes it for an RP ID: no scheme, no port, not
    an IP address (browsers refuse those)."""
    name = text.strip().lower().rstrip(".")
    labels = name.split(".")
    if not name or not all(
        re.fullmatch(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", label) for label in labels
    ):
        raise argparse.ArgumentTypeError(f"{text!r} is not a domain name (e.g. race.lan)")
    if all(label.isdigit() for label in labels):
        raise argparse.ArgumentTypeError(f"{text!r} is an address: passkeys need a name")
    return name


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


def serve_command(args: argparse.Namespace, clock: Clock | None = None) -> int:
    """``clock``: the server's (server/net/clock.py), the system's by default;
    a test's process moves its own (tests/support/clocked.py)."""
    from .app import RaceServer, run

    factory: Any = None
    accounts: Any = None  # the account store, beside the room store
    daily: Any = None  # the daily deals' store, likewise
    results: Any = None  # the daily runs' results, likewise
    challenges: Any = None  # the challenges, likewise
    memory = args.memory
    if args.data_dir is not None and (memory or args.redis):
        raise SystemExit("--data-dir is the embedded store's: not with --memory or --redis")
    if args.redis and not memory:
        from .store.redis import RedisStore

        url = args.redis

        async def factory() -> Any:
            return await RedisStore.from_url(url)

        from .accounts.redis import RedisAccounts

        async def accounts() -> Any:  # the same Redis, the URL's prefix too
            return await RedisAccounts.from_url(url)

        from .daily.redis import RedisDaily

        async def daily() -> Any:
            return await RedisDaily.from_url(url)

        from .daily.redis_results import RedisResults

        async def results() -> Any:
            return await RedisResults.from_url(url)

        from .challenges.redis import RedisChallenges

        async def challenges() -> Any:
            return await RedisChallenges.from_url(url)

    elif not memory:
        from .store.sqlite import SqliteStore

        data_dir = Path(args.data_dir) if args.data_dir else SqliteStore.default_dir()

        async def factory() -> Any:
            return await SqliteStore.at(data_dir)

        from .accounts.sqlite import SqliteAccounts

        async def accounts() -> Any:
            return await SqliteAccounts.at(data_dir)

        from .daily.sqlite import SqliteDaily

        async def daily() -> Any:
            return await SqliteDaily.at(data_dir)

        from .daily.sqlite_results import SqliteResults

        async def results() -> Any:
            return await SqliteResults.at(data_dir)

        from .challenges.sqlite import SqliteChallenges

        async def challenges() -> Any:
            return await SqliteChallenges.at(data_dir)

    tls = None
    if (args.tls_cert is None) != (args.tls_key is None):
        raise SystemExit("--tls-cert and --tls-key go together")
    if args.tls_cert is not None:
        from .net.tls import TlsError, tls_context

        try:
            tls = tls_context(args.tls_cert, args.tls_key)
        except TlsError as exc:
            raise SystemExit(f"--tls-cert/--tls-key: {exc}") from None

    limits = Limits(
        rate=args.rate_limit,
        burst=2 * args.rate_limit,
        connections_per_address=args.connections_per_address,
        sessions_per_minute=args.sessions_per_minute,
        rooms_per_minute=args.rooms_per_minute,
        wrong_codes_per_minute=args.wrong_codes_per_minute,
        sign_ups_per_minute=args.sign_ups_per_minute,
        sign_ins_per_minute=args.sign_ins_per_minute,
        wrong_link_codes_per_minute=args.wrong_link_codes_per_minute,
        friend_asks_per_minute=args.friend_asks_per_minute,
        trusted_proxies=tuple(args.trusted_proxy),
        progress_delay=args.progress_delay,
    )
    server = RaceServer(
        host=args.host,
        port=args.port,
        store_factory=factory,
        limits=limits,
        clustered=bool(args.redis) and not memory,  # any number of nodes may share the Redis
        origins=args.origin,
        metrics_address=args.metrics,
        accounts_factory=accounts,  # None: in memory (--memory)
        daily_factory=daily,  # None: in memory (--memory)
        daily_results_factory=results,  # None: in memory (--memory)
        challenges_factory=challenges,  # None: in memory (--memory)
        tls=tls,
        rp_id=args.rp_id,
        clock=clock,
    )
    return run(server)


def package_version() -> str:
    """The installed project's version (pyproject.toml's, through the package
    metadata), so ``--version`` cannot drift from what was released."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("klondike-race")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def main(argv: list[str] | None = None) -> int:
    """``python -m server``: the server alone."""
    parser = argparse.ArgumentParser(prog="python -m server", description=__doc__)
    configure(parser)
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


def klondike_race(argv: Sequence[str] | None = None) -> int:
    """``klondike-race``: the server's and the client's subcommands."""
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


def build_parser() -> argparse.ArgumentParser:
    """The whole command line, every subcommand included (tests walk it to hold
    every option to a help text)."""
    from client.commands import add_commands

    parser = argparse.ArgumentParser(
        prog="klondike-race", description="Klondike race: the server and its clients."
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {package_version()}",
        help="print the installed version (the project's, from its package metadata) and exit",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_serve(sub)
    add_ratings(sub)
    add_commands(sub)
    return parser


if __name__ == "__main__":
    raise SystemExit(klondike_race())
