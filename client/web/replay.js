// Past deals, checked in the browser and told in words. The server's revealed deal
// carries, for every logged move, the engine's own account of what it did (its
// `result`: cards moved, card turned, pass started, undone), so this module knows no
// rules of play: it only words those results ("7♥ waste → pile 3").
//
// What it does check itself is what a commitment is for: that the revealed seed is
// the one committed to when the deal started, and that the layout the seed deals
// (docs/rules.md §2, written out here as there) is the one that was played. For
// that it follows each logged move's result from the seed's layout, card by card
// (the cards the engine says moved must be where the move says they came from),
// and the board it ends on must be the one the server revealed. It checks that the
// account is consistent, not that the moves were legal: that is the engine's job.
//
// SHA-256 is `crypto.subtle` where the page is a secure context (https, localhost),
// and the JavaScript below otherwise: a room served over plain http on a LAN must
// be checkable too.

import { RANKS, SUITS, SUIT_SYMBOL } from "./cards.js";

// ---------------------------------------------------------------------------
// SHA-256 (FIPS 180-4)

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/**
 * SHA-256 of `bytes` (a Uint8Array): 32 bytes, written out for pages that are not a
 * secure context (`crypto.subtle` is missing there). tests/test_web.py pins it with
 * the FIPS 180-2 test vectors and checks it against `crypto.subtle`.
 */
