// klondike-race browser client: lobby, board, race HUD, spectator wall, score
// sheet and host controls over the JSON WebSocket protocol (docs/protocol.md).

import { BoardController, renderBoard } from "./board.js";
import { describeMove, stockMove } from "./cards.js";
import { clock, h, replaceChildren, signed } from "./dom.js";
import { Connection, ServerError, VERSION, wsUrl } from "./net.js";
import { cardText, explainDeal, seedMatches } from "./replay.js";
import { SettingsForm, summary } from "./settings.js";

const TOKEN_KEY = "klondike-race.token";
const NAME_KEY = "klondike-race.name";
const $ = (id) => document.getElementById(id);

const state = {
  conn: null,
  session: null, // {token, player, name}
  room: null, // the room snapshot, kept current by events
  names: {}, // every player id -> name seen, so a removed player keeps a name on the sheet
  firsts: {}, // deal number -> {player, bonus}
  seeds: {}, // deal number -> {seed, commitment, ok: true|false}
  past: { pick: null, key: null, explained: new Map() }, // the "Past deals" panel
  dealEnded: {}, // deal number -> server ms when it ended (for the clock)
  reconnectDelay: 500,
  reconnectTimer: null,
  closing: false, // we closed the socket on purpose
  replaced: false, // the session was resumed elsewhere (4001)
  resignArmed: null,
  lastMoveError: null,
};

// ---------------------------------------------------------------------------
// Connection and session

function storage(key, value) {
  try {
    if (value === undefined) return localStorage.getItem(key);
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    /* storage may be unavailable (private mode); the session then lasts a page */
  }
  return null;
}

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
async function ensureSession(name) {
  if (state.conn?.isOpen && state.session && state.session.name === name) return;
  await connect();
  await hello({ name });
}

async function resume(token) {
  await connect();
  const reply = await hello({ token });
  if (reply.room) setRoom(reply.room);
  else if (state.room) leaveToLobby("You are no longer in that room.");
}

