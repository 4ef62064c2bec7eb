"""Passkeys in Chromium, made and used through its virtual authenticator (the
DevTools protocol's WebAuthn domain: a CTAP2 platform authenticator with
resident keys and user verification, the user always verified), against a real
server process, on ``http://localhost`` (a secure context, and a name WebAuthn
takes as an RP ID).

Ann keeps her name, adds a passkey on the Account screen, signs out, and signs
in again with it. Then what an attacker could try with what passed by, all
refused with ``bad_passkey`` and nothing changed: the frame the page sent,
replayed on a new socket; assertions made with the passkey's own key (read
from the virtual authenticator, as a thief of the device would hold it) for
another origin, another RP ID or another socket's challenge; and Bob's passkey
presented for Ann's account. A correct assertion crafted the same way signs in,
so each refusal is the server's judgement of the one thing changed.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.serialization import load_der_private_key
from playwright.sync_api import Browser, Page, expect

from protocol.wire import JSON
from tests.support.authenticator import Credential, SoftAuthenticator
from tests.support.processes import ServerProcess
from tests.support.raw_client import Client as Socket
from tests.support.web import Client, no_errors
from tests.test_web_accounts import keep_codes

T = TypeVar("T")


class Person(Client):
    """A page with a virtual authenticator of its own, keeping the frames it sends."""

    def __init__(self, browser: Browser, base: str, label: str) -> None:
        super().__init__(browser, base, label)
        self.sent: list[dict[str, Any]] = []
        self.page.on("websocket", self._keep)
        self.cdp = self.context.new_cdp_session(self.page)
        self.cdp.send("WebAuthn.enable", {"enableUI": False})
        made = self.cdp.send(
            "WebAuthn.addVirtualAuthenticator",
            {
                "options": {
                    "protocol": "ctap2",
                    "transport": "internal",
                    "hasResidentKey": True,
                    "hasUserVerification": True,
                    "isUserVerified": True,
                    "automaticPresenceSimulation": True,
                }
            },
        )
        self.authenticator = made["authenticatorId"]

    def _keep(self, ws: Any) -> None:
        ws.on("framesent", lambda payload: self.sent.append(json.loads(str(payload))))

    def credentials(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.cdp.send(
            "WebAuthn.getCredentials", {"authenticatorId": self.authenticator}
        )["credentials"]
        return found

    def stolen(self) -> Credential:
        """The authenticator's one credential, key and all, as a software credential."""
        (cred,) = self.credentials()
        key = load_der_private_key(base64.b64decode(cred["privateKey"]), password=None)
        assert isinstance(key, ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey)
        return Credential(
            base64.b64decode(cred["credentialId"]),
            key,
            cred["rpId"],
            base64.b64decode(cred["userHandle"]),
            cred["signCount"],
        )


class Sockets:
    """Raw protocol clients (tests/support/raw_client.py) on a loop in a thread, so
    the sync Playwright calls go on meanwhile."""

    def __init__(self, base: str) -> None:
        self.url = base.replace("http://", "ws://") + "/ws"
        self.origin = base
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def sign_in_options(self) -> tuple[Socket, dict[str, Any]]:
        """A socket as a page of the site opens it, that asked for sign-in options."""

        async def go() -> tuple[Socket, dict[str, Any]]:
            socket = await Socket.open(self.url, JSON, origin=self.origin)
            options = await socket.ok("passkey_options", purpose="sign_in")
            return socket, options["options"]

        return self.run(go())

    def hello(self, socket: Socket, passkey: dict[str, Any]) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            reply = await socket.request("hello", version=2, passkey=passkey, label="stolen")
            await socket.close()
            return reply

        return self.run(go())

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        self.loop.close()


@pytest.fixture(scope="module")
def site(live_server: ServerProcess) -> str:
    """The page as the machine's own browser reaches it: by name, ``localhost``."""
    return f"http://localhost:{live_server.port}"


@pytest.fixture
def sockets(site: str) -> Iterator[Sockets]:
    made = Sockets(site)
    try:
        yield made
    finally:
        made.close()


