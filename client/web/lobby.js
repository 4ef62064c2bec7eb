// Getting into a room and out of it: the display name, the create form (every
// house rule folded behind one line that sums them up: a newcomer needs a name
// and a button, not thirteen rules), the join form (player or spectator), invite links
// (/#join=CODE fills the code in), Copy invite and Leave. A form opens a session
// only when it is submitted, so the lobby works before any socket exists. A
// signed-in page plays under its handle: the name field gives way to it.

import { confirmInline } from "./confirm.js";
import { showLobbyMessage, toast } from "./feedback.js";
import { ServerError } from "./net.js";
import { leaveToLobby, setRoom } from "./room.js";
import { ensureSession } from "./session.js";
import { SettingsForm, summary } from "./settings.js";
import { refusalText } from "./words.js";
import { $, NAME_KEY, isPlayer, onSession, state, storage } from "./state.js";

let createForm = null;

export function inviteLink(code) {
  return `${location.origin}/#join=${code}`;
}

// The longest name, in characters as a person counts them (protocol/names.py
// MAX_GRAPHEMES: an emoji sequence or a flag is one). A longer one is refused
// here, in words, never cut short.
const NAME_MAX = 24;
const clusters = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** The name as the server will show it (protocol/names.py normalise), and its length. */
function nameAndLength(raw) {
  const name = raw.normalize("NFC").replace(/\s+/gu, " ").trim();
  return { name, length: [...clusters.segment(name)].length };
}

function tooLong(length) {
  return `A name is at most ${NAME_MAX} characters: this one has ${length}.`;
}

/** The count as one types, and the refusal as soon as the name is too long. */
function showNameCount() {
  const { length } = nameAndLength($("name").value);
  const over = length > NAME_MAX;
  const count = $("name-count");
  count.textContent = `${length}/${NAME_MAX}`;
  count.classList.toggle("over", over);
  $("name").closest(".name-panel")?.classList.toggle("invalid", over);
  $("name").setAttribute("aria-invalid", String(over));
  const error = $("name-error");
  if (over) error.textContent = tooLong(length);
  else if (error.textContent.startsWith("A name is at most")) error.textContent = "";
}

export function readName() {
  if (state.account) return state.account.handle; // a signed-in player plays under the handle
  const { name, length } = nameAndLength($("name").value);
  $("name-error").textContent = "";
  if (!name) {
    $("name-error").textContent = "Choose a display name first.";
    $("name").focus();
    return null;
  }
  if (length > NAME_MAX || /\p{Cc}/u.test(name)) {
    $("name-error").textContent = length > NAME_MAX ? tooLong(length) : "No control characters in a name, please.";
    $("name").focus();
    return null;
  }
  return name;
}

export function sessionError(err, where) {
  if (err instanceof ServerError && err.code === "bad_name") {
    $("name-error").textContent = err.message;
    return;
  }
  where.textContent = err instanceof ServerError ? refusalText(err) : `${err.message || err}`;
}

// What the invite page learnt of its room (room_info), by code: a friend who
// comes mid-round is told before joining that they play from the next deal.
const known = new Map();

