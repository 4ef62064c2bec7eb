"""The ``klondike-race`` command as people meet it: its version, a help text on
every option, what ``bot`` prints (its summary last, even when a signal stops it,
and only the rounds it played), that ``bot`` leaves the room however it ends, and
what ``verify`` says of a shortened commitment."""

from __future__ import annotations

import argparse
import asyncio
import signal
import subprocess
import sys
import tomllib

import pytest

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
        # The bot says where it sat before the round starts (it joined a lobby).
        first = await _lines_until(proc, "joined room")
        assert first == [f"joined room {room.code} as robo (lobby)"]
        await until(host, lambda r: len(r.players) == 2)
        await host.start()
        for number in (1, 2):
            await until(host, lambda r, n=number: r.deal_number == n and r.my_board is not None)
            await host.resign()
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        lines = first + out.decode().splitlines()
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


async def _lines_until(proc: asyncio.subprocess.Process, start: str) -> list[str]:
    """The command's lines up to the first that starts with ``start`` (read as
    they come: the test waits on its output, not on time)."""
    assert proc.stdout is not None
    lines: list[str] = []
    while not lines or not lines[-1].startswith(start):
        raw = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert raw, f"the command ended first: {lines}"
        lines.append(raw.decode().rstrip("\n"))
    return lines


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_the_bot_command_sums_up_when_stopped_by_a_signal(
    live_url: str, signum: signal.Signals
) -> None:
    async with connect(live_url, name="Host") as host:
        room = await host.create_room({"deals_per_round": 3, "variant": "thoughtful"})
        proc = await bot_command(live_url, room.code, "--name", "robo")
        await until(host, lambda r: len(r.players) == 2)
        await host.start()
        await until(host, lambda r: r.deal_number == 1 and r.my_board is not None)
        await host.resign()
        # Deal 1 over for the bot too: then stop it mid-round, in the break.
        before = await _lines_until(proc, "robo: deal 1: ")
        proc.send_signal(signum)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 128 + signum, err.decode()
        lines = before + out.decode().splitlines()
        assert lines[-1].startswith("1 bot played 1 deal ("), lines
        assert "moves accepted" in lines[-1]
        assert not any(" round " in line for line in lines)
        # It left the room on the way out: no seat is kept for it, away.
        await until(host, lambda r: [p["id"] for p in r.players] == [host.player])


async def test_a_bot_done_with_its_rounds_leaves_the_room(live_url: str) -> None:
    """``--rounds 1`` played, the bot gets up: the host's rematch deals in only
    the players still there, and the deal is not held up by a bot long gone."""
    async with connect(live_url, name="Host") as host:
        room = await host.create_room({"deals_per_round": 1, "variant": "thoughtful"})
        proc = await bot_command(live_url, room.code, "--name", "robo")
        await until(host, lambda r: len(r.players) == 2)
        await host.start()
        await until(host, lambda r: r.my_board is not None)
        await host.resign()
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        assert out.decode().splitlines()[-1].startswith("1 bot played 1 deal (")
        await until(host, lambda r: [p["id"] for p in r.players] == [host.player])
        await host.rematch()
        dealt = await until(host, lambda r: r.round == 2 and r.deal is not None)
        assert dealt.deal is not None and list(dealt.deal["progress"]) == [host.player]
        assert dealt.sheet is not None and dealt.sheet["players"] == [host.player]


async def test_a_bot_reports_only_rounds_it_played(live_url: str) -> None:
    async with connect(live_url, name="Host") as host:
        room = await host.create_room({"deals_per_round": 1, "variant": "thoughtful"})
        await host.start()
        await until(host, lambda r: r.my_board is not None)
        await host.resign()
        await until(host, lambda r: r.state == "round_over")
        # Round 1 is over before the bot sits down: it played none of it. The
        # rematch waits for the bot to say it sat down: seeing it seated, the host
        # could deal round 2 before the bot had looked at the room it joined.
        proc = await bot_command(live_url, room.code, "--name", "late")
        joined = await _lines_until(proc, "joined room")
        await until(host, lambda r: len(r.players) == 2)
        await host.rematch()
        await until(host, lambda r: r.round == 2 and r.my_board is not None)
        await host.resign()
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        lines = joined + out.decode().splitlines()
        assert lines[0] == f"joined room {room.code} as late (round_over)"
        rounds = [line for line in lines if " round " in line]
        assert len(rounds) == 1 and rounds[0].startswith("late: round 2 over, won by "), lines
        deals = [line for line in lines if line.startswith("late: deal ")]
        assert len(deals) == 1, lines
        assert lines[-1].startswith("1 bot played 1 deal (")
