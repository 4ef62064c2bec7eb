// Who is in the room: players (connected or away, you, the host) and spectators,
// with the host's Remove button. Everyone sees this list, so it is not part of
// the host panel, but removing goes through the host's request helper.

import { h, replaceChildren } from "./dom.js";
import { MAX_PLAYERS, hostAction } from "./host.js";
import { $, isHost, me, render, state } from "./state.js";

// The player whose Remove is being asked about. Kept here and drawn with the
// list (rather than a question put next to a button) because every event
// redraws the list.
let removing = null;

function removeControls(p) {
  if (removing !== p.id) {
    return h("button", {
      type: "button", class: "btn tiny danger", "aria-label": `Remove ${p.name}`,
      onclick: () => {
        removing = p.id;
        render();
        document.querySelector(`[data-confirm-remove="${p.id}"] [data-confirm="no"]`)?.focus();
      },
    }, "Remove");
  }
  const answer = (yes) => {
    removing = null;
    render();
    if (yes) hostAction("remove_player", { player: p.id });
  };
  return h("span", { class: "confirm", role: "alertdialog", "aria-label": `Remove ${p.name}?`, dataset: { confirmRemove: p.id } },
    h("span", { class: "confirm-question" }, `Remove ${p.name} from the room?`), " ",
    h("button", { type: "button", class: "btn tiny danger", dataset: { confirm: "yes" }, onclick: () => answer(true) }, "Yes, remove"), " ",
    h("button", { type: "button", class: "btn tiny ghost", dataset: { confirm: "no" }, onclick: () => answer(false) }, "Cancel"));
}

export function renderMembers() {
  const room = state.room;
  const host = isHost();
  const list = room.players.map((p) =>
    h("li", { class: `member${p.connected === false ? " away" : ""}`, dataset: { player: p.id } },
      h("span", { class: "dot", title: p.connected === false ? "disconnected" : "connected", "aria-hidden": "true" }),
      h("span", { class: "member-name" }, p.name),
      p.id === me() ? h("span", { class: "tag" }, "you") : null,
      p.id === room.host ? h("span", { class: "tag host" }, "host") : null,
      p.bot ? h("span", { class: "tag bot", title: `a bot, playing at a ${p.bot} pace` }, `bot · ${p.bot}`) : null,
      p.style ? h("span", { class: "tag style", title: `the bot's style of play` }, p.style) : null,
      p.joining ? h("span", { class: "tag joining", title: "plays from the next deal" }, "joining") : null,
      room.state === "break" && (room.ready || []).includes(p.id) ? h("span", { class: "tag ready" }, "ready") : null,
      p.connected === false ? h("span", { class: "sr-only" }, "(disconnected)") : null,
      host && p.id !== me() ? removeControls(p) : null),
  );
  replaceChildren($("members"), list.length ? list : h("li", { class: "note" }, "nobody yet"));
  const specs = room.spectators || [];
  $("spectators").textContent = specs.length
    ? `Watching: ${specs.map((s) => s.name + (s.id === me() ? " (you)" : "")).join(", ")}`
    : "No spectators.";
  $("members-title").textContent = `Players (${room.players.length}/${MAX_PLAYERS})`;
}
