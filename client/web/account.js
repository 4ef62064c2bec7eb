// The account, for the page that has one, and the way to one for the page that
// has not. The header says who you are: a guest's name with *Keep your name* and
// *Sign in* beside it, or a signed-in player's handle, which opens the Account
// screen. That screen is a section like the lobby's and the room's, shown over
// them while they go on underneath (room.js showScreen): for a guest, keeping
// the name and signing in (signin.js); signed in, the handle and since when, the
// devices signed in (each can be signed out, or all at once), a sign-in code for
// another device (the code in groups, its QR, the link, and a countdown), a new
// set of recovery codes (recovery.js shows them once), and passkeys (passkeys.js
// lists and wires them, told of the screen's opening by onAccountOpen; a page
// that is not a secure context says why there are none).
//
// Guests are never asked for any of it: nothing here stands before Create or Join.

import { confirmInline } from "./confirm.js";
import { h, replaceChildren } from "./dom.js";
import { toast } from "./feedback.js";
import { codesShown, showCodes } from "./recovery.js";
import { showScreen } from "./room.js";
import { backToGuest } from "./session.js";
import { $, onSession, render, state } from "./state.js";
import {
  ACCOUNT_TEXT,
  SIGNED_OUT_TEXT,
  deviceUsedText,
  accountRefusal,
  expiresText,
  passkeysUnavailable,
} from "./words.js";

let devices = []; // the account's devices as the server last listed them
let link = null; // the sign-in code shown: {code, expires, url, qr}
let ticker = null; // the countdown's (and the "min ago"s') second hand, while the screen shows
const openers = []; // what else loads when the signed-in screen opens (passkeys.js)

/** `fn` runs whenever the Account screen opens for a signed-in page (not over fresh codes). */
export function onAccountOpen(fn) {
  openers.push(fn);
}

const serverSeconds = () => (state.conn ? state.conn.serverNow() : Date.now()) / 1000;

/** Show the Account screen; `focus`: the id of the control the next keystroke belongs to. */
export function openAccount(focus = null) {
  const wasOpen = state.accountOpen;
  state.accountOpen = true;
  showScreen();
  renderAccount();
  if (!wasOpen) {
    window.scrollTo(0, 0);
    // What went wrong the last time it was open is not news now.
    for (const el of $("account-screen").querySelectorAll(".field-error")) el.textContent = "";
  }
  if (state.account && !codesShown()) {
    loadDevices();
    for (const fn of openers) fn();
  }
  clearInterval(ticker);
  ticker = setInterval(tick, 1000);
  const target = focus && $(focus);
  if (target && !target.closest("[hidden]")) target.focus({ preventScroll: true });
}

/** Back to the room (or the lobby), which went on meanwhile: it is redrawn as it is now. */
export function closeAccount() {
  state.accountOpen = false;
  clearInterval(ticker);
  ticker = null;
  showAccountMessage("");
  showScreen();
  render();
}

export function showAccountMessage(text) {
  $("account-message").textContent = text;
  $("account-message").hidden = !text;
}

/** The header and the Account screen, from the session: who you are, and what you may do. */
export function renderAccount() {
  const account = state.account;
  $("me-name").textContent = account ? "" : state.session?.name || "";
  $("me-name").hidden = Boolean(account);
  $("open-account").hidden = !account;
  $("me-handle").textContent = account?.handle || "";
  $("open-keep").hidden = Boolean(account);
  $("open-sign-in").hidden = Boolean(account);
  if (!state.accountOpen) return;
  const codes = codesShown();
  $("account-back").hidden = codes; // fresh codes close only once kept
  $("guest-account").hidden = codes || Boolean(account);
  $("my-account").hidden = codes || !account;
  if (!account) {
    if (!$("handle").value) $("handle").value = state.session?.name || $("name").value.trim();
    return;
  }
  $("account-handle").textContent = account.handle;
  $("account-since").textContent = ACCOUNT_TEXT.since(account.since);
  renderDevices();
  renderLink();
}

async function loadDevices() {
  $("devices-error").textContent = "";
  try {
    const reply = await state.conn.request("devices");
    devices = reply.devices;
  } catch (err) {
    $("devices-error").textContent = accountRefusal(err);
  }
  renderDevices();
}

function renderDevices() {
  const now = serverSeconds();
  // This device first, then the most recently used.
  const listed = [...devices].sort((a, b) => b.current - a.current || b.last_used - a.last_used);
  replaceChildren($("devices"), listed.map((d) =>
    h("li", { class: "device", dataset: { device: d.device, current: d.current ? "yes" : "no" } },
      h("span", { class: "device-label" }, d.label || ACCOUNT_TEXT.device),
      d.current ? h("span", { class: "tag you" }, ACCOUNT_TEXT.thisDevice) : null,
      h("span", { class: "device-used" }, deviceUsedText(d, now)),
      h("button", {
        type: "button", class: "btn small ghost device-sign-out",
        dataset: { focusKey: `out-${d.device}` }, onclick: (e) => signOut(d, e.currentTarget),
      }, ACCOUNT_TEXT.signOut(d.current)))));
}

