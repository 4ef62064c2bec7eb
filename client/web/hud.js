// The race HUD above the felt: your score (once the round is over: your round
// total and placing), the deal and its clock, the round's
// time left, home cards and moves; a chip for each rival; the deal's seed
// commitment and the last revealed seed, checked; and the notices (first
// finisher, waiting for the others, round over). It is what a racer glances at,
// so it is redrawn on every event and its clocks tick on their own.

import { clock, h, replaceChildren } from "./dom.js";
import { freshNews, placeFloating } from "./feedback.js";
import { finishedRound, placing } from "./series.js";
import { $, dealIsOver, isConnected, isHost, isPlayer, me, myBoard, nameOf, render, state } from "./state.js";
import { CONNECTION_TEXT, GHOST_TEXT, dealEndText } from "./words.js";

const FIRST_NEWS_MS = 8_000; // the first finisher's notice; the ★ on the chip stays
const ENDED_NEWS_MS = 10_000; // why the last deal ended, into the next one

export function renderHud() {
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
    // Once the round is over what counts is the round's total and your place in
    // it, not the last deal's score.
    const result = finishedRound();
    if (result && isPlayer() && result.players.includes(me())) {
      items.push(stat("Round total", String(result.totals[me()] ?? 0), "my-total", "score"));
      items.push(stat("Placing", `${placing(result, me())} of ${result.players.length}`, "my-place"));
    } else if (mine) {
      const score = stat("Your score", String(mine.score), "my-score", "score");
      const change = scoreChange(deal.number);
      if (change) score.append(change);
      items.push(score);
    }
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
  markPaused();
}

/** What the last move did to your score, beside it, for a few seconds (play.js). */
function scoreChange(number) {
  const c = state.scoreChange;
  if (!c || c.deal !== number || c.until <= Date.now()) return null;
  return h("span", { class: `score-change ${c.delta < 0 ? "down" : "up"}`, id: "score-change", role: "status" }, c.text);
}

/** The clocks stand still while the server is not answering, and say so. */
function markPaused() {
  for (const id of ["deal-clock", "round-left"]) {
    const el = $(id);
    if (el) el.dataset.paused = String(!isConnected());
  }
}

function rivalChips(deal) {
  const room = state.room;
  const ids = room.players.map((p) => p.id);
  for (const id of Object.keys(deal.progress || {})) if (!ids.includes(id)) ids.push(id);
  const first = state.firsts[deal.number];
  const others = ids.filter((id) => !(isPlayer() && id === me()));
  const ghosts = ghostChips(deal);
  if (!others.length) return ghosts;
  const total = (deal.rules?.variant === "double" ? 104 : 52);
  const ended = dealIsOver(room, deal.number) || room.state === "round_over";
  const result = finishedRound();
  return h(
    "ul",
    { class: "rivals", "aria-label": isPlayer() ? "Rivals" : "Players" },
    others.map((id) => {
      const p = deal.progress?.[id];
      // Someone who left mid-deal plays no more: their last progress says "playing".
      const gone = !room.players.some((m) => m.id === id);
      const status = p ? (gone && p.status === "playing" ? "left" : p.status) : "waiting";
      const roundTotal = result?.players.includes(id) ? result.totals[id] ?? 0 : null;
      return h(
        "li",
        { class: `rival status-${status}`, dataset: { player: id } },
        h("span", { class: "rival-name" }, nameOf(id), first?.player === id ? h("span", { class: "first-badge", title: "first finisher" }, " ★") : null),
        roundTotal !== null
          ? h("span", { class: "rival-score", title: `round total, ${placing(result, id)}` }, String(roundTotal))
          : h("span", { class: "rival-score", title: "score" }, p ? String(p.score) : "–"),
        h("span", { class: "rival-home", title: "cards home" }, p ? `${p.home}/${total}` : ""),
        h("span", { class: "rival-moves", title: "moves" }, p ? `${p.moves} mv` : ""),
        h("span", { class: "rival-status" }, statusText(status, p?.finished, ended)),
      );
    }),
  );
}

/**
 * A daily run's ghosts: earlier runs of the day, raced at the pace they were
 * played (the server sends their progress as it comes due). A chip like a
 * rival's, tagged "ghost" and named by the friend's handle, "Leader" or "Median".
 */
function ghostChips(deal) {
  const g = state.ghosts;
  const room = state.room;
  if (!room.daily || !g || g.code !== room.code || g.deal !== deal.number || !g.list.length) return null;
  const total = 52;
  return h("ul", { class: "rivals ghosts", "aria-label": "Ghosts", id: "ghosts" },
    g.list.map((ghost) => {
      const p = ghost.progress;
      return h("li", { class: `rival ghost status-${p.status}`, dataset: { ghost: String(ghost.ghost), kind: ghost.kind }, title: GHOST_TEXT.title(ghost.name, ghost.kind) },
        h("span", { class: "ghost-tag" }, GHOST_TEXT.tag),
        h("span", { class: "rival-name" }, GHOST_TEXT.kind[ghost.kind] || ghost.name),
        h("span", { class: "rival-score", title: "score" }, String(p.score)),
        h("span", { class: "rival-home", title: "cards home" }, `${p.home}/${total}`),
        h("span", { class: "rival-moves", title: "moves" }, `${p.moves} mv`),
        h("span", { class: "rival-status" }, statusText(p.status, p.finished, false)));
    }));
}

/**
 * A player's state in a deal, one word for each wherever it shows (chips, the
 * wall, the results); `ended`: the deal is over for everyone (or the round), so
 * one still playing did not finish.
 */
