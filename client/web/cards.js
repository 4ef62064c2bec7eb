// Cards as the wire writes them ("QH": rank then suit) and the move a gesture means.
//
// Everything here is pure: given a board view (docs/protocol.md "Values", protocol/views.py)
// and what the player pointed at, it says which protocol move to send. The server
// decides whether it is legal; these functions never guess a hidden card.

export const RANKS = "A23456789TJQK";
export const SUITS = "CDHS";
const TEXT = "\uFE0E"; // text presentation: keep suit symbols out of emoji fonts
export const SUIT_SYMBOL = { C: "♣" + TEXT, D: "♦" + TEXT, H: "♥" + TEXT, S: "♠" + TEXT };
const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_NAME = {
  A: "Ace", T: "10", J: "Jack", Q: "Queen", K: "King",
};

export function parseCard(code) {
  const rank = code[0];
  const suit = code[1];
  return {
    code,
    rank,
    suit,
    value: RANKS.indexOf(rank) + 1, // 1 = ace … 13 = king
    red: suit === "D" || suit === "H",
    label: rank === "T" ? "10" : rank,
    symbol: SUIT_SYMBOL[suit],
  };
}

export function cardName(code) {
  const c = parseCard(code);
  return `${RANK_NAME[c.rank] || c.rank} of ${SUIT_NAME[c.suit]}`;
}

/** The suit a foundation holds: "CDHS"[f // packs]. */
export function foundationSuit(view, f) {
  const packs = view.foundations.length / 4;
  return SUITS[Math.floor(f / packs)];
}

/** Whether `code` may go on top of `top` (a card code or null for an empty pile). */
export function fitsTableau(code, top) {
  const c = parseCard(code);
  if (top === null || top === undefined) return c.value === 13;
  const t = parseCard(top);
  return t.red !== c.red && t.value === c.value + 1;
}

/** Index in `up` where the movable run on top of pile `p` starts. */
export function runStart(view, p) {
  const up = view.tableau[p].up;
  if (!up.length) return 0;
  let i = up.length - 1;
  while (i > 0 && fitsTableau(up[i], up[i - 1])) i -= 1;
  return i;
}

export function topCard(view, p) {
  const up = view.tableau[p].up;
  return up.length ? up[up.length - 1] : null;
}

/** The visible top of the waste, or null. */
export function wasteTop(view) {
  const w = view.waste_cards || [];
  return w.length ? w[w.length - 1] : null;
}

/**
 * The move that takes `source` onto `target`, or null when the gesture means
 * nothing (dropped back where it came from, a run to a foundation, …).
 *   source: {zone: "waste"} | {zone: "tableau", pile, index} | {zone: "foundation", index}
 *           (`index` in a tableau source counts into the pile's face-up cards, `up`)
 *   target: {zone: "tableau", pile} | {zone: "foundation", index}
 */
export function moveFor(view, source, target) {
  if (!source || !target) return null;
  if (target.zone === "tableau") {
    const to = target.pile;
    if (source.zone === "waste") return { kind: "waste_tableau", to };
    if (source.zone === "foundation") return { kind: "foundation_tableau", from: source.index, to };
    if (source.zone === "tableau") {
      if (source.pile === to) return null;
      const count = view.tableau[source.pile].up.length - source.index;
      if (count < 1) return null;
      return { kind: "tableau_tableau", from: source.pile, to, count };
    }
  }
  if (target.zone === "foundation") {
    if (source.zone === "waste") return { kind: "waste_foundation" };
    if (source.zone === "tableau") {
      const count = view.tableau[source.pile].up.length - source.index;
      return count === 1 ? { kind: "tableau_foundation", from: source.pile } : null;
    }
  }
  return null;
}

/** The move that sends the card at `source` home (double-click, H key), or null. */
export function homeMove(view, source) {
  if (!source) return null;
  if (source.zone === "waste") return wasteTop(view) ? { kind: "waste_foundation" } : null;
  if (source.zone === "tableau") {
    const up = view.tableau[source.pile].up;
    if (!up.length || source.index !== up.length - 1) return null;
    return { kind: "tableau_foundation", from: source.pile };
  }
  return null;
}

/** Clicking the stock: draw while it has cards, else turn the waste over. */
export function stockMove(view) {
  return view.stock > 0 ? { kind: "draw" } : { kind: "recycle" };
}

/**
 * For the keyboard: from pile `p` onto pile `q`, the part of the run on top of
 * `p` that fits `q` (the server still judges it). Falls back to the whole run.
 */
export function fittingSource(view, p, q, preferIndex = null) {
  const up = view.tableau[p].up;
  if (!up.length) return null;
  const target = topCard(view, q);
  const start = runStart(view, p);
  if (preferIndex !== null && preferIndex > start) {
    return { zone: "tableau", pile: p, index: preferIndex };
  }
  for (let i = start; i < up.length; i += 1) {
    if (fitsTableau(up[i], target)) return { zone: "tableau", pile: p, index: i };
  }
  return { zone: "tableau", pile: p, index: preferIndex ?? start };
}

/** A readable one-liner of a move, for the log and aria-live messages. */
export function describeMove(move) {
  switch (move.kind) {
    case "tableau_tableau":
      return `${move.count} card${move.count === 1 ? "" : "s"} from pile ${move.from + 1} to pile ${move.to + 1}`;
    case "waste_tableau":
      return `waste to pile ${move.to + 1}`;
    case "tableau_foundation":
      return `pile ${move.from + 1} home`;
    case "foundation_tableau":
      return `foundation ${move.from + 1} to pile ${move.to + 1}`;
    case "waste_foundation":
      return "waste home";
    default:
      return move.kind.replace("_", " ");
  }
}
