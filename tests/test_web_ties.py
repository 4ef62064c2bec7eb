"""Ties broken by time, in Chromium (docs/rules.md §7.1): where the server places
two players apart on a moment alone, the page shows each one's moment.

The break: Cat scores first and resigns; Bob reaches the same score later and
resigns; the host resigns at once, never scoring. The results table places Cat
1st and Bob 2nd, each with when they last scored, and the host 3rd with none.
A daily's board: Eve and Fay get the same cards home and score, Eve's last card
home sooner; the page's own run resigned at once. Eve ranks 1st and Fay 2nd,
each with when their last card went home, the page's run 3rd with none.

The servers run in a thread of this process on a clock the test moves, and the
other players are raw sockets on that server's loop."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser, expect

from protocol.placings import moment_text
from tests.support.inprocess import FakeClock, Seeds
from tests.support.raw_client import Client as Socket
from tests.support.raw_client import player
from tests.support.solver import board_from_view
from tests.support.threaded import ThreadedServer
from tests.support.web import WAIT_MS, Client, no_errors
from tests.test_daily_runs import got_to, up_to_home
from tests.test_placings import scoring_line
from tests.test_race import WIN_SEED
from tests.test_web_daily_run import DailyServer, run_server  # noqa: F401 (a fixture)

D1 = "classic-draw1"


def test_the_break_shows_when_each_of_two_equal_scores_was_reached(browser: Browser) -> None:
    with ThreadedServer(FakeClock(), draw_seed=Seeds(WIN_SEED)) as threaded:
        server, clock = threaded.server, threaded.clock
        assert clock is not None
        settings = {"variant": "thoughtful", "deals_per_round": 2, "race_bonus": 0,
                    "break_seconds": 60}  # fmt: skip

        async def seated() -> tuple[str, list[Socket]]:
            ann, bob, cat = [await player(server, n) for n in ("Ann", "Bob", "Cat")]
            code = (await ann.ok("create_room", settings=settings))["room"]["code"]
            for c in (bob, cat):
                await c.ok("join_room", code=code, role="player")
            return code, [ann, bob, cat]

        code, (ann, bob, cat) = threaded.call(seated())
        sam = Client(browser, threaded.http, "sam-ties")
        try:
            sam.join("Sam", code, "spectator")

            async def started() -> dict[str, Any]:
                await ann.ok("start")
                view: dict[str, Any] = (await ann.event("deal_started"))["deal"]["board"]
                return view

            prefix = scoring_line(board_from_view(threaded.call(started())))

            async def played() -> dict[str, Any]:
                for c, wait in ((cat, 1_000), (bob, 5_000)):
                    clock.advance(wait)
                    for move in prefix:
                        clock.advance(100)
                        await c.ok("move", deal=1, move=move.to_wire())
                for c in (cat, bob, ann):
                    await c.ok("move", deal=1, move={"kind": "resign"})
                summary: dict[str, Any] = (await ann.event("deal_over"))["deal"]["summary"]
                return summary

            summary = threaded.call(played())
            cat_t, bob_t = (summary[c.player]["scored_t"] for c in (cat, bob))
            assert summary[cat.player]["score"] == summary[bob.player]["score"] > 0
            assert 0 < cat_t < bob_t

            panel = sam.page.locator("#results")
            # The page takes in the whole deal first: on a busy machine, a while.
            expect(panel).to_be_visible(timeout=4 * WAIT_MS)
            rows = panel.locator("#results-table tbody tr")
            expect(rows).to_have_count(3)
            expect(rows.locator(".place")).to_have_text(
                [
                    f"1st last scored {moment_text(cat_t)}",
                    f"2nd last scored {moment_text(bob_t)}",
                    "3rd",
                ]
            )
            expect(rows.nth(0).locator("th")).to_have_text("Cat")
            expect(rows.nth(1).locator("th")).to_have_text("Bob")
            expect(rows.nth(2).locator(".tie-moment")).to_have_count(0)
            sam.shot("results-tie-moments", panel.locator("#results-table"))
            no_errors(sam)
        finally:
            sam.context.close()
            for c in (ann, bob, cat):
                threaded.call(c.close())


def test_the_daily_board_shows_when_each_last_card_went_home(
    run_server: DailyServer,  # noqa: F811 (the fixture)
    browser: Browser,
) -> None:
    threaded, clock = run_server, run_server.clock
    assert clock is not None
    deal = threaded.deals[D1]
    far = up_to_home(deal, 6)

    async def runs() -> None:
        for name, step in (("Eve", 3_000), ("Fay", 4_000)):
            c = await player(threaded.server, name)
            await got_to(c, clock, far, step)
            await c.close()

    threaded.call(runs(), 60)
    cyd = Client(browser, threaded.http, "cyd-ties")
    try:
        page = cyd.open("/")
        page.fill("#name", "Cyd")
        page.click("#daily-play-1")
        expect(page.locator("#board-host .board")).to_be_visible()
        page.keyboard.press("d")
        expect(page.locator("#board-host .slot.stock .count")).to_have_text("23")
        page.click("#btn-resign")
        page.click("#btn-resign")
        panel = page.locator("#daily-board")
        expect(panel.locator("#daily-board-you")).to_have_text("Your rank: 3 of 3")
        rows = panel.locator("tbody tr")
        expect(rows).to_have_count(3)
        last = len(far) - 1  # moves after the first, a step apart
        expect(rows.locator("td:first-child")).to_have_text(
            [
                f"1 last card home {moment_text(3_000 * last)}",
                f"2 last card home {moment_text(4_000 * last)}",
                "3",
            ]
        )
        expect(rows.nth(0)).to_contain_text("Eve")
        expect(rows.nth(1)).to_contain_text("Fay")
        expect(rows.nth(2)).to_contain_text("Cyd")
        cyd.shot("daily-board-tie-moments", panel)
        no_errors(cyd)
    finally:
        cyd.context.close()