function onClosed(code) {
  setConn("offline", "offline");
  if (state.closing) return;
  if (code === 4001) {
    state.replaced = true;
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
  storage(TOKEN_KEY, null);
  state.session = null;
  $("me-name").textContent = "";
}

// ---------------------------------------------------------------------------
// Room state

const me = () => state.session?.player;
const isHost = () => state.room && state.room.host === me();
const isPlayer = () => state.room && state.room.role === "player";

function rememberNames(room) {
  for (const m of [...(room.players || []), ...(room.spectators || [])]) state.names[m.id] = m.name;
}

function nameOf(id) {
  return state.names[id] || id;
}

function setRoom(room) {
  const before = state.room;
  if (!before || before.code !== room.code || before.round !== room.round) {
    state.firsts = {};
    state.seeds = {};
    state.dealEnded = {};
    resetPast();
  }
  state.room = room;
  room.history = room.history || [];
  rememberNames(room);
  state.conn?.adoptRoom(room);
  for (const past of room.history) noteDealOver(past);
  // The sheet names the first finisher of each deal; keep it for the notices.
  (room.sheet?.rows || []).forEach((row, i) => {
    if (row.first) {
      const cell = row.cells?.[row.first];
      state.firsts[i + 1] = { player: row.first, bonus: cell ? cell.bonus : 0 };
    }
  });
  $("lobby-screen").hidden = true;
  $("room-screen").hidden = false;
  $("room-info").hidden = false;
  $("leave").hidden = false;
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  renderAll();
}

function leaveToLobby(message) {
  state.room = null;
  state.conn?.adoptRoom(null);
  boardCtl.setView(null);
  $("room-screen").hidden = true;
  $("room-info").hidden = true;
  $("leave").hidden = true;
  $("lobby-screen").hidden = false;
  if (message) showLobbyMessage(message);
  document.title = "Klondike Race";
}

/** A revealed seed, checked against the commitment the deal started with. */
function noteDealOver(deal) {
  if (!deal || deal.seed === undefined || state.seeds[deal.number]?.seed === deal.seed) return;
  state.seeds[deal.number] = { seed: deal.seed, commitment: deal.commitment, ok: seedMatches(deal.seed, deal.commitment) };
}

function resetPast() {
  state.past = { pick: null, key: null, explained: new Map() };
}

/**
 * A rescoring `sheet` (the host changed scoring or race bonus) is newer than the
 * `progress` scores of the running deal: carry its scores over, so the HUD, the
 * rivals and the live row of the sheet agree until the next move.
 */
function syncProgressFromSheet(room) {
  const deal = room.deal;
  const row = deal && room.sheet?.rows?.[deal.number - 1];
  if (!row || !deal.progress) return;
  for (const [id, cell] of Object.entries(row.cells || {})) {
    if (deal.progress[id]) deal.progress[id] = { ...deal.progress[id], score: cell.score };
  }
}

function applyEvent(ev) {
  const room = state.room;
  if (!room) return;
  switch (ev.type) {
    case "members":
      room.players = ev.players;
      room.spectators = ev.spectators;
      room.host = ev.host;
      rememberNames(room);
      break;
    case "settings":
      room.settings = ev.settings;
      // The server adds round_ends_at here: a new time limit moves the round's end.
      if (ev.round_ends_at !== undefined) room.round_ends_at = ev.round_ends_at;
      break;
    case "deal_started":
      if (ev.round !== undefined && ev.round !== room.round) {
        const rematch = Boolean(room.round);
        room.history = [];
        room.sheet = { players: [], carry: {}, rows: [], totals: {}, winners: [] };
        state.firsts = {};
        state.seeds = {};
        state.dealEnded = {};
        resetPast();
        // A rematch starts a new sheet (with cumulative Vegas banks carried) and no
        // `sheet` event says so: take the room from a snapshot.
        if (rematch) queueMicrotask(() => state.conn?.resync());
      }
      room.deal = ev.deal;
      if (ev.round !== undefined) room.round = ev.round;
      if (ev.round_ends_at !== undefined) room.round_ends_at = ev.round_ends_at;
      room.state = "playing";
      setMoveStatus("");
      break;
    case "progress":
      if (room.deal && ev.deal === room.deal.number) {
        room.deal.progress = room.deal.progress || {};
        room.deal.progress[ev.player] = ev.progress;
        if (ev.board) {
          room.deal.boards = room.deal.boards || {};
          room.deal.boards[ev.player] = ev.board;
        }
      }
      break;
    case "first_finisher":
      state.firsts[ev.deal] = { player: ev.player, bonus: ev.bonus };
      break;
    case "deal_over":
      room.history = room.history.filter((d) => d.number !== ev.deal.number).concat([ev.deal]);
      state.dealEnded[ev.deal.number] = state.conn.serverNow();
      noteDealOver(ev.deal);
      break;
    case "sheet":
      room.sheet = ev.sheet;
      syncProgressFromSheet(room);
      break;
    case "round_over":
      room.sheet = ev.sheet;
      room.state = "round_over";
      room.winners = ev.winners;
      if (room.deal && !state.dealEnded[room.deal.number]) state.dealEnded[room.deal.number] = state.conn.serverNow();
      break;
    case "removed":
      if (ev.player === me()) {
        leaveToLobby("The host removed you from the room.");
        return;
      }
      room.players = room.players.filter((p) => p.id !== ev.player);
      room.spectators = (room.spectators || []).filter((p) => p.id !== ev.player);
      break;
    case "room_closed":
      leaveToLobby(`The room was closed${ev.reason ? ` (${ev.reason})` : ""}.`);
      return;
    default:
      return; // an event this client does not know: nothing to show
  }
  renderAll();
}

// ---------------------------------------------------------------------------
// Requests from the UI

async function sendMove(move) {
  const room = state.room;
  const deal = room?.deal;
  if (!deal || !state.conn) throw new Error("no deal");
  let reply;
  try {
    reply = await state.conn.request("move", { deal: deal.number, move });
  } catch (err) {
    showMoveError(err, move);
    throw err;
  }
  // A snapshot may have replaced the room object meanwhile: update the current one.
  const now = state.room;
  if (now && now.code === room.code && now.deal && reply.deal === now.deal.number && now.role === "player") {
    now.deal.board = reply.board;
    const progress = (now.deal.progress = now.deal.progress || {});
    const mine = progress[me()] || {};
    progress[me()] = {
      ...mine,
      score: reply.score,
      home: reply.board.home,
      moves: reply.board.moves,
      status: reply.board.status,
      finished: reply.board.status !== "playing",
    };
    setMoveStatus("");
    hint(`Moved: ${describeMove(move)}${reply.result?.turned ? `, turned up ${reply.result.turned}` : ""}`);
    renderAll();
  }
  return reply;
}

function showMoveError(err, move) {
  const code = err.code || "error";
  const text = err.message || code;
  state.lastMoveError = { code, text };
  const el = $("move-status");
  replaceChildren(el, h("span", { class: "reason" }, text), " ", h("code", { class: "reason-code" }, code));
  el.dataset.kind = "error";
  el.classList.remove("shake");
  void el.offsetWidth; // restart the animation
  el.classList.add("shake");
  clearTimeout(showMoveError.timer);
  showMoveError.timer = setTimeout(() => setMoveStatus(""), 8000);
  if (move) hint(`Refused: ${text}`);
}

function setMoveStatus(text) {
  const el = $("move-status");
  el.textContent = text;
  el.dataset.kind = text ? "info" : "";
}

async function hostAction(type, fields = {}) {
  $("host-error").textContent = "";
  try {
    return await state.conn.request(type, fields);
  } catch (err) {
    $("host-error").textContent = `${err.message} (${err.code})`;
    return null;
  }
}

function hint(text) {
  $("hint").textContent = text;
}

let toastTimer = null;
function toast(text) {
  const el = $("toast");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.hidden = true;
  }, 4000);
}

function showLobbyMessage(text) {
  const el = $("lobby-message");
  el.textContent = text;
  el.hidden = !text;
}

