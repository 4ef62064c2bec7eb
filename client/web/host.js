// Host controls: start, next deal, rematch and close (each confirmed twice where
// it cannot be undone), and the house rules, sent the moment a control changes.
// Only the host sees this panel; everyone else gets the rules as one line.

import { SettingsForm, summary } from "./settings.js";
import { $, isHost, state } from "./state.js";

let hostForm = null;

export async function hostAction(type, fields = {}) {
  $("host-error").textContent = "";
  try {
    return await state.conn.request(type, fields);
  } catch (err) {
    $("host-error").textContent = `${err.message} (${err.code})`;
    return null;
  }
}

export function renderHost() {
  const room = state.room;
  const host = isHost();
  $("host-panel").hidden = !host;
  $("rules-panel").hidden = host;
  $("rules-summary").textContent = summary(room.settings || {});
  if (!host) return;
  hostForm.set(room.settings || {});
  $("btn-start").hidden = room.state !== "lobby";
  $("btn-next").hidden = room.state !== "playing" && room.state !== "break";
  $("btn-next").textContent = room.state === "break" ? "Next deal now" : "Next deal";
  $("btn-rematch").hidden = room.state !== "round_over";
}

/** Build the house-rules form and wire the host's buttons. */
export function initHost() {
  hostForm = new SettingsForm("host", {
    onChange: async (name, value) => {
      try {
        await state.conn.request("update_settings", { settings: { [name]: value } });
      } catch (err) {
        if (!hostForm.setError(err.field || name, `${err.message}`)) $("host-error").textContent = err.message;
      }
    },
  });
  $("host-settings").appendChild(hostForm.el);

  $("btn-start").addEventListener("click", () => hostAction("start"));
  $("btn-next").addEventListener("click", () => hostAction("next_deal"));
  $("btn-rematch").addEventListener("click", () => hostAction("rematch"));
  $("btn-close").addEventListener("click", () => {
    const btn = $("btn-close");
    if (btn.dataset.armed) {
      delete btn.dataset.armed;
      btn.textContent = "Close room";
      hostAction("close_room");
      return;
    }
    btn.dataset.armed = "1";
    btn.textContent = "Really close? Click again";
    setTimeout(() => {
      delete btn.dataset.armed;
      btn.textContent = "Close room";
    }, 4000);
  });
}