export function sha256(bytes) {
  const n = bytes.length;
  const total = Math.ceil((n + 9) / 64) * 64;
  const msg = new Uint8Array(total);
  msg.set(bytes);
  msg[n] = 0x80;
  const view = new DataView(msg.buffer);
  view.setUint32(total - 8, Math.floor(n / 0x20000000)); // bit length, high word
  view.setUint32(total - 4, (n * 8) >>> 0);
  const H = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const W = new Uint32Array(64);
  const rotr = (x, r) => (x >>> r) | (x << (32 - r));
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i += 1) W[i] = view.getUint32(off + i * 4);
    for (let i = 16; i < 64; i += 1) {
      const a = W[i - 15];
      const b = W[i - 2];
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      W[i] = (W[i - 16] + s0 + W[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, h] = H;
    for (let i = 0; i < 64; i += 1) {
      const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + W[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    H[0] += a; H[1] += b; H[2] += c; H[3] += d; H[4] += e; H[5] += f; H[6] += g; H[7] += h;
  }
  const out = new Uint8Array(32);
  const ov = new DataView(out.buffer);
  H.forEach((word, i) => ov.setUint32(i * 4, word));
  return out;
}

const hex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
const utf8 = (text) => new TextEncoder().encode(text);

/** Whether this page hashes with `crypto.subtle` (a secure context that has it). */
export function usesSubtle() {
  return Boolean(globalThis.isSecureContext && globalThis.crypto?.subtle);
}

/** SHA-256 of `bytes`: a promise of 32 bytes, from `crypto.subtle` when there is one. */
export async function digest(bytes) {
  if (usesSubtle()) return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return sha256(bytes);
}

/** The commitment a seed makes: hex(SHA-256("klondike-race/seed/v1:" + seed)). */
export async function commitmentOf(seed) {
  return hex(await digest(utf8(`klondike-race/seed/v1:${seed}`)));
}

/** Whether `seed` is the one `commitment` promised (case and spaces of the hash ignored). */
export async function seedMatches(seed, commitment) {
  if (seed === undefined || seed === null || !commitment) return false;
  return (await commitmentOf(String(seed))) === String(commitment).trim().toLowerCase();
}

// ---------------------------------------------------------------------------
// The deal (docs/rules.md §2)

const cardCode = (k) => RANKS[k % 13] + SUITS[Math.floor(k / 13) % 4];

/** The random words of a seed, 64-bit BigInts from SHA-256(S ‖ i) block after block:
 * `next()` promises the next one. */
function words(seed) {
  const s = utf8(seed);
  const buf = new Uint8Array(s.length + 8);
  buf.set(s);
  const counter = new DataView(buf.buffer, s.length, 8);
  let block = 0n;
  let have = [];
  return async () => {
    if (!have.length) {
      counter.setBigUint64(0, block);
      block += 1n;
      const out = new DataView((await digest(buf)).buffer);
      have = [0, 1, 2, 3].map((w) => out.getBigUint64(w * 8));
    }
    return have.shift();
  };
}

/**
 * The layout `seed` deals: `piles` bottom card first, `stock` in draw order.
 * The same for Classic and Thoughtful; Double uses two packs and nine piles.
 */
export async function dealLayout(seed, variant = "classic") {
  const packs = variant === "double" ? 2 : 1;
  const n = 52 * packs;
  const pack = Array.from({ length: n }, (_, k) => k % 52);
  const next = words(seed);
  const two64 = 1n << 64n;
  for (let i = n - 1; i >= 1; i -= 1) {
    const b = BigInt(i + 1);
    const limit = two64 - (two64 % b);
    let w = await next();
    while (w >= limit) w = await next();
    const j = Number(w % b);
    [pack[i], pack[j]] = [pack[j], pack[i]];
  }
  const piles = packs === 2 ? 9 : 7;
  const tableau = Array.from({ length: piles }, () => []);
  let at = 0;
  for (let r = 0; r < piles; r += 1) {
    for (let p = r; p < piles; p += 1) tableau[p].push(cardCode(pack[at++]));
  }
  return { piles: tableau, stock: pack.slice(at).map(cardCode) };
}

// ---------------------------------------------------------------------------
// Following a log's results from the seed's layout

/** "7♥" */
export function cardText(code) {
  return `${code[0] === "T" ? "10" : code[0]}${SUIT_SYMBOL[code[1]]}`;
}

const value = (code) => RANKS.indexOf(code[0]) + 1;
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Where the cards are, moved only as the engine's results say: no rule of play is
 * checked here, only that each card the engine names is where the move takes it
 * from. A mismatch throws, saying where.
 */
class Follow {
  constructor(layout, variant) {
    this.packs = variant === "double" ? 2 : 1;
    this.tableau = layout.piles.map((p) => p.slice());
    this.down = this.tableau.map((p) => (variant === "thoughtful" ? 0 : Math.max(0, p.length - 1)));
    this.stock = layout.stock.slice().reverse(); // the next card to draw last
    this.waste = [];
    this.foundations = new Array(4 * this.packs).fill(0); // cards on each
    this.before = null; // the cards before the last move, for an undo to go back to
  }

  fail(why) {
    throw new Error(why);
  }

  state() {
    return {
      tableau: this.tableau.map((p) => p.slice()),
      down: this.down.slice(),
      stock: this.stock.slice(),
      waste: this.waste.slice(),
      foundations: this.foundations.slice(),
    };
  }

  pile(p) {
    const pile = this.tableau[p];
    if (!pile) this.fail(`no pile ${p + 1}`);
    return pile;
  }

  take(from, card, where) {
    if (from[from.length - 1] !== card) this.fail(`${card} is not on top of ${where}`);
    from.pop();
  }

  /** A card goes home: onto the foundation of its suit that shows the card below it
   * (the first such, as the engine picks between Double's two). */
  home(card) {
    const suit = SUITS.indexOf(card[1]);
    for (let f = suit * this.packs; f < (suit + 1) * this.packs; f += 1) {
      if (this.foundations[f] === value(card) - 1) {
        this.foundations[f] += 1;
        return;
      }
    }
    this.fail(`no foundation shows the card below ${card}`);
  }

  turn(p, turned) {
    if (!turned) return;
    const d = this.down[p];
    if (!d || this.tableau[p].length !== d || this.tableau[p][d - 1] !== turned) {
      this.fail(`${turned} was not the card to turn up on pile ${p + 1}`);
    }
    this.down[p] = d - 1;
  }

  /** Follow one logged move's result; `last` is the result of the move before it. */
  apply(move, result, last) {
    const cards = result.cards || [];
    if (result.undone) {
      if (!this.before || !last || !same(cards, last.cards || [])) this.fail("an undo of nothing");
      Object.assign(this, this.before);
      this.before = null;
      return;
    }
    const before = this.state();
    switch (move.kind) {
      case "draw":
        if (!cards.length) this.fail("a draw of no card");
        for (const c of cards) {
          this.take(this.stock, c, "the stock");
          this.waste.push(c);
        }
        break;
      case "recycle":
        if (this.stock.length) this.fail("a recycle with cards in the stock");
        this.stock = this.waste.reverse();
        this.waste = [];
        break;
      case "waste_tableau":
        this.take(this.waste, cards[0], "the waste");
        this.pile(move.to).push(cards[0]);
        break;
      case "waste_foundation":
        this.take(this.waste, cards[0], "the waste");
        this.home(cards[0]);
        break;
      case "tableau_foundation":
        this.take(this.pile(move.from), cards[0], `pile ${move.from + 1}`);
        this.home(cards[0]);
        this.turn(move.from, result.turned);
        break;
      case "tableau_tableau": {
        const src = this.pile(move.from);
        const dst = this.pile(move.to);
        if (cards.length !== move.count || !same(src.slice(src.length - cards.length), cards)) {
          this.fail(`${cards.join(" ")} are not on top of pile ${move.from + 1}`);
        }
        dst.push(...src.splice(src.length - cards.length));
        this.turn(move.from, result.turned);
        break;
      }
      case "foundation_tableau": {
        const f = move.from;
        const top = this.foundations[f];
        if (!top || RANKS[top - 1] + SUITS[Math.floor(f / this.packs)] !== cards[0]) {
          this.fail(`${cards[0]} is not on top of foundation ${f + 1}`);
        }
        this.foundations[f] -= 1;
        this.pile(move.to).push(cards[0]);
        break;
      }
      case "auto_complete":
        for (const c of cards) {
          const p = this.tableau.findIndex((pile, i) => pile.length > this.down[i] && pile[pile.length - 1] === c);
          if (p < 0) this.fail(`${c} is on top of no pile`);
          this.tableau[p].pop();
          this.home(c);
        }
        break;
      case "resign":
        break;
      default:
        this.fail(`unknown move ${move.kind}`);
    }
    this.before = before;
  }

  /** The top card of each foundation (null when empty). */
  tops() {
    return this.foundations.map((n, f) => (n ? RANKS[n - 1] + SUITS[Math.floor(f / this.packs)] : null));
  }

  /** Whether every card is home. */
  allHome() {
    return this.foundations.every((n) => n === 13);
  }

  /** The cards as a board view board.js draws (face-down cards as backs). */
  view(variant, draw, status) {
    const home = this.foundations.reduce((a, n) => a + n, 0);
    return {
      variant,
      draw,
      status,
      home,
      foundations: this.tops(),
      tableau: this.tableau.map((p, i) => ({ down: this.down[i], up: p.slice(this.down[i]) })),
      stock: this.stock.length,
      waste: this.waste.length,
      waste_cards: this.waste.slice(),
      stock_cards: variant === "thoughtful" ? this.stock.slice().reverse() : undefined,
    };
  }

  /** Whether the cards are where the server's revealed board has them. */
  matches(board) {
    const foundations = this.tops();
    return (
      board.tableau.length === this.tableau.length &&
      board.tableau.every((p, i) => p.down === this.down[i] && same(p.cards || [], this.tableau[i])) &&
      same(board.stock_cards || [], this.stock.slice().reverse()) &&
      same(board.waste_cards || [], this.waste) &&
      same(board.foundations, foundations)
    );
  }
}

/**
 * A line followed step by step from the layout `seed` deals: the board view
 * (board.js's shape) before any move and after each, moved only as each move's
 * `result` says (a revealed proof's `moves` and `results`, or a log's entries).
 *   line: [{move, result}], rules: {variant, draw}
 * Promises {boards: [view × (line.length + 1)], won}: `won` only when the results
 * followed end with every card home and the engine's last result says won. A
 * result that does not fit the cards throws, saying where.
 */
export async function followLine(seed, line, rules = {}) {
  const variant = rules.variant || "classic";
  const draw = rules.draw || 1;
  const follow = new Follow(await dealLayout(String(seed), variant), variant);
  const boards = [follow.view(variant, draw, "playing")];
  line.forEach((step, i) => {
    if (!step.result) follow.fail(`move ${i + 1} has no result`);
    follow.apply(step.move, step.result, line[i - 1]?.result);
    boards.push(follow.view(variant, draw, step.result.status || "playing"));
  });
  const last = line[line.length - 1]?.result;
  return { boards, won: Boolean(last && last.status === "won" && follow.allHome()) };
}

// ---------------------------------------------------------------------------
// Telling a log

const where = (move) => {
  switch (move.kind) {
    case "waste_tableau": return ["waste", `pile ${move.to + 1}`];
    case "waste_foundation": return ["waste", "foundation"];
    case "tableau_foundation": return [`pile ${move.from + 1}`, "foundation"];
    case "tableau_tableau": return [`pile ${move.from + 1}`, `pile ${move.to + 1}`];
    case "foundation_tableau": return [`foundation ${move.from + 1}`, `pile ${move.to + 1}`];
    default: return null;
  }
};

function cardsText(cards) {
  if (cards.length <= 3) return cards.map(cardText).join(" ");
  return `${cardText(cards[0])} … ${cardText(cards[cards.length - 1])} (${cards.length} cards)`;
}

/** A logged move in words, without knowing its cards: kind, from, to, count. */
export function plainText(move) {
  const w = where(move);
  if (w) {
    const n = move.kind === "tableau_tableau" && move.count > 1 ? ` (${move.count} cards)` : "";
    return `${w[0]} → ${w[1]}${n}`;
  }
  return { draw: "draw", recycle: "recycle the waste", undo: "undo", resign: "resigned", auto_complete: "auto-complete" }[move.kind]
    || move.kind.replaceAll("_", " ");
}

/**
 * A logged move in words, from its result. An undo takes back the move before it
 * (`previous`), so it is told as that move the other way round.
 */
export function moveText(move, result, previous = null) {
  if (!result) return plainText(move);
  const cards = result.cards || [];
  let text;
  const w = result.undone && previous ? where(previous) : null;
  if (result.undone) {
    text = w ? `undo: ${cardsText(cards)} ${w[1]} → ${w[0]}` : `undo: ${cardsText(cards)}`;
  } else if (move.kind === "draw") {
    text = `draw ${cardsText(cards)}`;
  } else if (move.kind === "recycle") {
    text = `recycle the waste (pass ${result.pass_started})`;
  } else if (move.kind === "auto_complete") {
    text = `auto-complete: ${cards.length} card${cards.length === 1 ? "" : "s"} home`;
  } else if (move.kind === "resign") {
    text = "resigned";
  } else {
    const at = where(move);
    text = at ? `${cardsText(cards)} ${at[0]} → ${at[1]}` : plainText(move);
  }
  if (result.turned) text += ` · turns up ${cardText(result.turned)}`;
  return text;
}

/** A player's log told in words: [{t, move, text}], each step from its result
 * (from kind/from/to/count only where an entry has none). */
export function tellLog(log) {
  const entries = log || [];
  return entries.map((e, i) => ({ t: e.t, move: e.move, text: moveText(e.move, e.result, entries[i - 1]?.move) }));
}

/**
 * A past deal checked: whether the seed matches its commitment, and per player
 * whether the results of their log, followed from the layout the seed deals, end on
 * the board the server revealed.
 *   past: {seed, commitment, boards: {id: REVEALED_BOARD}, logs: {id: [{t, move, result}]}}
 * Promises {seedOk, players: {id: {replayed: bool, error}}}; `error` says why not.
 */
export async function checkDeal(past) {
  const seedOk = await seedMatches(past.seed, past.commitment);
  const players = {};
  const boards = past.boards || {};
  const layouts = new Map(); // variant -> the seed's layout
  for (const [id, log] of Object.entries(past.logs || {})) {
    const entries = log || [];
    const board = boards[id];
    const why = !seedOk ? "seed does not match" : !board ? "no board" : entries.every((e) => e.result) ? null : "no results";
    if (why) {
      players[id] = { replayed: false, error: why };
      continue;
    }
    try {
      if (!layouts.has(board.variant)) layouts.set(board.variant, await dealLayout(past.seed, board.variant));
      const follow = new Follow(layouts.get(board.variant), board.variant);
      entries.forEach((e, i) => follow.apply(e.move, e.result, entries[i - 1]?.result));
      const ok = follow.matches(board);
      players[id] = { replayed: ok, error: ok ? null : "the moves end elsewhere" };
    } catch (err) {
      players[id] = { replayed: false, error: String(err.message || err) };
    }
  }
  return { seedOk, players };
}

/** Both at once: promises {seedOk, players: {id: {steps, replayed, error}}}. */
export async function explainDeal(past) {
  const { seedOk, players } = await checkDeal(past);
  for (const [id, log] of Object.entries(past.logs || {})) players[id] = { steps: tellLog(log), ...players[id] };
  return { seedOk, players };
}