function showBanner(text, action, onAction) {
  const el = $("notices");
  const banner = h("div", { class: "notice warn", id: "replaced-banner" }, text, " ",
    h("button", { type: "button", class: "btn small", onclick: onAction }, action));
  el.prepend(banner);
}

function hideBanner() {
  $("replaced-banner")?.remove();
}

// ---------------------------------------------------------------------------
// Rendering

const boardCtl = new BoardController($("board-host"), {
  onMove: (move) => sendMove(move),
  onHint: hint,
});

const hostForm = new SettingsForm("host", {
  onChange: async (name, value) => {
    try {
      await state.conn.request("update_settings", { settings: { [name]: value } });
    } catch (err) {
      if (!hostForm.setError(err.field || name, `${err.message}`)) $("host-error").textContent = err.message;
    }
  },
});
$("host-settings").appendChild(hostForm.el);

const createForm = new SettingsForm("create");
$("create-settings").appendChild(createForm.el);

function renderAll() {
  const room = state.room;
  if (!room) return;
  document.title = `${room.code} · Klondike Race`;
  $("room-code").textContent = room.code;
  $("invite-link").value = inviteLink(room.code);
  renderHud();
  renderNotices();
  renderTable();
  renderControls();
  renderMembers();
  renderHost();
  renderSheet();
  renderPast();
}

function inviteLink(code) {
  return `${location.origin}/#join=${code}`;
}

function dealIsOver(room, number) {
  return (room.history || []).some((d) => d.number === number);
}

function myBoard() {
  const room = state.room;
  return isPlayer() && room.deal ? room.deal.board || null : null;
}

function renderHud() {
  const room = state.room;
  if (!room) return;
  const hud = $("hud");
  const deal = room.deal;
  const items = [];
  const stat = (label, value, id = null, cls = "") =>
    h("div", { class: `stat ${cls}`.trim() },
      h("span", { class: "stat-label" }, label), h("span", { class: `stat-value ${cls ? "mono" : ""}`.trim(), id }, value));

  if (!deal) {
    items.push(stat("Round", room.state === "lobby" ? "not started" : String(room.round ?? "–"), "round-no"));
  } else {
    const mine = isPlayer() ? deal.progress?.[me()] : null;
    if (mine) items.push(stat("Your score", String(mine.score), "my-score", "score"));
    items.push(stat("Deal", `${deal.number} of ${deal.deals}`, "deal-of"));
    items.push(stat("Deal clock", dealClockText(), "deal-clock", "clock"));
    items.push(stat("Round time left", roundLeftText(), "round-left", "clock"));
    if (mine) {
      const total = deal.board ? deal.board.foundations.length * 13 : 52;
      items.push(stat("Home", `${mine.home}/${total}`, "my-home"));
      items.push(stat("Moves", String(mine.moves), "my-moves"));
    }
  }
  const rivals = deal ? rivalChips(deal) : null;
  const seed = deal ? seedLine(deal) : null;
  replaceChildren(hud, h("div", { class: "stats" }, items), rivals, seed);
}

function rivalChips(deal) {
  const room = state.room;
  const ids = room.players.map((p) => p.id);
  for (const id of Object.keys(deal.progress || {})) if (!ids.includes(id)) ids.push(id);
  const first = state.firsts[deal.number];
  const others = ids.filter((id) => !(isPlayer() && id === me()));
  if (!others.length) return null;
  const total = (deal.rules?.variant === "double" ? 104 : 52);
  const ended = dealIsOver(room, deal.number) || room.state === "round_over";
  return h(
    "ul",
    { class: "rivals", "aria-label": isPlayer() ? "Rivals" : "Players" },
    others.map((id) => {
      const p = deal.progress?.[id];
      const status = p ? p.status : "waiting";
      return h(
        "li",
        { class: `rival status-${status}`, dataset: { player: id } },
        h("span", { class: "rival-name" }, nameOf(id), first?.player === id ? h("span", { class: "first-badge", title: "first finisher" }, " ★") : null),
        h("span", { class: "rival-score", title: "score" }, p ? String(p.score) : "–"),
        h("span", { class: "rival-home", title: "cards home" }, p ? `${p.home}/${total}` : ""),
        h("span", { class: "rival-moves", title: "moves" }, p ? `${p.moves} mv` : ""),
        h("span", { class: "rival-status" }, statusText(status, p?.finished, ended)),
      );
    }),
  );
}

/** A player's state in a deal; `ended`: the deal is over for everyone (or the round). */
function statusText(status, finished, ended = false) {
  if (status === "won") return "✓ won";
  if (status === "resigned") return "resigned";
  if (status === "dead") return "stuck";
  if (finished) return "done";
  if (status === "playing") return ended ? "unfinished" : "playing";
  return "";
}

function short(hex) {
  return hex.length > 16 ? `${hex.slice(0, 16)}…` : hex;
}

