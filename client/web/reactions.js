// Reactions: a tap for the room to see (docs/protocol.md `react`). The wire names
// a fixed few; this module draws them, sends yours, and shows everyone's for a
// moment in a feed over the page. They are the room's moment, not its history:
// nothing here is kept, and a reload starts with an empty feed.

import { h } from "./dom.js";
import { toast } from "./feedback.js";
import { $, state } from "./state.js";
import { refusalText } from "./words.js";

// The wire's name, the emoji drawn, and the word said with it (in the feed, and
// for screen readers and pages without an emoji font).
export const REACTIONS = [
  ["clap", "👏", "bravo"],
  ["wow", "😮", "wow"],
  ["laugh", "😄", "ha!"],
  ["fire", "🔥", "on fire"],
  ["wave", "👋", "hi"],
  ["gg", "🤝", "good game"],
];
const BY_NAME = Object.fromEntries(REACTIONS.map(([name, emoji, word]) => [name, { emoji, word }]));
const SHOWN_MS = 4000; // how long one stays in the feed
const FEED_MAX = 6; // a burst shows its latest few, not a wall of them

export function initReactions() {
  const bar = $("reaction-bar");
  bar.replaceChildren(
    ...REACTIONS.map(([name, emoji, label]) =>
      h("button", {
        type: "button", class: "btn tiny ghost reaction-button", title: label,
        "aria-label": `React: ${label}`, dataset: { reaction: name },
        onclick: () => react(name),
      }, emoji)),
  );
}

async function react(name) {
  if (!state.conn || !state.room) return;
  try {
    await state.conn.request("react", { reaction: name });
  } catch (err) {
    toast(err?.code === "limit_reached" ? "That's a lot of reactions: give it a minute." : refusalText(err));
  }
}

/** A member's reaction: into the feed, out again after a few seconds. */
export function showReaction(ev) {
  const shown = BY_NAME[ev.reaction];
  if (!shown) return; // a reaction this page does not know: a newer server's
  const feed = $("reaction-feed");
  const name = state.names[ev.player] || memberName(ev.player) || "someone";
  const item = h("li", { class: "reaction", dataset: { player: ev.player, reaction: ev.reaction } },
    h("span", { class: "reaction-emoji", "aria-hidden": "true" }, shown.emoji), " ",
    h("span", { class: "reaction-name" }, name), " ",
    h("span", { class: "reaction-word" }, shown.word));
  feed.append(item);
  while (feed.children.length > FEED_MAX) feed.firstElementChild.remove();
  setTimeout(() => item.remove(), SHOWN_MS);
}

/** room.js: another room entered; the last one's moment is over. */
export function clearReactions() {
  $("reaction-feed").replaceChildren();
}

function memberName(id) {
  const room = state.room;
  const all = [...(room?.players || []), ...(room?.spectators || [])];
  return all.find((m) => m.id === id)?.name;
}
