"""The ``klondike-race`` command: one entry point, subcommands from both sides.

``serve`` is the server's (server/cli.py); ``bot``, ``watch``, ``loadtest`` and
``verify`` are the client's (client/commands.py). Each side adds its own
subparsers, so this file only dispatches.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from client.commands import add_commands
    from server.cli import add_serve

    parser = argparse.ArgumentParser(
        prog="klondike-race", description="Klondike race: the server and its clients."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    add_serve(sub)
    add_commands(sub)
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
