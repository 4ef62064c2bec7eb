// Words for people. The server answers with stable codes (docs/protocol.md
// "Errors") and a message written for logs ("2C cannot go on 9D: needs one rank
// lower"); this module turns a code, with the cards the message names and every
// rule the engine found broken (`reasons`), into a sentence with card symbols and
// the rules in plain words, names a settings field by its label, says what the
// connection is doing, and what a move did to the score (from the engine's
// events); and the account's words: times as people say them, a device named by
// its browser, why a page is a guest again. Codes stay on the wire and in the
// Python client; a person reads words.
//
// Pure: no DOM, no state. tests/test_protocol_docs.py holds TEXTS to every code
// the server can send.

const TEXT = "\uFE0E"; // text presentation: keep suit symbols out of emoji fonts
const SYMBOL = { C: "♣" + TEXT, D: "♦" + TEXT, H: "♥" + TEXT, S: "♠" + TEXT };
const CARD = /\b([A2-9TJQK])([CDHS])\b/g;

/** "2C" → "2♣", "TD" → "10♦". */
export function cardText(code) {
  const rank = code[0] === "T" ? "10" : code[0];
  return `${rank}${SYMBOL[code[1]] || code[1]}`;
}

/** The card codes an engine message names, in order ("2C cannot go on 9D" → ["2C", "9D"]). */
export function cardsIn(message) {
  return [...String(message || "").matchAll(CARD)].map((m) => m[0]);
}

// Every code the server sends (protocol/messages.py ErrorCode, protocol/moves.py
// Reason), and the client's own "disconnected": a sentence for each. A function
// gets the cards the server's message names and the message itself.
export const TEXTS = {
  // The engine's reasons for refusing a move.
  bad_move: "That is not a move the game knows.",
  deal_over: "This deal is over for you: wait for the next one.",
  no_such_pile: "There is no such pile.",
  same_pile: "A card can't move onto its own pile.",
  stock_empty: "The stock is empty — turn the waste over to draw again.",
  stock_not_empty: "The waste can be turned over only when the stock is empty.",
  waste_empty: "The waste is empty: draw from the stock first.",
  pass_limit_reached: "No more passes through the stock: this room allows only so many.",
  pile_empty: "That pile is empty: there is nothing to move.",
  bad_count: "Only face-up cards move, and only a run that is in order.",
  not_alternating_colour: ([c, on], _message, reasons) => tableauText(c, on, reasons),
  not_one_lower: ([c, on], _message, reasons) => tableauText(c, on, reasons),
  only_king_on_empty: ([c]) =>
    c ? `Only a king can fill an empty pile, not the ${cardText(c)}` : "Only a king can fill an empty pile",
  foundation_wont_take: ([c]) =>
    c
      ? `The ${cardText(c)} can't go home yet — a foundation builds up in suit from the ace`
      : "Foundations build up in suit from the ace, one rank at a time.",
  foundation_empty: "That foundation is empty: there is no card to take back.",
  foundation_to_tableau_off: "This room's rules keep cards on the foundations once they are home.",
  undo_off: "Undo is off in this room.",
  undo_not_allowed: "There is nothing here to undo.",
  auto_complete_unavailable: "Auto-complete works once every card is face up and the stock and waste are empty.",
  // The room's and the connection's.
  bad_frame: "The server could not read that request.",
  bad_request: "The server could not read that request.",
  unknown_type: "The server does not know that request.",
  unsupported_version: "This page is older than the server: reload it.",
  hello_first: "The page spoke before saying hello: reload it.",
  already_hello: "This page said hello twice: reload it.",
  unknown_token: "Your session has expired: pick a name and join again.",
  bad_name: (_cards, message) => `That name won't do: ${message || "1–24 visible characters"}.`,
  bad_setting: "That setting is out of range.",
  no_such_room: "There is no open room with that code: check it, or ask for a new invite.",
  already_in_room: "You are in a room already: leave it first.",
  not_in_room: "You are not in a room any more.",
  room_full: "That room is full.",
  no_spectators: "That room takes no spectators.",
  not_host: "Only the host can do that.",
  not_a_player: "Spectators watch: only players move.",
  wrong_state: "That can't be done right now.",
  no_such_player: "That player is not in the room any more.",
  wrong_deal: "That deal is over; the board is being brought up to date.",
  wrong_move_number: "Your board was behind the server's; it is being brought up to date.",
  rate_limited: "Too fast — slow down a little.",
  limit_reached: "Too many tries from this address this minute: wait a minute and try again.",
  storage_unavailable: "The server could not save that: nothing happened, try again.",
  storage_uncertain: "The server lost track of whether that was saved: your board is being checked.",
  internal_error: "Something went wrong on the server; the room keeps going.",
  unknown_handle: "Nobody has that handle.",
  record_private: "This record is private: its owner does not show it.",
  no_such_deal: "That deal is not kept any more, or is not shown to you.",
  // Friends.
  not_friends: "You and that player are not friends (any more).",
  disconnected: "Not connected to the server: it will be sent once the connection is back.",
  // Accounts.
  bad_handle: (_cards, message) => `That handle won't do: ${message || "2–24 visible characters"}.`,
  handle_in_use: "That handle is someone else's: pick another.",
  already_signed_in: "This page is signed in already.",
  not_signed_in: "That needs an account: keep your name or sign in first.",
  bad_code: "That code does not work: it may be mistyped, used already, or expired.",
  bad_passkey: "That passkey could not sign you in here.",
  handle_change_too_soon: "A handle can be changed once in 30 days.",
  wrong_handle: "That is not this account's handle: type it exactly to delete the account.",
  not_ratable: "A rated room races signed-in players only, and no bots.",
  rated_locked: "A rated round is running: its rules stay as they are until it is over.",
  daily_played: "You have played this daily already: one run a day. Here is the leaderboard.",
  daily_not_over: "Not yet: this comes once your own run of that daily is over.",
  day_not_over: "Not yet: the leader's moves are shown once that day is over.",
  challenge_taken: "You have played this challenge already: one run a challenge. Here are both results.",
  challenge_withdrawn: "This challenge was withdrawn: the player who made it has deleted their account.",
  already_queued: "You are waiting for a quick match: leave the queue first.",
  not_queued: "You are not waiting for a quick match.",
  bots_not_yet: "Bots are offered after 30 seconds in the queue.",
};