def keep_name(page: Page, handle: str) -> None:
    page.click("#open-keep")
    page.fill("#handle", handle)
    page.click("#take-handle")
    keep_codes(page)
    expect(page.locator("#me-handle")).to_have_text(handle)


def add_passkey(person: Person) -> None:
    page = person.page
    page.click("#open-account")
    expect(page.locator("#passkeys")).to_be_visible()
    page.click("#add-passkey")
    expect(page.locator("#passkey-list li.passkey")).to_have_count(1)
    page.click("#account-back")


def device_count(page: Page) -> int:
    """The account's devices as its screen lists them, opened afresh."""
    page.click("#open-account")
    expect(page.locator("#devices li.device").first).to_be_visible()
    count = page.locator("#devices li.device").count()
    page.click("#account-back")
    return count


def test_a_passkey_made_and_used_in_chromium_and_what_is_refused(
    browser: Browser, site: str, sockets: Sockets
) -> None:
    ann = Person(browser, site, "ann")
    bob = Person(browser, site, "bob")
    try:
        page = ann.open()
        assert page.evaluate("window.isSecureContext")
        keep_name(page, "Ann")
        add_passkey(ann)
        (made,) = ann.credentials()
        assert made["rpId"] == "localhost" and made["isResidentCredential"]
        listed = page.locator("#passkey-list li.passkey")
        expect(listed.locator(".passkey-label")).to_have_text("Chrome on Linux")
        expect(listed.locator(".passkey-used")).to_contain_text("not used yet")

        # Signed out here, then in again with the passkey alone: no handle typed.
        page.click("#open-account")
        page.locator('#devices li.device[data-current="yes"] .device-sign-out').click()
        expect(page.locator("#open-account")).to_be_hidden()
        page.click("#open-sign-in")
        page.click("#passkey-sign-in")
        expect(page.locator("#me-handle")).to_have_text("Ann")
        hellos = [f for f in ann.sent if f.get("type") == "hello" and "passkey" in f]
        assert len(hellos) == 1
        captured = hellos[0]["passkey"]
        options_asked = [f for f in ann.sent if f.get("type") == "passkey_options"]
        assert [f["purpose"] for f in options_asked] == ["register", "sign_in"]
        page.click("#open-account")
        expect(page.locator("#passkey-list .passkey-used")).to_contain_text("last used")
        page.click("#account-back")
        devices_before = device_count(page)

        # The frame the page sent, replayed on a new socket: with options of its
        # own (another challenge) and without.
        socket, _options = sockets.sign_in_options()
        assert sockets.hello(socket, captured)["code"] == "bad_passkey"

        # Assertions made with the passkey's own key, one thing changed each.
        key = ann.stolen()
        thief = SoftAuthenticator(site, credentials=[key])
        for forged in ({"origin": "http://evil.example"}, {"rp_id": "evil.example"}):
            socket, options = sockets.sign_in_options()
            reply = sockets.hello(socket, thief.get(options, credential=key, **forged))
            assert reply["code"] == "bad_passkey", forged
        asker, options = sockets.sign_in_options()
        other, _ = sockets.sign_in_options()
        assert sockets.hello(other, thief.get(options, credential=key))["code"] == "bad_passkey"
        sockets.run(asker.close())

        # Bob's passkey, presented for Ann's account (her user handle).
        bob.open()
        keep_name(bob.page, "Bob")
        add_passkey(bob)
        bobs = bob.stolen()
        socket, options = sockets.sign_in_options()
        forged_bob = SoftAuthenticator(site, credentials=[bobs])
        reply = sockets.hello(
            socket, forged_bob.get(options, credential=bobs, user_handle=key.user_handle)
        )
        assert reply["code"] == "bad_passkey"
        assert device_count(page) == devices_before

        # The same crafting, nothing changed: it signs in (so each refusal above
        # was the server's judgement of the one thing changed there).
        socket, options = sockets.sign_in_options()
        welcome = sockets.hello(socket, thief.get(options, credential=key))
        assert welcome["type"] == "welcome" and welcome["account"]["handle"] == "Ann"
        # which took the account's session from the page (one session per account);
        # the page takes it back with its device token
        page.reload()
        expect(page.locator("#me-handle")).to_have_text("Ann")
        assert device_count(page) == devices_before + 1

        # Ann removes her passkey: the page's list empties, and it signs in no more.
        page.click("#open-account")
        page.locator("#passkey-list .passkey-remove").click()
        expect(page.locator("#passkey-list li.passkey")).to_have_count(0)
        socket, options = sockets.sign_in_options()
        assert sockets.hello(socket, thief.get(options, credential=key))["code"] == "bad_passkey"
        no_errors(ann, bob)
    finally:
        ann.close()
        bob.close()


