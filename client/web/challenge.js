// Challenges (docs/protocol.md "Challenges"): a past deal of one's own (a deal
// of the profile's list, or a daily run over) sent as a link, /#challenge=CODE.
// Whoever opens it sees who challenges them and plays the deal once, a room of
// one like a daily run, the challenger's run racing them as a ghost; the
// challenger's result shows only once their own run is over, then both.

import { h, replaceChildren } from "./dom.js";
import { toast } from "./feedback.js";
import { readName, sessionError } from "./lobby.js";
import { setRoom } from "./room.js";
import { ensureSession } from "./session.js";
import { placingText } from "./series.js";
import { $, onSession, state } from "./state.js";
import { moment, sameButLastHome, toldApartByTime } from "./ties.js";
import { CHALLENGE_TEXT, refusalText } from "./words.js";

const LINK = /(?:^#|&)challenge=([0-9A-Za-z]+)/;
const RESULT_TEXT = { won: "won", resigned: "resigned", dead: "no moves left", stopped: "left" };
// The rooms of this tab's challenge runs, by room code: a reload still knows
// the run is a challenge's (its room is a daily run's as the server shows it).
const STORE_KEY = "challenge-runs";

const shown = { code: null, info: null, error: null, busy: false };
const result = { room: null, info: null, error: null };

function runs() {
  try {
    return JSON.parse(sessionStorage.getItem(STORE_KEY) || "{}");
  } catch {
    return {};
  }
}

/** The challenge code of the run in room `code`, if it is one. */
export function challengeOf(code) {
  return runs()[code] || null;
}

function ladderText(ladder) {
  const [variant, draw] = (ladder || "").split("-draw");
  return variant ? `${variant} draw ${draw}` : ladder;
}

/** A "Challenge a friend" button for the past deal `key`; pressed, the link to send. */
export function challengeButton(key) {
  if (!state.account) return null;
  const box = h("span", { class: "challenge-make" });
  const btn = h("button", { type: "button", class: "btn small", dataset: { challenge: key } }, CHALLENGE_TEXT.make);
  btn.addEventListener("click", async () => {
    btn.disabled = true;
    btn.textContent = CHALLENGE_TEXT.making;
    try {
      const reply = await state.conn.request("challenge", { key });
      const field = h("input", { type: "text", readonly: "", class: "challenge-url", value: reply.url,
        "aria-label": CHALLENGE_TEXT.linkLabel });
      const copy = h("button", { type: "button", class: "btn small", onclick: async () => {
        field.select();
        try {
          await navigator.clipboard.writeText(reply.url);
        } catch {
          // Selected: the player copies it by hand.
        }
        toast(CHALLENGE_TEXT.copied);
      } }, CHALLENGE_TEXT.copy);
      replaceChildren(box, field, copy);
    } catch (err) {
      btn.disabled = false;
      btn.textContent = CHALLENGE_TEXT.make;
      toast(err?.code ? refusalText(err) : String(err?.message || err));
    }
  });
  box.append(btn);
  return box;
}

function readLink() {
  const m = LINK.exec(location.hash);
  if (!m) return;
  history.replaceState(null, "", location.pathname + location.search);
  Object.assign(shown, { code: m[1], info: null, error: null });
  fetchInfo();
}

async function fetchInfo() {
  const code = shown.code;
  drawPanel();
  if (!code || !state.session || !state.conn?.isOpen) return;
  try {
    const reply = await state.conn.request("challenge_info", { code });
    if (shown.code === code) Object.assign(shown, { info: reply.challenge, error: null });
  } catch (err) {
    if (shown.code === code) shown.error = err?.code ? refusalText(err) : String(err?.message || err);
  }
  drawPanel();
}

async function play() {
  const error = $("challenge-error");
  error.textContent = "";
  const name = readName();
  if (!name) return;
  shown.busy = true;
  drawPanel();
  try {
    await ensureSession(name);
    if (!shown.info) await fetchInfo();
    const reply = await state.conn.request("challenge_start", { code: shown.code });
    sessionStorage.setItem(STORE_KEY, JSON.stringify({ ...runs(), [reply.room.code]: shown.code }));
    shown.code = null;
    drawPanel();
    setRoom(reply.room);
  } catch (err) {
    sessionError(err, $("challenge-error"));
  } finally {
    shown.busy = false;
    drawPanel();
  }
}

function drawPanel() {
  const panel = $("challenge-panel");
  panel.hidden = !shown.code;
  if (!shown.code) return;
  const info = shown.info;
  let body;
  if (shown.error) body = h("p", { class: "bad", role: "status" }, shown.error);
  else if (!info) body = h("p", { class: "note" }, CHALLENGE_TEXT.hidden);
  else if (info.yours) body = h("p", { class: "note" }, CHALLENGE_TEXT.yours);
  else {
    body = h("div", {},
      h("p", { id: "challenge-from" }, CHALLENGE_TEXT.from(info.challenger, ladderText(info.ladder))),
      info.over ? resultsTable(info) : h("p", { class: "note", id: "challenge-hidden" }, CHALLENGE_TEXT.hidden));
  }
  const playable = !info || (!info.yours && !info.over);
  replaceChildren(panel,
    h("h3", { id: "challenge-title" }, CHALLENGE_TEXT.title),
    body,
    playable ? h("button", { type: "button", class: "btn primary", id: "challenge-play", disabled: shown.busy ? "" : null,
      onclick: play }, info?.taken ? CHALLENGE_TEXT.resume : CHALLENGE_TEXT.play) : null,
    h("span", { id: "challenge-error", class: "field-error", role: "alert" }));
}

function resultRow(key, r, places, timed) {
  return h("tr", { class: key === "mine" ? "mine" : null, dataset: { place: String(r.place ?? "") } },
    h("td", { class: "place" }, placingText(places, key),
      timed ? h("small", { class: "tie-moment", title: "placed by whose last card went home first" },
        ` last card home ${moment(r.home_seconds * 1000)}`) : null),
    h("td", {}, r.name),
    h("td", {}, RESULT_TEXT[r.result] || r.result),
    h("td", {}, `${r.seconds.toFixed(1)} s`),
    h("td", {}, String(r.moves)),
    h("td", {}, String(r.home)),
    h("td", {}, String(r.score)));
}

/** Both results, in the places the server gave them (docs/rules.md §7.1), and who won. */
function resultsTable(info) {
  const rows = [["theirs", info.challenger_result], ["mine", info.result]].filter(([, r]) => r);
  rows.sort(([, a], [, b]) => (a.place ?? 0) - (b.place ?? 0));
  const places = Object.fromEntries(rows.filter(([, r]) => r.place).map(([key, r]) => [key, r.place]));
  const timed = toldApartByTime(rows.map(([, r]) => r), sameButLastHome, (r) => r.place);
  const [first, second] = rows;
  const verdict = !second ? null
    : first[1].place === second[1].place ? CHALLENGE_TEXT.even
    : CHALLENGE_TEXT.won(first[1].name);
  return h("div", {},
    h("table", { class: "sheet challenge-results", id: "challenge-results" },
      h("thead", {}, h("tr", {}, ...["#", CHALLENGE_TEXT.who, CHALLENGE_TEXT.result, CHALLENGE_TEXT.time,
        CHALLENGE_TEXT.moves, CHALLENGE_TEXT.home, CHALLENGE_TEXT.score].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, ...rows.map(([key, r]) => resultRow(key, r, places, timed.has(r))))),
    verdict ? h("p", { id: "challenge-verdict" }, verdict) : null);
}

async function fetchResult(room, code) {
  Object.assign(result, { room: room.code, info: null, error: null });
  drawResult();
  try {
    const reply = await state.conn.request("challenge_info", { code });
    if (result.room === room.code) result.info = reply.challenge;
  } catch (err) {
    if (result.room === room.code) result.error = err?.code ? refusalText(err) : String(err?.message || err);
  }
  drawResult();
}

function drawResult() {
  const panel = $("daily-board");
  const info = result.info;
  let body;
  if (result.error) body = h("p", { class: "bad", role: "status" }, result.error);
  else if (!info?.over) body = h("p", { class: "checking" }, "loading…");
  else body = resultsTable(info);
  replaceChildren(panel, h("h3", { id: "challenge-result-title" }, CHALLENGE_TEXT.resultTitle), body);
}

/** dailyrun.js: a challenge run over shows both results where a daily shows its board. */
export function renderChallengeResult(room) {
  const code = challengeOf(room.code);
  if (result.room !== room.code) fetchResult(room, code);
  else drawResult();
}

/** The profile's list: the challenges one made and took, both results once over. */
export function challengesList(challenges) {
  if (!challenges?.length) return null;
  const line = (r) => (r ? `${r.name}: ${RESULT_TEXT[r.result] || r.result} in ${r.seconds.toFixed(1)} s` : CHALLENGE_TEXT.notYet);
  return h("section", { class: "profile-challenges", id: "profile-challenges" },
    h("h3", {}, CHALLENGE_TEXT.listTitle),
    h("ul", {}, challenges.map((c) => h("li", { dataset: { challenge: c.id } },
      h("strong", {}, c.role === "made" ? CHALLENGE_TEXT.made(ladderText(c.ladder)) : CHALLENGE_TEXT.taken(c.challenger, ladderText(c.ladder))),
      ": ",
      c.challenger_result ? line(c.challenger_result) : CHALLENGE_TEXT.hidden,
      ...c.takes.map((t) => [" · ", t.result ? line(t.result) : `${t.name || "?"}: ${CHALLENGE_TEXT.notYet}`])))));
}

export function initChallenge() {
  onSession(() => {
    if (shown.code && !shown.info) fetchInfo();
  });
  window.addEventListener("hashchange", readLink);
  readLink();
}
