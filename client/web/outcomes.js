// Keeping a board view from the outcomes of its moves (docs/protocol.md, "Applying
// an outcome" and "The digest"). A `moved` reply and a spectator's `progress` carry
// the engine's OUTCOME of the move and a digest of the board after it, not the
// board: the page moves the cards where the move's kind says they go, takes what it
// could not know (the card turned up, the waste beneath, the flags) from the
// outcome, and checks the view it so gets against the digest. Nothing here is a
// rule of play. Pure: no DOM, no socket, so a test can hold it to the Python
// reference (protocol/outcomes.py) card for card.

/** An outcome that does not fit the view it is applied to: the view is not the
 *  one the server told it against, and only a snapshot can say which it is. */
export class OutcomeMismatch extends Error {
  constructor(message) {
    super(message);
    this.name = "OutcomeMismatch";
  }
}

// The view's fields an outcome always carries, and those it carries when the
// move changed them (replaced whole).
const SCALARS = ["status", "passes", "moves", "home", "can_undo", "can_auto_complete", "stock", "waste"];
const REPLACED = ["foundations", "waste_cards", "stock_cards"];

function pile(tableau, p) {
  if (!Number.isInteger(p) || p < 0 || p >= tableau.length) {
    throw new OutcomeMismatch(`the outcome names pile ${p}, which the view has not`);
  }
  return tableau[p];
}

function take(from, n) {
  if (n > from.up.length) throw new OutcomeMismatch(`the outcome takes ${n} card(s) from a pile showing ${from.up.length}`);
  return from.up.splice(from.up.length - n, n);
}

/**
 * The board view after the move `outcome` tells, step by step as docs/protocol.md
 * says; `view` is left as it was (a new object, so a redraw can glide from the old
 * one). `logged`, when the view has it, counts the move. Throws OutcomeMismatch
 * for an outcome that cannot apply to `view`.
 */
export function applyOutcome(view, outcome) {
  const next = { ...view, tableau: view.tableau.map((p) => ({ down: p.down, up: p.up.slice() })) };
  const tableau = next.tableau;
  const move = outcome.move;
  const cards = outcome.cards;
  switch (move.kind) {
    case "waste_tableau":
    case "foundation_tableau":
      pile(tableau, move.to).up.push(cards[0]);
      break;
    case "tableau_foundation":
      take(pile(tableau, move.from), 1);
      break;
    case "tableau_tableau": {
      const moved = take(pile(tableau, move.from), cards.length);
      pile(tableau, move.to).up.push(...moved);
      break;
    }
    case "auto_complete":
      next.tableau = tableau.map(() => ({ down: 0, up: [] }));
      break;
    case "undo": {
      const undid = outcome.undid;
      if (!undid) throw new OutcomeMismatch("an undo's outcome names no move it took back");
      if (undid.kind === "waste_tableau" || undid.kind === "foundation_tableau") take(pile(tableau, undid.to), 1);
      else if (undid.kind === "tableau_foundation") pile(tableau, undid.from).up.push(cards[0]);
      else if (undid.kind === "tableau_tableau") {
        const moved = take(pile(tableau, undid.to), cards.length);
        pile(tableau, undid.from).up.push(...moved);
      }
      break;
    }
    default:
      break; // draw, recycle, waste_foundation, resign: the tableau is unchanged
  }
  if (outcome.turned !== null && outcome.turned !== undefined) {
    const p = pile(next.tableau, move.from);
    if (p.up.length || !p.down) throw new OutcomeMismatch(`${outcome.turned} turned up on a pile that was not left face down`);
    p.down -= 1;
    p.up = [outcome.turned];
  }
  for (const key of SCALARS) next[key] = outcome[key];
  for (const key of REPLACED) if (key in outcome) next[key] = outcome[key].slice();
  if ("logged" in view) next.logged = view.logged + 1;
  return next;
}

const flag = (value) => (value ? "1" : "0");

/** The text a view's digest is taken of: 15 fields in a fixed order, `|` between. */
export function canonicalText(view) {
  return [
    view.variant,
    String(view.draw),
    String(view.pass_limit),
    String(view.passes),
    String(view.moves),
    String(view.home),
    view.status,
    flag(view.can_undo),
    flag(view.can_auto_complete),
    view.foundations.map((c) => c || "-").join(","),
    view.tableau.map((p) => `${p.down}:${p.up.join(",")}`).join("/"),
    String(view.stock),
    String(view.waste),
    view.waste_cards.join(","),
    (view.stock_cards || []).join(","),
  ].join("|");
}

// CRC-32 as zlib's (reflected polynomial 0xEDB88320, start and final XOR all ones).
const TABLE = new Uint32Array(256);
for (let n = 0; n < 256; n += 1) {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  TABLE[n] = c >>> 0;
}

/** CRC-32 of an ASCII text, as 8 lower-case hex digits ("123456789" → "cbf43926"). */
export function crc32(text) {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i += 1) crc = TABLE[(crc ^ text.charCodeAt(i)) & 0xff] ^ (crc >>> 8);
  return ((crc ^ 0xffffffff) >>> 0).toString(16).padStart(8, "0");
}

/** The digest of a board view: CRC-32 of its canonical text. */
export function viewDigest(view) {
  return crc32(canonicalText(view));
}

/**
 * `view` with the outcome of its next move applied and checked against `digest`;
 * null when the outcome does not fit or the view it gives is not the server's
 * (the page has lost track of that board: it takes a snapshot).
 */
export function followOutcome(view, outcome, digest) {
  if (!view || !outcome) return null;
  let next;
  try {
    next = applyOutcome(view, outcome);
  } catch {
    return null; // a step that cannot be done (or an outcome not as documented)
  }
  return viewDigest(next) === digest ? next : null;
}
