// Past deals (docs/rules.md §8): once a deal is over, every player's final board and
// move log, each move told from the result the engine reported for it. The page
// checks the revealed seed against its commitment and follows each log's results
// from the layout that seed deals to the revealed board (replay.js), so anyone can
// see here that nobody was dealt a different game, without trusting the server.
// The checks hash, which may be asynchronous (crypto.subtle): the logs show at
// once, the check marks when the checks are done.
// A snapshot's history carries no logs (they grow with every move): a deal's logs
// come with its deal_over event, and otherwise (after a join, a reload, a resume)
// they are asked for with deal_log when the panel first shows that deal.
// A winnable deal (docs/rules.md §9) also says how long the winning line it was
// proven with is, and how hard, and can step through that line: from the layout
// the seed deals, each move moved as the engine's result for it says (replay.js
// followLine, no rules of play here), to the board with every card home.

import { renderBoard } from "./board.js";
import { clock, h, replaceChildren, signed } from "./dom.js";
import { statusText } from "./hud.js";
import { cardText, checkDeal, followLine, moveText, tellLog } from "./replay.js";
import { $, me, nameOf, render, state } from "./state.js";

/** Card names in a text ("7♥︎ waste → pile 3") as spans coloured by suit. */
function cardsInText(text) {
  const parts = [];
  const re = /(10|[A2-9JQK])([♣♦♥♠])\uFE0E?/gu;
  let at = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > at) parts.push(text.slice(at, m.index));
    parts.push(h("span", { class: `ctext ${m[2] === "♦" || m[2] === "♥" ? "red" : "black"}` }, m[0]));
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}

function cardList(codes) {
  if (!codes.length) return "empty";
  return cardsInText(codes.map(cardText).join(" "));
}

/** The checks of a past deal: null until they are done (a redraw follows then). */
function checked(past) {
  let e = state.past.explained.get(past.number);
  if (!e || e.past !== past) {
    const entry = { past, result: null };
    const settle = (result) => {
      entry.result = result;
      if (state.past.explained.get(past.number) === entry) render();
    };
    checkDeal(past).then(settle, (err) => settle({ seedOk: false, players: {}, error: String(err) }));
    state.past.explained.set(past.number, entry);
    e = entry;
  }
  return e.result;
}

/** Ask for a past deal's logs, once; a redraw follows their arrival. */
function fetchLogs(number) {
  const { code, round } = state.room;
  state.past.logs.set(number, null);
  const request = state.conn ? state.conn.request("deal_log", { deal: number }) : Promise.reject(new Error("not connected"));
  request.then(
    (reply) => {
      if (state.room?.code !== code || state.room?.round !== round) return;
      state.past.logs.set(number, reply.logs || {});
      render();
    },
    (err) => {
      // Asked again at a later redraw (after a resume, say).
      if (state.room?.code === code && state.past.logs.get(number) === null) state.past.logs.delete(number);
      if (err?.code !== "disconnected") console.warn("deal_log failed", err?.code, err?.message);
    },
  );
}

/** The history entry with its logs, or null while they are on their way. */
function withLogs(past) {
  if (past.logs) return past;
  const logs = state.past.logs.get(past.number);
  if (logs === undefined) fetchLogs(past.number);
  if (!logs) return null;
  let full = state.past.full.get(past);
  if (!full) {
    full = { ...past, logs };
    state.past.full.set(past, full);
  }
  return full;
}

/**
 * "Show the winning line": a stepper through a proof's moves (first / previous /
 * next / last, and the arrow, Home and End keys), drawing the board after each
 * from the results the engine computed. Its state (open, the step shown, the
 * boards followed) outlives the panel's redraws; a step redraws only the stepper.
 */