def test_the_browser_refusing_is_told_in_words(browser: Browser, site: str) -> None:
    """No passkey for this site on this device: the browser refuses (NotAllowedError),
    and the page says so under Sign in, staying a guest's."""
    carol = Person(browser, site, "carol")
    try:
        page = carol.open()
        page.click("#open-sign-in")
        page.click("#passkey-sign-in")
        expect(page.locator("#sign-in-error")).to_have_text(
            "No passkey was used: cancelled, or this device has none for this site."
        )
        expect(page.locator("#open-account")).to_be_hidden()
        no_errors(carol)
    finally:
        carol.close()


def test_a_page_by_address_offers_no_passkeys(browser: Browser, live_server: ServerProcess) -> None:
    """http://127.0.0.1 is a secure context, but an address is no RP ID: the page
    says so where the passkeys would be, rather than offering what cannot work."""
    dave = Person(browser, live_server.http, "dave")
    try:
        page = dave.open()
        page.click("#open-sign-in")
        expect(page.locator("#passkey-sign-in")).to_be_hidden()
        keep_name(page, "Dave")
        page.click("#open-account")
        expect(page.locator("#passkeys")).to_be_hidden()
        expect(page.locator("#passkeys-insecure")).to_have_text(
            "Passkeys need the server's name: open this site by its name (or localhost), "
            "not by its address."
        )
        no_errors(dave)
    finally:
        dave.close()


BY_HAND = """
async () => {
  const m = await import('/passkeys.js');
  const net = await import('/net.js');
  const { state } = await import('/state.js');
  const made = await state.conn.request("passkey_options", { purpose: "register" });
  const publicKey = m.creationOptionsByHand(made.options);
  const created = await navigator.credentials.create({ publicKey });
  const added = await state.conn.request(
    "add_passkey", { credential: m.credentialJsonByHand(created), label: "by hand" });
  const conn = new net.Connection(net.wsUrl(), {});
  await conn.open();
  const asked = await conn.request("passkey_options", { purpose: "sign_in" });
  const got = await navigator.credentials.get({ publicKey: m.requestOptionsByHand(asked.options) });
  const welcome = await conn.request("hello", { version: 2, passkey: m.credentialJsonByHand(got) });
  conn.close();
  return {
    created: [m.credentialJsonByHand(created), created.toJSON()],
    got: [m.credentialJsonByHand(got), got.toJSON()],
    added: added.type,
    handle: welcome.account.handle,
  };
}
"""


def test_the_by_hand_converters_agree_with_the_browsers(browser: Browser, site: str) -> None:
    """Where a browser has no WebAuthn JSON converters, passkeys.js converts by
    hand: its options make a credential, its JSON of it is the browser's own
    (``toJSON()``, in every field the server reads), and the server takes both
    ways, registration and sign-in."""
    erin = Person(browser, site, "erin")
    try:
        page = erin.open()
        keep_name(page, "Erin")
        result = page.evaluate(BY_HAND)
        assert result["added"] == "passkey_added" and result["handle"] == "Erin"
        for mine, theirs in (result["created"], result["got"]):
            assert {k: v for k, v in theirs.items() if k != "response"} == {
                k: v for k, v in mine.items() if k != "response"
            }
            assert mine["response"].items() <= theirs["response"].items()
        no_errors(erin)
    finally:
        erin.close()
