// Who is in the room: players (connected or away, you, the host) and spectators,
// with the host's Remove button. Everyone sees this list, so it is not part of
// the host panel, but removing goes through the host's request helper.

import { h, replaceChildren } from "./dom.js";
import { hostAction } from "./host.js";
import { $, isHost, me, state } from "./state.js";

export function renderMembers() {
  const room = state.room;
  const host = isHost();
  const list = room.players.map((p) =>
    h("li", { class: `member${p.connected === false ? " away" : ""}`, dataset: { player: p.id } },
      h("span", { class: "dot", title: p.connected === false ? "disconnected" : "connected", "aria-hidden": "true" }),
      h("span", { class: "member-name" }, p.name),
      p.id === me() ? h("span", { class: "tag" }, "you") : null,
      p.id === room.host ? h("span", { class: "tag host" }, "host") : null,
      p.joining ? h("span", { class: "tag joining", title: "plays from the next deal" }, "joining") : null,
      room.state === "break" && (room.ready || []).includes(p.id) ? h("span", { class: "tag ready" }, "ready") : null,
      p.connected === false ? h("span", { class: "sr-only" }, "(disconnected)") : null,
      host && p.id !== me()
        ? h("button", {
            type: "button", class: "btn tiny danger", "aria-label": `Remove ${p.name}`,
            onclick: () => hostAction("remove_player", { player: p.id }),
          }, "Remove")
        : null),
  );
  replaceChildren($("members"), list.length ? list : h("li", { class: "note" }, "nobody yet"));
  const specs = room.spectators || [];
  $("spectators").textContent = specs.length
    ? `Watching: ${specs.map((s) => s.name + (s.id === me() ? " (you)" : "")).join(", ")}`
    : "No spectators.";
  $("members-title").textContent = `Players (${room.players.length}/8)`;
}
