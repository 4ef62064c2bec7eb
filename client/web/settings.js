// The house rules of docs/rules.md §6 as form controls (docs/protocol.md "Values").
//
// Each field says when a change applies (`when`): "next" for the rules of play,
// which a running deal was dealt under and keeps (they come with each deal as
// its `rules`), and otherwise at once (scoring, race bonus, deals per round, the
// time limit, …). The host panel groups them so, and marks a rule changed during
// a deal as pending.

import { h } from "./dom.js";
import { settingErrorText } from "./words.js";

export const FIELDS = [
  {
    name: "scoring", label: "Scoring", type: "select", def: "standard",
    options: [["standard", "Standard"], ["vegas", "Vegas"], ["cumulative_vegas", "Cumulative Vegas"], ["timed", "Timed"]],
  },
  { name: "draw", label: "Draw", type: "select", def: 1, int: true, when: "next", rule: "draw", options: [[1, "Draw one"], [3, "Draw three"]] },
  { name: "deals_per_round", label: "Deals per round", type: "number", def: 3, min: 1, max: 20, step: 1 },
  { name: "stock_passes", label: "Stock passes", when: "next", rule: "pass_limit", type: "number", def: 0, min: 0, max: 10, step: 1, hint: "0 = free" },
  { name: "time_limit_minutes", label: "Time limit (minutes)", type: "number", def: 0, min: 0, max: 120, step: 5, hint: "0 = none" },
  { name: "race_bonus", label: "Race bonus", type: "number", def: 100, min: 0, max: 1000, step: 5, hint: "first finisher" },
  {
    name: "variant", label: "Variant", type: "select", def: "classic", when: "next", rule: "variant",
    options: [["classic", "Classic"], ["thoughtful", "Thoughtful (open)"], ["double", "Double (2 packs)"]],
  },
  { name: "break_seconds", label: "Break between deals (s)", type: "number", def: 10, min: 0, max: 60, step: 1, hint: "0 = none" },
  { name: "undo", label: "Undo", type: "checkbox", def: false, when: "next", rule: "undo" },
  { name: "foundation_to_tableau", label: "Foundation to tableau", type: "checkbox", def: true, when: "next", rule: "foundation_to_tableau" },
  {
    name: "spectators", label: "Spectators see", type: "select", def: "live",
    options: [["live", "Every board, live"], ["after_deal", "Scores live, boards after the deal"], ["none", "No spectators"]],
    hint: "with live boards a player can watch their own race from another device",
  },
  {
    name: "deals", label: "Deals", type: "select", def: "random", when: "next", dealt: (deal) => (deal.winnable ? "winnable" : "random"),
    options: [["random", "Random"], ["winnable", "Winnable"]],
    hint: "every deal proven winnable by a solver, replayed by the engine",
  },
  { name: "rated", label: "Rated", type: "checkbox", def: false, hint: "rounds change ratings: signed-in players only, no bots; set before a round" },
];

export const DEFAULTS = Object.fromEntries(FIELDS.map((f) => [f.name, f.def]));

/** Whether a change of field `f` waits for the next deal (else it applies at once). */
export const fromNextDeal = (f) => f.when === "next";

/**
 * Every setting the host changed since the running deal was dealt that waits for
 * the next deal: for each such field, its value in the deal (its `rules`, or
 * `winnable` for `deals`: docs/protocol.md "Room view") and the value the next
 * deal gets. Empty when no deal runs.
 */
export function pendingRules(settings, deal) {
  const out = {};
  if (!settings || !deal?.rules) return out;
  for (const f of FIELDS) {
    if (!fromNextDeal(f) || settings[f.name] === undefined) continue;
    const now = f.dealt ? f.dealt(deal) : deal.rules[f.rule];
    if (now !== undefined && now !== settings[f.name]) out[f.name] = { now, next: settings[f.name] };
  }
  return out;
}

/** A field's value in words, as its control shows it. */
export function valueText(f, value) {
  if (f.type === "checkbox") return value ? "on" : "off";
  const option = (f.options || []).find(([v]) => String(v) === String(value));
  return option ? option[1] : String(value);
}

export const LABELS = {
  scoring: Object.fromEntries(FIELDS[0].options),
  variant: { classic: "Classic", thoughtful: "Thoughtful", double: "Double" },
  spectators: { live: "spectators see live boards", after_deal: "spectators see boards after each deal", none: "no spectators" },
};

/** A one-line summary of settings for people who cannot change them. */
export function summary(s) {
  const parts = [
    LABELS.scoring[s.scoring] || s.scoring,
    `draw ${s.draw}`,
    `${s.deals_per_round} deal${s.deals_per_round === 1 ? "" : "s"}`,
    s.stock_passes ? `${s.stock_passes} pass${s.stock_passes === 1 ? "" : "es"}` : "free passes",
    s.time_limit_minutes ? `${s.time_limit_minutes} min` : "no time limit",
    `bonus ${s.race_bonus}`,
    LABELS.variant[s.variant] || s.variant,
    s.undo ? "undo on" : "undo off",
    s.foundation_to_tableau ? "foundation→tableau on" : "foundation→tableau off",
    LABELS.spectators[s.spectators] || s.spectators,
  ];
  if (s.deals === "winnable") parts.push("winnable deals");
  if (s.rated) parts.push("rated");
  return parts.join(" · ");
}

