// Palaver's own browser code: small progressive enhancements on top of
// server-rendered HTML and htmx. Every feature works without it.
"use strict";

(function () {
  const COMPOSER = "form[data-composer]";
  const MAX_INPUT_HEIGHT = 192; // px, the textarea's max-h-48
  const ALERT_MS = 8000;

  const composer = () => document.querySelector(COMPOSER);
  const field = (form) => form.querySelector("textarea[name=query]");
  const sendButton = (form) => form.querySelector("[data-testid=chat-send]");
  const isComposer = (elt) => elt instanceof Element && elt.matches(COMPOSER);

  function scrollToBottom() {
    const s = document.getElementById("transcript-scroll");
    // The transcript is column-reverse: its bottom is the far end either way.
    if (s) s.scrollTop = s.scrollHeight;
  }

  function autoGrow(ta) {
    ta.style.height = "auto";
    ta.style.height = Math.min(ta.scrollHeight, MAX_INPUT_HEIGHT) + "px";
  }

  // The send button is off while the message is blank or a send is running.
  function refresh(form) {
    const busy = form.getAttribute("aria-busy") === "true";
    sendButton(form).disabled = busy || field(form).value.trim() === "";
  }

  function setBusy(form, busy) {
    if (busy) form.setAttribute("aria-busy", "true");
    else form.removeAttribute("aria-busy");
    refresh(form);
  }

  // The user's message, shown at once; the server's copy replaces it. Built
  // with textContent: user text is never parsed as HTML.
  function pendingMessage(text) {
    const row = document.createElement("div");
    row.id = "msg-pending";
    row.className = "flex justify-end";
    row.setAttribute("data-testid", "message");
    row.setAttribute("data-role", "user");
    row.setAttribute("data-pending", "true");
    const bubble = document.createElement("div");
    bubble.className =
      "max-w-[85%] whitespace-pre-wrap break-words rounded-2xl rounded-br-md bg-indigo-600 px-4 py-2.5 text-[15px] leading-relaxed text-white opacity-80 shadow-sm";
    bubble.textContent = text;
    row.appendChild(bubble);
    return row;
  }

  function removePending() {
    const p = document.getElementById("msg-pending");
    if (p) p.remove();
  }

  function showAlert(message) {
    const box = document.getElementById("alerts");
    if (!box) return;
    const div = document.createElement("div");
    div.setAttribute("role", "alert");
    div.setAttribute("data-testid", "alert");
    div.className =
      "pointer-events-auto rounded-md border border-rose-200 bg-rose-50 px-4 py-2 text-sm text-rose-800 shadow";
    div.textContent = message;
    box.appendChild(div);
    expireAlerts();
  }

  // Alerts go away by themselves, or on a click.
  function expireAlerts() {
    document.querySelectorAll("#alerts > [role=alert]:not([data-expires])").forEach((a) => {
      a.setAttribute("data-expires", "true");
      a.addEventListener("click", () => a.remove());
      setTimeout(() => a.remove(), ALERT_MS);
    });
  }

  function init() {
    expireAlerts();
    const form = composer();
    if (!form || form.hasAttribute("data-enhanced")) return;
    form.setAttribute("data-enhanced", "true");
    const hint = document.getElementById("composer-hint");
    if (hint) hint.hidden = false;
    const ta = field(form);
    refresh(form);
    autoGrow(ta);
    scrollToBottom();
    ta.focus();
    ta.setSelectionRange(ta.value.length, ta.value.length);
  }

  document.addEventListener("DOMContentLoaded", init);
  document.addEventListener("htmx:load", init); // boosted navigation swaps the body

  document.addEventListener("input", (e) => {
    const form = e.target.closest && e.target.closest(COMPOSER);
    if (form && e.target === field(form)) {
      refresh(form);
      autoGrow(e.target);
    }
  });

  // Enter sends, Shift+Enter breaks the line (and an IME composing text keeps
  // its Enter).
  let enterSends = false; // from an Enter's keydown to its keyup
  document.addEventListener("keydown", (e) => {
    const form = e.target.closest && e.target.closest(COMPOSER);
    if (form && e.target === field(form) && e.key === "Enter" &&
        !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey && !e.isComposing) {
      e.preventDefault();
      enterSends = true;
      if (!sendButton(form).disabled) form.requestSubmit();
    }
    if (e.key === "Escape") closePopovers(null, true);
  });
  document.addEventListener("keyup", (e) => {
    if (e.key === "Enter") enterSends = false;
  });
  // Synthetic keyboards (automation, some IMEs) deliver the Enter's text
  // separately from its keydown: it must not land in the emptied field.
  document.addEventListener("beforeinput", (e) => {
    if (enterSends && e.target.matches && e.target.matches(COMPOSER + " textarea") &&
        (e.inputType === "insertLineBreak" || e.inputType === "insertParagraph")) {
      e.preventDefault();
    }
  });

  // Never send a blank message or a second one while the first runs.
  document.addEventListener("htmx:configRequest", (e) => {
    const form = e.detail.elt;
    if (isComposer(form) && (field(form).value.trim() === "" || form.getAttribute("aria-busy") === "true")) {
      e.preventDefault();
    }
  });

  document.addEventListener("htmx:beforeRequest", (e) => {
    const form = e.detail.elt;
    if (!isComposer(form)) return;
    const ta = field(form);
    const err = document.getElementById("composer-error");
    if (err) err.remove();
    removePending();
    const transcript = document.getElementById("transcript");
    if (transcript) transcript.appendChild(pendingMessage(ta.value));
    form.dataset.sent = ta.value;
    ta.value = "";
    autoGrow(ta);
    setBusy(form, true);
    scrollToBottom();
  });

  document.addEventListener("htmx:beforeSwap", (e) => {
    if (isComposer(e.detail.requestConfig && e.detail.requestConfig.elt) && e.detail.xhr.status < 400) {
      removePending();
    }
  });

  document.addEventListener("htmx:afterRequest", (e) => {
    const form = e.detail.elt;
    if (!isComposer(form)) return;
    setBusy(form, false);
    const ta = field(form);
    if (!e.detail.successful) {
      // Refused or failed: take the bubble back and give the text back.
      removePending();
      if (ta.value === "") ta.value = form.dataset.sent || "";
      if (!e.detail.xhr || e.detail.xhr.status === 0) {
        showAlert("Palaver could not be reached. Check the connection and send again.");
      }
      refresh(form);
      autoGrow(ta);
    }
    delete form.dataset.sent;
    ta.focus();
  });

  document.addEventListener("htmx:afterSwap", (e) => {
    if (e.detail.target && e.detail.target.id === "transcript") scrollToBottom();
  });
  document.addEventListener("htmx:oobAfterSwap", expireAlerts);

  // <details> popovers (rename, feedback comment): focus the field on open,
  // close on Escape, on a click outside, or when another one opens.
  function closePopovers(except, refocus) {
    document.querySelectorAll("details.popover[open]").forEach((d) => {
      if (d === except) return;
      d.open = false;
      if (refocus) d.querySelector("summary").focus();
    });
  }

  document.addEventListener("toggle", (e) => {
    const d = e.target;
    if (!(d instanceof HTMLDetailsElement) || !d.classList.contains("popover") || !d.open) return;
    closePopovers(d, false);
    const f = d.querySelector("input:not([type=hidden]):not([type=radio]), textarea");
    if (f) {
      f.focus();
      if (f.select) f.select();
    }
  }, true);

  document.addEventListener("click", (e) => {
    if (!e.target.closest("details.popover")) closePopovers(null, false);
  });
})();
