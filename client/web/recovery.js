// Recovery codes, shown once: when a handle is taken and when a new set is made.
// The server keeps only their hashes, so this is the one moment a person can keep
// them; the panel says so plainly, offers Copy and Download (a text file made in
// the page, so nothing leaves it), and closes only once they tick "I have kept
// them". Until then the Account screen shows nothing else and has no way back.

import { h, replaceChildren } from "./dom.js";
import { toast } from "./feedback.js";
import { $ } from "./state.js";
import { ACCOUNT_TEXT } from "./words.js";

let shown = null; // {url, done}: the file's Blob URL and what closing the panel does

/** Whether fresh codes are on screen, waiting to be kept. */
export function codesShown() {
  return shown !== null;
}

function codesFile(codes, handle) {
  const lines = [
    ...ACCOUNT_TEXT.codesFile(handle, location.origin, Date.now() / 1000),
    "",
    ...codes.map((code, i) => `${String(i + 1).padStart(2)}. ${code}`),
    "",
  ];
  return lines.join("\n");
}

/**
 * Show `codes` (of `handle`) until they are kept; `done` runs when the panel
 * closes. The caller hides the rest of the Account screen meanwhile.
 */
export function showCodes(codes, handle, done) {
  closeCodes(false);
  const file = new Blob([codesFile(codes, handle)], { type: "text/plain;charset=utf-8" });
  shown = { url: URL.createObjectURL(file), done, text: codes.join("\n") };
  replaceChildren($("recovery-list"), codes.map((code) => h("li", null, h("code", { class: "recovery-code" }, code))));
  $("download-codes").href = shown.url;
  $("kept-codes").checked = false;
  $("codes-done").disabled = true;
  $("codes-panel").hidden = false;
  $("codes-panel").scrollIntoView({ block: "start" });
  $("copy-codes").focus({ preventScroll: true });
}

function closeCodes(run = true) {
  if (!shown) return;
  const { url, done } = shown;
  shown = null;
  URL.revokeObjectURL(url);
  replaceChildren($("recovery-list"));
  $("download-codes").removeAttribute("href");
  $("codes-panel").hidden = true;
  if (run) done?.();
}

export function initRecovery() {
  $("copy-codes").addEventListener("click", async () => {
    if (!shown) return;
    try {
      await navigator.clipboard.writeText(shown.text);
      toast(ACCOUNT_TEXT.codesCopied);
    } catch {
      // No clipboard here (an http page on a LAN): select them for the person to copy.
      getSelection().selectAllChildren($("recovery-list"));
      toast(ACCOUNT_TEXT.codesSelected);
    }
  });
  $("kept-codes").addEventListener("change", () => {
    $("codes-done").disabled = !$("kept-codes").checked;
  });
  $("codes-done").addEventListener("click", () => closeCodes());
}
