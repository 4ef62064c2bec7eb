// Your own board as something to play: clicks (and double clicks, which send a
// card home), drag and drop, Enter on a focused card, and the number / W / H /
// Esc shortcuts, all turned into protocol moves (cards.js says which move a
// gesture means). It keeps the selection between gestures and redraws through
// board.js; sending, and showing a refusal, is the caller's (play.js).
//
// One class on purpose: the three ways of playing share the selection, the
// drag's ghost and the "what did I point at" helpers.

import { renderBoard } from "./board.js";
import { cardName, fittingSource, homeMove, moveFor, runStart, stockMove, wasteTop } from "./cards.js";
import { h, replaceChildren } from "./dom.js";
import { cascade, dealIn, glide, measure, settle } from "./motion.js";

function sameSource(a, b) {
  if (!a || !b || a.zone !== b.zone) return false;
  if (a.zone === "tableau") return a.pile === b.pile && a.index === b.index;
  if (a.zone === "foundation") return a.index === b.index;
  return true;
}

/**
 * A player's own board: renders it and turns gestures into moves.
 *   onMove(move) -> Promise (rejects when the server refuses; the drag snaps back)
 *   onHint(text)  short status for screen readers and the status line
 */
export class BoardController {
  constructor(host, { onMove, onHint }) {
    this.host = host;
    this.onMove = onMove;
    this.onHint = onHint || (() => {});
    this.view = null;
    this.selection = null;
    this.keyboardRun = false; // selection made by a number key (fit the count to the target)
    this.enabled = true;
    this.drag = null;
    this.suppressClick = false;
    host.addEventListener("click", (e) => this._click(e));
    host.addEventListener("keydown", (e) => this._keydown(e));
    host.addEventListener("pointerdown", (e) => this._pointerDown(e));
    host.addEventListener("pointermove", (e) => this._pointerMove(e));
    host.addEventListener("pointerup", (e) => this._pointerUp(e));
    host.addEventListener("pointercancel", () => this._cancelDrag());
  }

  /** Show `view` (of the deal `deal`: any key naming it), playable when `enabled`. */
  setView(view, enabled = true, deal = null) {
    const before = this.view;
    const sameDeal = Boolean(before && view && deal === this.deal);
    if (view !== this.view) this.selection = null;
    this.view = view;
    this.deal = view ? deal : null;
    this.enabled = enabled && view && view.status === "playing";
    // What changed between the two views says which motion fits (motion.js).
    let motion = "glide";
    if (view && !sameDeal && !view.logged) motion = "deal";
    else if (sameDeal && before.status === "playing" && view.status === "won") motion = "win";
    this.render(motion);
  }

  /** Redraw from the view at once; `motion` is how the change is shown, after. */
  render(motion = "glide") {
    const before = this.view ? measure(this.host) : null;
    settle();
    this._removeGhost();
    if (!this.view) {
      replaceChildren(this.host);
      return;
    }
    const board = renderBoard(this.view, {
      interactive: this.enabled, selection: this.selection, own: true, ended: !this.enabled, paused: this.paused,
    });
    replaceChildren(this.host, board);
    if (motion === "deal") dealIn(this.host);
    else glide(this.host, before);
    if (motion === "win") cascade(this.host);
  }

  select(source, keyboard = false) {
    this.selection = source;
    this.keyboardRun = keyboard;
    this.render();
    if (source) this.onHint(`Selected ${this._describe(source)}`);
  }

  clearSelection() {
    if (this.selection) {
      this.selection = null;
      this.render();
    }
  }

  _describe(src) {
    const v = this.view;
    if (src.zone === "waste") return `${cardName(wasteTop(v))} on the waste`;
    if (src.zone === "foundation") return `${cardName(v.foundations[src.index])} on foundation ${src.index + 1}`;
    const up = v.tableau[src.pile].up;
    const n = up.length - src.index;
    return `${cardName(up[src.index])} on pile ${src.pile + 1}${n > 1 ? ` and ${n - 1} above it` : ""}`;
  }

