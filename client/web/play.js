// Playing your own board: the board controller (gestures.js) on the felt, the
// Draw / Undo / Auto-complete / Resign buttons, the keyboard shortcuts outside the
// board, and sending each move, with the server's reason shown when it refuses.
// The server is the referee: a move is drawn only from the outcome its reply
// carries, applied to the board the page holds (outcomes.js) and checked against
// the reply's digest; a board that does not check out is replaced by a snapshot.
//
// Each move carries its number in our log of the deal (`n`: the board's `logged`),
// so that one sent again is never played twice (docs/protocol.md, `move`). Moves
// go one at a time, each numbered from the board the previous reply left, and a
// move whose connection dropped before its reply is sent again, the same, once the
// session has resumed: the server then plays it, or answers as it did the first time.

import { describeMove, stockMove } from "./cards.js";
import { h, replaceChildren } from "./dom.js";
import { hint, placeFloating } from "./feedback.js";
import { BoardController } from "./gestures.js";
import { followOutcome, viewDigest } from "./outcomes.js";
import { $, dealIsOver, isConnected, me, myBoard, nextResume, render, state } from "./state.js";
import { refusalText, scoreChangeText } from "./words.js";

const MOVE_ATTEMPTS = 4; // sends of one move in all, when connections keep dropping
const RESUME_WAIT_MS = 30_000; // how long a cut-off move waits for the session to resume
const SCORE_NEWS_MS = 6_000; // how long a score change says what caused it

let boardCtl = null;
let moveQueue = Promise.resolve(); // the moves sent, one after another

/** Show `board` on the felt, taking gestures when `live`; `paused`: why a board
 *  still in play takes no moves now (a node over it), else null. */
export function showOwnBoard(board, live, paused = null) {
  const pausedKey = paused?.textContent ?? null;
  if (boardCtl.view === board && Boolean(boardCtl.enabled) === live && boardCtl.pausedKey === pausedKey) return;
  const room = state.room;
  const deal = `${room.code}/${room.round}/${room.deal?.number}`;
  const fresh = deal !== boardCtl.deal;
  boardCtl.paused = paused;
  boardCtl.pausedKey = pausedKey;
  boardCtl.setView(board, live, deal);
  // After this render: the last deal's results, above the table, go only once
  // every panel is drawn, and a scroll measured before would land far below.
  if (fresh) requestAnimationFrame(bringRaceIntoView);
}

/** A new deal to play: show the race — the rivals' chips, your board and its
 *  buttons — from the top of the page if it fits, else from the race bar, else
 *  from the board (a phone with many rivals). Only ever to one of those three. */
function bringRaceIntoView() {
  const table = $("table");
  if (table.hidden) return;
  const y = (el) => el.getBoundingClientRect().top + window.scrollY;
  const controls = $("board-controls");
  const bottom = Math.max(...[table, controls].filter((el) => !el.hidden).map((el) => el.getBoundingClientRect().bottom)) + window.scrollY;
  const fits = (top) => bottom - top <= window.innerHeight;
  const top = [0, y($("hud")) - 4].find(fits) ?? y(table) - 4;
  window.scrollTo({ top: Math.max(0, top), behavior: "instant" });
}

/** Take your board off the felt (it is not shown now). */
export function hideOwnBoard() {
  if (boardCtl.view) boardCtl.setView(null);
}

/** Forget the board altogether (leaving the room). */
export function dropOwnBoard() {
  boardCtl.setView(null);
}

/** Play `move` once the moves before it are answered; resolves with its `moved` reply. */
export function sendMove(move) {
  const sent = moveQueue.then(() => playMove(move));
  moveQueue = sent.catch(() => {});
  return sent;
}

