"""Nothing of one room's screen survives into the next, in Chromium: Ann and Bob,
signed in, finish a rated round (each podium shows both rating changes) and Ann
leaves (Bob's page says he is the host now); each then plays today's daily. The
daily run's room is a room of its own, counting its rounds from 1 again: its
podium shows no rating change (the daily is not rated) and Bob's page no longer
says who hosts the room he left. Waits on what the pages show (Playwright
``expect``), never on time; the server's clock is the test's."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Page, expect

from tests.support.web import Client, keep_name, no_errors, unfold_house_rules
from tests.test_web_daily_run import DailyServer, run_server  # noqa: F401 (a fixture)


def resign(page: Page) -> None:
    page.click("#btn-resign")
    page.click("#btn-resign")  # the second press confirms


def enter_the_daily(page: Page) -> None:
    """From the lobby: today's draw-one daily, its board shown."""
    page.click("#daily-play-1")
    expect(page.locator("#room-screen")).to_be_visible()
    expect(page.locator("#board-host .board")).to_be_visible()


def finish_the_daily(server: DailyServer, page: Page) -> None:
    """A move, then resigned: the run over, its room at round over."""
    server.advance(1000)
    page.keyboard.press("d")  # the run's first move
    expect(page.locator("#board-host .slot.stock .count")).to_have_text("23")
    resign(page)
    expect(page.locator("#daily-board")).to_be_visible()


def test_a_daily_run_after_a_rated_round_shows_none_of_its_rating_changes_or_notices(
    run_server: DailyServer,  # noqa: F811 (the fixture)
    browser: Browser,
) -> None:
    ann = Client(browser, run_server.http, "ann-next")
    bob = Client(browser, run_server.http, "bob-next")
    try:
        ap, bp = keep_name(ann, "AnnNext"), keep_name(bob, "BobNext")
        unfold_house_rules(ap)
        ap.locator("#create-deals_per_round").fill("1")
        ap.locator("#create-break_seconds").fill("0")
        ap.click("#create-btn")
        expect(ap.locator("#room-screen")).to_be_visible()
        code = ap.locator("#room-code").inner_text()
        bp.goto(f"{bob.base}/#join={code}")
        expect(bp.locator("#join-code")).to_have_value(code)
        bp.check("input[name=role][value=player]")
        bp.click("#join-btn")
        expect(ap.locator("#members li.member")).to_have_count(2)
        ap.check("#host-rated")
        expect(ap.locator("#rules-summary")).to_contain_text("rated")

        ap.click("#btn-start")
        for page in (ap, bp):
            expect(page.locator("#btn-resign")).to_be_visible()
        run_server.advance(1000)
        resign(ap)
        resign(bp)
        for page in (ap, bp):
            expect(page.locator("#podium")).to_be_visible()
            changes = page.locator("#podium .podium-rating")
            expect(changes).to_have_count(2)  # applied: the page holds them
            expect(changes.first).to_have_text(re.compile(r"^[+-]?\d+ → \d+\?$"))

        ap.click("#leave")
        expect(ap.locator("#lobby-screen")).to_be_visible()
        host_news = bp.locator("#news-host")
        expect(host_news).to_have_text(
            "You are the host now: the host controls are yours. AnnNext left."
        )
        bp.click("#leave")
        expect(bp.locator("#lobby-screen")).to_be_visible()

        enter_the_daily(bp)
        # Read once, as the daily's room is first drawn: the news of the room
        # left behind goes stale by itself a few seconds later, so a wait for it
        # to go would pass whether the page dropped it on entering or not.
        assert host_news.count() == 0, host_news.inner_text()
        finish_the_daily(run_server, bp)
        enter_the_daily(ap)
        finish_the_daily(run_server, ap)
        for page in (ap, bp):
            podium = page.locator("#podium")
            expect(podium).to_be_visible()
            expect(podium).to_contain_text("Round 1 podium")
            expect(podium.locator(".podium-player.mine")).to_be_visible()
            expect(podium.locator(".podium-rating")).to_have_count(0)
            expect(podium).not_to_contain_text("→")
            expect(page.locator("#rated-panel")).to_be_hidden()
        bob.shot("next-room-daily-podium", bp.locator("#podium"))
        no_errors(ann, bob)
    finally:
        ann.close()
        bob.close()