  send(move) {
    if (!move) return Promise.resolve(false);
    if (this.selection) {
      this.selection = null;
      this.render();
    }
    return this.onMove(move);
  }

  // -- clicks ---------------------------------------------------------------

  _sourceOf(el) {
    const zone = el.dataset.zone;
    const v = this.view;
    if (zone === "waste") return wasteTop(v) ? { zone: "waste" } : null;
    if (zone === "foundation") {
      const f = Number(el.dataset.index);
      return v.foundations[f] ? { zone: "foundation", index: f } : null;
    }
    if (zone === "tableau") {
      const index = Number(el.dataset.index);
      return index >= 0 ? { zone: "tableau", pile: Number(el.dataset.pile), index } : null;
    }
    return null;
  }

  _targetOf(el) {
    const zone = el.dataset.zone;
    if (zone === "tableau" || zone === "pile") return { zone: "tableau", pile: Number(el.dataset.pile) };
    if (zone === "foundation") return { zone: "foundation", index: Number(el.dataset.index) };
    return null;
  }

  _click(e) {
    if (this.suppressClick) {
      this.suppressClick = false;
      return;
    }
    const el = e.target.closest("[data-zone]");
    if (!el || !this.host.contains(el)) return;
    // A double click sends a card home. The board re-renders after the first
    // click, so the native dblclick would reach a detached node: pair clicks here.
    const key = el.dataset.focusKey || null;
    const now = performance.now();
    const last = this.lastClick;
    this.lastClick = { key, at: now };
    if (key && last && last.key === key && now - last.at < 400 && this.enabled) {
      this.lastClick = null;
      const move = homeMove(this.view, this._sourceOf(el));
      if (move) {
        this.selection = null;
        this.send(move).catch(() => {});
        this.render();
        return;
      }
    }
    this.activate(el);
  }

  /** What a click (or Enter on a focused card) on `el` does. */
  activate(el) {
    if (!this.enabled) return;
    const zone = el.dataset.zone;
    if (zone === "stock") {
      this.send(stockMove(this.view)).catch(() => {});
      return;
    }
    const sel = this.selection;
    const source = this._sourceOf(el);
    if (!sel) {
      if (source) this.select(source);
      return;
    }
    if (sameSource(sel, source)) {
      this.clearSelection();
      this.onHint("Selection cleared");
      return;
    }
    if (zone === "waste") {
      this.select(source);
      return;
    }
    const target = this._targetOf(el);
    if (!target) return;
    // Another card of the same pile: move the selection instead.
    if (sel.zone === "tableau" && target.zone === "tableau" && target.pile === sel.pile) {
      if (source) this.select(source);
      else this.clearSelection();
      return;
    }
    if (sel.zone === "foundation" && target.zone === "foundation") {
      if (source) this.select(source);
      return;
    }
    let from = sel;
    if (this.keyboardRun && sel.zone === "tableau" && target.zone === "tableau") {
      from = fittingSource(this.view, sel.pile, target.pile);
    }
    if (sel.zone === "tableau" && target.zone === "foundation") {
      // Only the top card goes home; selecting a run and picking a foundation means its top.
      const up = this.view.tableau[sel.pile].up;
      from = { zone: "tableau", pile: sel.pile, index: up.length - 1 };
    }
    const move = moveFor(this.view, from, target);
    if (move) this.send(move).catch(() => {});
    else this.clearSelection();
  }

  _keydown(e) {
    if ((e.key === "Enter" || e.key === " ") && e.target.dataset?.zone) {
      e.preventDefault();
      this.activate(e.target);
    }
  }

  // -- keyboard shortcuts (called by the app for keys outside form fields) ----

