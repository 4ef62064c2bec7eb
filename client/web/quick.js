// "Race now": quick match on a ladder (docs/protocol.md, "Quick match"). A
// signed-in page queues; the panel shows the time waited, Leave queue, and after
// 30 s alone "Play bots instead". The server seats the page in the room it
// makes (`matched`), which counts down to its first deal by itself.

import { toast } from "./feedback.js";
import { setRoom } from "./room.js";
import { ensureSession } from "./session.js";
import { $, render, state } from "./state.js";
import { refusalText } from "./words.js";

let waitingSince = null; // local ms the page's wait began (the queued reply's `waited` taken off)
let ticker = null;

function showWaiting(on) {
  $("quick-choose").hidden = on;
  $("quick-waiting").hidden = !on;
  if (!on) {
    $("quick-bots").hidden = true;
    waitingSince = null;
    clearInterval(ticker);
    ticker = null;
  }
}

function showWaited() {
  if (waitingSince === null) return;
  const seconds = Math.floor((Date.now() - waitingSince) / 1000);
  $("quick-status").textContent = `Looking for rivals… ${seconds} s`;
}

/** `matched`: the server seated us; the room shows its countdown (its view's
 * `starts_at`, which a page back mid-countdown gets in its welcome too). */
function matched(frame) {
  showWaiting(false);
  setRoom(frame.room);
  render();
}

/** The notices of quick match (no seq, no id): session.js hands them here. */
export function quickNotice(frame) {
  if (frame.type === "matched") matched(frame);
  else if (frame.type === "bots_offered" && waitingSince !== null) $("quick-bots").hidden = false;
}

/** The room's countdown to its first deal, while it has not started. */
export function renderCountdown() {
  const room = state.room;
  const el = $("quick-countdown");
  const counting = room && room.starts_at && room.state === "lobby";
  el.hidden = !counting;
  if (!counting) return;
  const left = Math.max(0, Math.ceil((room.starts_at - state.conn.serverNow()) / 1000));
  el.textContent = `The race starts in ${left} s`;
}

async function race() {
  $("quick-error").textContent = "";
  if (!state.account) {
    $("quick-error").textContent = "Race now is rated: keep your name (or sign in) first, or practise against bots.";
    return;
  }
  const btn = $("quick-race");
  btn.disabled = true;
  try {
    await ensureSession(state.account.handle);
    const reply = await state.conn.request("queue", { ladder: $("quick-ladder").value });
    waitingSince = Date.now() - reply.waited * 1000;
    showWaiting(true);
    showWaited();
    ticker = setInterval(showWaited, 1000);
  } catch (err) {
    $("quick-error").textContent = refusalText(err);
  } finally {
    btn.disabled = false;
  }
}

export function initQuick() {
  $("quick-race").addEventListener("click", race);
  $("quick-leave").addEventListener("click", async () => {
    try {
      await state.conn.request("unqueue");
    } catch (err) {
      if (err.code !== "not_queued") toast(refusalText(err));
    }
    showWaiting(false);
  });
  $("quick-bots").addEventListener("click", async () => {
    try {
      await state.conn.request("accept_bots"); // `matched` follows
    } catch (err) {
      toast(refusalText(err));
    }
  });
  setInterval(() => state.room && renderCountdown(), 500);
}
