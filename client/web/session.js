// The session and its connection: one WebSocket (net.js) with a `hello`, the token
// kept in localStorage so a reload or a dropped network resumes the same seat, and
// reconnecting with backoff. A signed-in device says `hello {device}` with its
// device token instead, signs in anew with a link or recovery code, and turns
// back into a guest when it is signed out (4011). It is the only module that
// opens or closes sockets; what arrives on them goes to room.js, which keeps the
// room current.

import { CLOSE } from "./codes.js";
import { hideBanner, showBanner, showLobbyMessage, toast } from "./feedback.js";
import { friendInvite } from "./friends.js";
import { quickNotice } from "./quick.js";
import { Connection, ServerError, VERSION, wsUrl } from "./net.js";
import { applyEvent, leaveToLobby, setRoom, showScreen } from "./room.js";
import { $, DEVICE_KEY, NAME_KEY, TOKEN_KEY, render, sessionChanged, settleResume, state, storage } from "./state.js";
import { CONNECTION_TEXT, REPLACED_TEXT, SIGNED_OUT_TEXT, deviceLabel, refusalText } from "./words.js";

/**
 * The connection's state (words.js CONNECTION_TEXT): the top bar says it, and
 * a room page whose server stopped answering says so plainly, stops its clocks
 * and takes no moves until it is back (app.js draws that from `state.connection`).
 */
function setConn(kind) {
  const el = $("conn");
  el.textContent = CONNECTION_TEXT[kind] || kind;
  el.dataset.state = kind;
  const was = state.connection;
  state.connection = kind;
  if (was !== kind && state.room) render();
}

/** A new connection whose frames count only while it is the page's (`state.conn`). */
function dial() {
  const conn = new Connection(wsUrl(), {
    onEvent: (ev) => {
      if (conn === state.conn) applyEvent(ev);
    },
    onSnapshot: (room) => {
      if (conn === state.conn) setRoom(room);
    },
    onNotice: (frame) => {
      if (conn !== state.conn) return;
      if (frame.type === "friend_invite") friendInvite(frame);
      else quickNotice(frame); // matched, bots_offered
    },
    onError: (err) => toast(refusalText(err)),
    onClose: (code) => {
      // A socket that never opened failed its try: the caller retries.
      if (conn === state.conn && conn.opened) onClosed(code);
    },
    onOpen: () => {
      conn.opened = true;
    },
  });
  conn.opened = false;
  return conn;
}

async function connect() {
  if (state.conn) {
    state.closing = true;
    state.conn.close();
    state.closing = false;
  }
  clearTimeout(state.reconnectTimer);
  // A retry after a drop keeps saying "Reconnecting…" or "lost" until it is back.
  if (state.connection !== "reconnecting" && state.connection !== "lost") setConn("connecting");
  const conn = dial();
  state.conn = conn;
  try {
    await conn.open();
  } catch (err) {
    if (state.connection === "connecting") setConn("idle");
    throw err;
  }
  setConn("online"); // the server answers; hello (and a resume's snapshot) follow at once
  return conn;
}

/**
 * The session a `welcome` (or a handle just taken) gives this page. A guest keeps
 * its session token; a signed-in device keeps its device token instead, and
 * signs in with it from then on (`hello {device}`), so a reload stays signed in.
 */
function adopt(session, account, deviceToken = null) {
  state.session = session;
  state.account = account || null;
  state.names[session.player] = session.name;
  if (state.account) {
    storage(DEVICE_KEY, deviceToken || session.token);
    storage(TOKEN_KEY, null);
  } else {
    storage(TOKEN_KEY, session.token);
  }
  storage(NAME_KEY, session.name);
  sessionChanged();
}

function welcomed(reply) {
  adopt({ token: reply.token, player: reply.player, name: reply.name }, reply.account, reply.device_token);
  state.reconnectDelay = 500;
  state.conn.syncClock().catch(() => {});
  setConn("online");
  return reply;
}

async function hello(fields) {
  return welcomed(await state.conn.request("hello", { version: VERSION, ...fields }));
}

// The session being opened, if any: the invite look-up and a press of Join can
// both want one at the same moment, and a second connect would cut the first.
let opening = null;

/**
 * A session to play in: a signed-in page's own (under its handle, whatever the
 * name field says), else a guest's named `name` — the current one, the one being
 * opened, or a new connection and hello.
 */
export async function ensureSession(name) {
  const signedIn = Boolean(state.account);
  if (state.conn?.isOpen && state.session && (signedIn || state.session.name === name)) return;
  const key = signedIn ? "device" : `name:${name}`;
  if (opening?.key === key) return opening.done;
  const done = signedIn ? resumeSignedIn() : (async () => {
    await connect();
    await hello({ name });
  })();
  opening = { key, done };
  try {
    await done;
  } finally {
    if (opening?.done === done) opening = null;
  }
}

/** A signed-in page's connection, back (a form was submitted while it was down). */
async function resumeSignedIn() {
  try {
    await resume(resumeFields());
  } catch (err) {
    if (err instanceof ServerError && err.code === "unknown_token") backToGuest(SIGNED_OUT_TEXT.elsewhere);
    throw err;
  }
}

/** How this page says who it is again: its device token when signed in, else its guest token. */
function resumeFields() {
  if (state.session) return state.account ? { device: state.session.token } : { token: state.session.token };
  const device = storage(DEVICE_KEY);
  if (device) return { device };
  const token = storage(TOKEN_KEY);
  return token ? { token } : null;
}

async function resume(fields) {
  await connect();
  const reply = await hello(fields);
  if (reply.room) setRoom(reply.room);
  else if (state.room) leaveToLobby("You are no longer in that room.");
  settleResume(Boolean(reply.room)); // a move cut off by the drop goes again now
}

