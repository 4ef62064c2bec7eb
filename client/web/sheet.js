// The score sheet: a row per deal, a column per player, the carried Vegas bank,
// race bonuses and running totals, and the round's winners once it is over. The
// server sends a sheet only when a deal ends or the scoring changes, so the
// running deal's row is brought up to date here from the progress events.

import { h, replaceChildren, signed } from "./dom.js";
import { placingText } from "./series.js";
import { $, dealIsOver, nameOf, state } from "./state.js";

export function renderSheet() {
  const room = state.room;
  const sheet = room.sheet || { players: [], carry: {}, rows: [], totals: {}, winners: [] };
  const el = $("sheet");
  const rowsShown = liveRows(room, sheet);
  const ids = [...(sheet.players || [])];
  for (const row of rowsShown) for (const id of Object.keys(row.cells || {})) if (!ids.includes(id)) ids.push(id);
  if (!ids.length || !rowsShown.length) {
    replaceChildren(el, h("p", { class: "note" }, "No scores yet."));
    return;
  }
  const winners = new Set(sheet.winners || []);
  const totals = { ...(sheet.totals || {}) };
  const lastRow = rowsShown[rowsShown.length - 1];
  if (lastRow?.live) for (const id of ids) if (lastRow.cells?.[id]) totals[id] = lastRow.cells[id].total;
  const anyCarry = ids.some((id) => sheet.carry?.[id]);
  const showMoves = room.settings?.variant === "thoughtful";
  // The server places the players by their totals (`places`, docs/rules.md §7.1)
  // and names those placed first as winners all along; the star waits for the
  // round's end. While a deal runs, the totals here move ahead of the server's
  // sheet, so its placings are shown only once the deal is over.
  const over = room.state === "round_over";
  const places = sheet.places || {};
  const leaders = ids.filter((id) => places[id] === 1);
  const lead = new Set(leaders.length < ids.length ? leaders : []);
  const mark = (id) => (over && winners.has(id) ? "winner" : lead.has(id) ? "leader" : "");
  const placed = !lastRow?.live && Object.keys(places).length > 0;
  const head = h("tr", {}, h("th", { scope: "col" }, "Deal"),
    ids.map((id) => h("th", { scope: "col", class: mark(id), dataset: { player: id }, title: nameOf(id) },
      h("span", { class: "sheet-name" }, nameOf(id)), over && winners.has(id) ? h("span", { class: "crown", title: "round winner" }, " ★") : null)));
  const rows = [];
  if (anyCarry) {
    rows.push(h("tr", { class: "carry" }, h("th", { scope: "row" }, "Carried"),
      ids.map((id) => h("td", {}, h("span", { class: "total" }, String(sheet.carry[id] ?? 0))))));
  }
  rowsShown.forEach((row, i) => {
    const seed = state.seeds[i + 1]?.seed;
    rows.push(h("tr", { dataset: { deal: String(i + 1) } },
      h("th", { scope: "row", title: seed ? `seed ${seed}` : row.live ? "in play" : null }, String(i + 1), row.live ? h("span", { class: "live" }, " ●") : null),
      ids.map((id) => {
        const c = row.cells?.[id];
        if (!c && (row.absent || []).includes(id)) {
          return h("td", { class: "empty absent", title: `${nameOf(id)} joined after this deal was dealt` }, "absent");
        }
        if (!c) return h("td", { class: "empty" }, "–");
        return h("td", { class: `status-${c.status}${row.first === id ? " first" : ""}${row.live ? " live" : ""}`, dataset: { player: id },
            title: `${nameOf(id)}: ${c.status}, ${c.home} home, ${c.moves} moves` },
          c.status === "won" ? h("span", { class: "won-mark", title: "won this deal" }, "✓ ") : null,
          h("span", { class: "cell-score" }, signed(c.score)),
          c.bonus ? h("span", { class: "bonus", title: "race bonus" }, ` ★${c.bonus}`) : null,
          h("span", { class: "total" }, String(c.total)),
          showMoves ? h("span", { class: "moves" }, `${c.moves} moves`) : null);
      })));
  });
  const foot = [h("tr", { class: "totals" }, h("th", { scope: "row" }, "Total"),
    ids.map((id) => h("td", { class: mark(id), dataset: { player: id } }, String(totals[id] ?? 0))))];
  if (placed) {
    foot.push(h("tr", { class: "places" }, h("th", { scope: "row" }, "Place"),
      ids.map((id) => h("td", { class: mark(id), dataset: { placed: id } }, placingText(places, id)))));
  }
  // Many players: their names stand upright over narrow columns, so that a
  // laptop's side column shows all eight; what still does not fit says it scrolls.
  const table = h("table", { class: `sheet${ids.length > 4 ? " many" : ""}`, id: "sheet-table" },
    h("caption", { class: "sr-only" }, "Score sheet: each deal's score and the running total"),
    h("thead", {}, head), h("tbody", {}, rows), h("tfoot", {}, foot));
  const more = h("p", { class: "sheet-more note", id: "sheet-more", hidden: true }, `Scroll sideways for all ${ids.length} players →`);
  replaceChildren(el, h("div", { class: "sheet-scroll", id: "sheet-scroll" }, table), more);
  markScroll();
}

/** Say so when the sheet is wider than its panel (a phone, many players). */
function markScroll() {
  const box = $("sheet-scroll");
  const more = $("sheet-more");
  if (!box || !more) return;
  const hidden = box.scrollWidth > box.clientWidth + 1;
  more.hidden = !hidden;
  box.classList.toggle("scrolls", hidden);
}

new ResizeObserver(markScroll).observe($("sheet"));

/**
 * The sheet's rows, with the running deal's row brought up to date from the
 * `progress` events that arrived since the last `sheet` (the server sends a new
 * sheet only when a deal ends or the scoring changes).
 */
function liveRows(room, sheet) {
  const rows = sheet.rows || [];
  const deal = room.deal;
  if (!deal || room.state !== "playing" || dealIsOver(room, deal.number) || !deal.progress) return rows;
  const i = deal.number - 1;
  if (i > rows.length) return rows; // rows missing in between: wait for the server's sheet
  const row = rows[i] || { first: null, cells: {} };
  const cells = { ...row.cells };
  const first = state.firsts[deal.number] || null;
  const blank = { score: 0, bonus: 0, total: 0, status: "playing", moves: 0, home: 0 };
  for (const [id, p] of Object.entries(deal.progress)) {
    const old = cells[id] || blank;
    const before = i > 0 ? rows[i - 1].cells?.[id]?.total ?? 0 : sheet.carry?.[id] ?? 0;
    const bonus = first ? (first.player === id ? first.bonus : 0) : old.bonus;
    cells[id] = { ...old, score: p.score, bonus, total: before + p.score, status: p.status, moves: p.moves, home: p.home };
  }
  return [...rows.slice(0, i), { ...row, cells, first: first ? first.player : row.first, live: true }];
}