function isRed(code) {
  return code[1] === "D" || code[1] === "H";
}

/**
 * A card refused on a pile, naming each rule it breaks (`reasons`: what the
 * engine found, docs/protocol.md `move`): "The Q♠ can't go on the 8♣ — both are
 * black, and it is not one rank lower: build down one rank at a time in
 * alternating colours".
 */
function tableauText(c, on, reasons) {
  const colour = reasons.includes("not_alternating_colour");
  const rank = reasons.includes("not_one_lower");
  const why = [];
  if (colour && c) why.push(`both are ${isRed(c) ? "red" : "black"}`);
  if (rank) why.push("it is not one rank lower");
  const rule = colour && !rank ? "build down in alternating colours" : "build down one rank at a time in alternating colours";
  if (!c || !on) return `${rule[0].toUpperCase()}${rule.slice(1)}.`;
  return `The ${cardText(c)} can't go on the ${cardText(on)} — ${why.join(", and ")}: ${rule}`;
}

/**
 * The sentence for a refusal: `err` is a ServerError (code, message, and for a
 * move the engine refused, `reasons`). Unknown codes fall back on the server's
 * own message, so nothing is ever left blank.
 */
export function refusalText(err) {
  const code = err?.code || "error";
  const message = err?.message || "";
  const reasons = Array.isArray(err?.frame?.reasons) ? err.frame.reasons : [code];
  const text = TEXTS[code];
  if (typeof text === "function") return text(cardsIn(message), message, reasons);
  return text || message || code;
}

// The engine's scoring events (docs/protocol.md `move`, `events`) in words.
const EVENT_TEXT = {
  waste_tableau: "waste to pile",
  waste_foundation: "card home",
  tableau_foundation: "card home",
  turn_over: "card turned up",
  foundation_tableau: "card back from home",
  recycle: "recycle",
};

/**
 * What a move did to the score, where the score is: "−100 recycle". `delta` is the
 * server's new score less the one before; `result` the move's outcome, whose
 * events the engine counted (an undo takes back what its move scored).
 */
export function scoreChangeText(delta, result) {
  const sign = delta > 0 ? "+" : "−";
  const causes = result?.undone ? ["undo"] : [...new Set((result?.events || []).map((e) => EVENT_TEXT[e] || e))];
  return `${sign}${Math.abs(delta)}${causes.length ? ` ${causes.join(", ")}` : ""}`;
}

