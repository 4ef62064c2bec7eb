"""Passkeys over real sockets, signed by a software authenticator written from the
WebAuthn specification (tests/support/authenticator.py): a real client of the
real server, every byte under the test's control.

The server runs in this process on a clock the test moves (a challenge lives two
minutes); clients reach it as ``localhost``, the name a browser on the same
machine uses, which is the RP ID the server then takes from the Host. Every
refusal is ``bad_passkey`` and leaves the account as it was: no device added,
the counter where it was.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from protocol.wire import JSON
from server.accounts.passkeys import CHALLENGE_MS
from server.app import RaceServer
from tests.support.authenticator import SoftAuthenticator, b64url
from tests.support.inprocess import FakeClock, running_server
from tests.support.raw_client import Client


@dataclass
class Site:
    server: RaceServer
    clock: FakeClock

    @property
    def url(self) -> str:
        return f"ws://localhost:{self.server.port}/ws"

    @property
    def origin(self) -> str:
        return f"http://localhost:{self.server.port}"

    async def socket(self) -> Client:
        """A connection as the page at ``origin`` opens it (JSON, with its Origin)."""
        return await Client.open(self.url, JSON, origin=self.origin)

    async def account(self, handle: str) -> tuple[Client, dict[str, Any]]:
        """A guest who took ``handle``: its connection, and ``account_made``."""
        client = await self.socket()
        await client.hello(handle)
        return client, await client.ok("take_handle", handle=handle)

    async def register(self, client: Client, device: SoftAuthenticator) -> dict[str, Any]:
        options = (await client.ok("passkey_options", purpose="register"))["options"]
        made = await client.ok("add_passkey", credential=device.create(options), label="phone")
        assert made["type"] == "passkey_added"
        passkey: dict[str, Any] = made["passkey"]
        return passkey

    async def sign_in_options(self) -> tuple[Client, dict[str, Any]]:
        """A new connection that asked for sign-in options (before any hello)."""
        client = await self.socket()
        options = (await client.ok("passkey_options", purpose="sign_in"))["options"]
        return client, options


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    clock = FakeClock()
    async with running_server(clock=clock) as server:
        yield Site(server, clock)


async def devices(client: Client) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (await client.ok("devices"))["devices"]
    return found


async def look(site: Site, device_token: str) -> tuple[set[str], list[dict[str, Any]]]:
    """The account as a device of it sees it: its devices, and its passkeys. Said on
    a connection of its own, which takes the account's session over (4001 to any
    other connection of it, as signing in anywhere does)."""
    client = await site.socket()
    await client.ok("hello", version=2, device=device_token)
    listed = {d["device"] for d in await devices(client)}
    passkeys: list[dict[str, Any]] = (await client.ok("passkeys"))["passkeys"]
    await client.close()
    return listed, passkeys


async def refused(client: Client, credential: dict[str, Any]) -> None:
    reply = await client.request("hello", version=2, passkey=credential)
    assert reply["type"] == "error" and reply["code"] == "bad_passkey", reply


async def test_a_passkey_signs_in_as_a_new_device_of_its_account(site: Site) -> None:
    ann, made = await site.account("Ann")
    phone = SoftAuthenticator(site.origin)
    options = (await ann.ok("passkey_options", purpose="register"))["options"]
    # The options name the site by the Host the page reached, and the account by
    # its handle; the user id names no person.
    assert options["rp"]["id"] == "localhost"
    assert options["user"]["name"] == "Ann" and "Ann" not in options["user"]["id"]
    assert options["authenticatorSelection"]["residentKey"] == "required"
    assert options["authenticatorSelection"]["userVerification"] == "required"
    added = await ann.ok("add_passkey", credential=phone.create(options), label="Ann's phone")
    passkey = added["passkey"]
    assert passkey["id"] == b64url(phone.credentials[0].credential_id)
    assert passkey["label"] == "Ann's phone" and passkey["last_used"] is None
    # nothing of the credential's key travels back: the view is id, label and times
    assert set(passkey) == {"id", "label", "created", "last_used"}
    assert (await ann.ok("passkeys"))["passkeys"] == [passkey]
    # a second registration is offered without the first one's credential again
    again = (await ann.ok("passkey_options", purpose="register"))["options"]
    assert [c["id"] for c in again["excludeCredentials"]] == [passkey["id"]]

    laptop, sign_in = await site.sign_in_options()
    assert sign_in["rpId"] == "localhost" and sign_in["allowCredentials"] == []
    welcome = await laptop.ok("hello", version=2, passkey=phone.get(sign_in), label="laptop")
    assert welcome["account"]["handle"] == "Ann"
    assert welcome["player"] == made["account"]["player"]
    assert welcome["device_token"] and welcome["token"] == welcome["device_token"]
    assert welcome["device_token"] != made["device_token"]
    assert await ann.closed() == 4001  # one session per account: it moved here
    labels = sorted(d["label"] for d in await devices(laptop))
    assert "laptop" in labels and len(labels) == 2
    used = (await laptop.ok("passkeys"))["passkeys"][0]
    assert used["last_used"] is not None and used["id"] == passkey["id"]
    await laptop.close()
    # the new device's token signs it in from then on, as any device's does
    listed, _passkeys = await look(site, welcome["device_token"])
    assert len(listed) == 2


async def test_a_replayed_assertion_is_refused_on_a_new_socket(site: Site) -> None:
    ann, made = await site.account("Ann")
    phone = SoftAuthenticator(site.origin)
    await site.register(ann, phone)
    first, options = await site.sign_in_options()
    captured = phone.get(options)
    await first.ok("hello", version=2, passkey=captured)
    await first.close()
    before = await look(site, made["device_token"])
    # the very frame again, on a socket of its own that asked for options
    # (another challenge) and on one that did not (none at all)
    second, _options = await site.sign_in_options()
    await refused(second, captured)
    third = await site.socket()
    await refused(third, captured)
    assert await look(site, made["device_token"]) == before
    for c in (second, third):
        await c.close()


async def test_a_challenge_is_used_once_bound_to_its_socket_and_goes_stale(site: Site) -> None:
    ann, made = await site.account("Ann")
    phone = SoftAuthenticator(site.origin)
    await site.register(ann, phone)
    await ann.close()
    before = await look(site, made["device_token"])

    # foreign: asked on one socket, answered on another
    asker, options = await site.sign_in_options()
    other = await site.socket()
    await refused(other, phone.get(options))
    # used once: a failed answer (a wrong origin) spends it; the right one after is refused
    await refused(asker, phone.get(options, origin="http://evil.example"))
    await refused(asker, phone.get(options))
    # stale: two minutes later a challenge is no more
    late, options = await site.sign_in_options()
    site.clock.advance(CHALLENGE_MS + 1)
    await refused(late, phone.get(options))
    assert await look(site, made["device_token"]) == before
    # a fresh one in time works, and the counter moved on past every refused try
    fine, options = await site.sign_in_options()
    site.clock.advance(CHALLENGE_MS - 1000)
    welcome = await fine.ok("hello", version=2, passkey=phone.get(options))
    assert welcome["account"]["handle"] == "Ann"
    assert len(await devices(fine)) == len(before[0]) + 1
    for c in (asker, other, late, fine):
        await c.close()


async def test_a_challenge_is_spent_by_an_answer_on_another_socket(site: Site) -> None:
    """docs/protocol.md: a challenge "is spent by the first answer that names it,
    right or wrong", wherever that answer comes: an assertion over X said on the
    socket that asked for Y is refused, and X signs nobody in after it, not even
    on its own socket with an assertion the authenticator makes afresh."""
    ann, made = await site.account("Ann")
    phone = SoftAuthenticator(site.origin)
    await site.register(ann, phone)
    await ann.close()
    before = await look(site, made["device_token"])
    x, x_options = await site.sign_in_options()
    y, y_options = await site.sign_in_options()
    await refused(y, phone.get(x_options))
    await refused(x, phone.get(x_options))
    assert await look(site, made["device_token"]) == before
    # Y's own challenge was spent by the answer said on its socket, as ever
    await refused(y, phone.get(y_options))
    for c in (x, y):
        await c.close()


async def test_a_wrong_origin_or_rp_id_is_refused(site: Site) -> None:
    ann, made = await site.account("Ann")
    phone = SoftAuthenticator(site.origin)
    await site.register(ann, phone)
    # a credential made under another RP ID (an authenticator on another site)
    elsewhere = SoftAuthenticator("https://evil.example")
    options = (await ann.ok("passkey_options", purpose="register"))["options"]
    made_elsewhere = elsewhere.create(options, rp_id="evil.example", origin="https://evil.example")
    reply = await ann.request("add_passkey", credential=made_elsewhere)
    assert reply["code"] == "bad_passkey"
    # and one made here but answered as from another page
    options = (await ann.ok("passkey_options", purpose="register"))["options"]
    reply = await ann.request(
        "add_passkey", credential=phone.create(options, origin="http://evil.example")
    )
    assert reply["code"] == "bad_passkey"
    # and what is no credential at all: refused alike, not a failure of the server's
    for junk in ({}, {"id": "AAAA", "rawId": "AAAA", "response": "x"}, {"response": {"x": 1}}):
        await ann.ok("passkey_options", purpose="register")
        assert (await ann.request("add_passkey", credential=junk))["code"] == "bad_passkey"
        client, _options = await site.sign_in_options()
        if junk:  # (an empty map is no passkey at all: hello's bad_request)
            await refused(client, junk)
        await client.close()
    await ann.close()
    before = await look(site, made["device_token"])
    assert len(before[1]) == 1
    # the registered credential made to sign for another RP ID, or a page elsewhere
    for forged in (
        {"origin": "http://evil.example"},
        {"origin": f"https://localhost:{site.server.port}"},  # another scheme is another origin
        {"rp_id": "evil.example"},
    ):
        client, options = await site.sign_in_options()
        await refused(client, phone.get(options, credential=phone.credentials[0], **forged))
        await client.close()
    assert await look(site, made["device_token"]) == before


async def test_another_accounts_credential_is_refused(site: Site) -> None:
    ann, ann_made = await site.account("Ann")
    bob, bob_made = await site.account("Bob")
    ann_phone, bob_phone = SoftAuthenticator(site.origin), SoftAuthenticator(site.origin)
    await site.register(ann, ann_phone)
    bob_key = await site.register(bob, bob_phone)
    # Bob's credential (its id and key, as a copy of his authenticator holds them)
    # registered on Ann's account: refused, it is Bob's
    options = (await ann.ok("passkey_options", purpose="register"))["options"]
    copy = bob_phone.create(options, reuse=bob_phone.credentials[0])
    assert (await ann.request("add_passkey", credential=copy))["code"] == "bad_passkey"
    # Ann cannot remove Bob's passkey: refused as an unknown one is
    reply = await ann.request("remove_passkey", passkey=bob_key["id"])
    assert reply["code"] == "bad_passkey"
    assert [p["id"] for p in (await ann.ok("passkeys"))["passkeys"]] != [bob_key["id"]]
    await ann.close()
    ann_before = await look(site, ann_made["device_token"])
    bob_before = await look(site, bob_made["device_token"])
    # Bob's credential presented as Ann's (her user handle): refused
    client, options = await site.sign_in_options()
    ann_handle = ann_phone.credentials[0].user_handle
    await refused(client, bob_phone.get(options, user_handle=ann_handle))
    assert await look(site, ann_made["device_token"]) == ann_before
    assert await look(site, bob_made["device_token"]) == bob_before
    # Bob removes his: it signs nobody in any more
    bob = await site.socket()
    await bob.ok("hello", version=2, device=bob_made["device_token"])
    assert (await bob.ok("remove_passkey", passkey=bob_key["id"]))["passkey"] == bob_key["id"]
    assert (await bob.ok("passkeys"))["passkeys"] == []
    client2, options = await site.sign_in_options()
    await refused(client2, bob_phone.get(options))
    for c in (bob, client, client2):
        await c.close()


async def test_who_may_ask_for_what(site: Site) -> None:
    # before hello: sign-in options only
    client = await site.socket()
    reply = await client.request("passkey_options", purpose="register")
    assert reply["code"] == "hello_first"
    assert (await client.ok("passkey_options", purpose="sign_in"))["options"]["challenge"]
    await client.hello("Guest")
    # a guest has no account to add passkeys to
    for kind, fields in (
        ("passkey_options", {"purpose": "register"}),
        ("passkeys", {}),
        ("remove_passkey", {"passkey": "AAAA"}),
        ("add_passkey", {"credential": {}}),
    ):
        reply = await client.request(kind, **fields)
        assert reply["code"] == "not_signed_in", (kind, reply)
    await client.close()
    # a page reached by an address, not a name: WebAuthn has no RP ID for it
    by_address = await Client.open(site.server.url, JSON)
    reply = await by_address.request("passkey_options", purpose="sign_in")
    assert reply["code"] == "bad_passkey" and "name" in reply["message"]
    await by_address.close()


async def test_rp_id_and_origins_from_the_servers_settings() -> None:
    """``serve --rp-id race.lan --origin https://race.lan``: the page lives at
    https://race.lan (a proxy in front, or a client hosted there) and reaches this
    server by another name. Passkeys are made for race.lan whatever Host a
    connection came by; ceremonies from the listed origin verify, and a signature
    for the Host's own name does not."""
    clock = FakeClock()
    async with running_server(
        clock=clock, rp_id="race.lan", origins=["https://race.lan"]
    ) as server:
        page = "https://race.lan"
        site = Site(server, clock)

        async def socket() -> Client:
            return await Client.open(site.url, JSON, origin=page)

        ann = await socket()
        await ann.hello("Ann")
        made = await ann.ok("take_handle", handle="Ann")
        phone = SoftAuthenticator(page)
        options = (await ann.ok("passkey_options", purpose="register"))["options"]
        assert options["rp"]["id"] == "race.lan"
        await ann.ok("add_passkey", credential=phone.create(options))
        await ann.close()

        laptop = await socket()
        options = (await laptop.ok("passkey_options", purpose="sign_in"))["options"]
        assert options["rpId"] == "race.lan"
        welcome = await laptop.ok("hello", version=2, passkey=phone.get(options))
        assert welcome["player"] == made["account"]["player"]
        await laptop.close()

        # signed for the name in the Host (localhost), or from an origin not listed:
        # refused
        for forged in ({"rp_id": "localhost"}, {"origin": "https://evil.example"}):
            client = await socket()
            options = (await client.ok("passkey_options", purpose="sign_in"))["options"]
            await refused(client, phone.get(options, credential=phone.credentials[0], **forged))
            await client.close()


