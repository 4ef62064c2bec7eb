"""The ``klondike-race`` command as people meet it: its version, a help text on
every option, what ``bot`` prints, and what ``verify`` says of a shortened
commitment."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tomllib

from client import connect
from client.verify import verify
from protocol.deal import commitment
from server.cli import build_parser, configure
from tests.support import ROOT
from tests.support.processes import bot_command
from tests.support.sessions import until


def _parsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and every subcommand's parser under it, each with its name."""
    out = [(parser.prog, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _parsers(sub)
    return out


def test_version_is_the_package_version() -> None:
    expected = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"
    ]
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.strip() == f"klondike-race {expected}"


def test_every_option_of_every_subcommand_has_help() -> None:
    alone = argparse.ArgumentParser(prog="python -m server")
    configure(alone)
    parsers = [*_parsers(build_parser()), ("python -m server", alone)]
    names = {name for name, _ in parsers}
    assert {f"klondike-race {c}" for c in ("serve", "bot", "watch", "loadtest", "verify")} <= names
    missing = [
        f"{name} {'/'.join(action.option_strings)}"
        for name, parser in parsers
        for action in parser._actions
        if action.option_strings and not action.help
    ]
    assert missing == []


def test_verify_explains_a_shortened_commitment() -> None:
    whole = commitment("s33d")
    ok, text = verify("s33d", whole[:16] + "…")
    assert not ok
    assert "not hex digits" in text
    ok, text = verify("s33d", whole[:16])
    assert not ok
    assert text.splitlines()[0] == (
        "MISMATCH: that commitment is 16 hex digits; a commitment is 64 (a SHA-256 digest):"
        " copy it whole"
    )
    ok, text = verify("s33d", whole.upper())
    assert ok and text.startswith("OK: the seed matches")
    ok, text = verify("other", whole)
    assert not ok and text.startswith("MISMATCH: this seed does not hash to the commitment")


async def test_the_bot_command_says_what_it_does(live_url: str) -> None:
    async with connect(live_url, name="Host") as host:
        room = await host.create_room({"deals_per_round": 2, "variant": "thoughtful"})
        proc = await bot_command(live_url, room.code, "--name", "robo")
        await until(host, lambda r: len(r.players) == 2)
        await host.start()
        for number in (1, 2):
            await until(host, lambda r, n=number: r.deal_number == n and r.my_board is not None)
            await host.resign()
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        lines = out.decode().splitlines()
        assert lines[0] == f"joined room {room.code} as robo (lobby)"
        deals = [line for line in lines if line.startswith("robo: deal ")]
        assert [d.split(":")[1].strip() for d in deals] == ["deal 1", "deal 2"]
        for line in deals:
            # e.g. "robo: deal 1: won in 112 moves, score 240"
            outcome = line.split(": ")[2]
            assert outcome.split(" ")[0] in {"won", "resigned", "lost"}
            assert " moves, score " in outcome or " move, score " in outcome
        assert any(line.startswith("robo: round 1 over, won by ") for line in lines)
        assert lines[-1].startswith("1 bot played 2 deals (")
        assert "moves accepted" in lines[-1] and "{" not in out.decode()
