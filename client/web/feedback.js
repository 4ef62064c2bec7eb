// The short messages that are not part of any panel: the toast, the screen-reader
// hint, the lobby's message line, the "opened in another tab" banner, the news
// that expires (who hosts now, …), and where the floating ones go. Several
// modules raise them, so they live here rather than in any one of those.
//
// The floating ones (the notices, a refused move, the toast) must not push the
// board about mid-play, nor cover what a person is using: the room code, the
// board's cards, the Draw/Resign row, the race bar, the host's controls. So each
// is placed, whenever it or the page changes, at the free spot of the screen
// nearest to where it belongs; with none free it takes its place in the page.

import { h } from "./dom.js";
import { $, render, state } from "./state.js";

export function hint(text) {
  $("hint").textContent = text;
}

let toastTimer = null;
export function toast(text) {
  const el = $("toast");
  el.textContent = text;
  el.hidden = false;
  placeFloating();
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.hidden = true;
  }, 4000);
}

export function showLobbyMessage(text) {
  const el = $("lobby-message");
  el.textContent = text;
  el.hidden = !text;
}

export function showBanner(text, action, onAction) {
  const el = $("notices");
  const banner = h("div", { class: "notice warn", id: "replaced-banner" }, text, " ",
    h("button", { type: "button", class: "btn small", onclick: onAction }, action));
  el.prepend(banner);
  placeFloating();
}

export function hideBanner() {
  $("replaced-banner")?.remove();
  placeFloating();
}

/**
 * News that goes stale by itself: shown as a notice (hud.js) for `ms`, then
 * dropped. One per `id`: a newer one replaces it.
 */
export function news(id, text, ms = 10_000) {
  const until = Date.now() + ms;
  state.news = (state.news || []).filter((n) => n.id !== id).concat([{ id, text, until }]);
  setTimeout(render, ms + 20);
}

/** The news still fresh. */
export function freshNews() {
  const now = Date.now();
  state.news = (state.news || []).filter((n) => n.until > now);
  return state.news;
}

// What a floating message never covers (docs/web.md): each element's own box.
const KEEP_CLEAR = [
  "#room-code", "#copy-invite", "#leave", "#board-host .board", "#board-controls", "#host-panel",
  "#hud .stat", "#hud .rival", "#results .results-actions", "#conn-lost", ".board-paused button",
  "#link-out", "#codes-panel", "#friends-open", "#open-account",
];
// Where each floating message belongs, as a point of the window (0–1 of its size),
// and its widths to try, widest first; `reach`, how far it moves sideways once
// placed (a refusal's nudge, style.css), kept clear too.
const FLOATING = [
  { id: "notices", at: [1, 1], widths: [380, 300, 240] },
  { id: "move-status", at: [0.5, 1], widths: [560, 420, 300, 240], reach: 6 },
  { id: "toast", at: [0.5, 1], widths: [420, 300, 240] },
  { id: "friend-invite", at: [0.5, 0], widths: [560, 420, 300, 240] },
];
const MARGIN = 8;
const STEP = 8;

function boxes(selectors) {
  const out = [];
  for (const sel of selectors) {
    for (const el of document.querySelectorAll(sel)) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) out.push(r);
    }
  }
  return out;
}

const overlaps = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

/** The free spot for a `w`×`h` box nearest to point (`px`, `py`), clear of `taken`
 * by `reach` on either side, or null. */
function freeSpot(w, h, px, py, taken, reach = 0) {
  const vw = document.documentElement.clientWidth;
  const vh = window.innerHeight;
  if (w + 2 * MARGIN > vw || h + 2 * MARGIN > vh) return null;
  const xs = [vw - w - MARGIN, Math.round((vw - w) / 2)];
  for (let x = MARGIN; x < vw - w - MARGIN; x += 2 * STEP) xs.push(x);
  const ys = [vh - h - MARGIN];
  for (let y = MARGIN; y < vh - h - MARGIN; y += STEP) ys.push(y);
  const spots = [];
  for (const y of ys) for (const x of xs) spots.push({ x, y, d: (x + w / 2 - px) ** 2 + (y + h / 2 - py) ** 2 });
  spots.sort((a, b) => a.d - b.d);
  return spots.find(({ x, y }) => {
    const r = { left: x - reach, top: y, right: x + w + reach, bottom: y + h };
    return !taken.some((t) => overlaps(r, t));
  }) || null;
}

function place(el, spec, taken) {
  el.classList.remove("in-flow");
  if (el.hidden || !el.childNodes.length) return;
  const vw = document.documentElement.clientWidth;
  const px = spec.at[0] * vw;
  const py = spec.at[1] * window.innerHeight;
  for (const w of spec.widths) {
    const width = Math.min(w, vw - 2 * MARGIN);
    el.style.width = `${width}px`;
    el.style.left = "0px";
    el.style.top = "0px";
    const height = el.getBoundingClientRect().height;
    const spot = freeSpot(width, height, px, py, taken, spec.reach);
    if (spot) {
      el.style.left = `${spot.x}px`;
      el.style.top = `${spot.y}px`;
      taken.push(el.getBoundingClientRect());
      return;
    }
  }
  // Nowhere free on this screen: in the page, where it pushes rather than covers.
  el.classList.add("in-flow");
  el.style.width = "";
}

let queued = false;

/** Place every floating message anew (after a redraw, a scroll or a resize). */
export function placeFloating() {
  if (queued) return;
  queued = true;
  requestAnimationFrame(() => {
    queued = false;
    const taken = boxes(KEEP_CLEAR);
    for (const spec of FLOATING) place($(spec.id), spec, taken);
  });
}

window.addEventListener("scroll", placeFloating, { passive: true });
window.addEventListener("resize", placeFloating);
