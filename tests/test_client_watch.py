"""``watch``: a room rendered for a spectator, live and as a pure function; the
command written to a file as it goes, and leaving the room when stopped."""

from __future__ import annotations

import asyncio
import io
import re
import signal
from pathlib import Path

import pytest
from rich.console import Console

from client import connect
from client.players import BotPlayer, rounds_played
from client.room import RoomEvent, RoomView
from client.verify import verify
from client.watch import Transcript, live_totals, render_room, watch
from protocol.deal import commitment
from tests.support.processes import watch_command
from tests.support.sessions import until
from tests.support.waiting import eventually


def _text(room: RoomView) -> str:
    console = Console(record=True, width=120, file=io.StringIO())
    console.print(render_room(room, now_ms=0))
    return console.export_text()


async def test_watch_renders_a_live_room(live_url: str) -> None:
    async with connect(live_url, name="Alice") as alice, connect(live_url, name="Bruno") as bruno:
        room = await alice.create_room({"deals_per_round": 1, "variant": "thoughtful"})
        await bruno.join_room(room.code)
        # A terminal: the live panel (the command's, output to a file, is below).
        console = Console(record=True, width=120, file=io.StringIO(), force_terminal=True)
        watcher = asyncio.create_task(watch(live_url, room.code, name="Eve", console=console))
        await until(alice, lambda r: len(r.spectators) == 1)
        async with connect(live_url, name="Sam") as sam:
            await sam.join_room(room.code, "spectator")
            await alice.start()
            bots = [BotPlayer(s, pace=0, stop=rounds_played(1)) for s in (alice, bruno)]
            await asyncio.wait_for(asyncio.gather(*(b.play() for b in bots)), 60)
            seen = await until(sam, lambda r: r.state == "round_over")
            assert seen.deal and set(seen.deal["boards"]) == {alice.player, bruno.player}

            text = _text(seen)
            totals = seen.sheet["totals"] if seen.sheet else {}
            for who in (alice, bruno):
                assert who.name and who.name in text
                assert str(totals[who.player]) in text
            assert f"Room {room.code}" in text and "round_over" in text
            assert "Score sheet" in text and "Watching: Eve, Sam" in text
            assert "Round won by" in text

        await alice.close_room()
        assert await asyncio.wait_for(watcher, 10) == 0
        live = console.export_text()
        assert "Alice" in live and "Bruno" in live and "closed" in live


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_the_watch_command_writes_to_a_file_as_it_goes_and_leaves_when_stopped(
    live_url: str, tmp_path: Path, signum: signal.Signals
) -> None:
    """Output to a file gets a line for each update while the command runs, the
    seed and whole commitment of the deal over before it came among them; stopped by
    a signal, it leaves the room: no spectator stays listed."""
    async with connect(live_url, name="Host") as host:
        room = await host.create_room({"deals_per_round": 1, "variant": "thoughtful"})
        await host.start()
        await until(host, lambda r: r.my_board is not None)
        await host.resign()
        over = await until(host, lambda r: r.state == "round_over" and bool(r.history))
        past = over.history[-1]
        out = tmp_path / "watch.txt"
        proc = await watch_command(live_url, room.code, out)
        told = f"seed {past['seed']}, commitment\n{past['commitment']}\n"
        await eventually(lambda: told in out.read_text(), what="the past deal's seed in the file")
        ok, said = verify(past["seed"], past["commitment"])
        assert ok, said
        await until(host, lambda r: [m["name"] for m in r.spectators] == ["watcher"])
        # An update after it joined is written as it comes, not at the end.
        await host.react("wave")
        await eventually(lambda: "Host: hi\n" in out.read_text(), what="the reaction in the file")
        proc.send_signal(signum)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 128 + signum, err.decode()
        await until(host, lambda r: r.spectators == [])
        assert room.code in out.read_text()


