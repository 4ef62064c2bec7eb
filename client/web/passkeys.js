// Passkeys: sign in with this device's fingerprint, face or screen lock, and
// add or remove them on the Account screen (docs/protocol.md, "Passkeys").
//
// Both ceremonies go the same way: the server hands options with a fresh
// challenge (`passkey_options`), the browser's authenticator answers
// (navigator.credentials.create or .get), and the server verifies the answer
// (`add_passkey`, or hello's `passkey`). Signing in runs on a connection of its
// own (session.js signIn): the options are asked for on it before its hello,
// because the server holds a challenge for the connection that asked only.
//
// The options and answers travel as WebAuthn's JSON (binary fields in base64url);
// the browser's own converters are used where it has them, a hand-written one
// where it has not. A page that is not a secure context has no passkeys at all
// (account.js says why).

import { onAccountOpen } from "./account.js";
import { h, replaceChildren } from "./dom.js";
import { toast } from "./feedback.js";
import { signInWith } from "./signin.js";
import { $, onSession, state } from "./state.js";
import { dateText, deviceLabel, passkeyRefusalText, passkeysUnavailable, refusalText } from "./words.js";

let passkeys = []; // the account's passkeys as the server last listed them

// ------------------------------------------------------------------ JSON <-> ArrayBuffer

function fromB64url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  const bytes = atob(b64);
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = bytes.charCodeAt(i);
  return out.buffer;
}

function toB64url(buffer) {
  const bytes = new Uint8Array(buffer);
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const withIds = (list) => (list || []).map((c) => ({ ...c, id: fromB64url(c.id) }));

// The browser's own converters where it has them (Chromium 129+, Firefox 119+,
// Safari 18.4+); by hand elsewhere. The by-hand ones are exported for the tests,
// which check them against the browser's.

/** WebAuthn's JSON of creation options as navigator.credentials.create takes them. */
export function creationOptionsByHand(json) {
  return {
    ...json,
    challenge: fromB64url(json.challenge),
    user: { ...json.user, id: fromB64url(json.user.id) },
    excludeCredentials: withIds(json.excludeCredentials),
  };
}

/** WebAuthn's JSON of request options as navigator.credentials.get takes them. */
export function requestOptionsByHand(json) {
  return { ...json, challenge: fromB64url(json.challenge), allowCredentials: withIds(json.allowCredentials) };
}

/** A credential as PublicKeyCredential.toJSON() gives it (the fields the server reads). */
export function credentialJsonByHand(cred) {
  const r = cred.response;
  const response = { clientDataJSON: toB64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toB64url(r.attestationObject);
    response.transports = r.getTransports?.() || [];
  } else {
    response.authenticatorData = toB64url(r.authenticatorData);
    response.signature = toB64url(r.signature);
    if (r.userHandle) response.userHandle = toB64url(r.userHandle);
  }
  return {
    id: cred.id,
    rawId: toB64url(cred.rawId),
    type: cred.type,
    response,
    authenticatorAttachment: cred.authenticatorAttachment ?? null,
    clientExtensionResults: cred.getClientExtensionResults?.() || {},
  };
}

const creationOptions = (json) =>
  PublicKeyCredential.parseCreationOptionsFromJSON?.(json) ?? creationOptionsByHand(json);
const requestOptions = (json) =>
  PublicKeyCredential.parseRequestOptionsFromJSON?.(json) ?? requestOptionsByHand(json);
const credentialJson = (cred) => (typeof cred.toJSON === "function" ? cred.toJSON() : credentialJsonByHand(cred));

function failureText(err) {
  return passkeyRefusalText(err) || refusalText(err);
}

// ------------------------------------------------------------------ signing in

/** hello's fields for a passkey sign-in on `conn` (a new connection, before its hello). */
async function passkeyHello(conn) {
  const { options } = await conn.request("passkey_options", { purpose: "sign_in" });
  const cred = await navigator.credentials.get({ publicKey: requestOptions(options) });
  return { passkey: credentialJson(cred) };
}


// ------------------------------------------------------------------ the Account screen

/** The account's passkeys, listed again (the Account screen opens, or one was added). */
async function loadPasskeys() {
  if (!state.account || passkeysUnavailable(window.location, window.isSecureContext)) return;
  $("passkeys-error").textContent = "";
  try {
    passkeys = (await state.conn.request("passkeys")).passkeys;
  } catch (err) {
    $("passkeys-error").textContent = refusalText(err);
  }
  renderPasskeys();
}

function renderPasskeys() {
  replaceChildren($("passkey-list"), passkeys.map((p) =>
    h("li", { class: "passkey", dataset: { passkey: p.id } },
      h("span", { class: "passkey-label" }, p.label || "A passkey"),
      h("span", { class: "passkey-used" },
        p.last_used ? `added ${dateText(p.created)}, last used ${dateText(p.last_used)}` : `added ${dateText(p.created)}, not used yet`),
      h("button", {
        type: "button", class: "btn small ghost passkey-remove",
        dataset: { focusKey: `passkey-${p.id}` }, onclick: (e) => removePasskey(p, e.currentTarget),
      }, "Remove"))));
}

async function addPasskey() {
  const button = $("add-passkey");
  $("passkeys-error").textContent = "";
  button.disabled = true;
  try {
    const { options } = await state.conn.request("passkey_options", { purpose: "register" });
    const cred = await navigator.credentials.create({ publicKey: creationOptions(options) });
    const label = deviceLabel(navigator.userAgent);
    const reply = await state.conn.request("add_passkey", { credential: credentialJson(cred), label });
    toast(`Passkey added: ${reply.passkey.label}.`);
    await loadPasskeys();
  } catch (err) {
    $("passkeys-error").textContent = failureText(err);
  } finally {
    button.disabled = false;
  }
}

async function removePasskey(passkey, button) {
  $("passkeys-error").textContent = "";
  button.disabled = true;
  try {
    await state.conn.request("remove_passkey", { passkey: passkey.id });
    toast(`Passkey removed: ${passkey.label || "a passkey"}. Remove it from the device too, in its settings.`);
  } catch (err) {
    $("passkeys-error").textContent = refusalText(err);
  }
  await loadPasskeys();
}

export function initPasskeys() {
  if (passkeysUnavailable(window.location, window.isSecureContext) || !window.PublicKeyCredential) {
    return; // account.js says why
  }
  $("add-passkey").addEventListener("click", addPasskey);
  $("passkey-sign-in").addEventListener("click", async () => {
    try {
      await signInWith($("passkey-sign-in"), passkeyHello);
    } catch (err) {
      $("sign-in-error").textContent = failureText(err); // the browser's refusal, in words
    }
  });
  onAccountOpen(loadPasskeys);
  onSession(() => {
    if (!state.account) {
      passkeys = [];
      renderPasskeys();
    }
  });
}