function onClosed(code) {
  if (state.closing) return;
  if (code === CLOSE.SIGNED_OUT) {
    backToGuest(state.signingOut ? SIGNED_OUT_TEXT.here : SIGNED_OUT_TEXT.elsewhere);
    return;
  }
  if (code === CLOSE.RESUMED_ELSEWHERE) {
    // Taken back here (the banner's button, or the one over the board): this
    // page resumes the seat, and the other tab is told the same in its turn.
    state.useHere = () => {
      state.useHere = null;
      state.replaced = false;
      hideBanner();
      showLobbyMessage(""); // "opened elsewhere" is no longer true
      reconnectNow();
    };
    state.replaced = true;
    settleResume(false); // this page does not resume by itself: its moves stay unsent
    // An account is one player on every device: signing in on another moves it there.
    const text = state.account ? REPLACED_TEXT.account : REPLACED_TEXT.guest;
    if (!state.room) showLobbyMessage(text.lobby);
    showBanner(text.room, "Use it here", () => state.useHere?.());
    if (state.accountOpen) {
      // The Account screen asks nothing of a session this page does not hold: the
      // banner (and its button) is where the page is told, so that is shown.
      state.accountOpen = false;
      showScreen();
    }
    setConn("replaced");
    return;
  }
  if (state.session) scheduleReconnect();
  else setConn("idle");
}

/** Try again after a while; `failed`: a try just failed, so the server is not answering. */
function scheduleReconnect(failed = false) {
  clearTimeout(state.reconnectTimer);
  setConn(failed ? "lost" : "reconnecting");
  state.reconnectTimer = setTimeout(reconnectNow, state.reconnectDelay);
  state.reconnectDelay = Math.min(state.reconnectDelay * 2, 8000);
}

async function reconnectNow() {
  const fields = resumeFields();
  if (!fields) return;
  try {
    await resume(fields);
  } catch (err) {
    if (err instanceof ServerError && err.code === "unknown_token") {
      if (fields.device) backToGuest(SIGNED_OUT_TEXT.elsewhere);
      else {
        forgetSession();
        leaveToLobby("Your session expired. Pick a name and join again.");
      }
      return;
    }
    scheduleReconnect(true);
  }
}

function forgetSession() {
  settleResume(false);
  storage(TOKEN_KEY, null);
  storage(DEVICE_KEY, null);
  state.session = null;
  state.account = null;
  state.signingOut = false;
  sessionChanged();
}

/**
 * This device is signed out (here, on another device, or its account is gone):
 * the page is a guest's again, in the lobby, told why in `message`. Its seat was
 * the account's, so nothing of the room stays.
 */
export function backToGuest(message) {
  forgetSession();
  clearTimeout(state.reconnectTimer);
  state.closing = true;
  state.conn?.close(); // kept, closed: the clocks still read its offset from the server
  state.closing = false;
  state.accountOpen = false;
  setConn("idle");
  leaveToLobby(message);
}

/** At page load: sign in with the device token, or resume the guest session a token was saved for. */
export async function restoreSession() {
  const fields = resumeFields();
  if (!fields) return;
  try {
    await resume(fields);
  } catch (err) {
    if (err instanceof ServerError && err.code === "unknown_token") {
      if (fields.device) backToGuest(SIGNED_OUT_TEXT.elsewhere);
      else {
        forgetSession();
        state.closing = true;
        state.conn?.close();
        state.closing = false;
      }
      return;
    }
    showLobbyMessage("Cannot reach the server; retrying…");
    scheduleReconnect(true);
  }
}

/** A guest's session to take a handle in: the open one, or a new one named `name`. */
export async function guestSession(name) {
  if (state.session && !state.account) {
    if (!state.conn?.isOpen) throw new ServerError({ code: "disconnected", message: "not connected" });
    return;
  }
  await ensureSession(name);
}

/**
 * The handle was taken (`account_made`): this connection's session is the
 * account's from now on, under the same player id, and the device token
 * replaces the guest's token here.
 */
export function adoptAccount(reply) {
  const session = { token: reply.device_token, player: reply.account.player, name: reply.account.handle };
  adopt(session, reply.account, reply.device_token);
  showLobbyMessage("");
}

/**
 * Sign in as a new device of an account: `fields` are hello's (`link`,
 * `recovery`, or `passkey`), or a function given the new connection before its
 * hello that returns them (passkeys.js asks `passkey_options` there first). The
 * sign-in goes on a connection of its own: the session this page had (a guest's)
 * stays until the server said welcome, so a mistyped code costs nothing.
 */
export async function signIn(fields) {
  const conn = dial();
  try {
    await conn.open();
    const sent = typeof fields === "function" ? await fields(conn) : fields;
    const reply = await conn.request("hello", { version: VERSION, label: deviceLabel(navigator.userAgent), ...sent });
    const old = state.conn;
    const seat = state.room && !state.account; // a guest's seat, given up (signin.js asked)
    clearTimeout(state.reconnectTimer);
    settleResume(false);
    state.conn = conn; // from here on its frames are the page's
    state.replaced = false;
    hideBanner();
    if (old) {
      // The guest leaves its room on its own connection (the room is told at
      // once, rather than keeping an away seat), then that connection goes.
      const leaving = seat && old.isOpen ? old.request("leave_room") : Promise.resolve();
      leaving.catch(() => {}).finally(() => old.close());
    }
    welcomed(reply);
    showLobbyMessage(""); // "This device was signed out" and the like are over
    if (reply.room) setRoom(reply.room);
    else if (state.room) leaveToLobby("");
    return reply;
  } catch (err) {
    if (conn !== state.conn) conn.close();
    throw err;
  }
}