  /** Returns true when the key was used. */
  shortcut(e) {
    if (!this.view || !this.enabled) return false;
    const v = this.view;
    const digit = /^Digit([1-9])$/.exec(e.code) || /^Numpad([1-9])$/.exec(e.code);
    if (digit) {
      const n = Number(digit[1]) - 1;
      if (e.shiftKey) {
        if (n >= v.foundations.length) return false;
        if (!this.selection) {
          if (v.foundations[n]) this.select({ zone: "foundation", index: n });
          return true;
        }
        this._toTarget({ zone: "foundation", index: n });
        return true;
      }
      if (n >= v.tableau.length) return false;
      this._pileKey(n);
      return true;
    }
    switch (e.key.toLowerCase()) {
      case "w":
        if (this.selection?.zone === "waste") this.clearSelection();
        else if (wasteTop(v)) this.select({ zone: "waste" });
        return true;
      case "h": {
        let src = this.selection;
        if (src?.zone === "tableau") src = { ...src, index: v.tableau[src.pile].up.length - 1 };
        const move = homeMove(v, src || { zone: "waste" });
        if (move) this.send(move).catch(() => {});
        return true;
      }
      case "escape":
        this.clearSelection();
        return true;
      default:
        return false;
    }
  }

  _pileKey(p) {
    const v = this.view;
    const sel = this.selection;
    const up = v.tableau[p].up;
    if (sel && sel.zone === "tableau" && sel.pile === p) {
      // Same pile again: select fewer cards of the run, wrapping round.
      const next = sel.index + 1 < up.length ? sel.index + 1 : runStart(v, p);
      this.select({ zone: "tableau", pile: p, index: next }, next === runStart(v, p));
      return;
    }
    if (!sel) {
      if (up.length) this.select({ zone: "tableau", pile: p, index: runStart(v, p) }, true);
      return;
    }
    this._toTarget({ zone: "tableau", pile: p });
  }

  _toTarget(target) {
    const v = this.view;
    let from = this.selection;
    if (from.zone === "tableau" && target.zone === "tableau" && this.keyboardRun) {
      from = fittingSource(v, from.pile, target.pile);
    }
    if (from.zone === "tableau" && target.zone === "foundation") {
      from = { ...from, index: v.tableau[from.pile].up.length - 1 };
    }
    const move = moveFor(v, from, target);
    if (move) this.send(move).catch(() => {});
    else this.clearSelection();
  }

  // -- drag and drop --------------------------------------------------------

  _pointerDown(e) {
    if (!this.enabled || e.button !== 0 || !e.isPrimary) return;
    const el = e.target.closest("[data-drag]");
    if (!el) return;
    const zoneEl = el.dataset.zone ? el : el.closest("[data-zone]");
    const source = zoneEl ? this._sourceOf(zoneEl) : null;
    if (!source) return;
    this.drag = { source, x: e.clientX, y: e.clientY, el, pointerId: e.pointerId, started: false };
  }

  _pointerMove(e) {
    const d = this.drag;
    if (!d || e.pointerId !== d.pointerId) return;
    const dx = e.clientX - d.x;
    const dy = e.clientY - d.y;
    if (!d.started) {
      if (Math.hypot(dx, dy) < 6) return;
      this._startDrag(d);
      try {
        this.host.setPointerCapture(e.pointerId);
      } catch {
        /* the pointer may already be gone */
      }
    }
    d.ghost.style.transform = `translate(${dx}px, ${dy}px)`;
    this._hover(d, this._dropTarget(e, d.ghost));
    e.preventDefault();
  }

  /** Light up the pile or foundation a drop would now land on (any: the server judges). */
  _hover(d, el) {
    if (d.hover === el) return;
    d.hover?.classList.remove("drop-target");
    d.hover = el;
    el?.classList.add("drop-target");
  }

  _movingElements(source) {
    if (source.zone === "tableau") {
      return [...this.host.querySelectorAll(`.card[data-zone="tableau"][data-pile="${source.pile}"]`)].filter(
        (c) => Number(c.dataset.index) >= source.index,
      );
    }
    if (source.zone === "waste") return [this.host.querySelector('.card[data-zone="waste"]')];
    return [this.host.querySelector(`.foundation[data-index="${source.index}"] .card`)];
  }