def test_render_is_a_pure_function_of_the_room() -> None:
    room = RoomView.from_wire(
        {
            "code": "K7QX2M",
            "seq": 9,
            "state": "playing",
            "host": "pA",
            "me": "pS",
            "role": "spectator",
            "settings": {"draw": 3, "scoring": "vegas"},
            "players": [
                {"id": "pA", "name": "Ann", "connected": True},
                {"id": "pB", "name": "Bob", "connected": False},
            ],
            "spectators": [{"id": "pS", "name": "Sam", "connected": True}],
            "round": 1,
            "round_started_at": 0,
            "round_ends_at": 125_000,
            "deal": {
                "number": 2,
                "deals": 3,
                "commitment": "ab",
                "started_at": 0,
                "rules": {},
                "progress": {
                    "pA": {
                        "score": 35,
                        "home": 13,
                        "moves": 20,
                        "status": "playing",
                        "finished": False,
                    }
                },
                "board": None,
                "boards": {},
            },
            "sheet": {
                "players": ["pA", "pB"],
                "carry": {},
                "totals": {"pA": 142, "pB": -7},
                "rows": [
                    {
                        "first": "pA",
                        "cells": {
                            "pA": {"score": 142, "bonus": 100, "total": 142, "status": "won"},
                            "pB": {"score": -7, "bonus": 0, "total": -7, "status": "resigned"},
                        },
                    }
                ],
                "winners": [],
            },
            "history": [{"number": 1, "seed": "s33d", "commitment": "c0ffee"}],
        }
    )
    text = _text(room)
    assert text == _text(room)
    for expected in (
        "Room K7QX2M",
        "deal 2/3",
        "vegas, draw 3",
        "2:05 left",
        "Ann (host)",
        "Bob (away)",
        "13/52",
        "142 / 142 ★",
        "-7 / -7",
        "seed s33d",
    ):
        assert expected in text
    assert "Reactions" not in text
    # Reactions take no seq of their own; the last five show, in words.
    for said in ("clap", "wow", "laugh", "fire", "wave", "gg"):
        room.apply({"type": "reaction", "seq": 9, "player": "pB", "reaction": said})
    assert room.seq == 9
    text = _text(room)
    assert "Reactions: Bob: wow, Bob: ha!, Bob: on fire, Bob: hi, Bob: good game" in text


def test_totals_and_the_deal_clock_run_during_a_deal() -> None:
    """Mid-deal the Total column adds the running deal's score (and the first
    finisher's bonus) to the sheet's total: the server sends a sheet only when a
    deal ends, so the sheet's own totals stand still all deal."""
    progress = {"score": 35, "home": 13, "moves": 20, "status": "playing", "finished": False}
    won = {"score": 60, "home": 52, "moves": 90, "status": "won", "finished": True}
    room = RoomView.from_wire(
        {
            "code": "K7QX2M",
            "state": "playing",
            "host": "pA",
            "me": "pS",
            "role": "spectator",
            "settings": {"race_bonus": 100},
            "players": [{"id": "pA", "name": "Ann"}, {"id": "pB", "name": "Bob"}],
            "round": 1,
            "deal": {
                "number": 2,
                "deals": 3,
                "started_at": 1_000,
                "progress": {"pA": progress, "pB": won},
            },
            "sheet": {
                "players": ["pA", "pB"],
                "totals": {"pA": 142, "pB": -7},
                "rows": [
                    {
                        "first": "pA",
                        "cells": {"pA": {"total": 142}, "pB": {"total": -7}},
                    }
                ],
            },
            "history": [{"number": 1, "seed": "s33d", "commitment": "c0ffee"}],
        }
    )
    room.first_finisher = "pB"
    assert live_totals(room) == {"pA": 177, "pB": 153}
    console = Console(record=True, width=120, file=io.StringIO())
    console.print(render_room(room, now_ms=66_000))
    text = console.export_text()
    assert "deal clock 1:05" in text
    ann = next(line for line in text.splitlines() if "Ann" in line and "13/52" in line)
    bob = next(line for line in text.splitlines() if "Bob" in line and "52/52" in line)
    assert ann.rstrip(" │").endswith("177") and bob.rstrip(" │").endswith("153")


