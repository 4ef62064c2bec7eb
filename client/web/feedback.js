// The short messages that are not part of any panel: the toast, the screen-reader
// hint, the lobby's message line and the "opened in another tab" banner. Several
// modules raise them, so they live here rather than in any one of those.

import { h } from "./dom.js";
import { $ } from "./state.js";

export function hint(text) {
  $("hint").textContent = text;
}

let toastTimer = null;
export function toast(text) {
  const el = $("toast");
  el.textContent = text;
  el.hidden = false;
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
}

export function hideBanner() {
  $("replaced-banner")?.remove();
}
