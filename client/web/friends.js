// Friends: the panel where a signed-in player adds friends (by handle, or by
// sharing a friend link), answers requests, sees which friends are online and in
// which room, and joins or watches them in one click; the room page's "Invite a
// friend", and the notice a friend's invitation raises.
//
// A friend link is a secret the server keeps only hashed, so it cannot be shown
// twice: the page keeps the one it was given (per handle, in localStorage) and
// makes a new one only when it has none, or when asked to (which stops the old
// one). A page opened at `/#friend=LINK` befriends its owner as soon as it is
// signed in, and drops the link from the address bar so a reload does not send
// it again.

import { h, replaceChildren } from "./dom.js";
import { placeFloating, toast } from "./feedback.js";
import { setRoom } from "./room.js";
import { $, onSession, state, storage } from "./state.js";
import { FRIEND_TEXT, refusalText } from "./words.js";

const LINK_KEY = "klondike-race.friend-link.";
const LINK = /(?:^#|&)friend=(f\.[A-Za-z0-9_-]{16,64})/;

let listing = []; // the last `friends` reply's entries
let arrivedLink = null; // a friend link the page was opened at, not used yet

const signedIn = () => Boolean(state.account && state.conn?.isOpen);

function ownLinkKey() {
  return LINK_KEY + (state.account?.player || "");
}

/** Ask the server for the list, and draw it. */
export async function refreshFriends() {
  if (!signedIn()) {
    listing = [];
    renderFriends();
    return;
  }
  try {
    const reply = await state.conn.request("friends");
    listing = reply.friends;
    $("friends-error").textContent = "";
  } catch (err) {
    $("friends-error").textContent = refusalText(err);
  }
  renderFriends();
}

async function ask(kind, fields, done) {
  $("friends-error").textContent = "";
  try {
    const reply = await state.conn.request(kind, fields);
    listing = reply.friends;
    renderFriends();
    if (done) toast(done);
    return true;
  } catch (err) {
    $("friends-error").textContent = refusalText(err);
    return false;
  }
}

async function join(code, role) {
  if (state.room?.code === code) {
    closeFriends();
    return;
  }
  try {
    if (state.room) throw new Error(FRIEND_TEXT.leaveFirst);
    const reply = await state.conn.request("join_room", { code, role });
    setRoom(reply.room);
    closeFriends();
    $("friend-invite").hidden = true;
    placeFloating();
  } catch (err) {
    toast(err.code ? refusalText(err) : err.message);
  }
}

async function invite(friend) {
  try {
    await state.conn.request("invite_friend", { handle: friend.handle });
    toast(FRIEND_TEXT.invited(friend.handle));
  } catch (err) {
    toast(refusalText(err));
  }
}

function friendRow(f) {
  const key = f.handle;
  const here = Boolean(f.room) && f.room === state.room?.code;
  const where = f.online === undefined ? FRIEND_TEXT.hidden
    : !f.online ? FRIEND_TEXT.offline
      : here ? FRIEND_TEXT.inYourRoom : f.room ? FRIEND_TEXT.inRoom(f.room) : FRIEND_TEXT.online;
  const buttons = [];
  if (f.room && !here) {
    buttons.push(h("button", { type: "button", class: "btn small primary", "data-focus-key": `join-${key}`,
      onclick: () => join(f.room, "player") }, FRIEND_TEXT.join));
    buttons.push(h("button", { type: "button", class: "btn small", "data-focus-key": `watch-${key}`,
      onclick: () => join(f.room, "spectator") }, FRIEND_TEXT.watch));
  }
  if (state.room && !here) {
    buttons.push(h("button", { type: "button", class: "btn small", "data-focus-key": `invite-${key}`,
      onclick: () => invite(f) }, FRIEND_TEXT.invite));
  }
  buttons.push(h("button", { type: "button", class: "btn small ghost", "data-focus-key": `unfriend-${key}`,
    onclick: () => ask("unfriend", { handle: f.handle }) }, FRIEND_TEXT.unfriend));
  return h("li", { class: "friend", dataset: { handle: f.handle, online: String(Boolean(f.online)) } },
    h("span", { class: "friend-name" },
      h("span", { class: `dot ${f.online ? "on" : "off"}`, "aria-hidden": "true" }), f.handle),
    h("span", { class: "friend-where" }, where),
    h("span", { class: "friend-actions" }, buttons));
}

function requestRow(f) {
  const key = f.handle;
  const buttons = f.state === "asking"
    ? [
      h("button", { type: "button", class: "btn small primary", "data-focus-key": `accept-${key}`,
        onclick: () => ask("answer_friend", { handle: f.handle, accept: true }, FRIEND_TEXT.nowFriends(f.handle)) },
      FRIEND_TEXT.accept),
      h("button", { type: "button", class: "btn small", "data-focus-key": `decline-${key}`,
        onclick: () => ask("answer_friend", { handle: f.handle, accept: false }) }, FRIEND_TEXT.decline),
    ]
    : [h("button", { type: "button", class: "btn small ghost", "data-focus-key": `withdraw-${key}`,
      onclick: () => ask("unfriend", { handle: f.handle }) }, FRIEND_TEXT.withdraw)];
  const said = f.state === "asking" ? FRIEND_TEXT.asksYou : FRIEND_TEXT.youAsked;
  return h("li", { class: "friend request", dataset: { handle: f.handle, state: f.state } },
    h("span", { class: "friend-name" }, f.handle),
    h("span", { class: "friend-where" }, said),
    h("span", { class: "friend-actions" }, buttons));
}

/** Each friend's record against you (the Friends panel's, and your profile's). */
export function recordTable(friends) {
  if (!friends.length) return null;
  const head = h("tr", {},
    h("th", { scope: "col" }, FRIEND_TEXT.friend),
    h("th", { scope: "col" }, FRIEND_TEXT.rounds),
    h("th", { scope: "col" }, FRIEND_TEXT.you),
    h("th", { scope: "col" }, FRIEND_TEXT.them));
  const rows = friends.map((f) => h("tr", { dataset: { handle: f.handle } },
    h("th", { scope: "row" }, f.handle),
    h("td", {}, String(f.record?.rounds ?? 0)),
    h("td", {}, String(f.record?.won ?? 0)),
    h("td", {}, String(f.record?.lost ?? 0))));
  return h("table", { class: "friend-records" },
    h("caption", {}, FRIEND_TEXT.recordsTitle), h("thead", {}, head), h("tbody", {}, rows));
}

/** Draw the panel from the last list (nothing asked of the server). */
export function renderFriends() {
  const body = $("friends-body");
  if (!body) return;
  $("invite-friend").hidden = !(state.account && state.room && !state.room.daily);
  $("friends-open").hidden = !state.account;
  // Requests waiting for your answer show on the button, so they are not missed.
  const asking = state.account ? listing.filter((f) => f.state === "asking").length : 0;
  $("friends-open").textContent = FRIEND_TEXT.button(asking);
  if (!$("friends-dialog").open) return; // app.js redraws on every room event: only what shows
  if (!state.account) {
    replaceChildren(body, h("p", { class: "note" }, FRIEND_TEXT.signInFirst));
    return;
  }
  const requests = listing.filter((f) => f.state !== "friends");
  const friends = listing.filter((f) => f.state === "friends");
  // Online friends first: they are the ones to join or invite now.
  friends.sort((a, b) => Number(Boolean(b.online)) - Number(Boolean(a.online)));
  replaceChildren(body,
    requests.length ? h("section", { "aria-label": FRIEND_TEXT.requestsTitle },
      h("h4", {}, FRIEND_TEXT.requestsTitle),
      h("ul", { class: "friend-list", id: "friend-requests" }, requests.map(requestRow))) : null,
    h("h4", {}, FRIEND_TEXT.friendsTitle),
    friends.length ? h("ul", { class: "friend-list", id: "friend-list" }, friends.map(friendRow))
      : h("p", { class: "note" }, FRIEND_TEXT.noFriends),
    recordTable(friends));
}

async function copyLink(fresh) {
  let url = fresh ? null : storage(ownLinkKey());
  if (!url) {
    try {
      const reply = await state.conn.request("friend_link");
      url = reply.url;
      storage(ownLinkKey(), url);
    } catch (err) {
      $("friends-error").textContent = refusalText(err);
      return;
    }
  }
  $("friend-link").value = url;
  $("friend-link").hidden = false;
  try {
    await navigator.clipboard.writeText(url);
    toast(fresh ? FRIEND_TEXT.newLinkCopied : FRIEND_TEXT.linkCopied);
  } catch {
    $("friend-link").select();
    toast(FRIEND_TEXT.linkShown);
  }
}

async function showOnline(show) {
  $("friends-error").textContent = "";
  try {
    const reply = await state.conn.request("account_settings", { shows_online: show });
    state.account = reply.account; // the Account screen's switch says the same
  } catch (err) {
    $("friends-see-me").checked = !show;
    $("friends-error").textContent = refusalText(err);
  }
}

export function openFriends() {
  const dialog = $("friends-dialog");
  if (!dialog.open) dialog.showModal();
  $("friends-see-me").checked = state.account?.shows_online !== false;
  const url = storage(ownLinkKey());
  $("friend-link").value = url || "";
  $("friend-link").hidden = !url;
  renderFriends();
  refreshFriends();
}

function closeFriends() {
  const dialog = $("friends-dialog");
  if (dialog.open) dialog.close();
}

/** A friend's invitation (`friend_invite`): a notice with Join, whatever screen is up. */
export function friendInvite(frame) {
  const el = $("friend-invite");
  replaceChildren(el,
    h("span", {}, FRIEND_TEXT.invitedBy(frame.from, frame.room, frame.role)),
    h("button", { type: "button", class: "btn small primary", id: "friend-invite-join",
      onclick: () => join(frame.room, frame.role) }, frame.role === "spectator" ? FRIEND_TEXT.watch : FRIEND_TEXT.join),
    h("button", { type: "button", class: "btn small ghost", onclick: () => { el.hidden = true; } },
      FRIEND_TEXT.dismiss));
  el.hidden = false;
  placeFloating(); // where it covers nothing in use (the header's Friends, the board)
}

function readFriendLink() {
  const m = LINK.exec(location.hash);
  if (!m) return;
  arrivedLink = m[1];
  // Used once: a reload or a shared screenshot of the address bar does not carry it.
  history.replaceState(null, "", location.pathname + location.search);
  useArrivedLink();
}

async function useArrivedLink() {
  if (!arrivedLink) return;
  if (!signedIn()) {
    toast(FRIEND_TEXT.signInForLink);
    return;
  }
  const link = arrivedLink;
  arrivedLink = null;
  openFriends();
  await ask("befriend", { link }, FRIEND_TEXT.linkUsed);
}

/** The session is (re)opened, signed in or not, or a handle was just taken. */
function sessionChanged() {
  if (signedIn()) refreshFriends(); // for the requests waiting on the button
  else renderFriends();
  useArrivedLink();
}

export function initFriends() {
  $("friends-open").addEventListener("click", openFriends);
  $("invite-friend").addEventListener("click", openFriends);
  $("friends-close").addEventListener("click", closeFriends);
  $("friends-refresh").addEventListener("click", refreshFriends);
  $("friend-link-copy").addEventListener("click", () => copyLink(false));
  $("friend-link-new").addEventListener("click", () => copyLink(true));
  $("friends-see-me").addEventListener("change", (e) => showOnline(e.target.checked));
  $("friend-add").addEventListener("submit", async (e) => {
    e.preventDefault();
    const handle = $("friend-handle").value.trim();
    if (!handle) return;
    if (await ask("befriend", { handle }, FRIEND_TEXT.asked(handle))) $("friend-handle").value = "";
  });
  onSession(sessionChanged);
  window.addEventListener("hashchange", readFriendLink);
  readFriendLink();
  renderFriends();
}
