// Drawing boards: a player's own (interactive: focusable, with the data-zone hooks
// gestures.js reads), the spectator wall's small ones, and the revealed boards of
// past deals, whose face-down cards are shown striped. Drawing only: turning
// clicks, drags and keys into moves is gestures.js's job.

import { SUIT_SYMBOL, cardName, foundationSuit, parseCard } from "./cards.js";
import { h } from "./dom.js";

const DOWN_STEP = 0.17; // vertical offset of a face-down card, in card widths
const UP_STEP = 0.34; // … of a face-up card
const MAX_FAN = 4.4; // the top card of a pile starts no lower than this
const CARD_RATIO = 1.4;

/** A card face (or back when `code` is null). */
export function cardEl(code, attrs = {}) {
  if (!code) return h("div", { class: "card back", "aria-hidden": "true", ...attrs });
  const c = parseCard(code);
  const court = c.value > 10;
  const cls = `card face ${c.red ? "red" : "black"}${court ? " court" : ""} ${attrs.class || ""}`;
  return h(
    "div",
    { ...attrs, class: cls.trim(), dataset: { card: code, ...(attrs.dataset || {}) } },
    h("span", { class: "corner tl", "aria-hidden": "true" },
      h("span", { class: "rank" }, c.label), h("span", { class: "suit" }, c.symbol)),
    h("span", { class: "pip", "aria-hidden": "true" }, court ? c.label : c.symbol),
    h("span", { class: "corner br", "aria-hidden": "true" },
      h("span", { class: "rank" }, c.label), h("span", { class: "suit" }, c.symbol)),
  );
}

function at(y) {
  return `calc(var(--cw) * ${y.toFixed(3)})`;
}

/** Normalise a revealed pile ({down, cards}) to the view shape, keeping what was hidden. */
function pileOf(pile) {
  if (pile.cards) {
    return { down: pile.down, up: pile.cards.slice(pile.down), hidden: pile.cards.slice(0, pile.down) };
  }
  return { down: pile.down, up: pile.up, hidden: null };
}

function isSelected(sel, zone, pile, index) {
  if (!sel || sel.zone !== zone) return false;
  if (zone === "tableau") return sel.pile === pile && index >= sel.index;
  if (zone === "foundation") return sel.index === index;
  return true;
}

/**
 * The board element for a view.
 *   opts.interactive  focusable controls and data-zone hooks for the controller
 *   opts.selection    the selected source (highlighted)
 *   opts.mini         small, for the spectator wall
 *   opts.own          your own board: once it is finished it says so, dimmed
 *   opts.ended        … and the deal is over (for a board still "playing")
 *   opts.paused       … or, why it takes no moves now: a node (Reconnecting…)
 */