/** This deal's seed commitment, and the seed of the last deal that is over (checked). */
function seedLine(deal) {
  const commit = deal.commitment || "";
  const parts = [
    h("span", { class: "commit", title: commit }, `Deal ${deal.number} seed commitment `, h("code", {}, short(commit))),
  ];
  const numbers = Object.keys(state.seeds).map(Number).filter((n) => n <= deal.number);
  const last = numbers.length ? Math.max(...numbers) : null;
  if (last !== null) {
    const revealed = state.seeds[last];
    const check =
      revealed.ok === true
        ? h("span", { class: "ok", title: "sha256 of the seed equals the commitment" }, " ✓ matches its commitment")
        : revealed.ok === false
          ? h("span", { class: "bad" }, " ✗ does not match its commitment")
          : null;
    parts.push(
      h("span", { class: "seed" }, h("br"), `Deal ${last} seed (revealed) `,
        h("code", { id: "revealed-seed", dataset: { deal: String(last) } }, String(revealed.seed)), check),
    );
  }
  return h("p", { class: "seed-line" }, parts);
}

function dealClockText() {
  const room = state.room;
  const deal = room?.deal;
  if (!deal || !deal.started_at) return "–";
  const end = state.dealEnded[deal.number] || (room.state === "playing" && !dealIsOver(room, deal.number) ? state.conn.serverNow() : null);
  if (!end) return "over";
  return clock(end - deal.started_at);
}

function roundLeftText() {
  const room = state.room;
  if (!room?.round_ends_at) return "no limit";
  if (room.state !== "playing") return "–";
  return clock(room.round_ends_at - state.conn.serverNow());
}

function tick() {
  if (!state.room) return;
  const c = $("deal-clock");
  if (c) c.textContent = dealClockText();
  const r = $("round-left");
  if (r) r.textContent = roundLeftText();
}
setInterval(tick, 500);

function renderNotices() {
  const room = state.room;
  const el = $("notices");
  const keep = $("replaced-banner");
  const notes = [];
  const deal = room.deal;
  if (room.state === "lobby") {
    notes.push(h("div", { class: "notice" }, isHost() ? "Invite the others, then start the round." : "Waiting for the host to start the round."));
  }
  if (deal) {
    const first = state.firsts[deal.number];
    if (first) {
      const who = first.player === me() ? "You finished" : `${nameOf(first.player)} finished`;
      notes.push(h("div", { class: "notice first", id: "first-finisher" }, `★ ${who} first and took the race bonus of ${first.bonus}.`));
    }
    const board = myBoard();
    if (board && board.status !== "playing" && room.state === "playing" && !dealIsOver(room, deal.number)) {
      const t = { won: "You won this deal!", resigned: "You resigned this deal.", dead: "No legal move left: this deal is dead." }[board.status];
      notes.push(h("div", { class: "notice" }, `${t} Waiting for the others…`));
    }
    if (dealIsOver(room, deal.number) && room.state === "playing") {
      notes.push(h("div", { class: "notice" }, `Deal ${deal.number} is over for everyone.`));
    }
  }
  if (room.state === "round_over") {
    const winners = room.winners || room.sheet?.winners || [];
    const names = winners.map(nameOf).join(" and ");
    const total = winners.length ? room.sheet?.totals?.[winners[0]] : null;
    notes.push(h("div", { class: "notice win", id: "round-over" },
      `Round over. ${names ? `${names} win${winners.length === 1 ? "s" : ""}${total !== null && total !== undefined ? ` with ${total}` : ""}.` : ""}`,
      isHost() ? " Press Rematch for another round." : ""));
  }
  if (room.state === "closed") notes.push(h("div", { class: "notice warn" }, "This room is closed."));
  replaceChildren(el, keep, notes);
}

function renderTable() {
  const room = state.room;
  const wall = $("wall");
  const msg = $("table-message");
  const deal = room.deal;
  const over = deal && dealIsOver(room, deal.number);
  // Once the round is over, its deals are in "Past deals": the felt makes way.
  const roundOver = room.state === "round_over";
  const pastShown = roundOver && (room.history || []).length > 0;
  const showWall = !pastShown && (roundOver || (room.role === "spectator" && deal));
  $("table").hidden = pastShown;
  if (isPlayer() && deal && deal.board && room.state === "playing") {
    const board = deal.board;
    const live = !over && board.status === "playing";
    if (boardCtl.view !== board || Boolean(boardCtl.enabled) !== live) boardCtl.setView(board, live);
    $("board-host").hidden = false;
  } else {
    if (boardCtl.view) boardCtl.setView(null);
    $("board-host").hidden = true;
  }
  if (showWall) {
    wall.hidden = false;
    renderWall(wall, deal, over);
  } else {
    wall.hidden = true;
  }
  let text = "";
  if (room.state === "lobby") text = "The table is set. The race starts when the host presses Start.";
  else if (!deal) text = "Waiting for the next deal.";
  else if (isPlayer() && !deal.board && room.state === "playing") text = "You joined mid-round: you play from the next round.";
  msg.textContent = text;
  msg.hidden = !text;
  $("table").dataset.mode = showWall ? "wall" : "board";
}

