// The session and its connection: one WebSocket (net.js) with a `hello`, the token
// kept in localStorage so a reload or a dropped network resumes the same seat, and
// reconnecting with backoff. It is the only module that opens or closes sockets;
// what arrives on them goes to room.js, which keeps the room current.

import { CLOSE } from "./codes.js";
import { hideBanner, showBanner, showLobbyMessage, toast } from "./feedback.js";
import { Connection, ServerError, VERSION, wsUrl } from "./net.js";
import { applyEvent, leaveToLobby, setRoom } from "./room.js";
import { $, NAME_KEY, TOKEN_KEY, settleResume, state, storage } from "./state.js";

function setConn(text, kind) {
  const el = $("conn");
  el.textContent = text;
  el.dataset.state = kind;
}

async function connect() {
  if (state.conn) {
    state.closing = true;
    state.conn.close();
    state.closing = false;
  }
  clearTimeout(state.reconnectTimer);
  setConn("connecting…", "connecting");
  const conn = new Connection(wsUrl(), {
    onEvent: (ev) => {
      if (conn === state.conn) applyEvent(ev);
    },
    onSnapshot: (room) => {
      if (conn === state.conn) setRoom(room);
    },
    onError: (err) => toast(`${err.message} (${err.code})`),
    onClose: (code) => {
      if (conn === state.conn) onClosed(code);
    },
  });
  state.conn = conn;
  try {
    await conn.open();
  } catch (err) {
    setConn("offline", "offline");
    throw err;
  }
  setConn("online", "online");
  return conn;
}

async function hello(fields) {
  const reply = await state.conn.request("hello", { version: VERSION, ...fields });
  state.session = { token: reply.token, player: reply.player, name: reply.name };
  state.names[reply.player] = reply.name;
  state.reconnectDelay = 500;
  storage(TOKEN_KEY, reply.token);
  storage(NAME_KEY, reply.name);
  $("me-name").textContent = reply.name;
  state.conn.syncClock().catch(() => {});
  return reply;
}

/** A session named `name`: the current one, or a new connection and hello. */
export async function ensureSession(name) {
  if (state.conn?.isOpen && state.session && state.session.name === name) return;
  await connect();
  await hello({ name });
}

async function resume(token) {
  await connect();
  const reply = await hello({ token });
  if (reply.room) setRoom(reply.room);
  else if (state.room) leaveToLobby("You are no longer in that room.");
  settleResume(Boolean(reply.room)); // a move cut off by the drop goes again now
}

function onClosed(code) {
  setConn("offline", "offline");
  if (state.closing) return;
  if (code === CLOSE.RESUMED_ELSEWHERE) {
    state.replaced = true;
    settleResume(false); // this page does not resume by itself: its moves stay unsent
    if (!state.room) showLobbyMessage("This session was opened in another tab or window.");
    showBanner("This seat was opened in another tab or window.", "Use it here", () => {
      state.replaced = false;
      hideBanner();
      reconnectNow();
    });
    return;
  }
  if (state.session) scheduleReconnect();
}

function scheduleReconnect() {
  clearTimeout(state.reconnectTimer);
  setConn(`reconnecting…`, "connecting");
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
    scheduleReconnect();
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
    scheduleReconnect();
  }
}