/** A settings field's range in words, from its form spec (settings.js FIELDS). */
function rangeText(f) {
  if (f.type === "checkbox") return "on or off";
  if (f.type === "select") return `one of ${f.options.map(([, text]) => text).join(", ")}`;
  const step = f.step > 1 ? `, in steps of ${f.step}` : "";
  return `a whole number from ${f.min} to ${f.max}${step}`;
}

/** A refused setting named by its label: "Deals per round must be a whole number from 1 to 20." */
export function settingErrorText(f, message = "") {
  if (!f) return message;
  if (!message || message.startsWith(`${f.name} must be`)) return `${f.label} must be ${rangeText(f)}.`;
  // Another refusal (settings fine alone but not together): the server names the
  // field by its wire name; people know it by its label.
  const text = message.replaceAll(f.name, f.label.toLowerCase());
  return `${text[0].toUpperCase()}${text.slice(1)}.`;
}

/** What the connection is doing, in words, by the state session.js gives it. */
// Before a name is given nothing is wrong: the page has not needed the server yet.
export const CONNECTION_TEXT = {
  idle: "Not in a room",
  connecting: "Connecting…",
  online: "Connected",
  reconnecting: "Reconnecting…",
  lost: "Reconnecting… the server is not answering yet",
  replaced: "Open in another tab",
};

/** Over your own board while it takes no moves for a reason other than the deal. */
export const PAUSED_TEXT = {
  reconnecting: "Reconnecting…",
  replaced: "Open in another tab — ",
  replacedAction: "use it here",
};

/**
 * Why a deal ended (its history entry's `ended_by`), for the players' notice;
 * `host`: the name of the host who moved on ("you" on the host's own page).
 */
export function dealEndText(number, endedBy, host = null) {
  if (endedBy === "host") {
    if (host === "you") return `Deal ${number} ended: you started the next deal.`;
    return `Deal ${number} ended: ${host ? `${host}, the host,` : "the host"} started the next deal.`;
  }
  if (endedBy === "time") return `Deal ${number} ended: time is up.`;
  return `Deal ${number} is over for everyone.`;
}

/** Who hosts now, for everyone, when the host changes (the host left). */
export function newHostText(name, mine, before, left) {
  const why = before ? ` ${before} ${left ? "left" : "handed it on"}.` : "";
  return mine ? `You are the host now: the host controls are yours.${why}` : `${name} is the host now.${why}`;
}

/** Why a room closed (`room_closed` reason), for the lobby's message; `mine`: I closed it. */
export function roomClosedText(reason, mine = false) {
  if (reason === "host" && mine) return "You closed the room.";
  return {
    host: "The host closed the room.",
    idle: "The room closed: nobody had been in it for 30 minutes.",
    empty: "The room closed: everyone left.",
    expired: "The room closed: it was never started.",
  }[reason] || "The room was closed.";
}

// Accounts (account.js, signin.js, recovery.js): times said the way people say
// them, a device named by its browser, and why a page is a guest again.

/** "just now", "3 min ago", "5 h ago", then the date; `t` and `now` in unix seconds. */
export function agoText(t, now) {
  const s = Math.max(0, now - t);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return dateText(t);
}

/** A day in words, "2 December 2026" (unix seconds). */
export function dateText(t) {
  return new Date(t * 1000).toLocaleDateString("en-GB", { day: "numeric", month: "long", year: "numeric" });
}

