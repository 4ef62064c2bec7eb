// Ratings in the page (docs/protocol.md "Ratings", docs/rules.md §11): the
// Ladders screen (a ladder's top, your place with those around it, your
// friends, your rating chart), the forecast a rated room shows before each
// round (every player's rating and predicted placing), and the rating changes
// its podium shows once the server has applied the round (series.js draws
// those).

import { scoreChart } from "./charts.js";
import { h, replaceChildren } from "./dom.js";
import { ordinal } from "./series.js";
import { $, me, nameOf, state } from "./state.js";
import { refusalText } from "./words.js";

export const LADDERS = [
  ["classic-draw1", "Classic, draw one"],
  ["classic-draw3", "Classic, draw three"],
  ["thoughtful-draw1", "Thoughtful, draw one"],
  ["thoughtful-draw3", "Thoughtful, draw three"],
  ["double-draw1", "Double, draw one"],
  ["double-draw3", "Double, draw three"],
];

const view = { ladder: LADDERS[0][0], friends: false, reply: null, error: null, asked: 0 };

/** A room's ladder, as the server names it (history's and ratings' alike). */
export function ladderOf(settings) {
  return `${settings.variant}-draw${settings.draw}`;
}

function ratingText(r) {
  return `${r.rating}${r.provisional ? "?" : ""}`;
}

function table(rows, caption, id) {
  if (!rows?.length) return h("p", { class: "note", id }, `${caption}: nobody rated yet.`);
  return h("table", { class: "sheet ladder-table", id },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Player"),
      h("th", { scope: "col" }, "Rating"), h("th", { scope: "col" }, "Rounds"))),
    h("tbody", {}, rows.map((r) =>
      h("tr", { class: r.player === me() ? "mine" : "", dataset: { player: r.player } },
        h("td", {}, String(r.position)),
        h("td", {}, r.name || "—", r.player === me() ? " (you)" : ""),
        h("td", { class: "num", title: r.provisional ? "provisional: fewer than 10 rated rounds" : "" }, ratingText(r)),
        h("td", { class: "num" }, String(r.rounds))))));
}

async function load() {
  const asked = ++view.asked;
  view.error = null;
  draw();
  try {
    const fields = { ladder: view.ladder, ...(view.friends ? { friends: true } : {}) };
    const reply = await state.conn.request("ladder", fields);
    if (asked !== view.asked) return;
    view.reply = reply;
  } catch (err) {
    if (asked !== view.asked) return;
    view.error = err?.code ? refusalText(err) : `The ladder could not be had: ${err?.message || err}`;
  }
  draw();
}

function draw() {
  const body = $("ladders-body");
  const r = view.reply;
  if (view.error) {
    replaceChildren(body, h("p", { class: "field-error", role: "alert" }, view.error));
    return;
  }
  if (!r || r.ladder !== view.ladder) {
    replaceChildren(body, h("p", { class: "note" }, "Loading…"));
    return;
  }
  const mine = r.position ? `You are ${ordinal(r.position)} of those rated.` : "You have no rating on this ladder yet: play a rated room.";
  replaceChildren(body,
    h("p", { id: "ladder-position" }, mine),
    h("div", { class: "ladder-tables" },
      table(r.top, "Top 100", "ladder-top"),
      r.around?.length ? table(r.around, "Around you", "ladder-around") : null,
      r.friends ? table(r.friends, "You and your friends", "ladder-friends") : null),
    h("figure", { id: "rating-chart" },
      scoreChart(r.chart.map((p) => [p.t, p.rating]), "Rating", "rated round"),
      h("figcaption", {}, "Your rating after each rated round")));
}

export function openLadders() {
  document.body.dataset.screen = "ladders";
  $("ladders-screen").hidden = false;
  $("ladder-friends-box").hidden = !state.account;
  if (!state.conn?.isOpen) {
    view.error = "Not connected: pick a name or wait until the page is back online.";
    draw();
    return;
  }
  load();
}

export function closeLadders() {
  view.asked++;
  delete document.body.dataset.screen;
  $("ladders-screen").hidden = true;
}

export function initLadders() {
  const pick = $("ladder-pick");
  replaceChildren(pick, LADDERS.map(([v, text]) => h("option", { value: v }, text)));
  pick.addEventListener("change", () => {
    view.ladder = pick.value;
    load();
  });
  $("ladder-friends").addEventListener("change", (e) => {
    view.friends = e.target.checked;
    load();
  });
  $("ladders-open").addEventListener("click", openLadders);
  $("ladders-close").addEventListener("click", closeLadders);
}

// -- the rated room: the forecast before a round, the changes after it --------

const forecast = { key: null, reply: null };

/** What a forecast depends on: the room, its players, its ladder, its round. */
function forecastKey(room) {
  const players = room.players.filter((p) => !p.bot).map((p) => p.id).sort().join(",");
  const applied = state.ratingChanges?.[room.round] ? "applied" : "";
  return `${room.code}|${room.round}|${ladderOf(room.settings)}|${players}|${applied}`;
}

async function askForecast(key) {
  forecast.key = key;
  forecast.reply = null;
  try {
    const reply = await state.conn.request("forecast");
    if (forecast.key === key) {
      forecast.reply = reply;
      renderRated();
    }
  } catch {
    if (forecast.key === key) forecast.key = null; // asked again at the next redraw
  }
}

/** The rated room's panel: before a round, each player's rating and predicted placing. */
export function renderRated() {
  const el = $("rated-panel");
  const room = state.room;
  const rated = Boolean(room?.settings?.rated);
  el.hidden = !rated;
  if (!rated) {
    replaceChildren(el);
    return;
  }
  const key = forecastKey(room);
  if (forecast.key !== key && state.conn?.isOpen && room.state !== "playing" && room.state !== "break") askForecast(key);
  const reply = forecast.key === key ? forecast.reply : null;
  const players = reply ? Object.entries(reply.players) : [];
  players.sort((a, b) => a[1].predicted - b[1].predicted);
  const mine = reply?.players?.[me()];
  replaceChildren(el,
    h("h3", {}, "Rated room"),
    h("p", { class: "note" }, "Every round here changes its players' ratings. A player who leaves mid-round is placed last."),
    mine ? h("p", { id: "my-forecast" }, `Predicted: ${ordinal(mine.predicted)} · your rating ${ratingText(mine)}`) : null,
    players.length
      ? h("ul", { class: "forecast", id: "forecast" }, players.map(([id, f]) =>
          h("li", { dataset: { player: id } }, `${ordinal(f.predicted)} ${nameOf(id)} · ${ratingText(f)}`)))
      : null);
}