function renderWall(wall, deal, over) {
  const room = state.room;
  const past = over ? room.history.find((d) => d.number === deal.number) : null;
  const boards = past?.boards || deal.boards || {};
  const ids = room.players.map((p) => p.id);
  for (const id of Object.keys(boards)) if (!ids.includes(id)) ids.push(id);
  const first = state.firsts[deal.number];
  const row = room.sheet?.rows?.[deal.number - 1];
  const tiles = ids.map((id) => {
    const view = boards[id];
    const p = deal.progress?.[id] || (row?.cells?.[id] ?? null);
    const total = view ? view.foundations.length * 13 : 52;
    const score = row && over ? row.cells?.[id]?.score : p?.score;
    return h(
      "article",
      { class: `wall-tile${id === me() ? " mine" : ""}`, dataset: { player: id }, "aria-label": `${nameOf(id)}'s board` },
      h("header", { class: "tile-head" },
        h("span", { class: "tile-name" }, nameOf(id), id === me() ? " (you)" : "", first?.player === id ? h("span", { class: "first-badge", title: "first finisher" }, " ★") : null),
        h("span", { class: "tile-score", title: "score" }, score !== undefined && score !== null ? String(score) : "–"),
        h("span", { class: "tile-home", title: "cards home" }, p ? `${p.home}/${total} home` : ""),
        h("span", { class: "tile-status" }, p ? statusText(p.status, p.finished, over) : "")),
      h("div", { class: "board-host mini-host" }, view ? renderBoard(view, { mini: true }) : h("p", { class: "note" }, "no board yet")),
    );
  });
  const title = over ? `Deal ${deal.number}: every board, revealed` : `Deal ${deal.number}: live`;
  replaceChildren(wall, h("h3", { class: "wall-title" }, title), h("div", { class: "wall-grid" }, tiles));
}

// ---------------------------------------------------------------------------
// Past deals: every board and move log of the round's finished deals (RULES.md §6)

/** Card names in a text ("7♥︎ waste → pile 3") as spans coloured by suit. */
function cardsInText(text) {
  const parts = [];
  const re = /(10|[A2-9JQK])([♣♦♥♠])\uFE0E?/gu;
  let at = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > at) parts.push(text.slice(at, m.index));
    parts.push(h("span", { class: `ctext ${m[2] === "♦" || m[2] === "♥" ? "red" : "black"}` }, m[0]));
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}

function cardList(codes) {
  if (!codes.length) return "empty";
  return cardsInText(codes.map(cardText).join(" "));
}

function explained(past) {
  let e = state.past.explained.get(past.number);
  if (!e || e.past !== past) {
    e = { past, result: explainDeal(past) };
    state.past.explained.set(past.number, e);
  }
  return e.result;
}

function renderPast() {
  const room = state.room;
  const panel = $("past-panel");
  const history = [...(room.history || [])].sort((a, b) => a.number - b.number);
  if (!history.length) {
    panel.hidden = true;
    state.past.key = null;
    return;
  }
  panel.hidden = false;
  const numbers = history.map((d) => d.number);
  const pick = numbers.includes(state.past.pick) ? state.past.pick : numbers[numbers.length - 1];
  const past = history.find((d) => d.number === pick);
  const row = room.sheet?.rows?.[pick - 1] || null;
  // Logs can be long: rebuild only when something shown here changed.
  const ids = Object.keys(past.boards || {});
  const key = JSON.stringify([room.code, room.round, numbers, pick, row, state.firsts[pick] || null, ids.map(nameOf), me()]);
  if (key === state.past.key) return;
  state.past.key = key;

  replaceChildren($("past-picker"), numbers.map((n) =>
    h("button", {
      type: "button", class: `btn small${n === pick ? " current" : ""}`, "aria-pressed": n === pick ? "true" : "false",
      dataset: { deal: String(n), focusKey: `past-${n}` },
      onclick: () => {
        state.past.pick = n;
        renderPast();
      },
    }, `Deal ${n}`)));

  const { seedOk, players } = explained(past);
  const commit = String(past.commitment || "");
  const seedLine = h("p", { class: "past-seed" },
    "Seed ", h("code", { class: "seed" }, String(past.seed)), " ",
    seedOk
      ? h("span", { class: "ok", title: "sha256 of the seed equals the commitment made when the deal started" }, "✓ matches its commitment")
      : h("span", { class: "bad" }, "✗ does not match its commitment"),
    " ", h("code", { class: "commit", title: commit }, short(commit)));
  const anyDown = ids.some((id) => past.boards[id].tableau.some((p) => p.down > 0));
  const legend = anyDown
    ? h("p", { class: "note past-legend" }, h("span", { class: "swatch", "aria-hidden": "true" }), " Striped cards were still face down when the deal ended.")
    : null;

  const order = room.players.map((p) => p.id).filter((id) => ids.includes(id));
  for (const id of ids) if (!order.includes(id)) order.push(id);
  const first = row?.first ?? state.firsts[pick]?.player ?? null;
  const cards = order.map((id) => {
    const board = past.boards[id];
    const cell = row?.cells?.[id] || null;
    const info = players[id] || { steps: [], replayed: false, error: "no log" };
    const total = board.foundations.length * 13;
    const stock = board.stock_cards || [];
    const waste = board.waste_cards || [];
    return h("article", { class: `past-player${id === me() ? " mine" : ""}`, dataset: { player: id }, "aria-label": `${nameOf(id)} in deal ${pick}` },
      h("header", { class: "past-player-head" },
        h("span", { class: "tile-name" }, nameOf(id), id === me() ? " (you)" : "",
          first === id ? h("span", { class: "first-badge", title: "first finisher" }, " ★") : null),
        cell ? h("span", { class: "tile-score", title: "score for this deal" }, signed(cell.score)) : null,
        cell?.bonus ? h("span", { class: "bonus", title: "race bonus" }, `★${cell.bonus}`) : null,
        h("span", { class: "tile-home" }, `${board.home}/${total} home · ${board.moves} move${board.moves === 1 ? "" : "s"}`),
        h("span", { class: "tile-status" }, statusText(board.status, false, true))),
      h("div", { class: "board-host mini-host past-board" }, renderBoard(board, { mini: true })),
      h("p", { class: "past-rest" },
        h("span", {}, h("b", {}, `Stock (${stock.length}): `), cardList(stock)), " ",
        h("span", {}, h("b", {}, `Waste (${waste.length}): `), cardList(waste))),
      h("details", { class: "past-log", open: true },
        h("summary", {}, `Move log (${info.steps.length})`, " ",
          info.replayed
            ? h("span", { class: "ok", title: "replayed from the seed's layout, it ends on this board" }, "✓ replays to this board")
            : h("span", { class: "bad", title: info.error || "" }, `✗ not replayed${info.error ? `: ${info.error}` : ""}`)),
        info.steps.length
          ? h("ol", { class: "log", tabindex: 0, "aria-label": `${nameOf(id)}'s moves in deal ${pick}` }, info.steps.map((step, i) =>
              h("li", { dataset: { kind: step.move.kind, index: String(i) } },
                h("span", { class: "t" }, clock(step.t)),
                h("span", { class: "mv" }, cardsInText(step.text)))))
          : h("p", { class: "note" }, "No moves.")));
  });
  replaceChildren($("past-body"), seedLine, legend, h("div", { class: "past-players" }, cards));
}

