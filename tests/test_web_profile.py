"""The Profile screen (client/web/profile.js) in headless Chromium against a real
server: a player alone plays a round of two deals (a move, then resigning), opens
their profile from the header and finds the totals, both charts drawn with a
mark per point the server gave (a dot per deal, a bar per week), the deals newest
first with their placings and scores, and a past deal opened in the replayer,
its log followed from the seed to the revealed board. ``/p/HANDLE`` serves the
same page, which asks for that record and says when there is none to show; a
record of 21 deals lists 20, and the rest after More."""

from __future__ import annotations

import asyncio
import re
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from playwright.sync_api import Browser, Page, expect

from server.accounts.profile import CHART_WEEKS
from tests.support.raw_client import player
from tests.support.web import Client, no_errors, wait_until


def stock(client: Client) -> int | None:
    board = client.board()
    return None if board is None else board["stock"]


def resign(page: Page) -> None:
    page.click("#btn-resign")
    page.click("#btn-resign")  # the second click within four seconds confirms


def test_profile_charts_deals_and_a_replay(server: str, browser: Browser) -> None:
    ann = Client(browser, server, "ann-profile")
    try:
        ann.create("Ann", deals_per_round=2)
        page = ann.page
        page.click("#btn-start")
        expect(page.locator("#board-host")).to_be_visible()
        # Deal 1: a draw, then resign; deal 2: resign at once.
        wait_until(page, lambda: stock(ann) == 24, "deal 1's board")
        page.keyboard.press("d")
        wait_until(page, lambda: stock(ann) == 23, "the draw")
        resign(page)
        expect(page.locator('#past-picker [data-deal="1"]')).to_be_visible()
        wait_until(page, lambda: stock(ann) == 24, "deal 2's board")
        resign(page)  # the round's last deal: the podium
        expect(page.locator("#podium")).to_be_visible()

        page.click("#profile-open")
        screen = page.locator("#profile-screen")
        expect(screen).to_be_visible()
        expect(page.locator("#room-screen")).to_be_hidden()
        totals = screen.locator("table.profile-totals tbody tr")
        expect(totals).to_have_count(1)
        expect(totals.first.locator("td").first).to_have_text("2")  # deals
        rows = screen.locator("#deal-list tbody tr")
        expect(rows).to_have_count(2)
        code = page.locator("#room-code").inner_text()
        keys = [rows.nth(i).get_attribute("data-key") or "" for i in range(2)]
        newest_first = [f"{code}/1/2", f"{code}/1/1"]
        assert [re.sub(r"-\d+/", "/", k) for k in keys] == newest_first
        expect(rows.first.locator("td.place")).to_have_text("1st")
        expect(page.locator("#deals-more")).to_have_count(0)  # one page only

        scores = screen.locator("#score-chart svg")
        expect(scores).to_have_attribute("data-points", "2")
        expect(scores.locator("circle.chart-dot")).to_have_count(2)
        weeks = screen.locator("#weeks-chart svg")
        expect(weeks).to_have_attribute("data-points", str(CHART_WEEKS))
        expect(weeks.locator("rect.chart-bar")).to_have_count(CHART_WEEKS)

        # Deal 1 in the replayer: the seed checked, the log followed to the board.
        rows.nth(1).locator("button[data-replay]").click()
        replay = screen.locator("#profile-replay")
        expect(replay).to_contain_text(f"Room {code}, round 1, deal 1")
        expect(replay.locator(".past-seed")).to_contain_text("✓ matches its commitment")
        expect(replay.locator(".replayed")).to_have_count(1)
        ann.shot("profile", screen)

        page.click("#profile-close")
        expect(page.locator("#room-screen")).to_be_visible()
        no_errors(ann)
    finally:
        ann.close()


async def race_and_take_handle(url: str, handle: str) -> str:
    """Over a socket of its own: a player races alone, a round of 20 deals and
    the first deal of a rematch (a draw and resigning, then resigning each), and
    takes ``handle``; the room's code."""
    zed = await player(url, "Zed")
    try:
        settings = {"deals_per_round": 20, "break_seconds": 0}
        code: str = (await zed.ok("create_room", settings=settings))["room"]["code"]
        await zed.ok("start")
        await zed.event("deal_started")
        await zed.ok("move", deal=1, move={"kind": "draw"})
        for number in range(1, 21):
            await zed.ok("move", deal=number, move={"kind": "resign"})
            await zed.event("deal_over")
            if number < 20:
                await zed.event("deal_started")
        await zed.event("round_over")
        await zed.ok("rematch")
        await zed.event("deal_started")
        await zed.ok("move", deal=1, move={"kind": "resign"})
        await zed.event("deal_over")
        await zed.ok("take_handle", handle=handle)
        return code
    finally:
        await zed.close()


def test_a_public_page_by_handle(server: str, browser: Browser) -> None:
    with urllib.request.urlopen(f"{server}/p/Somebody") as answer:
        assert answer.status == 200
        assert b'id="profile-screen"' in answer.read()
    url = server.replace("http://", "ws://") + "/ws"
    with ThreadPoolExecutor(1) as pool:  # its own event loop, beside Playwright's
        code = pool.submit(asyncio.run, race_and_take_handle(url, "Zed")).result(30)
    visitor = Client(browser, server, "visitor-profile")
    try:
        page = visitor.open("/p/Nobody%20Here")
        screen = page.locator("#profile-screen")
        expect(screen).to_be_visible()
        expect(page.locator("#profile-title")).to_have_text("Nobody Here")
        expect(screen.locator(".profile-private")).to_have_text("Nobody has that handle.")

        page = visitor.open("/p/zed")  # handles are matched without case
        expect(page.locator("#profile-title")).to_have_text("Zed")
        rows = screen.locator("#deal-list tbody tr")
        expect(rows).to_have_count(20)  # a page
        expect(rows.first).to_have_attribute("data-key", re.compile(rf"{code}-\d+/2/1"))
        page.click("#deals-more")
        expect(rows).to_have_count(21)
        expect(page.locator("#deals-more")).to_have_count(0)  # no page after it
        first = rows.nth(20)
        expect(first).to_have_attribute("data-key", re.compile(rf"{code}-\d+/1/1"))
        expect(screen.locator("#score-chart circle.chart-dot")).to_have_count(21)
        expect(screen.locator("#weeks-chart rect.chart-bar")).to_have_count(CHART_WEEKS)
        first.locator("button[data-replay]").click()
        expect(screen.locator("#profile-replay .replayed")).to_have_count(1)
        expect(screen.locator("#profile-replay .log li")).to_have_count(2)  # draw, resign
        no_errors(visitor)
    finally:
        visitor.close()