function inviteCode() {
  const m = /(?:^#|&)join=([0-9A-Za-z]{6})/.exec(location.hash);
  return m ? m[1].toUpperCase() : null;
}

function inviteText(code, info) {
  if (!info) return `You are invited to room ${code}. Pick a name and join.`;
  const who = info.players.length ? ` with ${info.players.join(", ")}` : "";
  if (info.state === "playing" || info.state === "break") {
    const seats = info.seats > 0 ? "you will play from the next deal" : "every seat is taken: join as a spectator";
    return `A round is running in room ${code}${who} (deal ${info.deal} of ${info.deals}): ${seats}.`;
  }
  return `You are invited to room ${code}${who}. Pick a name and join.`;
}

/** Ask the server what the invited room is doing (needs a session, so a name). */
async function lookUp(code) {
  const name = state.account ? state.account.handle : $("name").value.trim();
  if (!code || !name || known.has(code)) return known.get(code) || null;
  try {
    await ensureSession(name);
    const info = await state.conn.request("room_info", { code });
    known.set(code, info);
    if (inviteCode() === code) $("invite-note").textContent = inviteText(code, info);
    return info;
  } catch {
    return null; // the join itself says what is wrong
  }
}

function readInvite() {
  const code = inviteCode();
  if (!code) return;
  $("join-code").value = code;
  const note = $("invite-note");
  note.textContent = inviteText(code, known.get(code));
  note.hidden = false;
  ($("name").value ? $("join-btn") : $("name")).focus();
  lookUp(code);
}

/** Signed in, the name is the handle: the panel says so instead of asking for one. */
function showPlayingAs() {
  const handle = state.account?.handle;
  const panel = $("name").closest(".name-panel");
  for (const el of panel.children) {
    if (el.id !== "playing-as") el.hidden = Boolean(handle);
  }
  $("playing-as").hidden = !handle;
  $("playing-as-handle").textContent = handle || "";
  if (!handle && !$("name").value) $("name").value = storage(NAME_KEY) || "";
}

/** Build the create form, wire the forms and buttons, and fill in what is known. */
export function initLobby() {
  createForm = new SettingsForm("create");
  $("create-settings").appendChild(createForm.el);
  const summarise = () => {
    $("create-rules-summary").textContent = summary(createForm.values());
  };
  summarise();
  $("create-settings").addEventListener("change", summarise);

  // Create, and Practice: a room of one's own under the form's house rules;
  // practice then seats the chosen bots and starts the round.
  const opening = (form, then) => async (e) => {
    e.preventDefault();
    createForm.clearErrors();
    $(`${form}-error`).textContent = "";
    const name = readName();
    if (!name) return;
    const btn = $(`${form}-btn`);
    btn.disabled = true;
    try {
      await ensureSession(name);
      const reply = await state.conn.request("create_room", { settings: createForm.values() });
      showLobbyMessage("");
      setRoom(reply.room);
      await then();
    } catch (err) {
      if (err.code === "bad_setting" && createForm.setServerError(err)) {
        $("create-rules").open = true; // the rule refused, unfolded
        $(`create-${err.field}`)?.focus();
      } else if (state.room) toast(refusalText(err));
      else sessionError(err, $(`${form}-error`));
    } finally {
      btn.disabled = false;
    }
  };
  $("create-form").addEventListener("submit", opening("create", async () => {}));
  $("practice-form").addEventListener("submit", opening("practice", async () => {
    const pace = $("practice-pace").value;
    for (let i = 0; i < Number($("practice-bots").value); i++) {
      await state.conn.request("add_bot", { pace });
    }
    await state.conn.request("start");
  }));

  $("join-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("join-error").textContent = "";
    const name = readName();
    if (!name) return;
    const code = $("join-code").value.trim().toUpperCase();
    if (!/^[0-9A-Z]{6}$/.test(code)) {
      $("join-error").textContent = "A room code has 6 letters and digits.";
      $("join-code").focus();
      return;
    }
    const role = new FormData(e.target).get("role") || "player";
    const btn = $("join-btn");
    btn.disabled = true;
    try {
      await ensureSession(name);
      if (inviteCode() === code && !known.has(code)) {
        // Not told yet what the room is doing: say it first, join on the next press.
        const info = await lookUp(code);
        if (info && (info.state === "playing" || info.state === "break")) return;
      }
      const reply = await state.conn.request("join_room", { code, role });
      showLobbyMessage("");
      setRoom(reply.room);
    } catch (err) {
      sessionError(err, $("join-error"));
    } finally {
      btn.disabled = false;
    }
  });

  $("leave").addEventListener("click", async () => {
    // Leaving mid-round gives up your seat in the race: ask first.
    const room = state.room;
    if (room && room.state === "playing" && isPlayer()) {
      const question = room.daily
        ? "Leave your daily run? It ends here, as it stands: one run a day."
        : "Leave the room mid-round? Your seat in this round is given up.";
      if (!(await confirmInline($("leave"), question, "Yes, leave"))) return;
    }
    try {
      await state.conn.request("leave_room");
    } catch (err) {
      if (err.code !== "not_in_room") {
        toast(refusalText(err));
        return;
      }
    }
    leaveToLobby("");
  });

  $("copy-invite").addEventListener("click", async () => {
    const input = $("invite-link");
    try {
      await navigator.clipboard.writeText(input.value);
    } catch {
      input.select();
      document.execCommand?.("copy");
    }
    toast("Invite link copied.");
  });

  // An invited friend is told what the room is doing as soon as they have a
  // name (the look-up needs a session), so one press of Join then joins.
  $("name").addEventListener("change", () => lookUp(inviteCode()));

  // The name field belongs to neither form: Enter in it joins when a code is
  // there (an invite link filled it in), else moves on to the code.
  $("name").addEventListener("keydown", (e) => {
    if (e.key !== "Enter" || e.isComposing) return;
    e.preventDefault();
    if ($("join-code").value.trim()) $("join-form").requestSubmit();
    else $("join-code").focus();
  });

  window.addEventListener("hashchange", readInvite);
  $("name").addEventListener("input", showNameCount);
  $("name").value = storage(NAME_KEY) || "";
  showNameCount();
  onSession(showPlayingAs);
  readInvite();
}