function renderControls() {
  const room = state.room;
  const board = myBoard();
  const live = board && room.state === "playing" && board.status === "playing" && !dealIsOver(room, room.deal.number);
  $("board-controls").hidden = !live;
  if (!live) return;
  $("btn-draw").textContent = "";
  $("btn-draw").append(board.stock > 0 ? "Draw " : "Recycle ", h("kbd", {}, "D"));
  const undoRule = room.deal.rules ? room.deal.rules.undo : true;
  $("btn-undo").hidden = !undoRule;
  $("btn-undo").disabled = !board.can_undo;
  $("btn-auto").hidden = !board.can_auto_complete;
  if (!state.resignArmed) $("btn-resign").textContent = "Resign deal";
}

function renderMembers() {
  const room = state.room;
  const host = isHost();
  const list = room.players.map((p) =>
    h("li", { class: `member${p.connected === false ? " away" : ""}`, dataset: { player: p.id } },
      h("span", { class: "dot", title: p.connected === false ? "disconnected" : "connected", "aria-hidden": "true" }),
      h("span", { class: "member-name" }, p.name),
      p.id === me() ? h("span", { class: "tag" }, "you") : null,
      p.id === room.host ? h("span", { class: "tag host" }, "host") : null,
      p.connected === false ? h("span", { class: "sr-only" }, "(disconnected)") : null,
      host && p.id !== me()
        ? h("button", {
            type: "button", class: "btn tiny danger", "aria-label": `Remove ${p.name}`,
            onclick: () => hostAction("remove_player", { player: p.id }),
          }, "Remove")
        : null),
  );
  replaceChildren($("members"), list.length ? list : h("li", { class: "note" }, "nobody yet"));
  const specs = room.spectators || [];
  $("spectators").textContent = specs.length
    ? `Watching: ${specs.map((s) => s.name + (s.id === me() ? " (you)" : "")).join(", ")}`
    : "No spectators.";
  $("members-title").textContent = `Players (${room.players.length}/8)`;
}

function renderHost() {
  const room = state.room;
  const host = isHost();
  $("host-panel").hidden = !host;
  $("rules-panel").hidden = host;
  $("rules-summary").textContent = summary(room.settings || {});
  if (!host) return;
  hostForm.set(room.settings || {});
  $("btn-start").hidden = room.state !== "lobby";
  $("btn-next").hidden = room.state !== "playing";
  $("btn-rematch").hidden = room.state !== "round_over";
}

