// The room as a series of rounds: the podium when a round is over, and the series
// table beside the sheet (each finished round's winners and totals, and match
// wins), which stays through the next round. A rematch drops the last round's
// deals, so the server keeps each round's result in the room's `series`
// (docs/protocol.md "The series"); this module only draws it, placings included:
// the page ranks nobody itself.

import { h, replaceChildren, signed } from "./dom.js";
import { $, me, nameOf, state } from "./state.js";

/** The series entry of the room's current round once it is over, else null. */
export function finishedRound(room = state.room) {
  if (!room || room.state !== "round_over") return null;
  const rounds = room.series?.rounds || [];
  const last = rounds[rounds.length - 1];
  return last && last.round === room.round ? last : null;
}

/** 1 -> "1st", 2 -> "2nd", 11 -> "11th". */
export function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th";
  return `${n}${suffix}`;
}

/**
 * A placing the server sent ({id: n}, docs/rules.md §7.1) as people write it:
 * "1st", or "=1st" when another player has it too; "" when not placed.
 */
export function placingText(places, id) {
  const place = places?.[id];
  if (!place) return "";
  const shared = Object.values(places).filter((p) => p === place).length > 1;
  return `${shared ? "=" : ""}${ordinal(place)}`;
}

/** A finished round's placing of a player, as `placingText` writes it. */
export function placing(result, id) {
  return placingText(result.places, id);
}

/** A rated round's changes, kept by round while the page is in the room they came from. */
export function noteRatingChanges(ev) {
  state.ratingChanges[ev.round] = ev.changes;
}

/** The podium's line for a player's rating change, or null. */
export function ratingChangeText(round, player) {
  const c = state.ratingChanges[round]?.[player];
  if (!c || c.after === null) return null;
  return `${signed(c.change)} → ${c.after}${c.provisional ? "?" : ""}`;
}

const STEPS = ["first", "second", "third"];

export function renderPodium() {
  const el = $("podium");
  const result = finishedRound();
  el.hidden = !result;
  if (!result) {
    replaceChildren(el);
    return;
  }
  const steps = [1, 2, 3]
    .map((place) => ({ place, ids: result.players.filter((id) => result.places[id] === place) }))
    .filter((s) => s.ids.length);
  const total = (id) => result.totals[id] ?? 0;
  replaceChildren(
    el,
    h("h3", { class: "podium-title" }, `Round ${result.round} podium`,
      h("small", {}, ` · ${scoringName(result.scoring)}`)),
    h("ol", { class: "podium-steps", "aria-label": `Round ${result.round} placings` },
      steps.map(({ place, ids }) =>
        h("li", { class: `podium-step step-${STEPS[place - 1]}`, dataset: { place: String(place) } },
          h("span", { class: "podium-place" }, `${ids.length > 1 ? "=" : ""}${ordinal(place)}`),
          ids.map((id) =>
            h("span", { class: `podium-player${id === me() ? " mine" : ""}`, dataset: { player: id } },
              h("span", { class: "podium-name" }, nameOf(id), id === me() ? " (you)" : ""),
              h("span", { class: "podium-total" }, String(total(id))),
              rated(result.round, id))),
          h("span", { class: "podium-block", "aria-hidden": "true" })))),
    rest(result, total),
  );
}

/** A player's rating change on the podium, once the server has applied it. */
function rated(round, id) {
  const text = ratingChangeText(round, id);
  return text ? h("span", { class: "podium-rating", title: "rating change" }, text) : null;
}

/** Everyone placed below third, in one line. */
function rest(result, total) {
  const below = result.players.filter((id) => result.places[id] > 3);
  if (!below.length) return null;
  below.sort((a, b) => result.places[a] - result.places[b]);
  return h("p", { class: "podium-rest note" },
    below.map((id, i) => [i ? ", " : "", `${placing(result, id)} ${nameOf(id)} ${total(id)}`,
      ratingChangeText(result.round, id) ? ` (${ratingChangeText(result.round, id)})` : ""]));
}

