// klondike-race browser client: the entry point, and only that. It wires the
// modules together and draws every panel from one place, so the order panels are
// drawn in (and that a redraw covers all of them) lives in one spot. Each module
// says why it exists; docs/web.md has the whole map:
//
//   state.js     the session and room this client knows, and the redraw hook
//   session.js   the WebSocket session: hello, resume by token, reconnect
//   room.js      room events and snapshots folded into the room
//   lobby.js     name, create / join, invite links, leave
//   account.js   who you are in the header, the Account screen (devices, codes)
//   mydata.js    the Account screen's handle change, what others see, export, deletion
//   signin.js    keep your name (take a handle), sign in by code or link
//   recovery.js  recovery codes, shown once, copied or downloaded
//   passkeys.js  passkeys: sign in with one, add and remove them (WebAuthn)
//   play.js      your own board: sending moves, the buttons, keyboard shortcuts
//   table.js     the felt: your board, the spectator wall, or a message
//   hud.js       the race HUD, rival chips, seed line, notices, clocks
//   members.js   players and spectators (with the host's Remove)
//   host.js      host controls and the house-rules form
//   sheet.js     the score sheet
//   series.js    the podium at round over, the series table (rounds, match wins)
//   past.js      past deals: boards, move logs, replay check
//   results.js   the break between deals: results, boards, countdown, Ready
//   feedback.js  toast, screen-reader hint, lobby message, banner
//   confirm.js   the in-page "are you sure?" of what cannot be undone
//   reactions.js the reaction buttons, and everyone's reactions for a moment
//   profile.js   the Profile screen: a record, its charts (charts.js), its deals
//   friends.js   friends: add, answer, who is online where, join; invitations
//   ladders.js   ratings: the Ladders screen, a rated room's forecast, rating changes
//   daily.js     the daily deal: the lobby's panel, the Daily screen (/daily)
//   dailyrun.js  a run of the daily: Play today's draw 1 / 3, the leaderboard at its end
//   quick.js     Race now: a ladder's queue, waiting, bots instead, the countdown
//
// Underneath: net.js (the wire), board.js (drawing boards), gestures.js (clicks,
// drags, keys to moves), motion.js (glides, the deal, the win cascade), cards.js
// (which move a gesture means), replay.js (seed and log checks), settings.js
// (house-rule forms), words.js (codes in words), dom.js (element builder).

import { initAccount } from "./account.js";
import { dailyInPath, initDaily, openDaily } from "./daily.js";
import { initChallenge } from "./challenge.js";
import { initDailyRun, renderDailyBoard } from "./dailyrun.js";
import { initFriends, renderFriends } from "./friends.js";
import { initHost, renderHost } from "./host.js";
import { initHud, renderHud, renderNotices } from "./hud.js";
import { initLadders, renderRated } from "./ladders.js";
import { initLobby, inviteLink } from "./lobby.js";
import { renderMembers } from "./members.js";
import { initPasskeys } from "./passkeys.js";
import { initMyData } from "./mydata.js";
import { renderPast } from "./past.js";
import { initProfile, openFromPath } from "./profile.js";
import { initQuick, renderCountdown } from "./quick.js";
import { renderResults } from "./results.js";
import { initPlay, renderControls } from "./play.js";
import { initReactions } from "./reactions.js";
import { initRecovery } from "./recovery.js";
import { renderPodium, renderSeries } from "./series.js";
import { restoreSession } from "./session.js";
import { renderSheet } from "./sheet.js";
import { initSignIn } from "./signin.js";
import { $, onRender, state } from "./state.js";
import { renderTable } from "./table.js";

function renderAll() {
  const room = state.room;
  if (!room) return;
  document.title = `${room.code} · Klondike Race`;
  $("room-code").textContent = room.code;
  $("room-screen").dataset.state = room.state; // the phone layout follows it (style.css)
  $("invite-link").value = inviteLink(room.code);
  // Nobody joins a daily run: no invitation to it.
  $("invite-link").hidden = $("copy-invite").hidden = Boolean(room.daily);
  renderHud();
  renderCountdown();
  renderNotices();
  renderPodium();
  renderRated();
  renderDailyBoard();
  renderTable();
  renderResults();
  renderControls();
  renderMembers();
  renderHost();
  renderSheet();
  renderSeries();
  renderPast();
  renderFriends();
}

onRender(renderAll);
initPlay();
initHost();
initHud();
initReactions();
initLobby();
initRecovery();
initAccount();
initMyData();
initSignIn();
initPasskeys();
initProfile();
initFriends();
initLadders();
initDaily();
initDailyRun();
initChallenge();
initQuick();
restoreSession().finally(() => (dailyInPath() ? openDaily() : openFromPath()));