function renderSheet() {
  const room = state.room;
  const sheet = room.sheet || { players: [], carry: {}, rows: [], totals: {}, winners: [] };
  const el = $("sheet");
  const rowsShown = liveRows(room, sheet);
  const ids = [...(sheet.players || [])];
  for (const row of rowsShown) for (const id of Object.keys(row.cells || {})) if (!ids.includes(id)) ids.push(id);
  if (!ids.length || !rowsShown.length) {
    replaceChildren(el, h("p", { class: "note" }, "No scores yet."));
    return;
  }
  const winners = new Set(sheet.winners || []);
  const totals = { ...(sheet.totals || {}) };
  const lastRow = rowsShown[rowsShown.length - 1];
  if (lastRow?.live) for (const id of ids) if (lastRow.cells?.[id]) totals[id] = lastRow.cells[id].total;
  const anyCarry = ids.some((id) => sheet.carry?.[id]);
  const showMoves = room.settings?.variant === "thoughtful";
  // The server names the leaders as winners all along; the star waits for the round's end.
  const over = room.state === "round_over";
  const best = Math.max(...ids.map((id) => totals[id] ?? 0));
  const leaders = ids.filter((id) => (totals[id] ?? 0) === best);
  const lead = new Set(leaders.length < ids.length ? leaders : []);
  const mark = (id) => (over && winners.has(id) ? "winner" : lead.has(id) ? "leader" : "");
  const head = h("tr", {}, h("th", { scope: "col" }, "Deal"),
    ids.map((id) => h("th", { scope: "col", class: mark(id), dataset: { player: id } },
      nameOf(id), over && winners.has(id) ? h("span", { class: "crown", title: "round winner" }, " ★") : null)));
  const rows = [];
  if (anyCarry) {
    rows.push(h("tr", { class: "carry" }, h("th", { scope: "row" }, "Carried"),
      ids.map((id) => h("td", {}, h("span", { class: "total" }, String(sheet.carry[id] ?? 0))))));
  }
  rowsShown.forEach((row, i) => {
    const seed = state.seeds[i + 1]?.seed;
    rows.push(h("tr", { dataset: { deal: String(i + 1) } },
      h("th", { scope: "row", title: seed ? `seed ${seed}` : row.live ? "in play" : null }, String(i + 1), row.live ? h("span", { class: "live" }, " ●") : null),
      ids.map((id) => {
        const c = row.cells?.[id];
        if (!c) return h("td", { class: "empty" }, "–");
        return h("td", { class: `status-${c.status}${row.first === id ? " first" : ""}${row.live ? " live" : ""}`, dataset: { player: id },
            title: `${nameOf(id)}: ${c.status}, ${c.home} home, ${c.moves} moves` },
          c.status === "won" ? h("span", { class: "won-mark", title: "won this deal" }, "✓ ") : null,
          h("span", { class: "cell-score" }, signed(c.score)),
          c.bonus ? h("span", { class: "bonus", title: "race bonus" }, ` ★${c.bonus}`) : null,
          h("span", { class: "total" }, String(c.total)),
          showMoves ? h("span", { class: "moves" }, `${c.moves} moves`) : null);
      })));
  });
  const foot = h("tr", { class: "totals" }, h("th", { scope: "row" }, "Total"),
    ids.map((id) => h("td", { class: mark(id), dataset: { player: id } }, String(totals[id] ?? 0))));
  replaceChildren(el, h("table", { class: "sheet", id: "sheet-table" },
    h("caption", { class: "sr-only" }, "Score sheet: each deal's score and the running total"),
    h("thead", {}, head), h("tbody", {}, rows), h("tfoot", {}, foot)));
}

/**
 * The sheet's rows, with the running deal's row brought up to date from the
 * `progress` events that arrived since the last `sheet` (the server sends a new
 * sheet only when a deal ends or the scoring changes).
 */
function liveRows(room, sheet) {
  const rows = sheet.rows || [];
  const deal = room.deal;
  if (!deal || room.state !== "playing" || dealIsOver(room, deal.number) || !deal.progress) return rows;
  const i = deal.number - 1;
  if (i > rows.length) return rows; // rows missing in between: wait for the server's sheet
  const row = rows[i] || { first: null, cells: {} };
  const cells = { ...row.cells };
  const first = state.firsts[deal.number] || null;
  const blank = { score: 0, bonus: 0, total: 0, status: "playing", moves: 0, home: 0 };
  for (const [id, p] of Object.entries(deal.progress)) {
    const old = cells[id] || blank;
    const before = i > 0 ? rows[i - 1].cells?.[id]?.total ?? 0 : sheet.carry?.[id] ?? 0;
    const bonus = first ? (first.player === id ? first.bonus : 0) : old.bonus;
    cells[id] = { ...old, score: p.score, bonus, total: before + p.score, status: p.status, moves: p.moves, home: p.home };
  }
  return [...rows.slice(0, i), { ...row, cells, first: first ? first.player : row.first, live: true }];
}

// ---------------------------------------------------------------------------
// Wiring

function readName() {
  const name = $("name").value.trim();
  $("name-error").textContent = "";
  if (!name) {
    $("name-error").textContent = "Choose a display name first.";
    $("name").focus();
    return null;
  }
  if (name.length > 24 || /\p{Cc}/u.test(name)) {
    $("name-error").textContent = "1–24 characters, no control characters.";
    return null;
  }
  return name;
}

