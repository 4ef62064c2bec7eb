// Host controls: start, next deal, rematch and close (next deal and close asked
// in the page first: they cannot be undone), seating bots (each with a pace; the
// server plays for them, and Remove in the member list takes one out), and the
// house rules, sent the moment a control changes: grouped by when they apply (at
// once, or from the next deal), with a rule changed during a deal marked pending
// until the next deal is dealt. Only the host sees this panel; everyone else gets
// the rules as one line, with the pending ones named.

import { confirmInline, isAsking } from "./confirm.js";
import { FIELDS, SettingsForm, pendingRules, summary, valueText } from "./settings.js";
import { $, isHost, state } from "./state.js";
import { refusalText } from "./words.js";

let hostForm = null;
export const MAX_PLAYERS = 8;

export async function hostAction(type, fields = {}) {
  $("host-error").textContent = "";
  try {
    return await state.conn.request(type, fields);
  } catch (err) {
    $("host-error").textContent = refusalText(err);
    return null;
  }
}

/** The rules the next deal changes, in words, for the one-line summary. */
function pendingSummary(pending) {
  const parts = FIELDS.filter((f) => pending[f.name]).map((f) => `${f.label}: ${valueText(f, pending[f.name].next)}`);
  return parts.length ? `From the next deal: ${parts.join(", ")}.` : "";
}

function show(id, visible) {
  const btn = $(id);
  if (!isAsking(btn)) btn.hidden = !visible;
}

export function renderHost() {
  const room = state.room;
  const host = isHost();
  const running = room.state === "playing" ? room.deal : null;
  const pending = pendingRules(room.settings, running);
  $("host-panel").hidden = !host;
  $("rules-panel").hidden = host;
  $("rules-summary").textContent = summary(room.settings || {});
  $("rules-pending").textContent = pendingSummary(pending);
  if (!host) return;
  hostForm.set(room.settings || {});
  hostForm.setPending(pending);
  show("btn-start", room.state === "lobby");
  show("btn-next", room.state === "playing" || room.state === "break");
  $("btn-next").textContent = room.state === "break" ? "Next deal now" : "Next deal";
  show("btn-rematch", room.state === "round_over");
  $("btn-add-bot").disabled = room.players.length >= MAX_PLAYERS;
}

/** Build the house-rules form and wire the host's buttons. */
export function initHost() {
  hostForm = new SettingsForm("host", {
    grouped: true,
    onChange: async (name, value) => {
      try {
        await state.conn.request("update_settings", { settings: { [name]: value } });
      } catch (err) {
        if (!(err.field && hostForm.setServerError(err)) && !hostForm.setError(name, refusalText(err))) {
          $("host-error").textContent = refusalText(err);
        }
      }
    },
  });
  $("host-settings").appendChild(hostForm.el);

  $("btn-start").addEventListener("click", () => hostAction("start"));
  $("btn-next").addEventListener("click", async () => {
    const n = state.room?.deal?.number;
    const question = `End deal ${n ?? ""} for everyone now? Players still playing are scored where they stand.`;
    if (await confirmInline($("btn-next"), question, "Yes, next deal")) hostAction("next_deal");
  });
  $("btn-rematch").addEventListener("click", () => hostAction("rematch"));
  $("btn-add-bot").addEventListener("click", () => hostAction("add_bot", { pace: $("bot-pace").value }));
  $("btn-close").addEventListener("click", async () => {
    if (await confirmInline($("btn-close"), "Close the room for everyone?", "Yes, close it")) hostAction("close_room");
  });
}
