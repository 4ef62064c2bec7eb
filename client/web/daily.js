// The daily deal (docs/protocol.md "Daily deal"): the lobby's "Daily deal" panel,
// with today's commitments, and the Daily screen (also at /daily, which the
// server serves as this page) listing every published day. The commitments of
// today and the days ahead are shown whole, for anyone to keep a copy; a day
// that is over shows its seed, and this page checks it itself, as the room's past
// deals are checked (replay.js): the seed hashes to the commitment, and the
// proof it was published with, followed from the seed's layout, ends won.

import { h, replaceChildren } from "./dom.js";
import { followLine, seedMatches } from "./replay.js";
import { ensureSession } from "./session.js";
import { $, onSession, state } from "./state.js";
import { refusalText } from "./words.js";

const view = { listing: null, error: null, checks: {}, asked: 0 };

const LADDER_TEXT = { "classic-draw1": "Classic, draw 1", "classic-draw3": "Classic, draw 3" };

function ladderText(ladder) {
  return LADDER_TEXT[ladder] || ladder;
}

/** Whether this address is the Daily page. */
export function dailyInPath(path = location.pathname) {
  return /^\/daily\/?$/.test(path);
}

async function fetchDays() {
  const asked = ++view.asked;
  try {
    const reply = await state.conn.request("daily");
    if (asked !== view.asked) return;
    Object.assign(view, { listing: reply, error: null });
  } catch (err) {
    if (asked !== view.asked) return;
    view.error = err?.code ? refusalText(err) : `The daily deals could not be had: ${err?.message || err}`;
  }
  drawLobby();
  drawScreen();
  checkRevealed();
}

/** Each revealed day checked once: its seed against its commitment, its proof to a win. */
async function checkRevealed() {
  for (const day of view.listing?.days || []) {
    const key = `${day.date} ${day.ladder}`;
    if (day.seed === undefined || view.checks[key]) continue;
    view.checks[key] = { state: "checking" };
    let check;
    try {
      const matches = await seedMatches(day.seed, day.commitment);
      const line = day.proof.moves.map((move, i) => ({ move, result: day.proof.results[i] }));
      const { won } = await followLine(day.seed, line, day.rules);
      check = { state: matches && won ? "ok" : "bad", matches, won };
    } catch (err) {
      check = { state: "bad", matches: false, won: false, why: String(err?.message || err) };
    }
    view.checks[key] = check;
    drawScreen();
  }
}

function checkText(check) {
  if (!check || check.state === "checking") return h("span", { class: "checking" }, "checking…");
  if (check.state === "ok") {
    return h("span", { class: "good" }, "✓ seed matches the commitment; the proof wins");
  }
  const bad = [!check.matches && "the seed does not match the commitment", !check.won && "the proof does not win"];
  return h("span", { class: "bad" }, `✗ ${bad.filter(Boolean).join("; ")}`);
}

function dayRow(day, today) {
  const key = `${day.date} ${day.ladder}`;
  const when = day.date === today ? "today" : day.date < today ? "revealed" : "ahead";
  return h("tr", { "data-day": key, "data-when": when },
    h("td", {}, day.date),
    h("td", {}, ladderText(day.ladder)),
    h("td", { class: "hash" }, h("code", {}, day.commitment)),
    h("td", { class: "hash" }, day.seed === undefined ? (when === "today" ? "revealed tomorrow" : "—") : h("code", {}, day.seed)),
    h("td", {}, day.seed === undefined ? "" : checkText(view.checks[key])));
}

function drawScreen() {
  const body = $("daily-body");
  if (!body || $("daily-screen").hidden) return;
  if (view.error) return replaceChildren(body, h("p", { class: "bad", role: "status" }, view.error));
  const listing = view.listing;
  if (!listing) return replaceChildren(body, h("p", { class: "checking" }, "loading…"));
  const today = listing.today;
  const ahead = listing.days.filter((d) => d.date >= today);
  const past = listing.days.filter((d) => d.date < today).reverse();
  const table = (rows, caption) => h("table", { class: "sheet daily-days" },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, h("th", {}, "Day (UTC)"), h("th", {}, "Rules"), h("th", {}, "Commitment"), h("th", {}, "Seed"), h("th", {}, "Check"))),
    h("tbody", {}, ...rows.map((d) => dayRow(d, today))));
  replaceChildren(body,
    h("p", { class: "note" },
      `Today is ${today} (UTC). Each day's commitment is published a week ahead: keep a copy (`,
      h("code", {}, "klondike-race daily --fetch FILE"),
      `), and once the day is over check its seed against it (`,
      h("code", {}, "klondike-race verify --daily DATE --saved FILE"),
      ")."),
    table(ahead, "Today and the days ahead: commitments"),
    past.length ? table(past, "Days over: seeds revealed, checked on this page") : h("p", { class: "note" }, "No day is over yet."));
}

function drawLobby() {
  const list = $("daily-today");
  if (!list) return;
  const listing = view.listing;
  if (!listing) {
    replaceChildren(list, h("li", { class: "note" }, state.session ? "loading…" : "Open the daily deals to see today's commitments."));
    return;
  }
  const today = listing.days.filter((d) => d.date === listing.today);
  replaceChildren(list, ...today.map((d) => h("li", { "data-ladder": d.ladder },
    h("span", {}, `${ladderText(d.ladder)}: `), h("code", { class: "hash", title: d.commitment }, d.commitment))));
}

export async function openDaily() {
  document.body.dataset.screen = "daily";
  $("daily-screen").hidden = false;
  drawScreen();
  try {
    // A visitor of /daily without a session of their own asks as a guest.
    if (!state.session) await ensureSession("Visitor");
    else if (!state.conn?.isOpen) throw new Error("not connected: try again once the page is back online");
  } catch (err) {
    view.error = err?.code ? refusalText(err) : String(err?.message || err);
    drawScreen();
    return;
  }
  await fetchDays();
}

export function closeDaily() {
  delete document.body.dataset.screen;
  $("daily-screen").hidden = true;
  if (dailyInPath()) history.replaceState(null, "", "/");
}

export function initDaily() {
  $("daily-open").addEventListener("click", openDaily);
  $("daily-close").addEventListener("click", closeDaily);
  drawLobby();
  // The lobby's panel fills in once there is a session to ask with.
  onSession(() => {
    if (state.session && state.conn?.isOpen && !view.listing && !view.asked) fetchDays();
  });
}
