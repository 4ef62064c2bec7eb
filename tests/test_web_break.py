"""The break between deals and a late friend, in Chromium: a real server process,
real pages (host, friend, spectator, a friend who comes mid-round by the invite
link). Waits on what the pages show (Playwright ``expect``), never on time."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, expect

from tests.support.web import Client, no_errors


def resign(page: object) -> None:
    page.click("#btn-resign")  # type: ignore[attr-defined]
    page.click("#btn-resign")  # type: ignore[attr-defined]  # confirmed


def test_the_break_shows_results_and_ready_starts_the_next_deal(
    browser: Browser, server: str
) -> None:
    host, friend, spec = (Client(browser, server, n) for n in ("host", "friend", "spec"))
    try:
        code = host.create("Ann", deals_per_round=3, break_seconds=60)
        friend.join("Bob", code)
        spec.join("Sam", code, "spectator")
        host.page.click("#btn-start")
        for c in (host, friend):
            expect(c.page.locator("#btn-resign")).to_be_visible()
            resign(c.page)
        for c in (host, friend, spec):
            panel = c.page.locator("#results")
            expect(panel).to_be_visible()
            expect(panel.locator("#results-title")).to_contain_text("Deal 1")
            expect(panel.locator("#results-table tbody tr")).to_have_count(2)
            # The server's placings: both resigned at 0, never scoring, so they
            # share the first place, whoever resigned first; no time told them apart.
            expect(panel.locator("#results-table tbody .place")).to_have_text(["=1st", "=1st"])
            expect(panel.locator("#results-table .tie-moment")).to_have_count(0)
            expect(panel.locator(".results-boards .wall-tile")).to_have_count(2)
            expect(panel.locator(".results-seed")).to_contain_text("matches the commitment")
            expect(panel.locator("#results-countdown")).to_have_text(
                re.compile(r"Deal 2 starts in (5\d|60) s")
            )
        expect(spec.page.locator("#btn-ready")).to_have_count(0)  # spectators watch
        expect(friend.page.locator("#btn-next-now")).to_have_count(0)  # host only
        expect(host.page.locator("#btn-next-now")).to_be_visible()
        host.shot("results-break")

        friend.page.click("#btn-ready")
        expect(host.page.locator("#results-ready li.is-ready")).to_have_text(["Bob ✓ ready"])
        expect(friend.page.locator("#btn-ready")).to_be_disabled()
        host.page.click("#btn-ready")  # the last one: the next deal, at once
        for c in (host, friend, spec):
            expect(c.page.locator("#results")).to_be_hidden()
        expect(host.page.locator("#btn-resign")).to_be_visible()
        expect(host.page.locator("#sheet-table tbody tr")).to_have_count(2)  # deal 1, deal 2 live

        # The host's "Next deal now" in the next break.
        for c in (host, friend):
            resign(c.page)
        expect(host.page.locator("#results-title")).to_contain_text("Deal 2")
        host.page.click("#btn-next-now")
        expect(spec.page.locator("#results")).to_be_hidden()
        expect(friend.page.locator("#btn-resign")).to_be_visible()
        no_errors(host, friend, spec)
    finally:
        for c in (host, friend, spec):
            c.close()


def test_a_late_friend_is_told_sits_out_and_plays_the_next_deal(
    browser: Browser, server: str
) -> None:
    host, late = Client(browser, server, "host"), Client(browser, server, "late")
    eve = Client(browser, server, "eve")
    try:
        code = host.create("Ann", deals_per_round=2, break_seconds=60)
        host.page.click("#btn-start")
        expect(host.page.locator("#btn-resign")).to_be_visible()

        page = late.open(f"/#join={code}")
        page.fill("#name", "Dan")
        page.click("#join-btn")  # first: what the room is doing, before joining
        note = page.locator("#invite-note")
        expect(note).to_contain_text("A round is running")
        expect(note).to_contain_text("you will play from the next deal")
        expect(page.locator("#lobby-screen")).to_be_visible()
        page.click("#join-btn")
        expect(page.locator("#room-screen")).to_be_visible()
        expect(page.locator("#table-message")).to_contain_text("sit this deal out")
        expect(page.locator("#btn-resign")).to_be_hidden()
        dan = page.locator("li.member", has_text="Dan")
        expect(dan.locator(".tag.joining")).to_have_text("joining")
        expect(
            host.page.locator("li.member", has_text="Dan").locator(".tag.joining")
        ).to_be_visible()

        # Another friend is told as soon as they have typed a name: one press joins.
        eve_page = eve.open(f"/#join={code}")
        eve_page.fill("#name", "Eve")
        eve_page.press("#name", "Tab")
        expect(eve_page.locator("#invite-note")).to_contain_text("A round is running")
        eve_page.click("#join-btn")
        expect(eve_page.locator("#room-screen")).to_be_visible()

        resign(host.page)  # Ann was the only one dealt in: the deal is over
        expect(page.locator("#results")).to_be_visible()
        expect(page.locator("#sheet-table td.absent")).to_have_count(2)  # Dan's and Eve's
        page.click("#btn-ready")
        eve_page.click("#btn-ready")
        host.page.click("#btn-ready")
        expect(page.locator("#results")).to_be_hidden()
        expect(page.locator("#btn-resign")).to_be_visible()  # Dan plays deal 2
        expect(dan.locator(".tag.joining")).to_have_count(0)
        expect(page.locator("#board-host .card").first).to_be_visible()
        no_errors(host, late, eve)
    finally:
        host.close()
        late.close()
        eve.close()