async def test_a_sign_in_in_progress_may_say_hello_late() -> None:
    """A connection must say hello within the hello timeout (here 0.2 s) — unless
    it asked for sign-in options: then it has the challenge's two minutes, for a
    person finding their phone. Two connections, the asker first: the other is
    closed (4002) at its deadline, after the asker's would have been."""
    from dataclasses import replace

    from tests.support.inprocess import UNLIMITED

    limits = replace(UNLIMITED, hello_timeout=0.2)
    clock = FakeClock()
    async with running_server(clock=clock, limits=limits) as server:
        site = Site(server, clock)
        ann, _made = await site.account("Ann")
        phone = SoftAuthenticator(site.origin)
        await site.register(ann, phone)
        await ann.close()
        asker, options = await site.sign_in_options()
        idle = await site.socket()
        assert await idle.closed() == 4002
        welcome = await asker.ok("hello", version=2, passkey=phone.get(options))
        assert welcome["account"]["handle"] == "Ann"
        await asker.close()
        # and asking again and again is no way to hold a connection without hello:
        # the options count among the requests before hello (3)
        again = await site.socket()
        for _ in range(2):
            await again.ok("passkey_options", purpose="sign_in")
        reply = await again.request("passkey_options", purpose="sign_in")
        assert reply["code"] == "hello_first"
        assert await again.closed() == 4002


def test_rp_id_must_be_a_name() -> None:
    from server.cli import build_parser

    for bad in ("10.0.0.1", "https://race.lan", "race.lan:8443"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["serve", "--rp-id", bad])
    args = build_parser().parse_args(["serve", "--rp-id", "Race.LAN"])
    assert args.rp_id == "race.lan"
