// A run of the daily (docs/protocol.md "Daily runs"): the lobby's "Play today's
// draw 1 / draw 3" seats the player in their one run of it, a room of one that
// the normal board screen plays (a reload resumes it like any room); once the
// run is over the room shows the day's leaderboard, everyone's or one's
// friends', with one's own rank.

import { challengeButton, challengeOf, renderChallengeResult } from "./challenge.js";
import { compareChart } from "./charts.js";
import { h, replaceChildren } from "./dom.js";
import { showLobbyMessage } from "./feedback.js";
import { readName, sessionError } from "./lobby.js";
import { pastDealPanel } from "./profile.js";
import { checkDeal } from "./replay.js";
import { setRoom } from "./room.js";
import { ensureSession } from "./session.js";
import { $, onSession, state } from "./state.js";
import { moment, sameButLastHome, toldApartByTime } from "./ties.js";
import { GHOST_TEXT, refusalText } from "./words.js";

const LADDER_TEXT = { "classic-draw1": "draw 1", "classic-draw3": "draw 3" };
const RESULT_TEXT = { won: "won", resigned: "resigned", dead: "no moves left", stopped: "left" };

// The board shown: for which run and which list, and what the server said.
const shown = { key: null, friends: false, reply: null, error: null };
// The comparison with the leader's run, asked once the run is over (its room).
const compared = { code: null, reply: null, error: null };
// The leader's run in the replayer (daily_line): only once the day is over.
const leaderLine = { key: null, deal: null, checks: null, error: null };

async function play(btn) {
  const error = $("daily-error");
  error.textContent = "";
  const name = readName();
  if (!name) return;
  btn.disabled = true;
  try {
    await ensureSession(name);
    const reply = await state.conn.request("daily_start", { ladder: btn.dataset.ladder });
    showLobbyMessage("");
    setRoom(reply.room);
  } catch (err) {
    sessionError(err, error);
  } finally {
    btn.disabled = false;
  }
}

async function fetchBoard(room, friends) {
  const key = `${room.code} ${friends}`;
  Object.assign(shown, { key, friends, reply: null, error: null });
  draw();
  try {
    const reply = await state.conn.request("daily_board", {
      ladder: room.daily.ladder, date: room.daily.date, friends,
    });
    if (shown.key === key) shown.reply = reply;
  } catch (err) {
    if (shown.key === key) shown.error = err?.code ? refusalText(err) : String(err?.message || err);
  }
  draw();
}

function row(run, mine, timed) {
  return h("tr", { class: mine ? "mine" : null, "data-rank": String(run.rank) },
    h("td", {}, String(run.rank),
      timed ? h("small", { class: "tie-moment", title: "ranked by whose last card went home first" },
        ` last card home ${moment(run.home_seconds * 1000)}`) : null),
    h("td", {}, run.name),
    h("td", {}, RESULT_TEXT[run.result] || run.result),
    h("td", {}, `${run.seconds.toFixed(1)} s`),
    h("td", {}, String(run.moves)),
    h("td", {}, String(run.home)),
    h("td", {}, String(run.score)));
}

function draw() {
  const panel = $("daily-board");
  const room = state.room;
  if (!room?.daily) return;
  const reply = shown.reply;
  const me = room.me;
  const pick = (friends, label) => h("button", {
    type: "button", class: `btn small${shown.friends === friends ? " primary" : ""}`,
    "aria-pressed": String(shown.friends === friends), id: `daily-board-${friends ? "friends" : "everyone"}`,
    onclick: () => fetchBoard(room, friends),
  }, label);
  let body;
  if (shown.error) body = h("p", { class: "bad", role: "status" }, shown.error);
  else if (!reply) body = h("p", { class: "checking" }, "loading…");
  else {
    // Runs not won, as far and on the same score, ranked apart by time: each shows its moment.
    const timed = toldApartByTime(reply.runs, sameButLastHome, (run) => run.rank);
    body = h("div", {},
      h("p", { id: "daily-board-you", class: "daily-you" }, reply.you
        ? `Your rank: ${reply.you.rank} of ${reply.count}`
        : "Your run is not on the board yet."),
      h("table", { class: "sheet daily-runs" },
        h("thead", {}, h("tr", {}, ...["Rank", "Player", "Result", "Time", "Moves", "Cards home", "Score"].map((t) => h("th", {}, t)))),
        h("tbody", {}, ...reply.runs.map((run) => row(run, run.player === me, timed.has(run))))));
  }
  replaceChildren(panel,
    compareView(),
    h("h3", { id: "daily-board-title" }, `The ${room.daily.date} daily, ${LADDER_TEXT[room.daily.ladder] || room.daily.ladder}: leaderboard`),
    h("div", { class: "daily-board-pick", role: "group", "aria-label": "Whose runs" },
      pick(false, "Everyone"), pick(true, "Friends")),
    body);
}

