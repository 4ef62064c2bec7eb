"""Bots in the browser: Practice against bots to a finished round, and a bot the
host seats from the host panel in the lobby, shown in the member list and removed.

Bots move at a person's pace (0.4–1 s a move at ``fast``, give or take a bot's
tempo), so the practice round is one a bot is done with in a few dozen moves: one
deal, draw three, one pass through the stock (a bot resigns once nothing useful
is left), one fast bot, and the person resigns at once. The waits are on the
page (Playwright ``expect``), with room for the bot's deal.
"""

from __future__ import annotations

import re

from playwright.sync_api import Browser, expect

from tests.support.web import Client, no_errors, unfold_house_rules

BOT_DEAL_MS = 90_000  # a fast bot's deal of draw three, one pass: some 10–30 s


def test_practice_against_bots_to_a_finished_round(browser: Browser, server: str) -> None:
    ann = Client(browser, server, "ann")
    try:
        page = ann.open()
        page.fill("#name", "Ann")
        unfold_house_rules(page)  # practice takes Create's house rules, folded at first
        page.locator("#create-deals_per_round").fill("1")
        page.locator("#create-draw").select_option("3")
        page.locator("#create-stock_passes").fill("1")
        page.locator("#practice-bots").select_option("1")
        page.locator("#practice-pace").select_option("fast")
        page.click("#practice-btn")
        expect(page.locator("#room-screen")).to_be_visible()
        bot = page.locator("li.member", has=page.locator(".tag.bot"))
        expect(bot).to_have_count(1)
        expect(bot.locator(".tag.bot")).to_have_text("bot · fast")
        expect(page.locator("#board-controls")).to_be_visible()  # started at once

        page.click("#btn-resign")
        page.click("#btn-resign")  # confirmed
        expect(page.locator("#btn-rematch")).to_be_visible(timeout=BOT_DEAL_MS)
        bot_id = bot.get_attribute("data-player")
        assert bot_id
        expect(page.locator("#sheet")).to_contain_text("Bot Ada")
        ann.shot("practice")
        no_errors(ann)
    finally:
        ann.close()


def test_a_bot_seated_in_the_lobby_is_listed_and_removable(browser: Browser, server: str) -> None:
    ann = Client(browser, server, "ann")
    try:
        ann.create("Ann")
        page = ann.page
        page.locator("#bot-pace").select_option("relaxed")
        page.click("#btn-add-bot")
        bot = page.locator("li.member", has=page.locator(".tag.bot"))
        expect(bot).to_have_count(1)
        expect(bot.locator(".member-name")).to_have_text("Bot Ada")
        expect(bot.locator(".tag.bot")).to_have_text("bot · relaxed")
        expect(bot.locator(".tag.style")).to_have_text(re.compile("^(methodical|cautious|greedy)$"))
        expect(page.locator("#members-title")).to_have_text("Players (2/8)")

        bot.get_by_role("button", name="Remove Bot Ada").click()
        page.click('#members .confirm [data-confirm="yes"]')  # it asks first
        expect(bot).to_have_count(0)
        expect(page.locator("#members-title")).to_have_text("Players (1/8)")
        no_errors(ann)
    finally:
        ann.close()
