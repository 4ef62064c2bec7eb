"""Race now in the browser (client/web/quick.js), in Chromium against a real
server: Ann and Bob keep their names as handles and press Race now on one
ladder; both pages are seated in one rated room, show its countdown, and the race
starts by itself. A guest is told to keep a name first; Leave queue takes the
page out at once. Waits on what the pages show (Playwright ``expect``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.web import WAIT_MS, Client

LAPTOP = (1280, 800)


@pytest.fixture
def people(browser: Browser, server: str) -> Iterator[Any]:
    made: list[Client] = []

    def person(label: str) -> Client:
        made.append(Client(browser, server, label, *LAPTOP))
        return made[-1]

    yield person
    for p in made:
        p.close()


def keep_name(person: Client, handle: str) -> Page:
    page = person.open()
    page.click("#open-keep")
    page.fill("#handle", handle)
    page.click("#take-handle")
    expect(page.locator("#codes-panel")).to_be_visible()
    page.check("#kept-codes")
    page.click("#codes-done")
    expect(page.locator("#me-handle")).to_have_text(handle)
    return page


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
