// Past deals, checked in the browser: the seed against its commitment, the layout
// the seed deals (docs/rules.md §2), and every player's move log replayed from that
// layout, so each logged move can be told in words ("7♥ waste → pile 3") and the
// replay's end compared with the board the server revealed.
//
// Everything here is pure and synchronous. SHA-256 is written out because
// `crypto.subtle` exists only in secure contexts, and a room served over plain
// http on a LAN must be checkable too.

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

/** SHA-256 of `bytes` (a Uint8Array): 32 bytes. */
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

/** The commitment a seed makes: hex(SHA-256("klondike-race/seed/v1:" + seed)). */
export function commitmentOf(seed) {
  return hex(sha256(utf8(`klondike-race/seed/v1:${seed}`)));
}

/** Whether `seed` is the one `commitment` promised (case and spaces of the hash ignored). */
export function seedMatches(seed, commitment) {
  if (seed === undefined || seed === null || !commitment) return false;
  return commitmentOf(String(seed)) === String(commitment).trim().toLowerCase();
}

// ---------------------------------------------------------------------------
// The deal (docs/rules.md §2)

const cardCode = (k) => RANKS[k % 13] + SUITS[Math.floor(k / 13) % 4];

/** The random words of a seed: 64-bit BigInts, SHA-256(S ‖ i) block after block. */
function* words(seed) {
  const s = utf8(seed);
  const buf = new Uint8Array(s.length + 8);
  buf.set(s);
  const counter = new DataView(buf.buffer, s.length, 8);
  for (let i = 0n; ; i += 1n) {
    counter.setBigUint64(0, i);
    const block = new DataView(sha256(buf).buffer);
    for (let w = 0; w < 4; w += 1) yield block.getBigUint64(w * 8);
  }
}

/**
 * The layout `seed` deals: `piles` bottom card first, `stock` in draw order.
 * The same for Classic and Thoughtful; Double uses two packs and nine piles.
 */
