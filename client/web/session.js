// The session and its connection: one WebSocket (net.js) with a `hello`, the token
// kept in localStorage so a reload or a dropped network resumes the same seat, and
// reconnecting with backoff. It is the only module that opens or closes sockets;
// what arrives on them goes to room.js, which keeps the room current.

import { CLOSE } from "./codes.js";
import { hideBanner, showBanner, showLobbyMessage, toast } from "./feedback.js";
import { accountChanged, friendInvite } from "./friends.js";
import { Connection, ServerError, VERSION, wsUrl } from "./net.js";
import { applyEvent, leaveToLobby, setRoom } from "./room.js";
import { $, NAME_KEY, TOKEN_KEY, render, settleResume, state, storage } from "./state.js";
import { CONNECTION_TEXT, refusalText } from "./words.js";

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

async function connect() {
  if (state.conn) {
    state.closing = true;
    state.conn.close();
    state.closing = false;
  }
  clearTimeout(state.reconnectTimer);
  // A retry after a drop keeps saying "Reconnecting…" or "lost" until it is back.
  if (state.connection !== "reconnecting" && state.connection !== "lost") setConn("connecting");
  let opened = false; // a socket that never opened failed its try: the caller retries
  const conn = new Connection(wsUrl(), {
    onEvent: (ev) => {
      if (conn === state.conn) applyEvent(ev);
    },
    onSnapshot: (room) => {
      if (conn === state.conn) setRoom(room);
    },
    onNotice: (frame) => {
      if (conn === state.conn && frame.type === "friend_invite") friendInvite(frame);
    },
    onError: (err) => toast(refusalText(err)),
    onClose: (code) => {
      if (conn === state.conn && opened) onClosed(code);
    },
  });
  state.conn = conn;
  try {
    await conn.open();
  } catch (err) {
    if (state.connection === "connecting") setConn("idle");
    throw err;
  }
  opened = true;
  setConn("online"); // the server answers; hello (and a resume's snapshot) follow at once
  return conn;
}

async function hello(fields) {
  const reply = await state.conn.request("hello", { version: VERSION, ...fields });
  state.session = { token: reply.token, player: reply.player, name: reply.name };
  state.account = reply.account || null;
  state.names[reply.player] = reply.name;
  state.reconnectDelay = 500;
  storage(TOKEN_KEY, reply.token);
  storage(NAME_KEY, reply.name);
  $("me-name").textContent = reply.name;
  state.conn.syncClock().catch(() => {});
  setConn("online");
  accountChanged();
  return reply;
}

// The session being opened, if any: the invite look-up and a press of Join can
// both want one at the same moment, and a second connect would cut the first.
let opening = null;

/** A session named `name`: the current one, the one being opened, or a new connection and hello. */
export async function ensureSession(name) {
  if (state.conn?.isOpen && state.session && state.session.name === name) return;
  if (opening?.name === name) return opening.done;
  const done = (async () => {
    await connect();
    await hello({ name });
  })();
  opening = { name, done };
  try {
    await done;
  } finally {
    if (opening?.done === done) opening = null;
  }
}

async function resume(token) {
  await connect();
  const reply = await hello({ token });
  if (reply.room) setRoom(reply.room);
  else if (state.room) leaveToLobby("You are no longer in that room.");
  settleResume(Boolean(reply.room)); // a move cut off by the drop goes again now
}

function onClosed(code) {
  if (state.closing) return;
  if (code === CLOSE.RESUMED_ELSEWHERE) {
    // Taken back here (the banner's button, or the one over the board): this
    // page resumes the seat, and the other tab is told the same in its turn.
    state.useHere = () => {
      state.useHere = null;
      state.replaced = false;
      hideBanner();
      reconnectNow();
    };
    state.replaced = true;
    settleResume(false); // this page does not resume by itself: its moves stay unsent
    if (!state.room) showLobbyMessage("This session was opened in another tab or window.");
    showBanner("This seat was opened in another tab or window.", "Use it here", () => state.useHere?.());
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
  const token = state.session?.token || storage(TOKEN_KEY);
  if (!token) return;
  try {
    await resume(token);
  } catch (err) {
    if (err instanceof ServerError && err.code === "unknown_token") {
      forgetSession();
      leaveToLobby("Your session expired. Pick a name and join again.");
      return;
    }
    scheduleReconnect(true);
  }
}

function forgetSession() {
  settleResume(false);
  storage(TOKEN_KEY, null);
  state.session = null;
  $("me-name").textContent = "";
}

/** At page load: resume the session a token was saved for, if any. */
export async function restoreSession() {
  const token = storage(TOKEN_KEY);
  if (!token) return;
  try {
    await resume(token);
  } catch (err) {
    if (err instanceof ServerError && err.code === "unknown_token") {
      forgetSession();
      state.closing = true;
      state.conn?.close();
      state.closing = false;
      return;
    }
    showLobbyMessage("Cannot reach the server; retrying…");
    scheduleReconnect(true);
  }
}