function scoringName(scoring) {
  return { standard: "Standard", vegas: "Vegas", cumulative_vegas: "Cumulative Vegas", timed: "Timed" }[scoring] || scoring;
}

export function renderSeries() {
  const panel = $("series-panel");
  const series = state.room?.series;
  const rounds = series?.rounds || [];
  panel.hidden = !rounds.length;
  const el = $("series");
  if (!rounds.length) {
    replaceChildren(el);
    return;
  }
  const ids = Object.keys(series.names || {});
  for (const r of rounds) for (const id of r.players) if (!ids.includes(id)) ids.push(id);
  const wins = series.wins || {};
  const most = Math.max(...ids.map((id) => wins[id] ?? 0));
  const head = h("tr", {}, h("th", { scope: "col" }, "Round"), h("th", { scope: "col" }, "Winner"),
    ids.map((id) => h("th", { scope: "col", dataset: { player: id } }, nameOf(id))));
  const rows = rounds.map((r) =>
    h("tr", { dataset: { round: String(r.round) } },
      h("th", { scope: "row", title: scoringName(r.scoring) }, String(r.round)),
      h("td", { class: "series-winner" }, r.winners.map(nameOf).join(" & ") || "–"),
      ids.map((id) => {
        if (!r.players.includes(id)) return h("td", { class: "empty" }, "–");
        const won = r.winners.includes(id);
        return h("td", { class: won ? "winner" : "", dataset: { player: id }, title: `${nameOf(id)}: ${placing(r, id)}` },
          won ? h("span", { class: "crown", title: "round winner" }, "★ ") : null, String(r.totals[id] ?? 0));
      })));
  // Rounds before the listed ones (the server lists the last 10): their count and wins.
  const earlier = series.earlier_rounds || 0;
  const earlierWins = series.earlier_wins || {};
  if (earlier > 0) {
    rows.unshift(h("tr", { class: "series-earlier", dataset: { earlier: String(earlier) } },
      h("th", { scope: "row", colspan: "2" }, earlier === 1 ? "1 earlier round" : `${earlier} earlier rounds`),
      ids.map((id) => h("td", { dataset: { player: id }, title: `${nameOf(id)}: rounds won among them` },
        `${earlierWins[id] ?? 0} won`))));
  }
  const foot = h("tr", { class: "totals" }, h("th", { scope: "row", colspan: "2" }, "Match wins"),
    ids.map((id) => h("td", { class: most > 0 && (wins[id] ?? 0) === most ? "winner" : "", dataset: { player: id } },
      String(wins[id] ?? 0))));
  replaceChildren(
    el,
    h("table", { class: "sheet series", id: "series-table" },
      h("caption", { class: "sr-only" }, "Series: each finished round's winner and totals, and match wins"),
      h("thead", {}, head), h("tbody", {}, rows), h("tfoot", {}, foot)),
    rounds.map((r) => roundDeals(r)),
  );
}

/** A finished round's deals, folded away: each deal's seed and every score. */
function roundDeals(r) {
  const key = `series-round-${r.round}`;
  const open = state.seriesOpen.has(r.round);
  return h("details", {
    class: "series-round", dataset: { round: String(r.round) }, open,
    ontoggle: (e) => (e.currentTarget.open ? state.seriesOpen.add(r.round) : state.seriesOpen.delete(r.round)),
  },
  h("summary", { dataset: { focusKey: key } }, `Round ${r.round}: its deals`),
  h("table", { class: "sheet" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Deal"),
      r.players.map((id) => h("th", { scope: "col" }, nameOf(id))))),
    h("tbody", {}, r.deals.map((d) =>
      h("tr", {},
        h("th", { scope: "row" }, String(d.number), d.seed ? h("code", { class: "series-seed", title: `seed ${d.seed}` }, ` ${d.seed}`) : null),
        r.players.map((id) => {
          const c = d.cells[id];
          if (!c) return h("td", { class: "empty" }, "–");
          return h("td", { class: `status-${c.status}${d.first === id ? " first" : ""}`, title: `${c.status}, ${c.home} home, ${c.moves} moves` },
            h("span", { class: "cell-score" }, signed(c.score)));
        }))))));
}