/** Sign one device out; this one turns the page back into a guest's. */
async function signOut(device, button) {
  $("devices-error").textContent = "";
  button.disabled = true;
  if (device.current) state.signingOut = true;
  try {
    const reply = await state.conn.request("sign_out", { device: device.device });
    if (device.current) {
      backToGuest(SIGNED_OUT_TEXT.here);
      return;
    }
    toast(ACCOUNT_TEXT.signedOutThat(reply.count ? device.label || ACCOUNT_TEXT.device : null));
  } catch (err) {
    state.signingOut = false;
    if (!state.account) return; // signed out meanwhile (the close came first)
    $("devices-error").textContent = accountRefusal(err);
  }
  button.disabled = false;
  loadDevices();
}

async function signOutEverywhere() {
  if (!(await confirmInline($("sign-out-all"), ...ACCOUNT_TEXT.everywhere))) return;
  state.signingOut = true;
  try {
    await state.conn.request("sign_out", { all: true });
    backToGuest(SIGNED_OUT_TEXT.here);
  } catch (err) {
    state.signingOut = false;
    if (state.account) $("devices-error").textContent = accountRefusal(err);
  }
}

async function makeLink() {
  $("link-error").textContent = "";
  $("make-link").disabled = true;
  try {
    link = await state.conn.request("link_code");
  } catch (err) {
    $("link-error").textContent = accountRefusal(err);
  } finally {
    $("make-link").disabled = false;
  }
  renderLink();
  if (link) $("link-out").scrollIntoView({ block: "nearest" });
}

function renderLink() {
  $("link-out").hidden = !link;
  $("make-link").textContent = ACCOUNT_TEXT.makeLink(Boolean(link));
  if (!link) return;
  // Read aloud or typed in groups; any spaces or dashes typed back are ignored.
  const groups = link.code.split(/[-\s]+/).filter(Boolean);
  const shown = $("link-code");
  if (shown.dataset.code !== link.code) {
    shown.dataset.code = link.code;
    replaceChildren(shown, groups.map((g) => h("span", { class: "group" }, g)));
    $("link-qr").src = `data:image/svg+xml,${encodeURIComponent(link.qr)}`;
    $("link-url").value = link.url;
  }
  tick();
}

/** The countdown to the code's expiry, and how long ago each device was used. */
function tick() {
  if (!state.accountOpen || !state.account) return;
  if (link) {
    const left = link.expires * 1000 - serverSeconds() * 1000;
    $("link-expires").textContent = expiresText(left);
    $("link-out").classList.toggle("expired", left <= 0);
  }
  const now = serverSeconds();
  for (const li of $("devices").children) {
    const d = devices.find((x) => x.device === li.dataset.device);
    if (d) li.querySelector(".device-used").textContent = deviceUsedText(d, now);
  }
}

async function newCodes() {
  $("recovery-error").textContent = "";
  if (!(await confirmInline($("new-codes"), ...ACCOUNT_TEXT.newSet))) return;
  try {
    const reply = await state.conn.request("recovery_codes");
    showCodes(reply.codes, state.account.handle, () => openAccount("new-codes"));
    renderAccount();
  } catch (err) {
    $("recovery-error").textContent = accountRefusal(err);
  }
}

export function initAccount() {
  $("open-account").addEventListener("click", () => openAccount("account-handle"));
  $("open-keep").addEventListener("click", () => openAccount("handle"));
  $("open-sign-in").addEventListener("click", () => openAccount("link-input"));
  $("account-back").addEventListener("click", closeAccount);
  $("account-screen").addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !codesShown() && !e.target.closest(".confirm")) closeAccount();
  });
  $("sign-out-all").addEventListener("click", signOutEverywhere);
  $("make-link").addEventListener("click", makeLink);
  $("copy-link").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("link-url").value);
      toast(ACCOUNT_TEXT.linkCopied);
    } catch {
      $("link-url").select();
    }
  });
  $("new-codes").addEventListener("click", newCodes);
  $("account-handle").tabIndex = -1;
  // WebAuthn works only in a secure context (https, or localhost) and under a
  // name: elsewhere the page says why there are no passkeys rather than offering
  // what cannot work.
  const noPasskeys = passkeysUnavailable(window.location, window.isSecureContext);
  if (noPasskeys) {
    $("passkeys").hidden = true;
    $("passkey-sign-in").hidden = true;
    $("passkeys-insecure").textContent = noPasskeys;
    $("passkeys-insecure").hidden = false;
  }
  onSession(() => {
    if (!state.account) {
      devices = [];
      link = null;
      $("link-code").dataset.code = "";
    }
    renderAccount();
  });
  renderAccount();
}
