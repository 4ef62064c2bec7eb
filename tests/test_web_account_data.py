"""The Account screen's own data in the browser (client/web/mydata.js), in
Chromium against a real server: a handle taken just now cannot change yet and
the screen says from when; the switches of what others see; the export is a
download of everything kept (made in the page, as its policy allows); deleting
asks for the handle typed again, refuses another, then turns the page back into
a guest's, while the other player in the room sees "a deleted player".

Waits on what the pages show (Playwright ``expect``), never on time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.support.web import no_errors

DEVICE_KEY = "klondike-race.device"


def test_export_download_and_delete(people: Any, tmp_path: Path) -> None:
    ann, bea = people("ann"), people("bea")
    code = ann.create("Zora")
    bea.join("Bea", code)
    ann_id = ann.my_id()
    page = ann.page

    # Zora keeps her name: the handle is hers, and its codes are kept.
    page.click("#open-keep")
    page.click("#take-handle")
    expect(page.locator("#codes-panel")).to_be_visible()
    page.check("#kept-codes")
    page.click("#codes-done")
    page.click("#open-account")
    expect(page.locator("#account-handle")).to_have_text("Zora")

    # A handle taken today changes in 30 days: the screen says so, and so does the server.
    expect(page.locator("#change-handle-note")).to_contain_text("You can change it again from")
    page.fill("#new-handle", "Zed")
    page.click("#change-handle")
    expect(page.locator("#change-handle-error")).to_have_text(
        "A handle can be changed once in 30 days."
    )

    # What others see: both shown at first; the record hidden with one click.
    expect(page.locator("#shows-record")).to_be_checked()
    expect(page.locator("#shows-online")).to_be_checked()
    page.uncheck("#shows-record")
    expect(page.locator("#shows-record")).not_to_be_checked()
    expect(page.locator("#shows-record")).to_be_enabled()

    # The export: a JSON file downloaded from the page itself.
    with page.expect_download() as download:
        page.click("#export-data")
    saved = tmp_path / "export.json"
    download.value.save_as(saved)
    assert download.value.suggested_filename == "klondike-race-Zora.json"
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert data["account"]["handle"] == "Zora" and data["account"]["player"] == ann_id
    assert data["account"]["shows_record"] is False
    assert [d["label"] for d in data["devices"]] == ["Chrome on Linux"]
    assert data["deals"] == [] and data["rounds"] == []
    expect(page.locator("#export-download")).to_be_visible()

    # Deleting asks for the handle in place, and refuses another.
    page.click("#delete-account")
    expect(page.locator("#delete-ask")).to_have_text(
        "Type your handle, Zora, to delete your account for good."
    )
    page.fill("#delete-handle", "Bea")
    page.click("#delete-confirm")
    expect(page.locator("#delete-error")).to_contain_text("not this account's handle")
    page.fill("#delete-handle", "zora")
    page.click("#delete-confirm")

    # A guest again, told why; Bea, in the same room, sees a deleted player.
    expect(page.locator("#lobby-screen")).to_be_visible()
    expect(page.locator("#lobby-message")).to_contain_text("Your account is deleted")
    expect(page.locator("#open-account")).to_be_hidden()
    expect(page.locator("#open-keep")).to_be_visible()
    assert page.evaluate(f"localStorage.getItem('{DEVICE_KEY}')") is None
    gone = bea.page.locator(f'li.member[data-player="{ann_id}"] .member-name')
    expect(gone).to_have_text("a deleted player")
    no_errors(ann, bea)