function proofStepper(past, proof) {
  const n = proof.moves.length;
  if (!Array.isArray(proof.results) || proof.results.length !== n) return null;
  let st = state.past.lines.get(past.number);
  if (!st || st.seed !== past.seed) {
    st = { seed: past.seed, open: false, k: 0, followed: null, error: null, pending: null, update: null };
    state.past.lines.set(past.number, st);
  }
  const anyBoard = Object.values(past.boards || {})[0] || {};
  const rules = { variant: anyBoard.variant || "classic", draw: anyBoard.draw || 1 };
  const line = proof.moves.map((move, i) => ({ move, result: proof.results[i] }));
  const id = `proof-stepper-${past.number}`;

  const go = (k) => {
    st.k = Math.max(0, Math.min(n, k));
    update();
  };
  const button = (key, label, text, to) =>
    h("button", { type: "button", class: "btn small", "aria-label": label, title: label, dataset: { step: key, focusKey: `proof-${key}` },
      onclick: (ev) => {
        if (ev.currentTarget.getAttribute("aria-disabled") === "true") return;
        go(to());
      } }, text);
  const first = button("first", "First: the dealt layout", "First", () => 0);
  const prev = button("prev", "Previous move", "◀", () => st.k - 1);
  const next = button("next", "Next move", "▶", () => st.k + 1);
  const last = button("last", "Last move", "Last", () => n);
  const counter = h("span", { class: "proof-count", "aria-live": "polite" });
  const said = h("p", { class: "proof-move" });
  const host = h("div", { class: "board-host mini-host proof-board" });
  const won = h("p", { class: "proof-won ok", hidden: true }, "✓ every card home: won");
  const body = h("div", { class: "proof-stepper", id, hidden: !st.open,
    onkeydown: (ev) => {
      const to = { ArrowLeft: st.k - 1, ArrowRight: st.k + 1, Home: 0, End: n }[ev.key];
      if (to === undefined || !st.followed) return;
      ev.preventDefault();
      go(to);
    } },
    h("div", { class: "proof-controls", role: "group", "aria-label": "Step through the winning line" }, first, prev, counter, next, last),
    said, host, won);
  const toggle = h("button", { type: "button", class: "btn small proof-toggle", "aria-expanded": st.open ? "true" : "false", "aria-controls": id,
    dataset: { focusKey: "proof-toggle" },
    onclick: () => {
      st.open = !st.open;
      update();
    } });

  function update() {
    toggle.textContent = st.open ? "Hide the winning line" : "Show the winning line";
    toggle.setAttribute("aria-expanded", st.open ? "true" : "false");
    body.hidden = !st.open;
    if (!st.open) return;
    if (!st.followed && !st.error) {
      counter.textContent = "dealing…";
      if (!st.pending) {
        st.pending = followLine(past.seed, line, rules).then(
          (res) => { st.followed = res; },
          (err) => { st.error = String(err?.message || err); },
        ).then(() => st.update?.());
      }
      return;
    }
    if (st.error) {
      counter.textContent = "";
      said.textContent = `✗ the results do not follow from the seed's layout: ${st.error}`;
      said.className = "proof-move bad";
      return;
    }
    const k = st.k;
    for (const [b, off] of [[first, k === 0], [prev, k === 0], [next, k === n], [last, k === n]]) {
      b.setAttribute("aria-disabled", off ? "true" : "false");
    }
    counter.textContent = `move ${k} of ${n}`;
    replaceChildren(said, k === 0 ? "the dealt layout" : cardsInText(moveText(line[k - 1].move, line[k - 1].result, line[k - 2]?.move)));
    replaceChildren(host, renderBoard(st.followed.boards[k], { mini: true }));
    const done = k === n && st.followed.won;
    won.hidden = !done;
    body.dataset.won = done ? "true" : "false";
  }
  st.update = update;
  update();
  return h("div", { class: "proof-line" }, toggle, body);
}