  _startDrag(d) {
    d.started = true;
    this.selection = null;
    for (const s of this.host.querySelectorAll(".selected")) s.classList.remove("selected");
    const els = this._movingElements(d.source).filter(Boolean);
    const first = els[0].getBoundingClientRect();
    const ghost = h("div", { class: "drag-ghost", "aria-hidden": "true" });
    ghost.style.left = `${first.left}px`;
    ghost.style.top = `${first.top}px`;
    ghost.style.setProperty("--cw", `${first.width}px`);
    for (const el of els) {
      const r = el.getBoundingClientRect();
      const clone = el.cloneNode(true);
      clone.removeAttribute("tabindex");
      clone.removeAttribute("data-focus-key");
      clone.classList.remove("selected");
      clone.style.left = `${r.left - first.left}px`;
      clone.style.top = `${r.top - first.top}px`;
      clone.style.width = `${r.width}px`;
      clone.style.height = `${r.height}px`;
      ghost.appendChild(clone);
      el.classList.add("drag-source");
    }
    ghost.style.width = `${first.width}px`;
    ghost.style.height = `${first.height}px`;
    this.host.querySelector(".board")?.classList.add("dragging");
    document.body.appendChild(ghost);
    d.ghost = ghost;
    d.els = els;
  }

  _dropTarget(e, ghost) {
    const hit = document.elementFromPoint(e.clientX, e.clientY);
    const el = hit && this.host.contains(hit) ? hit.closest(".pile, .foundation") : null;
    if (el) return el;
    // Fall back to the target the dragged top card overlaps most.
    const g = ghost.firstChild.getBoundingClientRect();
    let best = null;
    let bestArea = 0;
    for (const t of this.host.querySelectorAll(".pile, .foundation")) {
      const r = t.getBoundingClientRect();
      const w = Math.min(g.right, r.right) - Math.max(g.left, r.left);
      const hgt = Math.min(g.bottom, r.bottom) - Math.max(g.top, r.top);
      if (w > 0 && hgt > 0 && w * hgt > bestArea) {
        best = t;
        bestArea = w * hgt;
      }
    }
    return best;
  }

  _pointerUp(e) {
    const d = this.drag;
    if (!d || e.pointerId !== d.pointerId) return;
    this.drag = null;
    if (!d.started) return; // a plain click: the click handler does it
    this.suppressClick = true;
    setTimeout(() => {
      this.suppressClick = false;
    }, 0);
    const targetEl = this._dropTarget(e, d.ghost);
    this._endHover(d);
    let target = null;
    if (targetEl?.classList.contains("pile")) target = { zone: "tableau", pile: Number(targetEl.dataset.pile) };
    else if (targetEl?.classList.contains("foundation")) target = { zone: "foundation", index: Number(targetEl.dataset.index) };
    const move = target ? moveFor(this.view, d.source, target) : null;
    this.activeGhost = d;
    if (!move) {
      this._snapBack(d);
      return;
    }
    this.onMove(move).then(
      () => this._snapBack(d, true),
      () => this._snapBack(d),
    );
  }

  _snapBack(d, instant = false) {
    const ghost = d.ghost;
    if (!ghost || !ghost.isConnected) {
      this._restore(d);
      return;
    }
    if (instant) {
      ghost.remove();
      this._restore(d);
      return;
    }
    ghost.classList.add("snapping");
    ghost.style.transform = "translate(0px, 0px)";
    const done = () => {
      ghost.remove();
      this._restore(d);
    };
    ghost.addEventListener("transitionend", done, { once: true });
    setTimeout(done, 260);
  }

  _endHover(d) {
    this._hover(d, null);
    this.host.querySelector(".board")?.classList.remove("dragging");
  }

  _restore(d) {
    this._endHover(d);
    for (const el of d.els || []) el.classList.remove("drag-source");
    if (this.activeGhost === d) this.activeGhost = null;
  }

  _removeGhost() {
    const d = this.activeGhost;
    if (d?.ghost) d.ghost.remove();
    this.activeGhost = null;
    if (this.drag?.ghost) this.drag.ghost.remove();
    this.drag = null;
  }

  _cancelDrag() {
    const d = this.drag;
    this.drag = null;
    if (d?.started) this._snapBack(d);
  }
}
