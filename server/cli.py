"""``klondike-race serve``: run the race server.

The in-memory store is the default; ``--redis URL`` (or ``KLONDIKE_REDIS_URL``)
selects the Redis store, imported only then so that the server runs without it.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["add_serve", "main", "serve_command"]


def add_serve(sub: Any) -> None:
    parser = sub.add_parser("serve", help="run the race server", description=__doc__)
    configure(parser)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8765, help="port for WebSocket and HTTP (0 picks a free one)"
    )
    parser.add_argument(
        "--redis",
        default=os.environ.get("KLONDIKE_REDIS_URL") or None,
        metavar="URL",
        help="keep rooms in Redis at URL (default: in memory; env KLONDIKE_REDIS_URL)",
    )
    parser.add_argument(
        "--rate-limit",
        type=float,
        default=50.0,
        metavar="N",
        help="frames a second per connection, bursts of 2N (default 50; benchmarks raise it)",
    )
    parser.set_defaults(func=serve_command)


def serve_command(args: argparse.Namespace) -> int:
    from .app import RaceServer, run
    from .connection import Limits

    factory: Any = None
    if args.redis:
        try:
            from .redis_store import RedisStore  # type: ignore[import-not-found, unused-ignore]
        except ImportError as exc:
            print(
                f"klondike-race: --redis needs server/redis_store.py, which is missing ({exc})",
                file=sys.stderr,
            )
            return 2
        url = args.redis

        async def factory() -> Any:
            return await RedisStore.from_url(url)

    limits = Limits(rate=args.rate_limit, burst=2 * args.rate_limit)
    server = RaceServer(
        host=args.host,
        port=args.port,
        store_factory=factory,
        limits=limits,
        clustered=factory is not None,  # any number of nodes may share the Redis
    )
    return run(server)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m server", description=__doc__)
    configure(parser)
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code