export function renderPast() {
  const room = state.room;
  const panel = $("past-panel");
  const history = [...(room.history || [])].sort((a, b) => a.number - b.number);
  // A daily run's deal stays secret until its day is over: nothing to replay (dailyrun.js).
  if (!history.length || room.daily) {
    panel.hidden = true;
    state.past.key = null;
    return;
  }
  panel.hidden = false;
  const numbers = history.map((d) => d.number);
  const pick = numbers.includes(state.past.pick) ? state.past.pick : numbers[numbers.length - 1];
  const entry = history.find((d) => d.number === pick);
  const past = withLogs(entry) || entry;
  const loaded = Boolean(past.logs);
  const row = room.sheet?.rows?.[pick - 1] || null;
  // Logs can be long: rebuild only when something shown here changed.
  const ids = Object.keys(past.boards || {});
  const checks = loaded ? checked(past) : null;
  const key = JSON.stringify([room.code, room.round, numbers, pick, row, state.firsts[pick] || null, ids.map(nameOf), me(), loaded, checks !== null]);
  if (key === state.past.key) return;
  state.past.key = key;

  replaceChildren($("past-picker"), numbers.map((n) =>
    h("button", {
      type: "button", class: `btn small${n === pick ? " current" : ""}`, "aria-pressed": n === pick ? "true" : "false",
      dataset: { deal: String(n), focusKey: `past-${n}` },
      onclick: () => {
        state.past.pick = n;
        renderPast();
      },
    }, `Deal ${n}`)));

  const seedOk = checks?.seedOk;
  const commit = String(past.commitment || "");
  const seedLine = h("p", { class: "past-seed" },
    "Seed ", h("code", { class: "seed" }, String(past.seed)), " ",
    !checks
      ? h("span", { class: "checking" }, "checking…")
      : seedOk
        ? h("span", { class: "ok", title: "sha256 of the seed equals the commitment made when the deal started" }, "✓ matches its commitment")
        : h("span", { class: "bad" }, "✗ does not match its commitment"),
    " ", h("code", { class: "commit commit-full" }, commit));
  // deals: winnable (docs/rules.md §9): the line the deal was proven with, as the
  // server's engine replayed it; the page only tells it.
  const proof = past.proof;
  const proofLine = proof
    ? [h("p", { class: "past-proof", title: "a solver won this layout and the engine replayed its line to a win" },
        `winnable — one way to win in ${proof.length} move${proof.length === 1 ? "" : "s"} (${proof.difficulty})`),
      proofStepper(past, proof)]
    : null;
  const anyDown = ids.some((id) => past.boards[id].tableau.some((p) => p.down > 0));
  const legend = anyDown
    ? h("p", { class: "note past-legend" }, h("span", { class: "swatch", "aria-hidden": "true" }), " Striped cards were still face down when the deal ended.")
    : null;

  const order = room.players.map((p) => p.id).filter((id) => ids.includes(id));
  for (const id of ids) if (!order.includes(id)) order.push(id);
  const first = row?.first ?? state.firsts[pick]?.player ?? null;
  const cards = order.map((id) => {
    const board = past.boards[id];
    const cell = row?.cells?.[id] || null;
    const steps = tellLog(past.logs?.[id]);
    const check = checks ? checks.players[id] || { replayed: false, error: "no log" } : null;
    const total = board.foundations.length * 13;
    const stock = board.stock_cards || [];
    const waste = board.waste_cards || [];
    return h("article", { class: `past-player${id === me() ? " mine" : ""}`, dataset: { player: id }, "aria-label": `${nameOf(id)} in deal ${pick}` },
      h("header", { class: "past-player-head" },
        h("span", { class: "tile-name" }, nameOf(id), id === me() ? " (you)" : "",
          first === id ? h("span", { class: "first-badge", title: "first finisher" }, " ★") : null),
        cell ? h("span", { class: "tile-score", title: "score for this deal" }, signed(cell.score)) : null,
        cell?.bonus ? h("span", { class: "bonus", title: "race bonus" }, `★${cell.bonus}`) : null,
        h("span", { class: "tile-home" }, `${board.home}/${total} home · ${board.moves} move${board.moves === 1 ? "" : "s"}`),
        h("span", { class: "tile-status" }, statusText(board.status, false, true))),
      h("div", { class: "board-host mini-host past-board" }, renderBoard(board, { mini: true })),
      h("p", { class: "past-rest" },
        h("span", {}, h("b", {}, `Stock (${stock.length}): `), cardList(stock)), " ",
        h("span", {}, h("b", {}, `Waste (${waste.length}): `), cardList(waste))),
      h("details", { class: "past-log", open: true },
        h("summary", {}, `Move log (${loaded ? steps.length : past.summary?.[id]?.logged ?? "…"})`, " ",
          !loaded
            ? h("span", { class: "checking" }, "loading…")
            : !check
            ? h("span", { class: "checking" }, "checking…")
            : check.replayed
              ? h("span", { class: "ok", title: "followed from the seed's layout, the moves end on this board" }, "✓ replays to this board")
              : h("span", { class: "bad", title: check.error || "" }, `✗ not replayed${check.error ? `: ${check.error}` : ""}`)),
        steps.length
          ? h("ol", { class: "log", tabindex: 0, "aria-label": `${nameOf(id)}'s moves in deal ${pick}` }, steps.map((step, i) =>
              h("li", { dataset: { kind: step.move.kind, index: String(i) } },
                h("span", { class: "t" }, clock(step.t)),
                h("span", { class: "mv" }, cardsInText(step.text)))))
          : h("p", { class: "note" }, loaded ? "No moves." : "Loading the move log…")));
  });
  replaceChildren($("past-body"), seedLine, proofLine, legend, h("div", { class: "past-players" }, cards));
}
