// The room as this client knows it: a snapshot (from a join, a resume or a seq
// gap) replaces it, and each room event is folded into it in seq order. Keeping
// this apart from the panels means every panel draws from the same, current room
// and none of them has to know which event changed what.

import { isAsking } from "./confirm.js";
import { news, showLobbyMessage, toast } from "./feedback.js";
import { followOutcome } from "./outcomes.js";
import { dropOwnBoard, setMoveStatus } from "./play.js";
import { clearReactions, showReaction } from "./reactions.js";
import { seedMatches } from "./replay.js";
import { noteRatingChanges } from "./series.js";
import { $, isHost, me, nameOf, rememberNames, render, state } from "./state.js";
import { ACCOUNT_TEXT, dealEndText, newHostText, roomClosedText } from "./words.js";

export function setRoom(room) {
  const before = state.room;
  if (!before || before.code !== room.code) roomEntered();
  else if (before.round !== room.round) roundStarted();
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
  // From the lobby (scrolled down to its Create or Join button, on a phone), the
  // room starts at its top, where the host's Start is.
  if (!$("lobby-screen").hidden) window.scrollTo(0, 0);
  showScreen();
  $("room-info").hidden = false;
  if (!isAsking($("leave"))) $("leave").hidden = false;
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  render();
}

export function leaveToLobby(message) {
  state.room = null;
  state.conn?.adoptRoom(null);
  dropOwnBoard();
  $("room-info").hidden = true;
  $("leave").hidden = true;
  showScreen();
  if (message) showLobbyMessage(message);
  document.title = "Klondike Race";
}

/**
 * Which screen shows: the Account screen when it is open (account.js), over the
 * room or the lobby, which go on underneath (events still fold into the room);
 * else the room while there is one, else the lobby.
 */
export function showScreen() {
  const account = state.accountOpen;
  $("account-screen").hidden = !account;
  $("room-screen").hidden = account || !state.room;
  $("lobby-screen").hidden = account || Boolean(state.room);
  $("account-back").textContent = ACCOUNT_TEXT.back(Boolean(state.room)); // names what is beneath
}

/** A revealed seed, checked against the commitment the deal started with. */
function noteDealOver(deal) {
  if (!deal || deal.seed === undefined || state.seeds[deal.number]?.seed === deal.seed) return;
  const entry = { seed: deal.seed, commitment: deal.commitment, ok: null }; // null: being hashed
  state.seeds[deal.number] = entry;
  const settle = (ok) => {
    entry.ok = ok;
    if (state.seeds[deal.number] === entry) render();
  };
  seedMatches(deal.seed, deal.commitment).then(settle, () => settle(false));
}

/**
 * Entering a room (a join, a daily run, a challenge, a quick match, a new room):
 * nothing of the last room's screen is this one's. Its notices would outlive it
 * on their own clocks, and its rating changes and deal times are kept by round
 * and deal numbers that every room counts from 1 again: left in place, they
 * would show as this room's (a daily run's podium with the last rated round's
 * "+49 → 976?").
 */
function roomEntered() {
  roundStarted();
  state.ratingChanges = {};
  state.news = [];
  state.scoreChange = null;
  state.lastMoveError = null;
  state.dealStartedAt = {};
  state.seriesOpen = new Set();
  setMoveStatus("");
  clearReactions();
}