/**
 * A settings form. `onChange(name, value)` fires for each edited control (the
 * host panel sends it at once); `values()` reads them all (for create_room).
 */
export class SettingsForm {
  constructor(prefix, { onChange = null, grouped = false } = {}) {
    this.prefix = prefix;
    this.onChange = onChange;
    this.controls = {};
    this.errors = {};
    if (grouped) {
      // The host's panel: what a change does now, and what waits for the next deal.
      const now = h("div", { class: "settings-grid", id: `${prefix}-now` });
      const next = h("div", { class: "settings-grid", id: `${prefix}-next` });
      for (const f of FIELDS) (fromNextDeal(f) ? next : now).appendChild(this._field(f));
      this.el = h("div", { class: "settings-groups" },
        h("h4", {}, "Apply at once ", h("small", {}, "(the running round too)")), now,
        h("h4", {}, "From the next deal ", h("small", {}, "(the rules of play; the running deal keeps its own)")), next);
    } else {
      this.el = h("div", { class: "settings-grid" });
      for (const f of FIELDS) this.el.appendChild(this._field(f));
    }
    this.set(DEFAULTS);
  }

  /**
   * Mark each field of `pending` (pendingRules) as changed for the next deal:
   * "pending: from the next deal (this deal: Draw one)"; clear the others.
   */
  setPending(pending) {
    for (const [name, { f, control }] of Object.entries(this.controls)) {
      const field = control.closest(".field");
      let note = field.querySelector(".pending");
      const p = pending[name];
      field.classList.toggle("is-pending", Boolean(p));
      if (!p) {
        note?.remove();
        continue;
      }
      if (!note) {
        note = h("small", { class: "pending", id: `${control.id}-pending` });
        field.appendChild(note);
      }
      note.textContent = `pending: from the next deal (this deal: ${valueText(f, p.now)})`;
    }
  }

  /** Show a server's `bad_setting` refusal by its field, in words; false when no field shows it. */
  setServerError(err) {
    const c = this.controls[err.field];
    if (!c) return false;
    return this.setError(err.field, settingErrorText(c.f, err.message));
  }

  _field(f) {
    const id = `${this.prefix}-${f.name}`;
    let control;
    if (f.type === "select") {
      control = h("select", { id, name: f.name }, f.options.map(([v, text]) => h("option", { value: String(v) }, text)));
    } else if (f.type === "checkbox") {
      control = h("input", { id, name: f.name, type: "checkbox" });
    } else {
      control = h("input", {
        id, name: f.name, type: "number", min: String(f.min), max: String(f.max), step: String(f.step),
        inputmode: "numeric", required: true,
      });
    }
    const error = h("span", { class: "field-error", id: `${id}-error`, role: "alert" });
    control.setAttribute("aria-describedby", `${id}-error`);
    control.addEventListener("change", () => {
      this.setError(f.name, null);
      const value = this._read(f, control);
      if (value === undefined) {
        this.setError(f.name, settingErrorText(f));
        return;
      }
      this.onChange?.(f.name, value);
    });
    this.controls[f.name] = { f, control, error };
    const label = h("label", { for: id }, f.label, f.hint ? h("small", {}, ` (${f.hint})`) : null);
    if (f.type === "checkbox") {
      return h("div", { class: "field check", dataset: { field: f.name } }, control, label, error);
    }
    const range = f.type === "number" ? h("small", { class: "range" }, `${f.min}–${f.max}${f.step > 1 ? `, step ${f.step}` : ""}`) : null;
    return h("div", { class: "field", dataset: { field: f.name } }, label, control, range, error);
  }

  _read(f, control) {
    if (f.type === "checkbox") return control.checked;
    if (f.type === "select") return f.int ? Number(control.value) : control.value;
    const text = control.value.trim();
    if (!/^-?\d+$/.test(text)) return undefined;
    return Number(text);
  }

  values() {
    const out = {};
    for (const { f, control } of Object.values(this.controls)) {
      const v = this._read(f, control);
      if (v !== undefined) out[f.name] = v;
    }
    return out;
  }

  /** Show `settings`; a field showing an error keeps what was typed into it. */
  set(settings) {
    for (const [name, value] of Object.entries(settings || {})) {
      const c = this.controls[name];
      if (!c || this.errors[name]) continue;
      if (c.f.type === "checkbox") c.control.checked = Boolean(value);
      else c.control.value = String(value);
    }
  }

  setDisabled(disabled) {
    for (const { control } of Object.values(this.controls)) control.disabled = disabled;
  }

  setError(name, message) {
    const c = this.controls[name];
    if (!c) return false;
    this.errors[name] = message || null;
    c.error.textContent = message || "";
    if (message) c.control.setAttribute("aria-invalid", "true");
    else c.control.removeAttribute("aria-invalid");
    c.control.closest(".field").classList.toggle("invalid", Boolean(message));
    return true;
  }

  clearErrors() {
    for (const name of Object.keys(this.controls)) this.setError(name, null);
  }
}
