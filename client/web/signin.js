// The two ways into an account from a guest's page (the Account screen's guest
// side): *Keep your name* takes the name as a handle (`take_handle`), after which
// the same seat, results and all, is the account's; *Sign in* makes this page a
// new device of an account that exists, with a sign-in code (typed, or arriving
// as /#link=CODE from another device's QR or link: filled in, one press) or a
// recovery code. A guest sitting in a room is asked first, since signing in
// leaves that guest's seat. passkeys.js adds the passkey's button to the same
// panel, through signInWith.

import { closeAccount, openAccount, showAccountMessage } from "./account.js";
import { confirmInline } from "./confirm.js";
import { toast } from "./feedback.js";
import { ServerError } from "./net.js";
import { showCodes } from "./recovery.js";
import { adoptAccount, guestSession, signIn } from "./session.js";
import { $, onSession, state } from "./state.js";
import { ACCOUNT_TEXT, accountRefusal, deviceLabel } from "./words.js";

const clusters = new Intl.Segmenter(undefined, { granularity: "grapheme" });

function failure(err) {
  return accountRefusal(err instanceof ServerError ? err : null);
}

async function keepName(e) {
  e.preventDefault();
  const error = $("handle-error");
  error.textContent = "";
  // As the server will see it (protocol/names.py normalise); it judges the rest.
  const handle = $("handle").value.normalize("NFC").replace(/\s+/gu, " ").trim();
  const length = [...clusters.segment(handle)].length;
  if (length < 2 || length > 24) {
    error.textContent = ACCOUNT_TEXT.handleLength;
    $("handle").focus();
    return;
  }
  const button = $("take-handle");
  button.disabled = true;
  try {
    await guestSession(handle); // a visitor with no session yet plays under the handle
    const reply = await state.conn.request("take_handle", { handle, label: deviceLabel(navigator.userAgent) });
    showCodes(reply.recovery_codes, reply.account.handle, () => {
      closeAccount();
      toast(ACCOUNT_TEXT.kept(reply.account.handle));
    });
    adoptAccount(reply);
  } catch (err) {
    error.textContent = failure(err);
    $("handle").focus();
  } finally {
    button.disabled = false;
  }
}

/**
 * Sign in with `fields` (hello's `link` or `recovery`, or a function of the new
 * connection that returns them: passkeys.js), asking first when a guest's seat
 * would go. The server's refusals are told under the panel; the browser's own
 * (a DOMException from a passkey ceremony) are the caller's to word.
 */
export async function signInWith(button, fields) {
  const error = $("sign-in-error");
  error.textContent = "";
  if (state.room && !state.account) {
    if (!(await confirmInline(button, ...ACCOUNT_TEXT.leaveSeat(state.room.code)))) return;
  }
  button.disabled = true;
  try {
    const reply = await signIn(fields);
    $("link-input").value = "";
    $("recovery-input").value = "";
    closeAccount();
    toast(ACCOUNT_TEXT.signedIn(reply.account?.handle || reply.name));
  } catch (err) {
    if (err instanceof DOMException) throw err;
    error.textContent = failure(err);
  } finally {
    button.disabled = false;
  }
}

function codeFrom(input) {
  return input.value.trim().toUpperCase();
}

function submitCode(form, input, button, field) {
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const code = codeFrom($(input));
    if (!code) {
      $("sign-in-error").textContent = ACCOUNT_TEXT.noCode;
      $(input).focus();
      return;
    }
    signInWith($(button), { [field]: code });
  });
}

/** A sign-in link (/#link=CODE, another device's QR or link): the code filled in, one press to sign in. */
function readLink() {
  const m = /(?:^#|&)link=([0-9A-Za-z-]+)/.exec(location.hash);
  if (!m) return;
  // Out of the address bar and the history at once: it is a secret until used.
  history.replaceState(null, "", location.pathname + location.search);
  $("link-input").value = m[1].toUpperCase();
  openAccount("link-sign-in");
  signedInAlready();
}

/** A link that came to a page signed in already is not used behind its back. */
function signedInAlready() {
  if (state.account && $("link-input").value) {
    showAccountMessage(ACCOUNT_TEXT.signedInAlready(state.account.handle));
  }
}

export function initSignIn() {
  $("keep-form").addEventListener("submit", keepName);
  submitCode($("link-form"), "link-input", "link-sign-in", "link");
  submitCode($("recovery-form"), "recovery-input", "recovery-sign-in", "recovery");
  window.addEventListener("hashchange", readLink);
  onSession(signedInAlready);
  readLink();
}
