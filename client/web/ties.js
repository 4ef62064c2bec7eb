// Ties broken by time (docs/rules.md §7.1). The server places everyone; when
// two it placed apart are equal on everything its rule reads but a moment —
// who reached their score first in a deal, whose last card went home first in
// runs not won — each of those rows shows its moment, so the order is seen,
// not taken on trust. Pure.

/**
 * The items the server placed apart from another item equal to them on all
 * but the time: `same(a, b)` says two are equal but for it, `place(a)` is the
 * placing the server gave.
 */
export function toldApartByTime(items, same, place) {
  return new Set(items.filter((a) => items.some((b) => b !== a && same(a, b) && place(a) !== place(b))));
}

/** A moment in ms as every screen writes it (protocol/placings.py `moment_text`):
 * "1:25.13", to the hundredth, where a clock's seconds would show two alike. */
export function moment(ms) {
  const total = Math.max(0, Math.round(ms));
  const hundredths = Math.floor((total % 1000) / 10);
  const seconds = Math.floor(total / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}.${String(hundredths).padStart(2, "0")}`;
}

/** A deal's rows: equal scores, and both won or both not. */
export function sameButScoredAt(a, b) {
  return a.score === b.score && (a.status === "won") === (b.status === "won");
}

/** Runs' rows (a daily's board, a challenge's two): neither won, as many cards home, the same score. */
export function sameButLastHome(a, b) {
  return a.result !== "won" && b.result !== "won" && a.home === b.home && a.score === b.score;
}
