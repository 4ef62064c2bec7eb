// An in-page confirmation for what cannot be undone (leave mid-round, next deal,
// remove a player, close the room): the button's place shows the question with
// a confirming button and Cancel, instead of acting on one click. Not
// window.confirm: a modal dialog stops the page's clocks and events, and the page
// must keep racing while the host makes up their mind.

import { h } from "./dom.js";

let open = null; // the one question shown: {box, button, settle}

/** Whether `button` is hidden behind its question now (a redraw must not show it). */
export function isAsking(button) {
  return open?.button === button;
}

/** Drop the question shown, if any, as if Cancel was pressed. */
export function cancelConfirm() {
  open?.settle(false);
}

/**
 * Ask `question` in place of `button`; `yes` labels the confirming button.
 * Resolves true when confirmed, false on Cancel, Escape, or another question.
 */
export function confirmInline(button, question, yes) {
  cancelConfirm();
  return new Promise((resolve) => {
    const ok = h("button", { type: "button", class: "btn small danger", dataset: { confirm: "yes" } }, yes);
    const no = h("button", { type: "button", class: "btn small ghost", dataset: { confirm: "no" } }, "Cancel");
    const box = h("span", { class: "confirm", role: "alertdialog", "aria-label": question },
      h("span", { class: "confirm-question" }, question), " ", ok, " ", no);
    const settle = (answer) => {
      if (open?.box !== box) return;
      open = null;
      box.remove();
      button.hidden = false;
      if (!answer) button.focus();
      resolve(answer);
    };
    ok.addEventListener("click", () => settle(true));
    no.addEventListener("click", () => settle(false));
    box.addEventListener("keydown", (e) => {
      if (e.key === "Escape") settle(false);
    });
    open = { box, button, settle };
    button.hidden = true;
    button.after(box);
    no.focus();
  });
}