async function fetchCompare(room) {
  Object.assign(compared, { code: room.code, reply: null, error: null });
  try {
    const reply = await state.conn.request("daily_compare", { ladder: room.daily.ladder, date: room.daily.date });
    if (compared.code === room.code) compared.reply = reply;
  } catch (err) {
    if (compared.code === room.code) compared.error = err?.code ? refusalText(err) : String(err?.message || err);
  }
  draw();
}

/** One's run against the leader's: the time to each card home, both runs, and where the gap opened. */
function compareView() {
  const reply = compared.reply;
  let body;
  if (compared.error) body = h("p", { class: "bad", role: "status" }, compared.error);
  else if (!reply) body = h("p", { class: "checking" }, "loading…");
  else {
    const mine = reply.you.name === reply.leader.name && reply.you.seconds === reply.leader.seconds;
    body = h("div", {},
      compareChart(reply, GHOST_TEXT),
      h("p", { class: "compare-legend" },
        h("span", { class: "compare-key-you" }, `— ${GHOST_TEXT.you}: ${reply.you.home_at.length} cards home in ${reply.you.seconds.toFixed(1)} s`), " · ",
        h("span", { class: "compare-key-leader" }, `- - ${GHOST_TEXT.leader(reply.leader.name)}: ${reply.leader.home_at.length} in ${reply.leader.seconds.toFixed(1)} s`)),
      h("p", { id: "compare-gap-text" }, mine ? GHOST_TEXT.youLead : reply.gap ? GHOST_TEXT.gap(reply.gap) : GHOST_TEXT.noGap),
      h("div", { class: "compare-actions" }, leaderLineButton(reply), challengeButton(`daily/${reply.date}/${reply.ladder}`)),
      leaderLinePanel(reply));
  }
  return h("section", { class: "daily-compare", id: "daily-compare" }, h("h3", {}, GHOST_TEXT.compareTitle), body);
}

/** The leader's moves in the replayer: the server gives them once the day is over
 * (its seed revealed), and says "not yet" before: until then, timings only. */
function leaderLineButton(reply) {
  return h("button", { type: "button", class: "btn small", id: "daily-leader-line",
    onclick: () => openLeaderLine(reply.date, reply.ladder) }, GHOST_TEXT.leaderLine);
}

async function openLeaderLine(date, ladder) {
  const key = `${date} ${ladder}`;
  Object.assign(leaderLine, { key, deal: null, checks: null, error: null });
  draw();
  try {
    const reply = await state.conn.request("daily_line", { ladder, date });
    if (leaderLine.key !== key) return;
    leaderLine.deal = reply.deal;
    draw();
    const checks = await checkDeal(reply.deal);
    if (leaderLine.key === key) leaderLine.checks = checks;
  } catch (err) {
    if (leaderLine.key === key) leaderLine.error = err?.code ? refusalText(err) : String(err?.message || err);
  }
  draw();
}

function leaderLinePanel(reply) {
  if (leaderLine.key !== `${reply.date} ${reply.ladder}`) return null;
  return pastDealPanel(leaderLine, () => { leaderLine.key = null; draw(); }, "daily-leader-replay");
}

/** app.js: drawn with the room. A daily run's room shows the board once the run is over. */
export function renderDailyBoard() {
  const panel = $("daily-board");
  const room = state.room;
  const over = room?.daily && (room.state === "round_over" || room.state === "closed");
  panel.hidden = !over;
  if (!over) {
    shown.key = null;
    return;
  }
  if (challengeOf(room.code)) {
    renderChallengeResult(room);
    return;
  }
  if (shown.key === null || !shown.key.startsWith(`${room.code} `)) {
    fetchBoard(room, false);
    fetchCompare(room);
    showStreak(); // the run just over counts: the lobby's line says so when it is back
  } else draw();
}

/** The lobby panel's streak line, from one's profile (guests have streaks too). */
async function showStreak() {
  const line = $("daily-streak");
  if (!state.session || !state.conn?.isOpen) return;
  try {
    const { profile } = await state.conn.request("profile");
    const s = profile.streaks;
    const days = (n) => `${n} day${n === 1 ? "" : "s"}`;
    line.textContent = s.played
      ? `Your streak: ${days(s.played)} in a row played, ${days(s.won)} won.`
      : "Your streak starts with today's run.";
    line.hidden = false;
  } catch {
    line.hidden = true; // the panel does without it
  }
}

export function initDailyRun() {
  for (const btn of document.querySelectorAll("[data-daily-play]")) {
    btn.addEventListener("click", () => play(btn));
  }
  // Asked when the session starts or changes, and again once a run is over.
  onSession(showStreak);
}
