// The felt in the middle of the room shows one of three things: your own board
// while you race, the spectator wall (every player's board, small and live, for
// spectators; revealed once the round is over), or a line saying why there is
// neither. Deciding which is this module's job; drawing boards is board.js's.

import { renderBoard } from "./board.js";
import { h, replaceChildren } from "./dom.js";
import { statusText } from "./hud.js";
import { hideOwnBoard, showOwnBoard } from "./play.js";
import { $, dealIsOver, isConnected, isHost, isPlayer, me, nameOf, state } from "./state.js";
import { PAUSED_TEXT } from "./words.js";

/**
 * Why your board, still in play, takes no moves now (null: it does, or the deal
 * is over): the server is not answering, or this seat is open in another tab,
 * which this page can take back.
 */
function pausedLabel() {
  const c = state.connection;
  if (c === "online") return null;
  if (c === "replaced") {
    return h("span", { class: "board-paused", id: "board-paused" }, PAUSED_TEXT.replaced,
      h("button", { type: "button", class: "btn small", id: "use-here", onclick: () => state.useHere?.() }, PAUSED_TEXT.replacedAction));
  }
  return h("span", { class: "board-paused", id: "board-paused" }, PAUSED_TEXT.reconnecting); // on its way back
}

/** The empty felt before the first deal: what to do next, and the invite as a QR code. */
function lobbyMessage(room) {
  const others = room.players.filter((p) => p.id !== me()).length;
  let text;
  if (!isHost()) text = `Waiting for ${nameOf(room.host)} (the host) to start the round.`;
  else if (!others) text = "Invite the others: the room code, the invite link or this QR code, then press Start round.";
  else text = `${others + 1} players are in: press Start round when everyone is here.`;
  return h("div", { class: "lobby-invite" }, h("p", { id: "lobby-next" }, text),
    h("img", { class: "invite-qr", id: "invite-qr", src: `/invite/${room.code}.svg`, width: "176", height: "176",
      alt: `QR code of the invite link to room ${room.code}` }),
    h("small", {}, "Friends in the same room: scan to join."));
}

export function renderTable() {
  const room = state.room;
  const wall = $("wall");
  const msg = $("table-message");
  const deal = room.deal;
  const over = deal && dealIsOver(room, deal.number);
  // Once the round is over, its deals are in "Past deals": the felt makes way.
  const roundOver = room.state === "round_over";
  const pastShown = roundOver && (room.history || []).length > 0;
  // In the break between deals the results panel (results.js) has every board.
  const inBreak = room.state === "break";
  // A late friend sits the running deal out: they watch it as spectators do
  // (its boards when the room's spectators setting shows them live).
  const sittingOut = isPlayer() && deal && !deal.board && room.state === "playing";
  const showWall = !pastShown && !inBreak && (roundOver || sittingOut || (room.role === "spectator" && deal));
  $("table").hidden = pastShown || inBreak;
  if (isPlayer() && deal && deal.board && room.state === "playing") {
    const board = deal.board;
    const live = !over && board.status === "playing" && isConnected();
    showOwnBoard(board, live, over ? null : pausedLabel());
    $("board-host").hidden = false;
  } else {
    hideOwnBoard();
    $("board-host").hidden = true;
  }
  if (showWall) {
    wall.hidden = false;
    renderWall(wall, deal, over);
  } else {
    wall.hidden = true;
  }
  let text = "";
  if (room.state === "lobby") text = lobbyMessage(room);
  else if (!deal) text = "Waiting for the next deal.";
  else if (isPlayer() && !deal.board && room.state === "playing") text = "You joined mid-round: you sit this deal out and play from the next deal.";
  // The lobby's invite keeps its QR image while the room waits (no reload per event).
  const key = room.state === "lobby" ? `lobby:${room.code}:${text.textContent}` : text;
  if (msg.dataset.key !== key) {
    replaceChildren(msg, text);
    msg.dataset.key = key;
  }
  msg.hidden = !text;
  $("table").dataset.mode = showWall ? "wall" : "board";
  $("table").classList.toggle("disconnected", !isConnected());
  // Racing on your own board: on a wide screen the race bar and the buttons go
  // beside the felt, and the board is sized to the window's height (style.css).
  $("room-screen").dataset.race = !$("board-host").hidden && !$("table").hidden ? "board" : "";
  fitBoard();
}

/**
 * The height the board may take below the felt's top, so that on a laptop the
 * whole board stays on screen with the page at its top, however long its piles
 * grow (style.css sizes the cards from it: `--fit-h`). Set only when it changes,
 * as every event redraws the table.
 */
function fitBoard() {
  const host = $("board-host");
  if (host.hidden) return;
  const felt = getComputedStyle($("table"));
  const below = parseFloat(felt.paddingBottom) + parseFloat(felt.borderBottomWidth) + 6;
  const top = host.getBoundingClientRect().top + window.scrollY;
  const fit = `${Math.max(240, Math.floor(window.innerHeight - top - below))}px`;
  if (host.style.getPropertyValue("--fit-h") !== fit) host.style.setProperty("--fit-h", fit);
}

window.addEventListener("resize", () => {
  if (state.room) fitBoard();
});

/** Why a tile has no board: the room shows boards only once the deal is over. */
function hiddenBoardText(over) {
  return !over && state.room.settings?.spectators !== "live" ? "The board shows once the deal is over." : "no board yet";
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
      h("div", { class: "board-host mini-host" }, view ? renderBoard(view, { mini: true }) : h("p", { class: "note" }, hiddenBoardText(over))),
    );
  });
  const title = over ? `Deal ${deal.number}: every board, revealed` : `Deal ${deal.number}: live`;
  replaceChildren(wall, h("h3", { class: "wall-title" }, title), h("div", { class: "wall-grid" }, tiles));
}