export function statusText(status, finished, ended = false) {
  if (status === "won") return "✓ won";
  if (status === "resigned") return "resigned";
  if (status === "dead") return "stuck";
  if (status === "left") return "left the room";
  if (status === "playing") return ended || finished ? "unfinished" : "playing";
  return "";
}

/** This deal's seed commitment, and the seed of the last deal that is over (checked). */
function seedLine(deal) {
  const commit = deal.commitment || "";
  const parts = [
    // In full, wrapping and selectable as one: `klondike-race verify` needs all 64 digits.
    h("span", { class: "commit", title: commit }, `Deal ${deal.number} seed commitment `,
      h("code", { class: "commit-full", id: "commitment", dataset: { deal: String(deal.number) } }, commit)),
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
  // A daily run's clock starts at its first move: it shows 0:00 until then.
  if (room.daily) return clock(room.daily.first_move_at == null ? 0 : Math.max(0, end - room.daily.first_move_at));
  return clock(end - deal.started_at);
}

function roundLeftText() {
  const room = state.room;
  if (!room?.round_ends_at) return "no limit";
  if (room.state !== "playing") return "–";
  return clock(room.round_ends_at - state.conn.serverNow());
}

function tick() {
  // A page that lost its server shows the clocks where they stood: it cannot tell.
  if (!state.room) return;
  markPaused();
  if (!isConnected()) return;
  const c = $("deal-clock");
  if (c) c.textContent = dealClockText();
  const r = $("round-left");
  if (r) r.textContent = roundLeftText();
}

export function renderNotices() {
  const room = state.room;
  const el = $("notices");
  const keep = $("replaced-banner");
  const notes = [];
  const deal = room.deal;
  renderConnectionLost();
  if (room.finding_deal !== null && room.finding_deal !== undefined) {
    // deals: winnable, the server's pool of proven seeds dry: it says so, nothing waits on it here.
    notes.push(h("div", { class: "notice finding", id: "finding-deal" }, "Finding a winnable deal…"));
  }
  for (const n of freshNews()) notes.push(h("div", { class: "notice news", id: `news-${n.id}` }, n.text));
  if (deal) {
    // The first finisher is news for a moment; the ★ on their chip stays.
    const first = state.firsts[deal.number];
    if (first?.at && Date.now() - first.at < FIRST_NEWS_MS) {
      setTimeout(render, FIRST_NEWS_MS - (Date.now() - first.at) + 20);
      const who = first.player === me() ? "You finished" : `${nameOf(first.player)} finished`;
      notes.push(h("div", { class: "notice first", id: "first-finisher" }, `★ ${who} first and took the race bonus of ${first.bonus}.`));
    }
    const board = myBoard();
    if (board && board.status !== "playing" && room.state === "playing" && !dealIsOver(room, deal.number)) {
      const t = { won: "You won this deal!", resigned: "You resigned this deal.", dead: "No legal move left: this deal is dead." }[board.status];
      notes.push(h("div", { class: "notice" }, `${t} Waiting for the others…`));
    }
    const ended = endedNotice(room, deal);
    if (ended) notes.push(ended);
  }
  if (room.state === "round_over") {
    const result = finishedRound(room);
    const winners = result?.winners || room.winners || room.sheet?.winners || [];
    const names = winners.map(nameOf).join(" and ");
    const totals = result?.totals || room.sheet?.totals;
    const total = winners.length ? totals?.[winners[0]] : null;
    notes.push(h("div", { class: "notice win", id: "round-over" },
      `Round over. ${names ? `${names} win${winners.length === 1 ? "s" : ""}${total !== null && total !== undefined ? ` with ${total}` : ""}.` : ""}`,
      isHost() ? " Press Rematch for another round." : ""));
  }
  if (room.state === "closed") notes.push(h("div", { class: "notice warn" }, "This room is closed."));
  replaceChildren(el, keep, notes);
  placeFloating();
}

/**
 * Why the last deal ended, while it is still the news: during the deal's end and,
 * when the host moved on or time ran out, through the next deal until your first
 * move in it (the next deal may start at once, and nobody should wonder why their
 * board was taken away).
 */
function endedNotice(room, deal) {
  if (room.state === "lobby" || room.state === "closed") return null;
  const history = room.history || [];
  const last = history[history.length - 1];
  if (!last) return null;
  const current = last.number === deal.number && room.state === "playing";
  const board = myBoard();
  const since = state.dealStartedAt?.[deal.number];
  const recent = since !== undefined && Date.now() - since < ENDED_NEWS_MS;
  if (recent) setTimeout(render, ENDED_NEWS_MS - (Date.now() - since) + 20);
  const fresh = last.number === deal.number - 1 && last.ended_by && last.ended_by !== "all_ended" && recent && (!board || board.logged === 0);
  const roundEnd = last.number === deal.number && room.state === "round_over" && last.ended_by && last.ended_by !== "all_ended";
  if (!current && !fresh && !roundEnd) return null;
  const host = last.host === me() ? "you" : last.host ? nameOf(last.host) : null;
  return h("div", { class: `notice ended ended-${last.ended_by || "all_ended"}`, id: "deal-ended" }, dealEndText(last.number, last.ended_by, host));
}

/** The page's server is not answering: say so over the table, plainly. */
function renderConnectionLost() {
  const el = $("conn-lost");
  const lost = state.connection === "lost" || state.connection === "reconnecting";
  el.hidden = !lost;
  el.textContent = lost
    ? state.connection === "lost"
      ? `${CONNECTION_TEXT.lost}. Your board is paused until it is back; this page keeps trying.`
      : `${CONNECTION_TEXT.reconnecting} Your board is paused for a moment.`
    : "";
}

/** Start the clocks (the deal's and the round's) ticking twice a second. */
export function initHud() {
  setInterval(tick, 500);
}
