"""Reactions in the browser (client/web/reactions.js), in headless Chromium against
a real server: a tap on a reaction button shows on every page of the room with the
sender's name; while a deal runs a spectator's reaction shows on the spectators'
pages and never on a player's. The screenshot is artifacts/reactions.png."""

from __future__ import annotations

from playwright.sync_api import Browser, Locator, Page, expect

from tests.support.web import Client, no_errors

# Records every reaction the page's feed shows (the feed drops each after a few
# seconds): what a test reads to say one was never shown.
WATCH_FEED = """() => {
  window.shownReactions = [];
  new MutationObserver((changes) => {
    for (const change of changes) for (const node of change.addedNodes) {
      const seen = node.dataset;
      if (seen) window.shownReactions.push(`${seen.player}:${seen.reaction}`);
    }
  }).observe(document.getElementById("reaction-feed"), { childList: true });
}"""


def feed(page: Page, player: str, reaction: str) -> Locator:
    return page.locator(
        f'#reaction-feed .reaction[data-player="{player}"][data-reaction="{reaction}"]'
    )


def test_reactions_reach_the_room_and_a_spectators_stay_with_spectators(
    server: str, browser: Browser
) -> None:
    ann = Client(browser, server, "ann-react")
    bob = Client(browser, server, "bob-react")
    sam = Client(browser, server, "sam-react")
    everyone = (ann, bob, sam)
    try:
        code = ann.create("Ann")
        bob.join("Bob", code)
        sam.join("Sam", code, role="spectator")
        expect(ann.page.locator("#members li.member")).to_have_count(2)
        a_id, b_id = ann.my_id(), bob.my_id()

        # In the lobby: Ann's applause on every page, with her name.
        ann.page.click('#reaction-bar [data-reaction="clap"]')
        for c in everyone:
            item = feed(c.page, a_id, "clap")
            expect(item).to_be_visible()
            expect(item).to_contain_text("Ann")
            expect(item).to_contain_text("👏")
            expect(item.locator(".reaction-word")).to_have_text("bravo")
        sam.shot("reactions")

        # A deal runs: Sam's reaction stays with the spectators.
        ann.page.click("#btn-start")
        expect(bob.page.locator("#deal-of")).to_have_text("1 of 3")
        for c in (ann, bob):  # every reaction these pages show from now on
            c.page.evaluate(WATCH_FEED)
        sam.page.click('#reaction-bar [data-reaction="wow"]')
        expect(sam.page.locator('#reaction-feed .reaction[data-reaction="wow"]')).to_contain_text(
            "Sam"
        )
        # Bob's own reaction comes after Sam's on every connection: once it shows
        # on Bob's page, Sam's would have shown there first, had it been sent.
        bob.page.click('#reaction-bar [data-reaction="fire"]')
        for c in everyone:
            expect(feed(c.page, b_id, "fire")).to_be_visible()
        for c in (ann, bob):
            assert c.page.evaluate("window.shownReactions") == [f"{b_id}:fire"]
        no_errors(*everyone)
    finally:
        for c in everyone:
            c.close()
