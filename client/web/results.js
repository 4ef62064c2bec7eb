// The break between two deals of a round (docs/protocol.md "The break between
// deals"): every page — players and spectators — shows the deal just played:
// its placings (the server's: the page ranks nobody itself, docs/rules.md §7.1;
// equal scores placed apart by time show each one's moment) with each player's
// score, finishing time and moves, the first finisher and
// the race bonus, every revealed board side by side, the seed and the page's own
// check of it against the commitment, and a countdown to the next deal. Players
// press Ready (the next deal starts once all have); the host may start it now.
// Everything here is read from the revealed deal (`history`) and the sheet the
// room already holds: the break only says when to show it.

import { renderBoard } from "./board.js";
import { clock, h, replaceChildren, short } from "./dom.js";
import { hostAction } from "./host.js";
import { statusText } from "./hud.js";
import { placingText } from "./series.js";
import { $, isHost, isPlayer, me, nameOf, state } from "./state.js";
import { moment, sameButScoredAt, toldApartByTime } from "./ties.js";

let ticker = null;

/** Seconds left before the next deal, on the server's clock. */
function secondsLeft(room) {
  if (!room.next_deal_at || !state.conn) return 0;
  return Math.max(0, Math.ceil((room.next_deal_at - state.conn.serverNow()) / 1000));
}

function seedCheck(number) {
  const s = state.seeds[number];
  if (!s) return null;
  const verdict = s.ok === null ? "checking…" : s.ok ? "✓ matches the commitment" : "✗ does NOT match the commitment";
  return h("p", { class: `results-seed${s.ok === false ? " bad" : ""}`, dataset: { ok: String(s.ok) } },
    "Seed ", h("code", { class: "seed", title: s.seed }, s.seed), " ",
    h("span", { class: "seed-check" }, verdict),
    h("span", { class: "note" }, ` (commitment ${short(s.commitment)})`));
}

function placings(room, past) {
  const row = room.sheet?.rows?.[past.number - 1] || { cells: {} };
  const first = row.first ?? state.firsts[past.number]?.player ?? null;
  const summary = past.summary || {};
  const places = Object.fromEntries(Object.entries(summary).map(([id, sum]) => [id, sum.place]));
  const ids = Object.keys(past.boards || {});
  ids.sort((a, b) => (places[a] ?? Infinity) - (places[b] ?? Infinity));
  // Equal scores placed apart by who reached theirs first: each shows when.
  const timed = toldApartByTime(ids, (a, b) => sameButScoredAt(summary[a] || {}, summary[b] || {}), (id) => places[id]);
  const lines = ids.map((id) => {
    const sum = summary[id] || {};
    const cell = row.cells?.[id];
    // Time: when the player's deal ended; none for a player still playing when
    // the deal ended for everyone. It places nobody (docs/rules.md §7.1).
    const t = sum.finished_t ?? null;
    return h("tr", { dataset: { player: id }, class: id === me() ? "mine" : "" },
      h("td", { class: "place" }, placingText(places, id),
        timed.has(id) ? h("small", { class: "tie-moment", title: "placed by who reached this score first" },
          ` last scored ${moment(sum.scored_t ?? 0)}`) : null),
      h("th", { scope: "row" }, nameOf(id), id === first ? h("span", { class: "first-badge", title: "first finisher" }, " ★") : null),
      h("td", { class: "score" }, String(sum.score ?? cell?.score ?? 0)),
      h("td", { class: "bonus" }, cell?.bonus ? `+${cell.bonus}` : ""),
      h("td", { class: "time" }, t !== null ? clock(t) : "–"),
      h("td", { class: "moves" }, String(sum.moves ?? cell?.moves ?? 0)),
      h("td", { class: "status" }, statusText(sum.status || cell?.status || "playing", true, true)));
  });
  const bonus = first ? (row.cells?.[first]?.bonus ?? state.firsts[past.number]?.bonus ?? 0) : 0;
  return [
    h("p", { class: "results-first" }, first ? `First to finish: ${nameOf(first)} (+${bonus} race bonus)` : "Nobody won this deal."),
    h("table", { class: "results-table", id: "results-table" },
      h("thead", {}, h("tr", {}, ["#", "Player", "Score", "Bonus", "Time", "Moves", "Result"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, lines)),
  ];
}

function boards(past) {
  const tiles = Object.entries(past.boards || {}).map(([id, view]) =>
    h("article", { class: `wall-tile${id === me() ? " mine" : ""}`, dataset: { player: id }, "aria-label": `${nameOf(id)}'s board` },
      h("header", { class: "tile-head" }, h("span", { class: "tile-name" }, nameOf(id), id === me() ? " (you)" : "")),
      h("div", { class: "board-host mini-host" }, renderBoard(view, { mini: true }))));
  return h("div", { class: "wall-grid results-boards" }, tiles);
}

function controls(room) {
  const ready = room.ready || [];
  const players = room.players || [];
  const out = [];
  if (isPlayer()) {
    const mine = ready.includes(me());
    out.push(h("button", {
      type: "button", id: "btn-ready", class: "btn primary", disabled: mine,
      onclick: async () => {
        try {
          await state.conn.request("ready");
        } catch (err) {
          $("results-error").textContent = err.message;
        }
      },
    }, mine ? "Ready ✓" : "Ready"));
  }
  if (isHost()) {
    out.push(h("button", { type: "button", id: "btn-next-now", class: "btn", onclick: () => hostAction("next_deal") }, "Next deal now"));
  }
  // In words: a name with "…" after it said nothing of what it waited for.
  const who = players.map((p) => h("li", { class: ready.includes(p.id) ? "is-ready" : "not-ready", dataset: { player: p.id } },
    `${p.name}${ready.includes(p.id) ? " ✓ ready" : " · not ready yet"}`));
  return [
    h("div", { class: "results-actions" }, out),
    h("ul", { class: "results-ready", id: "results-ready", "aria-label": "Who is ready" }, who),
    h("span", { id: "results-error", class: "field-error", role: "alert" }),
  ];
}

export function renderResults() {
  const room = state.room;
  const panel = $("results");
  const past = room.state === "break" && room.deal ? room.history.find((d) => d.number === room.deal.number) : null;
  if (!past) {
    panel.hidden = true;
    clearInterval(ticker);
    ticker = null;
    return;
  }
  panel.hidden = false;
  const count = h("p", { class: "results-countdown", id: "results-countdown", "aria-live": "off" });
  const tick = () => {
    const now = state.room || room;
    const left = secondsLeft(now);
    // A winnable room whose next seed is still being found: the break lasts until it is.
    count.textContent = now.finding_deal != null
      ? `Finding a winnable deal for deal ${past.number + 1}…`
      : `Deal ${past.number + 1} starts in ${left} s`;
    count.dataset.left = String(left);
  };
  tick();
  clearInterval(ticker);
  ticker = setInterval(tick, 250);
  replaceChildren(panel,
    h("h3", { id: "results-title" }, `Deal ${past.number} of ${room.deal.deals ?? room.settings?.deals_per_round}: results`),
    count,
    ...controls(room),
    ...placings(room, past),
    seedCheck(past.number),
    boards(past));
}