/** What a new device calls itself on the account's list ("Chrome on Android"), from its user agent. */
export function deviceLabel(ua) {
  const browser = [
    [/Edg\//, "Edge"], [/OPR\//, "Opera"], [/Firefox\//, "Firefox"], [/Chrom(e|ium)\//, "Chrome"], [/Safari\//, "Safari"],
  ].find(([re]) => re.test(ua))?.[1] || "A browser";
  const system = [
    [/Android/, "Android"], [/iPhone/, "iPhone"], [/iPad/, "iPad"], [/Windows/, "Windows"],
    [/Mac OS X|Macintosh/, "macOS"], [/CrOS/, "ChromeOS"], [/Linux/, "Linux"],
  ].find(([re]) => re.test(ua))?.[1];
  return system ? `${browser} on ${system}` : browser;
}

/** A seat taken by another connection (4001): a guest's by another tab, an account's by any device. */
export const REPLACED_TEXT = {
  guest: {
    lobby: "This session was opened in another tab or window.",
    room: "This seat was opened in another tab or window.",
  },
  account: {
    lobby: "Your account is in use in another tab or on another device.",
    room: "Your account is playing in another tab or on another device.",
  },
};

/** Why this page is a guest again (session.js backToGuest). */
export const SIGNED_OUT_TEXT = {
  elsewhere: "This device was signed out. You can play on as a guest, or sign in again.",
  here: "You signed out on this device. You can play on as a guest, or sign in again.",
};

/** A device on the account's list: when it was last used (this one is in use now). */
export function deviceUsedText(device, now) {
  return device.current ? "in use now" : `last used ${agoText(device.last_used, now)}`;
}

/** A sign-in code's time left, `ms` of it. */
export function expiresText(ms) {
  if (ms <= 0) return "This code has expired: make a new one.";
  const s = Math.ceil(ms / 1000);
  return `Expires in ${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** The browser's refusal of a passkey ceremony (cancelled, timed out, none here) in words; null for anything else. */
export function passkeyRefusalText(err) {
  switch (err?.name) {
    case "NotAllowedError":
      return "No passkey was used: cancelled, or this device has none for this site.";
    case "InvalidStateError":
      return "This device has a passkey for your account already.";
    case "SecurityError":
      return "Passkeys do not work at this address: open the page by the server's name over HTTPS, or on localhost.";
    default:
      return null;
  }
}

export const PASSKEYS_INSECURE = "Passkeys need a secure page: open this site over HTTPS or on localhost.";
export const PASSKEYS_BY_ADDRESS = "Passkeys need the server's name: open this site by its name (or localhost), not by its address.";

/** Why this page can have no passkeys (null: it can): WebAuthn wants a secure context and a name, not an IP address. */
export function passkeysUnavailable(loc, secure) {
  if (!secure) return PASSKEYS_INSECURE;
  if (/^[\d.]+$|^\[/.test(loc.hostname)) return PASSKEYS_BY_ADDRESS;
  return null;
}
/** The Account screen's own data: the handle, what others see, export, deletion (mydata.js). */
export const MY_DATA_TEXT = {
  changeAllowed: (t) => `You can change it again from ${dateText(t)}.`,
  changeOpen: "You can change it now; after that, once in 30 days. Your old handle becomes free for anyone.",
  changed: (handle) => `Your handle is ${handle} now.`,
  recordShown: "Your record is shown to others.",
  recordHidden: "Your record is private: only you see it.",
  onlineShown: "Friends see when you are online, and your room.",
  onlineHidden: "Friends do not see whether you are online.",
  exported: "Your data is ready: the download has started.",
  deleteAsk: (handle) => `Type your handle, ${handle}, to delete your account for good.`,
  deleted: "Your account is deleted, with everything kept about it. You can play on as a guest.",
};

/** The friends panel, the room's "Invite a friend", and a friend's invitation (friends.js). */
export const FRIEND_TEXT = {
  button: (asking) => (asking ? `Friends (${asking})` : "Friends"),
  signInFirst: "Take a handle to have friends: they see you online and can join your room in one click.",
  signInForLink: "You opened a friend link: take a handle or sign in, and you will be friends at once.",
  requestsTitle: "Requests",
  friendsTitle: "Your friends",
  noFriends: "No friends yet: add one by handle, or send them your friend link.",
  recordsTitle: "Your record against each friend (rounds raced together)",
  friend: "Friend",
  rounds: "Rounds",
  you: "You ahead",
  them: "They ahead",
  hidden: "keeps online status private",
  offline: "offline",
  online: "online, not in a room",
  inRoom: (code) => `online, in room ${code}`,
  inYourRoom: "online, in your room",
  asksYou: "asks to be your friend",
  youAsked: "asked: waiting for an answer",
  accept: "Accept",
  decline: "Decline",
  withdraw: "Take back",
  unfriend: "Remove",
  join: "Join",
  watch: "Watch",
  invite: "Invite",
  dismiss: "Dismiss",
  asked: (handle) => `Asked ${handle} to be friends.`,
  nowFriends: (handle) => `You and ${handle} are friends now.`,
  linkUsed: "Friend link used: you are friends now.",
  linkCopied: "Friend link copied: anyone who opens it becomes your friend.",
  newLinkCopied: "A new friend link is copied; the old one no longer works.",
  linkShown: "Copy the friend link above and send it.",
  invited: (handle) => `Invited ${handle} (if they are online, they see it now).`,
  invitedBy: (from, room, role) =>
    role === "spectator" ? `${from} invites you to watch room ${room}.` : `${from} invites you to room ${room}.`,
  leaveFirst: "Leave your room first to join another.",
};

/**
 * A refusal on the Account screen: as anywhere (refusalText), except that a
 * request that found no connection is not sent later, as a move is: it says so.
 */
export function accountRefusal(err) {
  if (!err || !err.code) return ACCOUNT_TEXT.noServer;
  return err.code === "disconnected" ? ACCOUNT_TEXT.offline : refusalText(err);
}

/** The Account screen's sentences (account.js, signin.js, recovery.js). */
export const ACCOUNT_TEXT = {
  since: (t) => `Yours since ${dateText(t)}.`,
  back: (inRoom) => (inRoom ? "Back to the room" : "Back to the lobby"),
  device: "A device",
  thisDevice: "this device",
  signOut: (current) => (current ? "Sign out here" : "Sign out"),
  signedOutThat: (label) => (label ? `Signed out: ${label}.` : "That device was signed out already."),
  everywhere: ["Sign out every device, this one too?", "Yes, sign out everywhere"],
  makeLink: (shown) => (shown ? "Make a new code" : "Show a sign-in code"),
  linkCopied: "Sign-in link copied.",
  newSet: ["The recovery codes you have now stop working. Make a new set?", "Yes, a new set"],
  handleLength: "A handle has 2 to 24 characters.",
  kept: (handle) => `${handle} is yours. Sign in on your other devices from your account.`,
  leaveSeat: (code) => [`You are playing in room ${code} as a guest: signing in leaves that seat. Sign in?`, "Yes, sign in"],
  signedIn: (handle) => `Signed in as ${handle}.`,
  noCode: "Type the code first.",
  noServer: "Cannot reach the server: try again in a moment.",
  offline: "Not connected to the server: try again once the page is connected.",
  signedInAlready: (handle) =>
    `This browser is signed in as ${handle}. To use that sign-in code here, sign out here first.`,
  codesCopied: "Recovery codes copied.",
  codesSelected: "Select and copy the codes, or download them.",
  codesFile: (handle, origin, t) => [
    `Klondike Race recovery codes for ${handle} (${origin}, ${dateText(t)})`,
    "Each works once; keep them somewhere safe. A new set replaces these.",
  ],
};

/** A daily run's ghosts (hud.js) and the comparison after it (dailyrun.js). */
export const GHOST_TEXT = {
  tag: "ghost",
  kind: { leader: "Leader", median: "Median" }, // a friend's ghost shows their handle
  title: (name, kind) => (kind === "friend" ? `${name}'s run earlier today`
    : kind === "challenger" ? `${name}'s run: they challenged you`
    : `${kind === "leader" ? "The leader" : "The median run"}: ${name}`),
  compareTitle: "Your run against the leader's",
  compareAxis: "seconds to each card home",
  you: "You",
  leader: (name) => `Leader (${name})`,
  gap: (g) => g.you === null
    ? `The gap opened at card ${g.card}: you never got it home; the leader had it home at ${g.leader.toFixed(1)} s.`
    : `The gap opened at card ${g.card}: you had it home at ${g.you.toFixed(1)} s, the leader at ${g.leader.toFixed(1)} s (${g.grew.toFixed(1)} s lost on that card).`,
  noGap: "You never fell behind the leader.",
  youLead: "You lead the day: this is your own run.",
  leaderLine: "Replay the leader's run",
};

// Challenges (challenge.js): a past deal sent to a friend as a link, played once.
export const CHALLENGE_TEXT = {
  make: "Challenge a friend",
  making: "Making the link…",
  copy: "Copy",
  copied: "Copied: send it to a friend. Whoever opens it plays this deal once, with your run as a ghost.",
  linkLabel: "Challenge link",
  title: "A challenge",
  from: (name, ladder) => `${name} challenges you to a deal they played (${ladder}). One run: your clock starts at your first move, and their run races you as a ghost.`,
  hidden: "Their result shows once your run is over.",
  play: "Play the challenge",
  resume: "Back to your run",
  yours: "This is your own challenge: send the link to a friend.",
  resultTitle: "The challenge: both results",
  who: "Player",
  result: "Result",
  time: "Time",
  moves: "Moves",
  home: "Cards home",
  score: "Score",
  won: (name) => `${name} won the challenge.`,
  even: "A tie.",
  listTitle: "Challenges",
  made: (ladder) => `You challenged, ${ladder}`,
  taken: (name, ladder) => `${name} challenged you, ${ladder}`,
  notYet: "not over yet",
  ghostKind: "Challenger",
};
