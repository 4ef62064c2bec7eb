// The Profile screen: a player's record (docs/protocol.md "Profile and history").
// Opened from the header (your own), or at /p/HANDLE (the server serves this page
// there; the page asks `profile {handle}`, and says so when the record is private).
// Totals per rule set, the last rounds, two charts drawn here (charts.js), the
// deals newest first a page at a time ("More"), and any past deal opened in the
// replayer: its seed checked against its commitment and every log followed from
// the seed's layout to the revealed board (replay.js), as the room's Past deals do.

import { renderBoard } from "./board.js";
import { scoreChart, weeksChart } from "./charts.js";
import { clock, h, replaceChildren, signed } from "./dom.js";
import { toast } from "./feedback.js";
import { challengeButton, challengesList } from "./challenge.js";
import { recordTable } from "./friends.js";
import { statusText } from "./hud.js";
import { checkDeal, tellLog } from "./replay.js";
import { ordinal } from "./series.js";
import { ensureSession } from "./session.js";
import { $, state } from "./state.js";
import { refusalText } from "./words.js";

const PAGE = 20;
const RESULT_TEXT = { won: "won", resigned: "resigned", dead: "no moves left", timed_out: "out of time", unfinished: "unfinished" };

const view = { handle: null, profile: null, deals: [], next: null, error: null, replay: null, friends: null, asked: 0 };

/** The handle of a /p/HANDLE address, or null. */
export function handleInPath(path = location.pathname) {
  const m = /^\/p\/([^/]+)\/?$/.exec(path);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return null;
  }
}

function placing(d) {
  return d.placing ? `${d.tied ? "=" : ""}${ordinal(d.placing)}` : "";
}

function when(t) {
  return new Date(t * 1000).toISOString().slice(0, 16).replace("T", " ");
}

function ladderText(ladder) {
  const [variant, draw] = ladder.split("-draw");
  return `${variant[0].toUpperCase()}${variant.slice(1)}, draw ${draw}`;
}

function seconds(s) {
  return s === null || s === undefined ? "—" : clock(s * 1000);
}

function ask(kind, fields = {}) {
  const handle = view.handle;
  return state.conn.request(kind, handle ? { handle, ...fields } : fields);
}

/** Show the profile of `handle` (null: your own). */
export async function openProfile(handle = null) {
  const asked = ++view.asked;
  Object.assign(view, { handle, profile: null, deals: [], next: null, error: null, replay: null, friends: null });
  document.body.dataset.screen = "profile";
  $("profile-screen").hidden = false;
  draw();
  if (!handle && !state.session) {
    view.error = "No record yet: pick a name and play a deal, and it is kept here.";
    draw();
    return;
  }
  try {
    // A visitor of /p/HANDLE without a session of their own asks as a guest;
    // a session of your own is never replaced here (a dropped one comes back by itself).
    if (!state.session) await ensureSession("Visitor");
    else if (!state.conn?.isOpen) throw new Error("not connected: try again once the page is back online");
    const [profile, page] = await Promise.all([ask("profile"), ask("history", { limit: PAGE })]);
    if (asked !== view.asked) return;
    Object.assign(view, { profile: profile.profile, deals: page.deals, next: page.next });
    // Your own record has your friends' table: each friend's record against you.
    if (!handle && state.account) {
      const friends = await state.conn.request("friends").catch(() => null);
      if (asked !== view.asked) return;
      view.friends = friends ? friends.friends.filter((f) => f.state === "friends") : null;
    }
  } catch (err) {
    if (asked !== view.asked) return;
    view.error = err?.code ? refusalText(err) : `The record could not be had: ${err?.message || err}`;
  }
  draw();
}

export function closeProfile() {
  view.asked++;
  delete document.body.dataset.screen;
  $("profile-screen").hidden = true;
  if (handleInPath()) history.replaceState(null, "", "/");
}

async function more() {
  const asked = view.asked;
  let page;
  try {
    page = await ask("history", { before: view.next, limit: PAGE });
  } catch (err) {
    toast(refusalText(err)); // the page stays as it was: More may be pressed again
    return;
  }
  if (asked !== view.asked) return;
  view.deals = [...view.deals, ...page.deals];
  view.next = page.next;
  draw();
}

