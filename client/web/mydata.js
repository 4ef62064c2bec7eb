// The signed-in player's control over their data, on the Account screen: a new
// handle (once in 30 days: the screen says from when), the two switches of what
// others see, the export of everything the server keeps (a file made in the
// page, a Blob URL: the policy allows no inline data and no other origin), and
// deleting the account, which asks for the handle typed again in place of the
// button rather than in a dialog, so the room underneath keeps running.

import { toast } from "./feedback.js";
import { backToGuest } from "./session.js";
import { $, NAME_KEY, onSession, sessionChanged, state, storage } from "./state.js";
import { MY_DATA_TEXT, refusalText } from "./words.js";

const HANDLE_DAYS = 30;
let exported = null; // the export's object URL, revoked when a new one is made or the account goes

/** The own-account view as the server now has it (a handle changed, a switch set). */
function accountIs(account) {
  state.account = account;
  if (state.session) state.session.name = account.handle;
  state.names[account.player] = account.handle;
  storage(NAME_KEY, account.handle);
  sessionChanged();
}

function renderMyData() {
  const account = state.account;
  if (!account) {
    dropExport();
    hideDelete();
    return;
  }
  const allowed = account.handle_changed + HANDLE_DAYS * 86400;
  const now = (state.conn ? state.conn.serverNow() : Date.now()) / 1000;
  $("change-handle-note").textContent = now < allowed ? MY_DATA_TEXT.changeAllowed(allowed) : MY_DATA_TEXT.changeOpen;
  $("shows-record").checked = account.shows_record;
  $("shows-online").checked = account.shows_online;
  $("shows-record").title = account.shows_record ? MY_DATA_TEXT.recordShown : MY_DATA_TEXT.recordHidden;
  $("shows-online").title = account.shows_online ? MY_DATA_TEXT.onlineShown : MY_DATA_TEXT.onlineHidden;
}

async function changeHandle(e) {
  e.preventDefault();
  const handle = $("new-handle").value.trim();
  $("change-handle-error").textContent = "";
  if (!handle) return;
  $("change-handle").disabled = true;
  try {
    const reply = await state.conn.request("change_handle", { handle });
    $("new-handle").value = "";
    accountIs(reply.account);
    toast(MY_DATA_TEXT.changed(reply.account.handle));
  } catch (err) {
    $("change-handle-error").textContent = refusalText(err);
  } finally {
    $("change-handle").disabled = false;
  }
}

async function choose(which, input) {
  $("shown-error").textContent = "";
  input.disabled = true;
  try {
    const reply = await state.conn.request("account_settings", { [which]: input.checked });
    accountIs(reply.account);
  } catch (err) {
    $("shown-error").textContent = refusalText(err);
    input.checked = !input.checked;
  } finally {
    input.disabled = false;
  }
}

function dropExport() {
  if (exported) URL.revokeObjectURL(exported);
  exported = null;
  $("export-download").removeAttribute("href");
  $("export-download").hidden = true;
}

async function exportData() {
  $("export-error").textContent = "";
  $("export-data").disabled = true;
  try {
    const reply = await state.conn.request("export_account");
    dropExport();
    const file = new Blob([JSON.stringify(reply.data, null, 2)], { type: "application/json" });
    exported = URL.createObjectURL(file);
    const link = $("export-download");
    link.href = exported;
    link.download = `klondike-race-${state.account.handle}.json`;
    link.hidden = false;
    link.click(); // the download starts; the link stays for another copy
    toast(MY_DATA_TEXT.exported);
  } catch (err) {
    $("export-error").textContent = refusalText(err);
  } finally {
    $("export-data").disabled = false;
  }
}

function askDelete() {
  $("delete-error").textContent = "";
  $("delete-ask").textContent = MY_DATA_TEXT.deleteAsk(state.account.handle);
  $("delete-handle").value = "";
  $("delete-account").hidden = true;
  $("delete-form").hidden = false;
  $("delete-handle").focus();
}

function hideDelete() {
  $("delete-form").hidden = true;
  $("delete-account").hidden = false;
}

async function deleteAccount(e) {
  e.preventDefault();
  $("delete-error").textContent = "";
  $("delete-confirm").disabled = true;
  state.signingOut = true; // the close (4011) that follows is no surprise
  try {
    await state.conn.request("delete_account", { handle: $("delete-handle").value });
    hideDelete();
    backToGuest(MY_DATA_TEXT.deleted);
  } catch (err) {
    state.signingOut = false;
    $("delete-error").textContent = refusalText(err);
  } finally {
    $("delete-confirm").disabled = false;
  }
}

export function initMyData() {
  $("change-handle-form").addEventListener("submit", changeHandle);
  $("shows-record").addEventListener("change", (e) => choose("shows_record", e.currentTarget));
  $("shows-online").addEventListener("change", (e) => choose("shows_online", e.currentTarget));
  $("export-data").addEventListener("click", exportData);
  $("delete-account").addEventListener("click", askDelete);
  $("delete-form").addEventListener("submit", deleteAccount);
  $("delete-cancel").addEventListener("click", () => {
    hideDelete();
    $("delete-account").focus();
  });
  $("delete-form").addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.stopPropagation(); // Escape closes the question, not the Account screen
      hideDelete();
      $("delete-account").focus();
    }
  });
  onSession(renderMyData);
  renderMyData();
}