async function playMove(move) {
  const room = state.room;
  const deal = room?.deal;
  if (!deal || !state.conn) throw new Error("no deal");
  const fields = { deal: deal.number, n: deal.board?.logged ?? 0, move };
  let reply;
  try {
    reply = await requestMove(fields, room);
  } catch (err) {
    showMoveError(err, move);
    // Our board is not the server's: fetch the room rather than guess.
    if (err.code === "wrong_move_number" || err.code === "storage_uncertain") state.conn?.resync();
    throw err;
  }
  // A snapshot may have replaced the room object meanwhile: update the current one.
  const now = state.room;
  if (now && now.code === room.code && now.deal && reply.deal === now.deal.number && now.role === "player") {
    const board = boardAfter(now.deal.board, fields.n, reply);
    if (!board) {
      // Lost track of our own board: the snapshot has it (and numbers the next move).
      await state.conn?.resync();
      render();
      return reply;
    }
    now.deal.board = board;
    // A daily run's clock starts at its first move (docs/protocol.md "Daily runs").
    if (now.daily && now.daily.first_move_at == null) now.daily.first_move_at = now.deal.started_at + reply.t;
    const progress = (now.deal.progress = now.deal.progress || {});
    const mine = progress[me()] || {};
    // The score's change, told by what the engine says the move did.
    const delta = mine.score === undefined ? 0 : reply.score - mine.score;
    if (delta) {
      state.scoreChange = { deal: reply.deal, delta, text: scoreChangeText(delta, reply.outcome), until: Date.now() + SCORE_NEWS_MS };
      setTimeout(render, SCORE_NEWS_MS + 20);
    }
    progress[me()] = {
      ...mine,
      score: reply.score,
      home: board.home,
      moves: board.moves,
      status: board.status,
      finished: board.status !== "playing",
    };
    setMoveStatus("");
    hint(`Moved: ${describeMove(move)}${reply.outcome.turned ? `, turned up ${reply.outcome.turned}` : ""}`);
    render();
  }
  return reply;
}

/**
 * Our board after the move numbered `n`, from its `moved` reply: the outcome
 * applied to the board it was numbered from, checked by the digest. A board that
 * already holds the move (a resumed session's room view, before a retry's
 * original reply) is kept when its digest is the reply's. Null: the page has lost
 * track of its board.
 */
function boardAfter(board, n, reply) {
  if (!board) return null;
  if (board.logged === n) return followOutcome(board, reply.outcome, reply.digest);
  return board.logged === n + 1 && viewDigest(board) === reply.digest ? board : null;
}

/** Send a move request; after a drop, send the very same one again once resumed
 *  (not into another room or round: deal numbers start over in each round). */
async function requestMove(fields, room) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await state.conn.request("move", fields);
    } catch (err) {
      // Maybe applied, maybe not: the same n settles it (the original reply, or
      // applied once), as after a lost connection (docs/protocol.md, move).
      if (err.code === "storage_uncertain" && attempt < MOVE_ATTEMPTS) continue;
      if (err.code !== "disconnected" || attempt >= MOVE_ATTEMPTS) throw err;
      if (!(await nextResume(RESUME_WAIT_MS))) throw err;
      const now = state.room;
      if (!now || now.code !== room.code || now.round !== room.round) throw err;
    }
  }
}

function showMoveError(err, move) {
  const code = err.code || "error";
  const text = refusalText(err);
  state.lastMoveError = { code, text };
  const el = $("move-status");
  // Words only: the code stays on the wire (and in data-code, for tools).
  replaceChildren(el, h("span", { class: "reason", dataset: { code } }, text));
  el.dataset.kind = "error";
  placeFloating();
  el.classList.remove("shake");
  void el.offsetWidth; // restart the animation
  el.classList.add("shake");
  clearTimeout(showMoveError.timer);
  showMoveError.timer = setTimeout(() => setMoveStatus(""), 8000);
  if (move) hint(`Refused: ${text}`);
}

export function setMoveStatus(text) {
  const el = $("move-status");
  el.textContent = text;
  el.dataset.kind = text ? "info" : "";
  placeFloating();
}

export function renderControls() {
  const room = state.room;
  const board = myBoard();
  const live = board && room.state === "playing" && board.status === "playing" && !dealIsOver(room, room.deal.number);
  $("board-controls").hidden = !live;
  if (!live) return;
  // Shown but not usable while the server is not answering: nothing would be sent.
  for (const id of ["btn-draw", "btn-auto", "btn-resign"]) $(id).disabled = !isConnected();
  $("btn-draw").textContent = "";
  $("btn-draw").append(board.stock > 0 ? "Draw " : "Recycle ", h("kbd", {}, "D"));
  const undoRule = room.deal.rules ? room.deal.rules.undo : true;
  $("btn-undo").hidden = !undoRule;
  $("btn-undo").disabled = !board.can_undo || !isConnected();
  $("btn-auto").hidden = !board.can_auto_complete;
  if (!state.resignArmed) $("btn-resign").textContent = "Resign deal";
}

/** Create the board controller and wire the buttons and the keys. */
export function initPlay() {
  boardCtl = new BoardController($("board-host"), {
    onMove: (move) => sendMove(move),
    onHint: hint,
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
}