async function openReplay(key) {
  const asked = view.asked;
  view.replay = { key, deal: null, checks: null, error: null };
  draw();
  try {
    const reply = await state.conn.request("past_deal", { key });
    if (asked !== view.asked || view.replay?.key !== key) return;
    view.replay.deal = reply.deal;
    draw();
    view.replay.checks = await checkDeal(reply.deal);
  } catch (err) {
    if (view.replay?.key !== key) return;
    view.replay.error = err?.code ? refusalText(err) : String(err?.message || err);
  }
  if (asked === view.asked) draw();
}

function totalsTable(totals) {
  if (!totals.length) return h("p", { class: "note" }, "No deals yet.");
  return h("table", { class: "sheet profile-totals" },
    h("thead", {}, h("tr", {}, ["Rule set", "Deals", "Wins", "Win rate", "Best time", "Average moves"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, totals.map((t) => h("tr", { dataset: { ladder: t.ladder } },
      h("th", { scope: "row" }, ladderText(t.ladder)),
      h("td", {}, String(t.deals)),
      h("td", {}, String(t.wins)),
      h("td", {}, `${Math.round(t.win_rate * 100)}%`),
      h("td", {}, seconds(t.best_seconds)),
      h("td", {}, String(t.average_moves))))));
}

function roundsList(rounds) {
  if (!rounds.length) return null;
  return h("section", { class: "profile-rounds" }, h("h3", {}, "Last rounds"),
    h("ul", {}, rounds.map((r) => h("li", { dataset: { key: r.key } },
      `${when(r.t)} · room ${r.room}, round ${r.round}: ${placing(r)} of ${r.players}, total ${r.total} over ${r.deals} deal${r.deals === 1 ? "" : "s"}`))));
}

function dealsTable() {
  const rows = view.deals.map((d) => h("tr", { dataset: { key: d.key } },
    h("td", {}, when(d.t)),
    h("td", {}, `${d.room} · ${d.round}/${d.deal}`),
    h("td", {}, ladderText(d.ladder)),
    h("td", { class: "place" }, placing(d), d.players > 1 ? ` of ${d.players}` : ""),
    h("td", {}, signed(d.score), d.bonus ? h("span", { class: "bonus", title: "race bonus" }, ` ★${d.bonus}`) : null),
    h("td", {}, RESULT_TEXT[d.result] || d.result, d.seconds !== null ? ` in ${seconds(d.seconds)}` : ""),
    h("td", {}, h("button", { type: "button", class: "btn small", dataset: { replay: d.key, focusKey: `replay-${d.key}` },
      onclick: () => openReplay(d.key) }, "Replay"), view.handle ? null : challengeButton(d.key))));
  return h("section", { class: "profile-deals" }, h("h3", {}, "Deals"),
    view.deals.length
      ? h("table", { class: "sheet deal-list", id: "deal-list" },
          h("thead", {}, h("tr", {}, ["When", "Room", "Rules", "Place", "Score", "Result", ""].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, rows))
      : h("p", { class: "note" }, "No deals yet."),
    view.next !== null
      ? h("button", { type: "button", class: "btn", id: "deals-more", dataset: { focusKey: "deals-more" }, onclick: () => more() }, "More")
      : null);
}

function replayPanel() {
  const r = view.replay;
  if (!r) return null;
  return pastDealPanel(r, () => { view.replay = null; draw(); }, "profile-replay");
}

/**
 * A past deal in the replayer, as `past_deal` (or `daily_line`) gave it: the seed
 * with its check against the commitment, and each player's final board, score and
 * move log, each log checked from the seed's layout to that board (replay.js).
 *   r: {deal, checks, error}: the deal (null while it comes), checkDeal's answer
 *   (null while checking), or why it could not be had.
 */
export function pastDealPanel(r, onClose, id) {
  const close = h("button", { type: "button", class: "btn small ghost", onclick: onClose }, "Close");
  if (r.error) return h("section", { class: "panel profile-replay", id }, h("p", { class: "bad" }, r.error), close);
  const deal = r.deal;
  if (!deal) return h("section", { class: "panel profile-replay", id }, h("p", { class: "checking" }, "loading…"));
  const checks = r.checks;
  const seedLine = h("p", { class: "past-seed" }, "Seed ", h("code", { class: "seed" }, String(deal.seed)), " ",
    !checks ? h("span", { class: "checking" }, "checking…")
      : checks.seedOk ? h("span", { class: "ok" }, "✓ matches its commitment")
        : h("span", { class: "bad" }, "✗ does not match its commitment"));
  const players = Object.keys(deal.boards || {}).map((pid) => {
    const board = deal.boards[pid];
    const sum = deal.summary?.[pid] || {};
    const check = checks?.players?.[pid];
    const steps = tellLog(deal.logs?.[pid]);
    return h("article", { class: "past-player", dataset: { player: pid } },
      h("header", { class: "past-player-head" },
        h("span", { class: "tile-name" }, deal.names?.[pid] || pid),
        h("span", { class: "tile-score" }, signed(sum.score ?? 0)),
        h("span", { class: "tile-status" }, statusText(board.status, false, true)),
        !check ? h("span", { class: "checking" }, "checking…")
          : check.replayed ? h("span", { class: "ok replayed" }, "✓ replays to this board")
            : h("span", { class: "bad" }, `✗ not replayed: ${check.error}`)),
      h("div", { class: "board-host mini-host past-board" }, renderBoard(board, { mini: true })),
      h("details", { class: "past-log" }, h("summary", {}, `Move log (${steps.length})`),
        h("ol", { class: "log" }, steps.map((s) => h("li", {}, h("span", { class: "t" }, clock(s.t)), " ", s.text)))));
  });
  const daily = deal.key?.startsWith("daily/") ? deal.key.split("/") : null;
  const title = daily ? `The ${daily[1]} daily (${daily[2]}): the leader's run` : `Room ${deal.room}, round ${deal.round}, deal ${deal.number}`;
  return h("section", { class: "panel profile-replay", id, "aria-label": title },
    h("div", { class: "past-head" }, h("h3", {}, title), close),
    seedLine, h("div", { class: "past-players" }, players));
}

/** The daily's streaks (docs/protocol.md "Daily runs"): days in a row played and won. */
function streaksLine(s) {
  if (!s) return null;
  const days = (n) => `${n} day${n === 1 ? "" : "s"}`;
  return h("p", { class: "note", id: "profile-streaks" },
    `Daily streaks: ${days(s.played)} in a row played (best ${s.best_played}), `
    + `${days(s.won)} won (best ${s.best_won}).`);
}

function draw() {
  const body = $("profile-body");
  const p = view.profile;
  const title = view.handle ? view.handle : "Your record";
  $("profile-title").textContent = p?.handle ? `${p.handle}` : title;
  if (view.error) {
    replaceChildren(body, h("p", { class: "profile-private", role: "status" }, view.error));
    return;
  }
  if (!p) {
    replaceChildren(body, h("p", { class: "checking" }, "loading…"));
    return;
  }
  const since = p.since ? h("p", { class: "note" }, `${p.handle ? "Playing" : "Playing as a guest"} since ${when(p.since).slice(0, 10)}`) : null;
  replaceChildren(body,
    since,
    streaksLine(p.streaks),
    h("section", { class: "profile-totals-wrap" }, h("h3", {}, "Totals by rule set"), totalsTable(p.totals)),
    h("div", { class: "profile-charts" },
      h("figure", { id: "score-chart" }, scoreChart(p.scores), h("figcaption", {}, "Score, deal by deal")),
      h("figure", { id: "weeks-chart" }, weeksChart(p.weeks), h("figcaption", {}, "Wins by week (deals behind)"))),
    ratingsCharts(p.ratings),
    roundsList(p.rounds),
    view.friends?.length ? h("section", { class: "profile-friends", id: "profile-friends" }, recordTable(view.friends)) : null,
    challengesList(p.challenges),
    replayPanel(),
    dealsTable());
}

/** The rating on each ladder the player is rated on, each with its chart. */
function ratingsCharts(ratings) {
  if (!ratings?.length) return null;
  return h("section", { class: "profile-ratings", id: "profile-ratings" },
    h("h3", {}, "Ratings"),
    h("div", { class: "profile-charts" }, ratings.map((r) =>
      h("figure", { dataset: { ladder: r.ladder } },
        scoreChart(r.chart, "Rating", "rated round"),
        h("figcaption", {}, `${ladderText(r.ladder)}: ${r.rating}${r.provisional ? " (provisional)" : ""} after ${r.rounds} rated round${r.rounds === 1 ? "" : "s"}`)))));
}

export function initProfile() {
  $("profile-open").addEventListener("click", () => openProfile(null));
  $("profile-close").addEventListener("click", closeProfile);
}

/** At page load, after the session is back (if any): a /p/HANDLE address opens that profile. */
export function openFromPath() {
  const handle = handleInPath();
  if (handle) openProfile(handle);
}