/** A round begins (or the room is entered): what the last round's deals left goes. */
function roundStarted() {
  state.firsts = {};
  state.seeds = {};
  state.dealEnded = {};
  state.past = { pick: null, key: null, explained: new Map(), logs: new Map(), full: new WeakMap(), lines: new Map() };
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

export function applyEvent(ev) {
  const room = state.room;
  if (!room) return;
  switch (ev.type) {
    case "members":
      if (room.host && ev.host && ev.host !== room.host) {
        // Everyone is told who hosts now, and why: the host left (or was replaced).
        const left = ![...ev.players, ...(ev.spectators || [])].some((m) => m.id === room.host);
        rememberNames({ players: ev.players, spectators: ev.spectators });
        const before = room.host === me() ? null : nameOf(room.host);
        news("host", newHostText(nameOf(ev.host), ev.host === me(), before, left));
      }
      room.players = ev.players;
      room.spectators = ev.spectators;
      room.host = ev.host;
      rememberNames(room);
      break;
    case "settings":
      const watching = room.role === "spectator" || (room.state === "playing" && room.deal && !room.deal.board);
      if (watching && ev.settings.spectators !== room.settings?.spectators) {
        // What spectators (and a late friend sitting the deal out) may see
        // changed: the boards come with a fresh snapshot.
        state.conn?.resync();
      }
      room.settings = ev.settings;
      // The server adds round_ends_at here: a new time limit moves the round's end.
      if (ev.round_ends_at !== undefined) room.round_ends_at = ev.round_ends_at;
      // ... and next_deal_at: a new length of break moves the running break's end.
      if (ev.next_deal_at !== undefined) room.next_deal_at = ev.next_deal_at;
      break;
    case "break_started":
      room.state = "break";
      room.next_deal_at = ev.next_deal_at;
      room.ready = ev.ready || [];
      break;
    case "ready":
      room.ready = ev.ready || [];
      break;
    case "deal_started":
      if (ev.round !== undefined && ev.round !== room.round) {
        room.history = [];
        roundStarted();
      }
      room.deal = ev.deal;
      (state.dealStartedAt ||= {})[ev.deal.number] = Date.now(); // its notices expire from here
      if (ev.round !== undefined) room.round = ev.round;
      if (ev.round_ends_at !== undefined) room.round_ends_at = ev.round_ends_at;
      room.state = "playing";
      room.finding_deal = null; // the wait for a winnable deal, if any, is over
      room.next_deal_at = null;
      room.ready = [];
      setMoveStatus("");
      break;
    case "countdown":
      room.starts_at = ev.starts_at; // a quick match: its first deal starts by itself then
      break;
    case "finding_deal":
      room.finding_deal = ev.finding ? ev.deal : null;
      break;
    case "reaction":
      showReaction(ev); // the room's moment: nothing in the room changes
      return;
    case "rating_changes":
      noteRatingChanges(ev); // the podium shows them
      break;
    case "ghosts":
      // A daily run's ghosts (the server's, not the room's): kept beside the
      // room, so a snapshot replacing it keeps them.
      state.ghosts = { code: room.code, deal: ev.deal, list: ev.ghosts };
      break;
    case "ghost_progress": {
      const ghost = state.ghosts?.code === room.code ? state.ghosts.list.find((g) => g.ghost === ev.ghost) : null;
      if (!ghost) return;
      ghost.progress = ev.progress;
      break;
    }
    case "progress":
      if (room.deal && ev.deal === room.deal.number) {
        room.deal.progress = room.deal.progress || {};
        room.deal.progress[ev.player] = ev.progress;
        if (ev.outcome) {
          // A board on show (spectators, and a late friend sitting the deal
          // out) moves by its outcome; one that does not check out is fetched.
          const boards = (room.deal.boards = room.deal.boards || {});
          const board = followOutcome(boards[ev.player], ev.outcome, ev.digest);
          if (board) boards[ev.player] = board;
          else state.conn?.resync();
        }
      }
      break;
    case "first_finisher":
      state.firsts[ev.deal] = { player: ev.player, bonus: ev.bonus, at: Date.now() };
      break;
    case "deal_over":
      // Who moved the room on, named in the notice (the host may change later).
      if (ev.deal.ended_by === "host") ev.deal.host = room.host;
      room.history = room.history.filter((d) => d.number !== ev.deal.number).concat([ev.deal]);
      state.dealEnded[ev.deal.number] = state.conn.serverNow();
      noteDealOver(ev.deal);
      if (ev.deal.ended_by === "time") toast(dealEndText(ev.deal.number, ev.deal.ended_by));
      break;
    case "sheet":
      room.sheet = ev.sheet;
      if (ev.tick !== undefined && room.deal && ev.deal === room.deal.number && ev.progress) {
        room.deal.progress = { ...(room.deal.progress || {}), ...ev.progress };
      } else {
        syncProgressFromSheet(room);
      }
      break;
    case "round_over":
      room.sheet = ev.sheet;
      room.state = "round_over";
      room.winners = ev.winners;
      if (ev.series) {
        room.series = ev.series;
        rememberNames(room);
      }
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
      leaveToLobby(roomClosedText(ev.reason, isHost()));
      return;
    default:
      return; // an event this client does not know: nothing to show
  }
  render();
}
