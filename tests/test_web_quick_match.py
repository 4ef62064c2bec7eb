"""Race now in the browser (client/web/quick.js), in Chromium against a real
server: Ann and Bob keep their names as handles and press Race now on one
ladder; both pages are seated in one rated room, show its countdown, and the race
starts by itself. A guest is told to keep a name first; Leave queue takes the
page out at once; a page reloaded mid-countdown shows the countdown again.
Waits on what the pages show (Playwright ``expect``)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser, expect

from server.matchmaking.queues import COUNTDOWN_MS
from tests.support.inprocess import FakeClock
from tests.support.threaded import ThreadedServer
from tests.support.web import WAIT_MS, Client, keep_name, no_errors


def test_race_now_matches_two_pages_counts_down_and_starts(people: Any) -> None:
    guest = people("gus-quick").open()
    guest.click("#quick-race")
    expect(guest.locator("#quick-error")).to_contain_text("keep your name")

    ann, bob = people("ann-quick"), people("bob-quick")
    ap, bp = keep_name(ann, "AnnQuick"), keep_name(bob, "BobQuick")

    # In and out of the queue: Leave queue is at once.
    ap.select_option("#quick-ladder", "thoughtful-draw3")
    ap.click("#quick-race")
    expect(ap.locator("#quick-status")).to_contain_text("Looking for rivals")
    ap.click("#quick-leave")
    expect(ap.locator("#quick-race")).to_be_visible()

    for page in (ap, bp):
        page.select_option("#quick-ladder", "thoughtful-draw3")
        page.click("#quick-race")
    for page in (ap, bp):
        expect(page.locator("#room-screen")).to_be_visible()
        expect(page.locator("#quick-countdown")).to_contain_text("The race starts in")
    assert ap.locator("#room-code").inner_text() == bp.locator("#room-code").inner_text()
    for page in (ap, bp):  # the countdown is the server's 5 s: longer than expect's default
        expect(page.locator("#room-screen")).to_have_attribute(
            "data-state", "playing", timeout=WAIT_MS * 3
        )
        expect(page.locator("#quick-countdown")).to_be_hidden()
    ap.screenshot(path="artifacts/quick-match.png")


def clocked_server() -> ThreadedServer:
    """The server on a clock the test moves: the countdown lasts until the test
    ends it, however slow the page is."""
    return ThreadedServer(FakeClock(), publish_daily=False)


def test_a_page_reloaded_during_the_countdown_shows_it_again(browser: Browser) -> None:
    with clocked_server() as server:
        ann, bob = (
            Client(browser, server.http, "ann-back"),
            Client(browser, server.http, "bob-back"),
        )
        try:
            ap, bp = keep_name(ann, "AnnBack"), keep_name(bob, "BobBack")
            for page in (ap, bp):
                page.select_option("#quick-ladder", "classic-draw1")
                page.click("#quick-race")
            for page in (ap, bp):
                expect(page.locator("#quick-countdown")).to_contain_text("The race starts in")
            code = ap.locator("#room-code").inner_text()
            bp.reload()  # back mid-countdown: its welcome's room view says when
            expect(bp.locator("#room-screen")).to_be_visible()
            assert bp.locator("#room-code").inner_text() == code
            expect(bp.locator("#quick-countdown")).to_contain_text("The race starts in")
            server.advance(COUNTDOWN_MS)
            for page in (ap, bp):
                expect(page.locator("#room-screen")).to_have_attribute("data-state", "playing")
                expect(page.locator("#quick-countdown")).to_be_hidden()
            no_errors(ann, bob)
        finally:
            ann.close()
            bob.close()