export function renderBoard(view, opts = {}) {
  const { interactive = false, selection = null, mini = false, own = false, ended = false, paused = null } = opts;
  const piles = view.tableau.length;
  const nf = view.foundations.length;
  const cols = Math.max(piles, nf + 2.6); // the top row: stock, a fanned waste, foundations
  const tab = interactive ? 0 : null;

  // Stock: a back with its count (Thoughtful shows the next card face up). A
  // revealed board lists the whole stock too, but it was face down: keep the back.
  const revealed = view.tableau.some((p) => p.cards);
  const stockCards = revealed && view.variant !== "thoughtful" ? null : view.stock_cards || null;
  const stockTop = stockCards && stockCards.length ? stockCards[0] : null;
  const stockLabel =
    view.stock > 0 ? `Stock, ${view.stock} cards: draw` : view.waste > 0 ? "Stock empty: recycle the waste" : "Stock empty";
  const stock = h(
    "div",
    {
      class: `slot stock${view.stock ? "" : " empty"}`,
      dataset: interactive ? { zone: "stock", focusKey: "stock" } : {},
      tabindex: tab,
      role: interactive ? "button" : null,
      "aria-label": stockLabel,
      title: interactive ? "Draw (D)" : null,
    },
    view.stock > 0 ? (stockTop ? cardEl(stockTop) : cardEl(null)) : h("span", { class: "recycle", "aria-hidden": "true" }, view.waste > 0 ? "↻" : "·"),
    h("span", { class: "count", "aria-hidden": "true" }, String(view.stock)),
  );

  // Waste: the visible top cards, fanned; only the top one is playable.
  const shown = (view.waste_cards || []).slice(-Math.max(1, view.draw || 1));
  const fan = view.draw === 3 ? 0.3 : 0;
  const wasteSel = isSelected(selection, "waste");
  const waste = h(
    "div",
    { class: "slot waste", dataset: { fan: String(shown.length) } },
    shown.map((code, i) => {
      const top = i === shown.length - 1;
      return cardEl(code, {
        style: { left: at(i * fan) },
        class: top && wasteSel ? "selected" : "",
        dataset: top && interactive ? { zone: "waste", focusKey: "waste", drag: "1" } : {},
        tabindex: top ? tab : null,
        role: top && interactive ? "button" : null,
        "aria-label": top ? `Waste (${view.waste} cards): ${cardName(code)}` : null,
      });
    }),
  );

  const foundations = view.foundations.map((code, f) => {
    const suit = foundationSuit(view, f);
    const sel = isSelected(selection, "foundation", null, f);
    return h(
      "div",
      {
        class: `slot foundation${suit === "D" || suit === "H" ? " red" : ""}`,
        dataset: interactive ? { zone: "foundation", index: String(f), focusKey: `f${f}` } : { index: String(f) },
        tabindex: tab,
        role: interactive ? "button" : null,
        "aria-label": `Foundation ${f + 1} (${suit}): ${code ? cardName(code) : "empty"}`,
      },
      h("span", { class: "placeholder", "aria-hidden": "true" }, SUIT_SYMBOL[suit]),
      code ? cardEl(code, { class: sel ? "selected" : "", dataset: interactive ? { drag: "1" } : {} }) : null,
    );
  });

  const tableau = view.tableau.map((raw, p) => {
    const pile = pileOf(raw);
    const upCount = pile.up.length;
    let upStep = UP_STEP * (mini ? 0.85 : 1);
    let downStep = DOWN_STEP * (mini ? 0.8 : 1);
    if (pile.hidden) {
      // Revealed: the cards that stayed face down are shown too, fanned like the
      // rest so their corners read, the whole pile squeezed to fit.
      const n = pile.down + upCount;
      upStep = n > 1 ? Math.max(0.18, Math.min(upStep, MAX_FAN / (n - 1))) : upStep;
      downStep = upStep;
    }
    const natural = pile.down * downStep + Math.max(0, upCount - 1) * upStep;
    if (natural > MAX_FAN && upCount > 1) {
      upStep = Math.max(0.18, (MAX_FAN - pile.down * downStep) / (upCount - 1));
    }
    const cards = [];
    let y = 0;
    for (let i = 0; i < pile.down; i += 1) {
      const hidden = pile.hidden ? pile.hidden[i] : null;
      cards.push(
        hidden
          ? cardEl(hidden, { class: "was-down", style: { top: at(y) }, title: "still face down when the deal ended" })
          : cardEl(null, { style: { top: at(y) }, dataset: interactive ? { zone: "tableau", pile: String(p), index: "-1" } : {} }),
      );
      y += downStep;
    }
    pile.up.forEach((code, i) => {
      const sel = isSelected(selection, "tableau", p, i);
      cards.push(
        cardEl(code, {
          style: { top: at(y) },
          class: sel ? "selected" : "",
          dataset: interactive
            ? { zone: "tableau", pile: String(p), index: String(i), focusKey: `t${p}-${i}`, drag: "1" }
            : {},
          tabindex: tab,
          role: interactive ? "button" : null,
          "aria-label": `${cardName(code)}, pile ${p + 1}`,
        }),
      );
      if (i < upCount - 1) y += upStep;
    });
    const height = (pile.down || upCount ? y : 0) + CARD_RATIO;
    const empty = !pile.down && !upCount;
    return h(
      "div",
      {
        class: `pile${empty ? " empty" : ""}`,
        style: { "--pile-h": height.toFixed(3) },
        dataset: interactive ? { zone: "pile", pile: String(p), ...(empty ? { focusKey: `p${p}` } : {}) } : {},
        tabindex: empty ? tab : null,
        role: empty && interactive ? "button" : null,
        "aria-label": empty ? `Pile ${p + 1}: empty` : null,
      },
      interactive ? h("span", { class: "pile-no", "aria-hidden": "true" }, String(p + 1)) : null,
      cards,
    );
  });

  const finished = own ? (view.status === "playing" && paused) || finishedText(view.status, ended) : null;
  return h(
    "div",
    {
      class: `board${mini ? " mini" : ""} variant-${view.variant} status-${view.status}${finished ? " finished" : ""}`,
      style: { "--cols": String(cols), "--piles": String(piles), "--nf": String(nf) },
    },
    h("div", { class: "board-top" }, h("div", { class: "stock-waste" }, stock, waste), h("div", { class: "foundations" }, foundations)),
    h("div", { class: "tableau" }, tableau),
    finished ? h("div", { class: "finished-label", role: "status" }, finished) : null,
  );
}

/** What a board no longer in play says over itself (null while it is in play). */
function finishedText(status, ended) {
  if (status === "won") return "✓ Won";
  if (status === "resigned") return "Resigned";
  if (status === "dead") return "Stuck: no legal move left";
  return ended ? "Deal over" : null;
}