function sessionError(err, where) {
  if (err instanceof ServerError && err.code === "bad_name") {
    $("name-error").textContent = err.message;
    return;
  }
  where.textContent = err instanceof ServerError ? `${err.message} (${err.code})` : `${err.message || err}`;
}

$("create-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  createForm.clearErrors();
  $("create-error").textContent = "";
  const name = readName();
  if (!name) return;
  const btn = $("create-btn");
  btn.disabled = true;
  try {
    await ensureSession(name);
    const reply = await state.conn.request("create_room", { settings: createForm.values() });
    showLobbyMessage("");
    setRoom(reply.room);
  } catch (err) {
    if (err.code === "bad_setting" && createForm.setError(err.field, err.message)) {
      $(`create-${err.field}`)?.focus();
    } else sessionError(err, $("create-error"));
  } finally {
    btn.disabled = false;
  }
});

$("join-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  $("join-error").textContent = "";
  const name = readName();
  if (!name) return;
  const code = $("join-code").value.trim().toUpperCase();
  if (!/^[0-9A-Z]{6}$/.test(code)) {
    $("join-error").textContent = "A room code has 6 letters and digits.";
    $("join-code").focus();
    return;
  }
  const role = new FormData(e.target).get("role") || "player";
  const btn = $("join-btn");
  btn.disabled = true;
  try {
    await ensureSession(name);
    const reply = await state.conn.request("join_room", { code, role });
    showLobbyMessage("");
    setRoom(reply.room);
  } catch (err) {
    sessionError(err, $("join-error"));
  } finally {
    btn.disabled = false;
  }
});

$("leave").addEventListener("click", async () => {
  try {
    await state.conn.request("leave_room");
  } catch (err) {
    if (err.code !== "not_in_room") {
      toast(`${err.message} (${err.code})`);
      return;
    }
  }
  leaveToLobby("");
});

$("copy-invite").addEventListener("click", async () => {
  const input = $("invite-link");
  try {
    await navigator.clipboard.writeText(input.value);
  } catch {
    input.select();
    document.execCommand?.("copy");
  }
  toast("Invite link copied.");
});

$("btn-draw").addEventListener("click", () => {
  const board = myBoard();
  if (board) sendMove(stockMove(board)).catch(() => {});
});
$("btn-undo").addEventListener("click", () => sendMove({ kind: "undo" }).catch(() => {}));
$("btn-auto").addEventListener("click", () => sendMove({ kind: "auto_complete" }).catch(() => {}));
$("btn-resign").addEventListener("click", () => {
  const btn = $("btn-resign");
  if (!state.resignArmed) {
    btn.textContent = "Really resign? Click again";
    state.resignArmed = setTimeout(() => {
      state.resignArmed = null;
      btn.textContent = "Resign deal";
    }, 4000);
    return;
  }
  clearTimeout(state.resignArmed);
  state.resignArmed = null;
  btn.textContent = "Resign deal";
  sendMove({ kind: "resign" }).catch(() => {});
});

$("btn-start").addEventListener("click", () => hostAction("start"));
$("btn-next").addEventListener("click", () => hostAction("next_deal"));
$("btn-rematch").addEventListener("click", () => hostAction("rematch"));
$("btn-close").addEventListener("click", () => {
  const btn = $("btn-close");
  if (btn.dataset.armed) {
    delete btn.dataset.armed;
    btn.textContent = "Close room";
    hostAction("close_room");
    return;
  }
  btn.dataset.armed = "1";
  btn.textContent = "Really close? Click again";
  setTimeout(() => {
    delete btn.dataset.armed;
    btn.textContent = "Close room";
  }, 4000);
});

document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t instanceof HTMLElement && (t.closest("input, select, textarea, [contenteditable]") || t.tagName === "BUTTON" && (e.key === "Enter" || e.key === " "))) return;
  if ((e.key === "Enter" || e.key === " ") && t instanceof HTMLElement && t.dataset.zone) return;
  const board = myBoard();
  if (!board || !boardCtl.enabled) return;
  const key = e.key.toLowerCase();
  let used = true;
  if (key === "d") sendMove(stockMove(board)).catch(() => {});
  else if (key === "u") sendMove({ kind: "undo" }).catch(() => {});
  else if (key === "a") sendMove({ kind: "auto_complete" }).catch(() => {});
  else used = boardCtl.shortcut(e);
  if (used) e.preventDefault();
});

function readInvite() {
  const m = /(?:^#|&)join=([0-9A-Za-z]{6})/.exec(location.hash);
  if (!m) return;
  const code = m[1].toUpperCase();
  $("join-code").value = code;
  const note = $("invite-note");
  note.textContent = `You are invited to room ${code}. Pick a name and join.`;
  note.hidden = false;
  ($("name").value ? $("join-btn") : $("name")).focus();
}

window.addEventListener("hashchange", readInvite);

async function boot() {
  $("name").value = storage(NAME_KEY) || "";
  readInvite();
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

boot();
