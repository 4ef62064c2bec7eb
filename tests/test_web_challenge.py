"""A challenge in Chromium: Ann (signed in, over a socket) wins today's daily
and makes a challenge of her run; a second page opens the link (a guest: it
picks a name and presses Play), plays the deal with her run advancing as a
ghost chip, and once its run is over sees both results, on its profile too; and the second page's
frames never carried the seed."""

from __future__ import annotations

import asyncio
import re

from playwright.sync_api import Browser, expect

from tests.support.dailies import winning_moves
from tests.support.raw_client import player
from tests.support.web import Client, no_errors
from tests.test_web_accounts import keep_codes, take_handle
from tests.test_web_daily_run import DailyServer, run_server  # noqa: F401 (a fixture)

D1 = "classic-draw1"
DAY_MS = 86_400_000


async def _challenge(threaded: DailyServer) -> str:
    """Ann's won run of today's draw-one daily (a move every 0.3 s), challenged: the code."""
    server, clock = threaded.server, threaded.clock
    ann = await player(server, "Ann")
    await ann.ok("take_handle", handle="Ann")
    await ann.ok("daily_start", ladder=D1)
    for move in winning_moves(threaded.deals[D1]):
        clock.advance(300)
        assert (await ann.request("move", deal=1, move=move.to_wire()))["type"] == "moved"
    await ann.event("deal_over")
    await ann.ok("leave_room")
    date = (await ann.ok("daily"))["today"]
    made = await ann.ok("challenge", key=f"daily/{date}/{D1}")
    await ann.close()
    code: str = made["code"]
    return code


def test_a_challenge_link_is_opened_by_a_second_page_and_played(
    run_server: DailyServer,  # noqa: F811 (the fixture)
    browser: Browser,
) -> None:
    code = asyncio.run_coroutine_threadsafe(_challenge(run_server), run_server.loop).result(60)
    seed = run_server.deals[D1].seed
    run_server.advance(DAY_MS)  # the day is over: anyone may take its daily's challenge
    cyd = Client(browser, run_server.http, "cyd-challenge")
    received: list[str] = []
    cyd.page.on(
        "websocket",
        lambda ws: ws.on(
            "framereceived",
            lambda p: received.append(p if isinstance(p, str) else p.decode("latin-1")),
        ),
    )
    try:
        page = cyd.open(f"/#challenge={code}")
        panel = page.locator("#challenge-panel")
        expect(panel).to_be_visible()
        page.fill("#name", "Cyd")
        page.click("#challenge-play")
        expect(page.locator("#board-host .board")).to_be_visible()
        chip = page.locator("#ghosts li.ghost")
        expect(chip).to_have_count(1)
        expect(chip.locator(".rival-name")).to_have_text("Ann")
        expect(chip).to_have_attribute("data-kind", "challenger")
        expect(chip.locator(".rival-moves")).to_have_text("0 mv")

        run_server.advance(1000)
        page.keyboard.press("d")  # the first move: the challenger's ghost sets off
        expect(page.locator("#board-host .slot.stock .count")).to_have_text("23")
        expect(chip.locator(".rival-moves")).to_have_text("1 mv")
        run_server.advance(2100)
        expect(chip.locator(".rival-moves")).to_have_text("8 mv")
        cyd.shot("challenge-ghost", page.locator("#hud"))

        page.click("#btn-resign")
        page.click("#btn-resign")
        results = page.locator("#challenge-results")
        expect(results).to_be_visible()
        rows = results.locator("tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.nth(0)).to_contain_text("Ann")
        expect(rows.nth(0)).to_contain_text("won")
        expect(rows.nth(1)).to_contain_text("Cyd")
        expect(rows.nth(1)).to_contain_text("resigned")
        # Placed as the server placed them (the rule of runs): a win first.
        expect(rows.locator(".place")).to_have_text(["1st", "2nd"])
        expect(page.locator("#challenge-verdict")).to_have_text("Ann won the challenge.")
        cyd.shot("challenge-results", page.locator("#daily-board"))

        # The profile lists it, both results.
        page.click("#profile-open")
        listed = page.locator("#profile-challenges li")
        expect(listed).to_have_count(1)
        expect(listed).to_contain_text("Ann challenged you")
        expect(listed).to_contain_text("Ann: won")
        expect(listed).to_contain_text("Cyd: resigned")

        # The day is over: its seed is public in the lobby's `daily` listing,
        # and in no frame of the challenge, nor any other.
        leaks = [f for f in received if seed in f and not f.startswith('{"type":"daily",')]
        assert received and leaks == [], leaks[:1]
        no_errors(cyd)
    finally:
        cyd.context.close()


def test_challenge_a_friend_from_a_daily_runs_comparison(
    run_server: DailyServer,  # noqa: F811 (the fixture)
    browser: Browser,
) -> None:
    """Signed in, a daily run over: *Challenge a friend* under the comparison
    gives the link; a second page opens it and plays under the challenger's ghost."""
    ann = Client(browser, run_server.http, "ann-challenges")
    bob = Client(browser, run_server.http, "bob-challenged")
    try:
        page = ann.open("/")
        page.fill("#name", "Ann")
        page.click("#daily-play-1")
        expect(page.locator("#board-host .board")).to_be_visible()
        page.click("#open-keep")
        take_handle(page, "Ann")
        keep_codes(page)
        expect(page.locator("#board-host .board")).to_be_visible()
        run_server.advance(1000)
        page.keyboard.press("d")
        expect(page.locator("#board-host .slot.stock .count")).to_have_text("23")
        page.click("#btn-resign")
        page.click("#btn-resign")
        compare = page.locator("#daily-compare")
        expect(compare).to_be_visible()
        compare.locator("button[data-challenge]").click()
        field = compare.locator("input.challenge-url")
        expect(field).to_have_value(re.compile(r"/#challenge=[0-9A-Z]{26}$"))
        url = field.input_value()
        ann.shot("challenge-made", compare)

        run_server.advance(DAY_MS)  # the day is over: anyone may take its daily's challenge
        other = bob.open(url[url.index("/#") :])
        other.fill("#name", "Bob")
        other.click("#challenge-play")
        chip = other.locator("#ghosts li.ghost")
        expect(chip).to_have_count(1)
        expect(chip.locator(".rival-name")).to_have_text("Ann")
        no_errors(ann, bob)
    finally:
        ann.context.close()
        bob.context.close()