def test_the_last_deal_is_shown_by_placing_with_its_whole_commitment() -> None:
    """The placings are the server's (ties shown "=", a tie broken by time with
    each one's moment), and the commitment is printed whole: ``verify`` calls a
    cut one a MISMATCH."""
    whole = commitment("s33d")
    summary = {
        "pA": {"score": 0, "status": "playing", "scored_t": 0, "place": 3},
        "pB": {"score": 600, "status": "won", "scored_t": 85_130, "place": 1},
        "pC": {"score": 600, "status": "won", "scored_t": 87_000, "place": 2},
        "pD": {"score": 0, "status": "playing", "scored_t": 0, "place": 3},
    }
    room = RoomView.from_wire(
        {
            "code": "K7QX2M",
            "state": "round_over",
            "me": "pS",
            "role": "spectator",
            "settings": {},
            "players": [{"id": p, "name": n} for p, n in zip(summary, "ABCD", strict=True)],
            "round": 1,
            "sheet": {
                "players": list(summary),
                "totals": {"pA": 0, "pB": 600, "pC": 600, "pD": 0},
                "places": {"pA": 3, "pB": 1, "pC": 1, "pD": 3},
                "winners": ["pB", "pC"],
                "rows": [{"first": "pB", "cells": {}}],
            },
            "history": [{"number": 1, "seed": "s33d", "commitment": whole, "summary": summary}],
        }
    )
    console = Console(record=True, width=80, file=io.StringIO())
    console.print(render_room(room, now_ms=0))
    text = console.export_text()
    # B and C, on the same score, were placed apart by who reached it first: when, each.
    assert "Deal 1 results: 1st B 600 (won, last scored 1:25.13), 2nd C 600 (won, last" in text
    assert "scored 1:27.00), =3rd A 0 (playing), =3rd D 0 (playing)" in text
    assert "Placings: =1st B 600, =1st C 600, =3rd A 0, =3rd D 0" in text
    shown = re.search(r"seed (\S+), commitment\W+([0-9a-f]+)", text)
    assert shown is not None and shown.group(2) == whole
    ok, said = verify(shown.group(1), shown.group(2))
    assert ok, said


def test_a_transcript_writes_a_line_for_each_change_and_each_deal_once() -> None:
    """Output that is no terminal: the status line when what it shows changed (not
    when an event changed nothing shown), a reaction in words, and each past deal's
    results with its seed and whole commitment once, the first line included."""
    whole = commitment("s33d")
    room = RoomView.from_wire(
        {
            "code": "K7QX2M",
            "seq": 9,
            "state": "playing",
            "host": "pA",
            "me": "pS",
            "role": "spectator",
            "settings": {"deals_per_round": 3},
            "players": [
                {"id": "pA", "name": "Ann", "connected": True},
                {"id": "pB", "name": "Bob", "connected": False},
            ],
            "spectators": [{"id": "pS", "name": "Sam", "connected": True}],
            "round": 1,
            "deal": {
                "number": 2,
                "progress": {"pA": {"score": 5, "home": 1, "moves": 1, "status": "playing"}},
            },
            "sheet": {
                "totals": {"pA": 40, "pB": 0},
                "rows": [{"cells": {"pA": {"total": 40}, "pB": {"total": 0}}}],
            },
            "history": [
                {
                    "number": 1,
                    "seed": "s33d",
                    "commitment": whole,
                    "summary": {"pA": {"score": 40, "status": "won", "place": 1}},
                }
            ],
        }
    )
    transcript = Transcript()
    joined = transcript.lines(room, RoomEvent("snapshot", 9, {}))
    assert joined == [
        "Room K7QX2M playing, round 1, deal 2/3 · players: Ann (host) 45 [1/52 home, 1 move,"
        " playing], Bob (away) 0 · watching: Sam",
        f"Deal 1 results: 1st Ann 40 (won)\nseed s33d, commitment\n{whole}",
    ]
    assert transcript.lines(room, RoomEvent("snapshot", 9, {})) == []
    moved = {"score": 10, "home": 2, "moves": 2, "status": "playing"}
    event = {"type": "progress", "seq": 10, "deal": 2, "player": "pA", "progress": moved}
    room.apply(event)
    assert transcript.lines(room, RoomEvent("progress", 10, event)) == [
        "Room K7QX2M playing, round 1, deal 2/3 · players: Ann (host) 50 [2/52 home, 2 moves,"
        " playing], Bob (away) 0 · watching: Sam"
    ]
    said = {"type": "reaction", "seq": 10, "player": "pB", "reaction": "gg"}
    room.apply(said)
    assert transcript.lines(room, RoomEvent("reaction", 10, said)) == ["Bob: good game"]
