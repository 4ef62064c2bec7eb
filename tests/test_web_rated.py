"""A rated round in the browser (client/web/ladders.js, series.js), in Chromium
against a real server: Ann and Bob keep their names as handles; Ann's room
refuses ``rated`` while a guest sits in it (the reason shown under the switch),
takes it once the guest has gone; each page shows its predicted placing before
the round, the podium shows each player's rating change after it, and the
Ladders screen lists both with Ann's chart. Waits on what the pages show
(Playwright ``expect``), never on time. Screenshots: artifacts/rated-podium.png,
artifacts/ladders.png."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

from tests.support.web import keep_name, unfold_house_rules


def resign(page: Page) -> None:
    page.click("#btn-resign")
    page.click("#btn-resign")  # the second press confirms


def test_a_rated_round_forecast_then_rating_changes_then_the_ladder(people: Any) -> None:
    ann, bob, cat = people("ann-rated"), people("bob-rated"), people("cat-rated")
    ap = keep_name(ann, "AnnRated")
    bp = keep_name(bob, "BobRated")

    unfold_house_rules(ap)
    ap.locator("#create-deals_per_round").fill("1")
    ap.locator("#create-break_seconds").fill("0")
    ap.click("#create-btn")
    expect(ap.locator("#room-screen")).to_be_visible()
    code = ap.locator("#room-code").inner_text()

    # A guest at the table: rated is refused, and the page says why.
    cat.join("Cat", code)
    expect(ap.locator("#members li.member")).to_have_count(2)
    ap.check("#host-rated")
    expect(ap.locator("#host-rated-error")).to_contain_text("signed-in players only")
    cat.page.click("#leave")
    expect(ap.locator("#members li.member")).to_have_count(1)

    bp.goto(f"{bob.base}/#join={code}")
    expect(bp.locator("#join-code")).to_have_value(code)
    bp.check("input[name=role][value=player]")
    bp.click("#join-btn")
    expect(ap.locator("#members li.member")).to_have_count(2)
    ap.uncheck("#host-rated")
    ap.check("#host-rated")
    expect(ap.locator("#rules-summary")).to_contain_text("rated")

    # Before the round: each page shows its own predicted placing.
    for page in (ap, bp):
        expect(page.locator("#rated-panel")).to_be_visible()
        expect(page.locator("#my-forecast")).to_contain_text(re.compile(r"Predicted: [12](st|nd)"))
        expect(page.locator("#forecast li")).to_have_count(2)

    ap.click("#btn-start")
    expect(ap.locator("#btn-resign")).to_be_visible()
    expect(bp.locator("#btn-resign")).to_be_visible()
    resign(ap)
    resign(bp)

    # The podium: each player's rating change, once applied.
    for page in (ap, bp):
        expect(page.locator("#podium")).to_be_visible()
        changes = page.locator("#podium .podium-rating")
        expect(changes).to_have_count(2)
        for i in range(2):
            expect(changes.nth(i)).to_have_text(re.compile(r"^[+-]?\d+ → \d+\?$"))
    ann.shot("rated-podium")

    # The Ladders screen: both rated, Ann's place and her chart of one round.
    ap.click("#ladders-open")
    expect(ap.locator("#ladders-screen")).to_be_visible()
    expect(ap.locator("#ladder-top tbody tr")).to_have_count(2)
    expect(ap.locator("#ladder-top")).to_contain_text("AnnRated")
    expect(ap.locator("#ladder-top")).to_contain_text("BobRated")
    expect(ap.locator("#ladder-position")).to_contain_text(re.compile(r"You are (1st|2nd)"))
    expect(ap.locator("#rating-chart svg")).to_have_attribute("data-points", "1")
    ann.shot("ladders")
    ap.select_option("#ladder-pick", "classic-draw3")
    expect(ap.locator("#ladder-position")).to_contain_text("no rating on this ladder yet")
    ap.click("#ladders-close")
    expect(ap.locator("#room-screen")).to_be_visible()

    # The profile: the rating on the ladder, with its chart.
    ap.click("#profile-open")
    ratings = ap.locator("#profile-ratings figure[data-ladder=classic-draw1]")
    expect(ratings).to_contain_text("Classic, draw 1: ")
    expect(ratings).to_contain_text("(provisional) after 1 rated round")
    expect(ratings.locator("svg")).to_have_attribute("data-points", "1")
