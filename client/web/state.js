// The client's one copy of the session and the room, and the questions every panel
// asks of it (who am I, am I the host, is this deal over, where is my board).
//
// It sits apart so the panels can share it without importing one another: each
// panel reads `state` and draws itself, and any module that changed `state` calls
// `render()`, which app.js points at its redraw of every panel.

export const TOKEN_KEY = "klondike-race.token"; // a guest's session token
// A signed-in device's token (docs/protocol.md "Accounts"): kept apart from the
// guest's, so a page can tell at load which `hello` to say (`device` or `token`).
export const DEVICE_KEY = "klondike-race.device";
export const NAME_KEY = "klondike-race.name";
export const $ = (id) => document.getElementById(id);

export const state = {
  conn: null,
  session: null, // {token, player, name}; a signed-in session's token is its device token
  account: null, // the own-account view ({handle, player, since, …}) when signed in, else null
  accountOpen: false, // the Account screen shows (account.js), over the lobby or the room
  signingOut: false, // this page asked to sign itself out: its 4011 is no surprise
  room: null, // the room snapshot, kept current by events
  names: {}, // every player id -> name seen, so a removed player keeps a name on the sheet
  firsts: {}, // deal number -> {player, bonus}
  seeds: {}, // deal number -> {seed, commitment, ok: true|false}
  // The "Past deals" panel; `logs` holds the logs fetched with deal_log (by deal
  // number; null while on their way), `full` each history entry with its logs.
  past: { pick: null, key: null, explained: new Map(), logs: new Map(), full: new WeakMap(), lines: new Map() },
  dealEnded: {}, // deal number -> server ms when it ended (for the clock)
  seriesOpen: new Set(), // round numbers whose deals are unfolded in the series panel
  reconnectDelay: 500,
  reconnectTimer: null,
  connection: "idle", // words.js CONNECTION_TEXT: idle, connecting, online, reconnecting, lost, replaced
  closing: false, // we closed the socket on purpose
  replaced: false, // the session was resumed elsewhere (4001)
  resignArmed: null,
  lastMoveError: null,
  news: [], // feedback.js news(): notices that expire by themselves
  scoreChange: null, // {deal, delta, text, until}: what the last move did to your score
  dealStartedAt: {}, // deal number -> local ms it was dealt (its notices expire from there)
  useHere: null, // session.js: take the seat back from another tab
  ratingChanges: {}, // round number -> the room's rated round's changes (series.js), until another room
  ghosts: null, // a daily run's ghosts: {code, deal, list: [{ghost, name, kind, progress}]}
};

export function storage(key, value) {
  try {
    if (value === undefined) return localStorage.getItem(key);
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    /* storage may be unavailable (private mode); the session then lasts a page */
  }
  return null;
}

export const me = () => state.session?.player;
// A daily run's room is the server's: its one player hosts nothing there (dailyrun.js).
export const isHost = () => state.room && !state.room.daily && state.room.host === me();
export const isPlayer = () => state.room && state.room.role === "player";
/** Whether the server is answering: a page that lost it takes no moves and stops its clocks. */
export const isConnected = () => state.connection === "online";

export function rememberNames(room) {
  // The series names everyone who played a finished round, those who left too.
  Object.assign(state.names, room.series?.names || {});
  for (const m of [...(room.players || []), ...(room.spectators || [])]) state.names[m.id] = m.name;
}

export function nameOf(id) {
  return state.names[id] || id;
}

export function dealIsOver(room, number) {
  return (room.history || []).some((d) => d.number === number);
}

export function myBoard() {
  const room = state.room;
  return isPlayer() && room.deal ? room.deal.board || null : null;
}

const resumeWaiters = new Set();

/**
 * The next resume of the session after a drop: resolves true once it is back in
 * its room, false when it is not coming back (or not within `ms`). A move in
 * flight when the connection went waits on it to be sent again (play.js); it
 * lives here rather than in session.js, which settles it, so that play.js need
 * not import the module that imports it.
 */
export function nextResume(ms) {
  return new Promise((resolve) => {
    const settle = (ok) => {
      clearTimeout(timer);
      resumeWaiters.delete(settle);
      resolve(ok);
    };
    const timer = setTimeout(() => settle(false), ms);
    resumeWaiters.add(settle);
  });
}

/** session.js: the session resumed (`ok`: into its room), or will not. */
export function settleResume(ok) {
  for (const settle of [...resumeWaiters]) settle(ok);
}

const sessionWatchers = [];

/** Panels drawn from the session rather than the room (the header, the Account screen, the lobby's name). */
export function onSession(fn) {
  sessionWatchers.push(fn);
}

/** session.js: the session or the account changed (signed in, out, a handle taken). */
export function sessionChanged() {
  for (const fn of sessionWatchers) fn();
}

let renderer = null;

/** app.js registers the redraw of every panel here. */
export function onRender(fn) {
  renderer = fn;
}

/** Redraw the room from `state` (after an event, a snapshot or a reply). */
export function render() {
  renderer?.();
}
