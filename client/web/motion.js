// Motion on your own board: a move glides (FLIP: where each card was on screen
// before the redraw, where it is after, played from the one to the other), a card
// turned up flips, a new deal is dealt from the stock, and a won deal cascades off
// the foundations. `prefers-reduced-motion: reduce` turns every one of them off.
//
// Motion is only ever cosmetic, and never holds the state back: the board is
// redrawn from the new view at once (so what the page shows, and what tests read,
// is the view), and an animation only moves the new elements, by transforms, from
// where the old ones were. Nothing here decides anything about the game; it
// compares two views of the board (each the server's, or kept from the server's
// outcomes and checked by their digest: outcomes.js). A redraw first ends
// whatever is still in flight (`settle`), so animations never pile up.

const GLIDE_MS = 180;
const TURN_MS = 160;
const DEAL_MS = 220;
const DEAL_SPREAD_MS = 560; // the whole deal's stagger, however many cards
const CASCADE_MS = 1300;
const EASE = "cubic-bezier(.2, .7, .3, 1)";

const running = new Set(); // the board's animations in flight
let cascadeLayer = null;

/** True when the person asked for less motion (the OS or browser setting). */
export function reducedMotion() {
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

function track(animation) {
  running.add(animation);
  const done = () => running.delete(animation);
  animation.finished.then(done, done);
  return animation;
}

/** End everything in flight at once (a new view arrived, or the board went). */
export function settle() {
  for (const a of [...running]) a.cancel();
  running.clear();
  cascadeLayer?.remove();
  cascadeLayer = null;
}

/** Each face-up card of `host`'s board by a key (its code, and which copy of it). */
function cardsByKey(host) {
  const seen = new Map();
  const out = new Map();
  for (const el of host.querySelectorAll(".board .card[data-card]")) {
    const code = el.dataset.card;
    const n = seen.get(code) || 0;
    seen.set(code, n + 1);
    out.set(`${code}#${n}`, el);
  }
  return out;
}

/**
 * Where every face-up card of the board in `host` is on screen now (mid-flight
 * ones where they are seen, dragged ones where the drag ghost holds them), and the
 * stock: what `play` glides from. Null when motion is off or there is no board.
 */
export function measure(host) {
  if (reducedMotion() || !host.querySelector(".board")) return null;
  const rects = new Map();
  const ghosts = [...document.querySelectorAll(".drag-ghost .card")];
  const sources = [];
  for (const [key, el] of cardsByKey(host)) {
    rects.set(key, el.getBoundingClientRect());
    if (el.classList.contains("drag-source")) sources.push(key);
  }
  // The ghost's cards are clones of the drag sources, in the same order.
  sources.forEach((key, i) => {
    if (ghosts[i]) rects.set(key, ghosts[i].getBoundingClientRect());
  });
  const faceDown = new Set();
  host.querySelectorAll(".board .pile").forEach((pile, p) => {
    pile.querySelectorAll(".card.back").forEach((_, i) => faceDown.add(`${p}:${i}`));
  });
  const stock = host.querySelector(".board .slot.stock");
  return { rects, faceDown, stock: stock ? stock.getBoundingClientRect() : null };
}

function offset(from, to) {
  return `translate(${(from.left - to.left).toFixed(1)}px, ${(from.top - to.top).toFixed(1)}px)`;
}

/** Glide every card that moved since `before`; flip the ones just turned up. */
export function glide(host, before) {
  if (!before || reducedMotion()) return;
  for (const [key, el] of cardsByKey(host)) {
    const to = el.getBoundingClientRect();
    let from = before.rects.get(key);
    if (!from && el.closest(".slot.waste") && before.stock) from = before.stock; // just drawn
    if (from) {
      if (Math.abs(from.left - to.left) < 1 && Math.abs(from.top - to.top) < 1) continue;
      track(el.animate(
        [{ transform: offset(from, to), zIndex: 40 }, { transform: "none", zIndex: 40 }],
        { duration: GLIDE_MS, easing: EASE },
      ));
      continue;
    }
    // A tableau card that was face down here before: it turns over.
    const pile = el.closest(".pile");
    const index = pile ? [...pile.querySelectorAll(".card")].indexOf(el) : -1;
    if (pile && before.faceDown.has(`${pile.dataset.pile}:${index}`)) {
      track(el.animate([{ transform: "scaleX(.05)" }, { transform: "none" }], { duration: TURN_MS, easing: EASE }));
    }
  }
}

/** Deal the tableau visibly: each card flies from the stock, in dealing order. */
export function dealIn(host) {
  if (reducedMotion()) return;
  const stock = host.querySelector(".board .slot.stock");
  if (!stock) return;
  const from = stock.getBoundingClientRect();
  const piles = [...host.querySelectorAll(".board .tableau .pile")].map((p) => [...p.querySelectorAll(".card")]);
  // Klondike deals a row at a time: the first card of every pile, then the second...
  const order = [];
  const rows = Math.max(0, ...piles.map((cards) => cards.length));
  for (let r = 0; r < rows; r += 1) for (const cards of piles) if (cards[r]) order.push(cards[r]);
  const step = order.length ? Math.min(18, DEAL_SPREAD_MS / order.length) : 0;
  order.forEach((el, i) => {
    const to = el.getBoundingClientRect();
    track(el.animate(
      [{ transform: offset(from, to), zIndex: 40 }, { transform: "none", zIndex: 40 }],
      { duration: DEAL_MS, delay: i * step, easing: EASE, fill: "backwards" },
    ));
  });
}

/** A won deal: copies of the foundations' cards bounce off them across the felt. */
export function cascade(host) {
  if (reducedMotion()) return;
  const felt = host.getBoundingClientRect();
  const homes = [...host.querySelectorAll(".board .slot.foundation .card")];
  if (!homes.length) return;
  cascadeLayer?.remove();
  const layer = document.createElement("div");
  layer.className = "cascade";
  layer.setAttribute("aria-hidden", "true");
  document.body.appendChild(layer);
  cascadeLayer = layer;
  let left = 0;
  homes.forEach((card, f) => {
    const r = card.getBoundingClientRect();
    for (let k = 0; k < 3; k += 1) {
      const i = f * 3 + k;
      const clone = card.cloneNode(true);
      clone.removeAttribute("data-card");
      Object.assign(clone.style, { left: `${r.left}px`, top: `${r.top}px`, width: `${r.width}px`, height: `${r.height}px` });
      clone.style.setProperty("--cw", `${r.width}px`); // the card's insides are sized from it
      layer.appendChild(clone);
      const animation = track(clone.animate(bounces(r, felt, i), {
        duration: CASCADE_MS, delay: i * 70, easing: "linear", fill: "backwards",
      }));
      left += 1;
      const gone = () => {
        clone.remove();
        left -= 1;
        if (!left && cascadeLayer === layer) settleCascade();
      };
      animation.finished.then(gone, gone);
    }
  });
}

function settleCascade() {
  cascadeLayer?.remove();
  cascadeLayer = null;
}

/** Keyframes of a card thrown sideways from `r` that bounces along the felt's floor. */
function bounces(r, felt, i) {
  const floor = Math.max(r.height, felt.bottom - r.bottom); // how far it falls
  const side = i % 2 ? -1 : 1;
  const reach = side * (felt.width * (0.35 + ((i * 37) % 50) / 100));
  const frames = [];
  const steps = 24;
  for (let s = 0; s <= steps; s += 1) {
    const t = s / steps;
    // Three arcs, each lower than the last, ending on the floor.
    const arc = t < 0.45 ? t / 0.45 : t < 0.78 ? (t - 0.45) / 0.33 : (t - 0.78) / 0.22;
    const height = t < 0.45 ? 1 : t < 0.78 ? 0.35 : 0.12;
    const y = t < 0.45 ? floor * arc * arc : floor * (1 - height * 4 * arc * (1 - arc));
    frames.push({ transform: `translate(${(reach * t).toFixed(1)}px, ${y.toFixed(1)}px)`, opacity: t > 0.85 ? (1 - t) / 0.15 : 1 });
  }
  return frames;
}
