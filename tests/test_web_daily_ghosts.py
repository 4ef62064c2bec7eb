"""Ghosts in Chromium: two runs of the day played earlier (over sockets) race
a third player's run in the page as chips tagged "ghost" ("Leader",
"Median"), advancing as the server's clock (moved by the test) reaches their
moves; once the run is over, the comparison with the leader's run is drawn,
and the leader's run is replayed move by move once the day is over (refused,
and nothing of the deal received, before)."""

from __future__ import annotations

import asyncio

from playwright.sync_api import Browser, expect

from tests.support.dailies import winning_moves
from tests.support.raw_client import player
from tests.support.web import Client, no_errors
from tests.test_web_daily_run import DailyServer, run_server  # noqa: F401 (a fixture)

D1 = "classic-draw1"
DAY_MS = 86_400_000


async def _earlier_run(threaded: DailyServer, name: str, step_ms: int) -> None:
    """A run of today's draw-one daily over a socket: won, a move every ``step_ms``."""
    server, clock = threaded.server, threaded.clock
    client = await player(server, name)
    await client.ok("daily_start", ladder=D1)
    for move in winning_moves(threaded.deals[D1]):
        clock.advance(step_ms)
        assert (await client.request("move", deal=1, move=move.to_wire()))["type"] == "moved"
    await client.event("deal_over")
    await client.ok("leave_room")
    await client.close()


def test_a_daily_run_races_two_ghosts_then_compares_with_the_leader(
    run_server: DailyServer,  # noqa: F811 (the fixture)
    browser: Browser,
) -> None:
    for name, step in (("Bob", 300), ("Ann", 700)):
        run = _earlier_run(run_server, name, step)
        asyncio.run_coroutine_threadsafe(run, run_server.loop).result(60)
    cyd = Client(browser, run_server.http, "cyd-ghosts")
    received: list[str] = []
    cyd.page.on(
        "websocket",
        lambda ws: ws.on(
            "framereceived",
            lambda p: received.append(p if isinstance(p, str) else p.decode("latin-1")),
        ),
    )
    try:
        page = cyd.open("/")
        page.fill("#name", "Cyd")
        page.click("#daily-play-1")
        expect(page.locator("#board-host .board")).to_be_visible()
        chips = page.locator("#ghosts li.ghost")
        expect(chips).to_have_count(2)
        leader, median = chips.nth(0), chips.nth(1)
        expect(leader.locator(".rival-name")).to_have_text("Leader")
        expect(median.locator(".rival-name")).to_have_text("Median")
        expect(leader.locator(".ghost-tag")).to_have_text("ghost")
        expect(leader.locator(".rival-moves")).to_have_text("0 mv")  # waiting for the first move

        run_server.advance(1000)
        page.keyboard.press("d")  # the first move: the ghosts set off
        expect(page.locator("#board-host .slot.stock .count")).to_have_text("23")
        expect(leader.locator(".rival-moves")).to_have_text("1 mv")
        expect(median.locator(".rival-moves")).to_have_text("1 mv")
        run_server.advance(2100)  # the leader moves every 0.3 s, the median every 0.7 s
        expect(leader.locator(".rival-moves")).to_have_text("8 mv")
        expect(median.locator(".rival-moves")).to_have_text("4 mv")
        run_server.advance(len(winning_moves(run_server.deals[D1])) * 700)  # both home by now
        expect(leader.locator(".rival-status")).to_have_text("✓ won")
        expect(median.locator(".rival-status")).to_have_text("✓ won")
        expect(leader.locator(".rival-home")).to_have_text("52/52")
        cyd.shot("daily-ghosts", page.locator("#hud"))

        page.click("#btn-resign")
        page.click("#btn-resign")
        compare = page.locator("#daily-compare")
        expect(compare).to_be_visible()
        chart = compare.locator("svg.compare-chart")
        expect(chart).to_have_attribute("data-leader", "52")
        expect(chart.locator("polyline.compare-leader")).to_have_count(1)
        expect(compare.locator("#compare-gap-text")).to_contain_text(
            "The gap opened at card 1: you never got it home"
        )
        cyd.shot("daily-compare", compare)

        # The leader's run in the replayer: not while the day runs.
        page.click("#daily-leader-line")
        replay = page.locator("#daily-leader-replay")
        expect(replay.locator(".bad")).to_have_text(
            "Not yet: the leader's moves are shown once that day is over."
        )
        seed = run_server.deals[D1].seed
        assert received and not any(seed in frame for frame in received)
        run_server.advance(DAY_MS)  # the day is over: its seed is public
        page.click("#daily-leader-line")
        expect(replay.locator(".past-seed .seed")).to_have_text(seed)
        expect(replay.locator(".past-seed .ok")).to_have_text("✓ matches its commitment")
        expect(replay.locator(".past-player .tile-name")).to_have_text("Bob")
        expect(replay.locator(".past-player .replayed")).to_have_text("✓ replays to this board")
        n_moves = len(winning_moves(run_server.deals[D1]))
        expect(replay.locator(".past-log li")).to_have_count(n_moves)
        cyd.shot("daily-leader-replay", replay)
        no_errors(cyd)
    finally:
        cyd.context.close()