export function dealLayout(seed, variant = "classic") {
  const packs = variant === "double" ? 2 : 1;
  const n = 52 * packs;
  const pack = Array.from({ length: n }, (_, k) => k % 52);
  const next = words(seed);
  const two64 = 1n << 64n;
  for (let i = n - 1; i >= 1; i -= 1) {
    const b = BigInt(i + 1);
    const limit = two64 - (two64 % b);
    let w = next.next().value;
    while (w >= limit) w = next.next().value;
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
// Replaying a log

/** "7♥" */
export function cardText(code) {
  return `${code[0] === "T" ? "10" : code[0]}${SUIT_SYMBOL[code[1]]}`;
}

const value = (code) => RANKS.indexOf(code[0]) + 1;

class Replay {
  constructor(layout, { variant, draw }) {
    this.packs = variant === "double" ? 2 : 1;
    this.total = 52 * this.packs;
    this.draw = draw || 1;
    this.tableau = layout.piles.map((p) => p.slice());
    this.down = this.tableau.map((p) => (variant === "thoughtful" ? 0 : Math.max(0, p.length - 1)));
    this.stock = layout.stock.slice().reverse(); // the next card to draw last
    this.waste = [];
    this.foundations = new Array(4 * this.packs).fill(0); // cards on each
    this.home = 0;
    this.passes = 1;
    this.lastUndo = null; // how to take back the last move: {move, f, cards}
  }

  fail(why) {
    throw new Error(why);
  }

  pile(p) {
    const pile = this.tableau[p];
    if (!pile) this.fail(`no pile ${p}`);
    return pile;
  }

  homeOf(code) {
    const suit = SUITS.indexOf(code[1]);
    for (let f = suit * this.packs; f < (suit + 1) * this.packs; f += 1) {
      if (this.foundations[f] === value(code) - 1) return f;
    }
    return this.fail(`${code} fits no foundation`);
  }

  turnOver(p) {
    const d = this.down[p];
    if (d && this.tableau[p].length === d) {
      this.down[p] = d - 1;
      return this.tableau[p][d - 1];
    }
    return null;
  }

  wasteTop() {
    if (!this.waste.length) this.fail("the waste is empty");
    return this.waste[this.waste.length - 1];
  }

  /** Play one logged move; returns {cards, turned, text-ready facts}. */
  apply(move) {
    let undo = null;
    let cards = [];
    let turned = null;
    let pass = 0;
    switch (move.kind) {
      case "draw": {
        if (!this.stock.length) this.fail("the stock is empty");
        const k = Math.min(this.draw, this.stock.length);
        cards = this.stock.splice(this.stock.length - k, k).reverse();
        this.waste.push(...cards);
        break;
      }
      case "recycle":
        if (this.stock.length || !this.waste.length) this.fail("cannot recycle");
        this.stock = this.waste.reverse();
        this.waste = [];
        this.passes += 1;
        pass = this.passes;
        break;
      case "waste_tableau": {
        const c = this.wasteTop();
        this.pile(move.to).push(this.waste.pop());
        cards = [c];
        undo = { move };
        break;
      }
      case "waste_foundation": {
        const c = this.wasteTop();
        const f = this.homeOf(c);
        this.waste.pop();
        this.foundations[f] += 1;
        this.home += 1;
        cards = [c];
        undo = { move, f };
        break;
      }
      case "tableau_foundation": {
        const pile = this.pile(move.from);
        if (!pile.length) this.fail(`pile ${move.from} is empty`);
        const c = pile[pile.length - 1];
        const f = this.homeOf(c);
        pile.pop();
        this.foundations[f] += 1;
        this.home += 1;
        turned = this.turnOver(move.from);
        cards = [c];
        if (!turned) undo = { move, f };
        break;
      }
      case "tableau_tableau": {
        const src = this.pile(move.from);
        const dst = this.pile(move.to);
        const k = move.count;
        if (!(k >= 1 && k <= src.length - this.down[move.from])) this.fail("bad count");
        cards = src.splice(src.length - k, k);
        dst.push(...cards);
        turned = this.turnOver(move.from);
        if (!turned) undo = { move };
        break;
      }
      case "foundation_tableau": {
        const f = move.from;
        const top = this.foundations[f];
        if (!top) this.fail(`foundation ${f} is empty`);
        const c = RANKS[top - 1] + SUITS[Math.floor(f / this.packs)];
        this.foundations[f] -= 1;
        this.home -= 1;
        this.pile(move.to).push(c);
        cards = [c];
        undo = { move, f };
        break;
      }
      case "undo":
        return this.takeBack();
      case "resign":
        break;
      case "auto_complete":
        while (this.home < this.total) {
          const p = this.tableau.findIndex((pile) => {
            if (!pile.length) return false;
            const top = pile[pile.length - 1];
            const suit = SUITS.indexOf(top[1]);
            for (let f = suit * this.packs; f < (suit + 1) * this.packs; f += 1) {
              if (this.foundations[f] === value(top) - 1) return true;
            }
            return false;
          });
          if (p < 0) this.fail("auto-complete stuck");
          const c = this.tableau[p].pop();
          this.foundations[this.homeOf(c)] += 1;
          this.home += 1;
          cards.push(c);
        }
        break;
      default:
        this.fail(`unknown move ${move.kind}`);
    }
    this.lastUndo = undo ? { ...undo, cards } : null;
    return { cards, turned, pass };
  }

  takeBack() {
    const last = this.lastUndo;
    if (!last) this.fail("nothing to undo");
    const { move, f, cards } = last;
    switch (move.kind) {
      case "tableau_tableau": {
        const dst = this.tableau[move.to];
        this.tableau[move.from].push(...dst.splice(dst.length - move.count, move.count));
        break;
      }
      case "waste_tableau":
        this.waste.push(this.tableau[move.to].pop());
        break;
      case "waste_foundation":
      case "tableau_foundation":
        this.foundations[f] -= 1;
        this.home -= 1;
        if (move.kind === "waste_foundation") this.waste.push(cards[0]);
        else this.tableau[move.from].push(cards[0]);
        break;
      case "foundation_tableau":
        this.tableau[move.to].pop();
        this.foundations[f] += 1;
        this.home += 1;
        break;
      default:
        this.fail("cannot undo that");
    }
    this.lastUndo = null;
    return { cards, turned: null, pass: 0, undone: move };
  }

  /** Whether the replay ends where the server's revealed board says. */
  matches(board) {
    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
    const foundations = this.foundations.map((n, f) => (n ? RANKS[n - 1] + SUITS[Math.floor(f / this.packs)] : null));
    return (
      board.tableau.length === this.tableau.length &&
      board.tableau.every((p, i) => p.down === this.down[i] && same(p.cards || [], this.tableau[i])) &&
      same(board.stock_cards || [], this.stock.slice().reverse()) &&
      same(board.waste_cards || [], this.waste) &&
      same(board.foundations, foundations)
    );
  }
}

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

/** A logged move in words, given what the replay found it moved. */
function moveText(move, done) {
  const { cards, turned, pass, undone } = done;
  let text;
  if (undone) {
    const w = where(undone);
    text = `undo: ${cardsText(cards)} ${w[1]} → ${w[0]}`;
  } else if (move.kind === "draw") {
    text = `draw ${cardsText(cards)}`;
  } else if (move.kind === "recycle") {
    text = `recycle the waste (pass ${pass})`;
  } else if (move.kind === "auto_complete") {
    text = `auto-complete: ${cards.length} card${cards.length === 1 ? "" : "s"} home`;
  } else if (move.kind === "resign") {
    text = "resigned";
  } else {
    const w = where(move);
    text = w ? `${cardsText(cards)} ${w[0]} → ${w[1]}` : plainText(move);
  }
  if (turned) text += ` · turns up ${cardText(turned)}`;
  return text;
}

/**
 * Every player's log of a past deal, told in words.
 *   past: {seed, commitment, boards: {id: REVEALED_BOARD}, logs: {id: [{t, move}]}}
 * Returns {seedOk, players: {id: {steps: [{t, move, text}], replayed: bool, error}}}.
 * When the seed is missing or does not match, or a log does not replay, the steps
 * fall back to kind/from/to/count (`replayed` false) and `error` says why.
 */
export function explainDeal(past) {
  const seedOk = seedMatches(past.seed, past.commitment);
  const players = {};
  const boards = past.boards || {};
  for (const [id, log] of Object.entries(past.logs || {})) {
    const board = boards[id];
    const plain = () => (log || []).map((e) => ({ t: e.t, move: e.move, text: plainText(e.move) }));
    if (!seedOk || !board) {
      players[id] = { steps: plain(), replayed: false, error: seedOk ? "no board" : "seed does not match" };
      continue;
    }
    try {
      const game = new Replay(dealLayout(past.seed, board.variant), board);
      const steps = (log || []).map((e) => ({ t: e.t, move: e.move, text: moveText(e.move, game.apply(e.move)) }));
      const ok = game.matches(board);
      players[id] = ok ? { steps, replayed: true, error: null } : { steps: plain(), replayed: false, error: "the replay ends elsewhere" };
    } catch (err) {
      players[id] = { steps: plain(), replayed: false, error: String(err.message || err) };
    }
  }
  return { seedOk, players };
}
