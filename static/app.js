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

  // A reply is being written in the composer's conversation (the turn
  // state the server rendered, and /live keeps current).
  function turnRunning() {
    const t = document.getElementById("composer-turn");
    return !!t && t.getAttribute("data-turn-status") === "running";
  }

  // The send button is off while the message is blank, a send is running,
  // or a reply is being written: the server would refuse a second message
  // then, so the page says so beside the composer and keeps the text.
  function refresh(form) {
    const busy = form.getAttribute("aria-busy") === "true";
    const running = turnRunning();
    sendButton(form).disabled = busy || running || field(form).value.trim() === "";
    const wait = form.querySelector("[data-testid=composer-running]");
    const hint = document.getElementById("composer-hint");
    if (wait) wait.hidden = !running;
    if (hint && form.hasAttribute("data-enhanced")) hint.hidden = running || !keyHintsWanted();
  }

  // The browser tab's title names the conversation the heading names
  // (a rename arrives over /live).
  function syncTitle() {
    const h = document.getElementById("chat-title");
    if (h && h.dataset.documentTitle) document.title = h.dataset.documentTitle;
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

  // Alerts go away by themselves, or on a click; one that says again what
  // one on screen says replaces it rather than stacking under it.
  function expireAlerts() {
    document.querySelectorAll("#alerts > [role=alert]:not([data-expires])").forEach((a) => {
      document.querySelectorAll("#alerts > [role=alert][data-expires]").forEach((old) => {
        if (old.textContent.trim() === a.textContent.trim()) old.remove();
      });
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
    showKeyHints(document);
    const ta = field(form);
    syncTitle();
    refresh(form);
    autoGrow(ta);
    scrollToBottom();
    ta.focus();
    ta.setSelectionRange(ta.value.length, ta.value.length);
  }

  // The key hints ("Enter to send · Shift+Enter for a new line") are for
  // a keyboard: a touch screen's has no Shift+Enter to speak of.
  function keyHintsWanted() {
    return !(window.matchMedia("(pointer: coarse)").matches && !window.matchMedia("(any-pointer: fine)").matches);
  }

  function showKeyHints(root) {
    if (!keyHintsWanted()) return;
    root.querySelectorAll("#composer-hint, [data-key-hint]").forEach((h) => { h.hidden = false; });
  }

  document.addEventListener("DOMContentLoaded", init);
  document.addEventListener("htmx:load", init); // boosted navigation swaps the body
  document.addEventListener("htmx:load", (e) => { if (e.detail.elt instanceof Element) showKeyHints(e.detail.elt); });

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
      if (!sendButton(form).disabled && !turnRunning()) form.requestSubmit();
    }
    if (e.key === "Escape") escape(e);
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
    if (isComposer(form) && (field(form).value.trim() === "" || form.getAttribute("aria-busy") === "true" || turnRunning())) {
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
  document.addEventListener("htmx:oobAfterSwap", (e) => {
    expireAlerts();
    const id = e.target && e.target.id;
    if (id === "chat-title") syncTitle();
    if (id === "composer-turn" && composer()) refresh(composer());
  });

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
    closeMenus(e.target.closest(MENU), false);
  });

  // Menus (<details data-menu>: a history item's actions, the chat
  // header's): they open without JavaScript; this adds the keys. Enter or
  // Space on the button opens a menu on its first item (the arrows too),
  // the arrows move through its items, Home and End go to the ends, Escape
  // closes it (a popover open in it first) and gives the button its focus
  // back, Tab leaves it closed. A history item is one tab stop, its link:
  // the menu's button leaves the tab order, and the right arrow reaches it
  // from the link (the left arrow goes back).
  const MENU = "details[data-menu]";
  const ROW = "#conversations [data-testid=history-item]";
  const summaryOf = (menu) => menu.querySelector(":scope > summary");
  const items = (menu) => Array.from(menu.querySelectorAll("[data-menu-item]"))
    .filter((i) => i.closest(MENU) === menu && (i.checkVisibility ? i.checkVisibility() : i.getClientRects().length > 0));
  let openedByKey = false;

  // The menu roles come with the keys that make them true: the button
  // says it opens a menu, the panel is the menu, its items menu items. A
  // history item's link says that the right arrow reaches its actions.
  function enhanceMenus(root) {
    if (!(root instanceof Element || root instanceof Document)) return;
    root.querySelectorAll(ROW + " > " + MENU + " > summary").forEach((s) => { s.tabIndex = -1; });
    root.querySelectorAll(ROW + " > a").forEach((a) => { a.setAttribute("aria-keyshortcuts", "ArrowRight"); });
    root.querySelectorAll(MENU).forEach((m) => {
      const s = summaryOf(m);
      if (s) {
        s.setAttribute("aria-haspopup", "menu");
        s.setAttribute("aria-expanded", String(m.open));
      }
      const panel = m.querySelector(":scope > [data-menu-panel]");
      if (panel) panel.setAttribute("role", "menu");
      m.querySelectorAll("[data-menu-item]").forEach((i) => { if (i.closest(MENU) === m) i.setAttribute("role", "menuitem"); });
    });
  }

  function closeMenus(except, refocus) {
    document.querySelectorAll(MENU + "[open]").forEach((m) => {
      if (except && m.contains(except)) return;
      m.open = false;
      if (refocus) summaryOf(m).focus();
    });
  }

  function focusItem(menu, which) {
    const list = items(menu);
    if (list.length === 0) return;
    const at = list.indexOf(document.activeElement);
    let i = which;
    if (which === "next") i = at < 0 ? 0 : (at + 1) % list.length;
    if (which === "prev") i = at <= 0 ? list.length - 1 : at - 1;
    if (which === "last") i = list.length - 1;
    list[i].focus();
  }

  // Escape closes the innermost thing open: a popover (rename, comment),
  // else a menu; the drawer's own Escape only runs when neither was.
  function escape(e) {
    if (document.querySelector("dialog[open]")) return; // the dialog's own Escape cancels it
    const popover = document.querySelector("details.popover[open]");
    if (popover) {
      closePopovers(null, true);
      e.stopImmediatePropagation();
      return;
    }
    const menu = document.activeElement && document.activeElement.closest && document.activeElement.closest(MENU + "[open]");
    const open = menu || document.querySelector(MENU + "[open]");
    if (open) {
      closeMenus(null, false);
      summaryOf(open).focus();
      e.stopImmediatePropagation();
    }
  }

  document.addEventListener("keydown", (e) => {
    if (!(e.target instanceof Element) || e.isComposing || e.altKey || e.ctrlKey || e.metaKey) return;
    // From a history item's link to its menu, and back.
    const row = e.target.closest(ROW);
    if (row && e.target.parentElement === row && e.target.matches("a") && e.key === "ArrowRight") {
      const s = row.querySelector(MENU + " > summary");
      if (s) {
        e.preventDefault();
        s.focus();
      }
      return;
    }
    const summary = e.target.matches(MENU + " > summary") ? e.target : null;
    if (summary) {
      const menu = summary.parentElement;
      if (e.key === "Enter" || e.key === " ") {
        openedByKey = !menu.open;
      } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        if (!menu.open) {
          openedByKey = true;
          menu.open = true;
        } else {
          focusItem(menu, e.key === "ArrowDown" ? 0 : "last");
        }
      } else if (e.key === "ArrowLeft" && row) {
        e.preventDefault();
        row.querySelector(":scope > a").focus();
      }
      return;
    }
    const item = e.target.closest("[data-menu-item]");
    const menu = item && item.closest(MENU + "[open]");
    if (!menu || !e.target.matches("[data-menu-item]")) return;
    switch (e.key) {
      case "ArrowDown": e.preventDefault(); focusItem(menu, "next"); break;
      case "ArrowUp": e.preventDefault(); focusItem(menu, "prev"); break;
      case "Home": e.preventDefault(); focusItem(menu, 0); break;
      case "End": e.preventDefault(); focusItem(menu, "last"); break;
      case "Tab": menu.open = false; break;
    }
  });

  // A menu opened from the keyboard starts on its first item; opening one
  // closes the others (not the one it is in).
  document.addEventListener("toggle", (e) => {
    const d = e.target;
    if (!(d instanceof HTMLDetailsElement) || !d.matches(MENU)) return;
    summaryOf(d).setAttribute("aria-expanded", String(d.open));
    if (!d.open) return;
    closeMenus(d, false);
    if (openedByKey) focusItem(d, 0);
    openedByKey = false;
  }, true);

  // A sidebar item whose menu (or rename) is open is not replaced under
  // the person by a live update (another tab's read mark, a reply ending):
  // that would close the menu and drop a half-typed name. When the update
  // brings the item again (drawn anew, or moved up under Today), the item
  // in use takes the new one's place as it is, focus and typing kept; its
  // newest version waits, and replaces it once nothing in it is open. An
  // answer of the item's own form (a rename) replaces it instead, being
  // newer.
  const HISTORY_ITEM = "[data-testid=history-item]";
  const heldItems = new Map(); // item id -> its newest HTML ("": deleted), held
  // In use: a menu open in it, and no request of its own forms under way
  // (a pin, a rename sent: what comes then is the answer to it).
  const itemInUse = (el) => !!el.querySelector("details[open]") && !el.querySelector(".htmx-request");

  document.addEventListener("htmx:oobBeforeSwap", (e) => {
    const t = e.detail.target;
    const f = e.detail.fragment;
    if (!(t instanceof Element)) return;
    for (const item of document.querySelectorAll(HISTORY_ITEM)) {
      if (!itemInUse(item)) continue;
      const fresh = f && f.querySelector ? f.querySelector("#" + CSS.escape(item.id)) : null;
      if (t === item) { // the item itself, replaced or deleted: it waits whole
        heldItems.set(item.id, fresh ? fresh.outerHTML : "");
        e.detail.shouldSwap = false;
        return;
      }
      if (!fresh) continue;
      heldItems.set(item.id, fresh.outerHTML);
      const focused = item.contains(document.activeElement) ? document.activeElement : null;
      const range = focused && "selectionStart" in focused ? [focused.selectionStart, focused.selectionEnd] : null;
      fresh.replaceWith(item);
      if (focused) {
        queueMicrotask(() => {
          focused.focus();
          if (range) focused.setSelectionRange(range[0], range[1]);
        });
      }
    }
  });

  document.addEventListener("toggle", (e) => {
    const d = e.target;
    if (!(d instanceof HTMLDetailsElement) || d.open) return;
    const item = d.closest(HISTORY_ITEM);
    if (!item || itemInUse(item) || !heldItems.has(item.id)) return;
    const html = heldItems.get(item.id);
    heldItems.delete(item.id);
    if (html === "") item.remove();
    else htmx.swap(item, html, { swapStyle: "outerHTML" });
  }, true);

  document.addEventListener("htmx:beforeSwap", (e) => {
    const t = e.detail.target;
    if (t instanceof Element && t.matches(HISTORY_ITEM)) heldItems.delete(t.id);
  });

  document.addEventListener("DOMContentLoaded", () => enhanceMenus(document));
  document.addEventListener("htmx:load", (e) => enhanceMenus(e.detail.elt));
  document.addEventListener("htmx:oobAfterSwap", (e) => enhanceMenus(e.detail.target && e.detail.target.parentElement));
  document.addEventListener("htmx:afterSettle", () => enhanceMenus(document));
})();

// ---------------------------------------------------------------------------
// Confirmations. A question before a delete (hx-confirm) is asked in a
// <dialog> that looks like the confirmation page shown without JavaScript
// (views.ConfirmScreen), never with the browser's confirm(): its heading
// is the question's first sentence, the rest its message, and Cancel has
// the focus, so that Enter does not destroy anything. Palaver.ask is
// there for the other questions (app.js' own).
(function () {
  const ns = (window.Palaver = window.Palaver || {});

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ask shows a question; it resolves true when the person confirms.
  ns.ask = function (o) {
    return new Promise((resolve) => {
      const d = el("dialog", "confirm-dialog w-full max-w-md rounded-xl border border-slate-200 bg-white p-6 text-slate-800 shadow-xl");
      d.setAttribute("data-testid", "confirm-dialog");
      d.setAttribute("aria-labelledby", "confirm-dialog-heading");
      const h = el("h2", "text-lg font-semibold text-slate-900", o.heading);
      h.id = "confirm-dialog-heading";
      const p = el("p", "mt-2 text-sm text-slate-600", o.message);
      p.setAttribute("data-testid", "confirm-message");
      const form = el("form", "mt-6 flex justify-end gap-2");
      form.method = "dialog";
      const cancel = el("button", "btn-ghost", "Cancel");
      cancel.value = "cancel";
      cancel.setAttribute("data-testid", "confirm-cancel");
      const ok = el("button", o.danger === false ? "btn-primary" : "btn-danger", o.confirm);
      ok.value = "confirm";
      ok.setAttribute("data-testid", "confirm");
      form.append(cancel, ok);
      d.append(h);
      if (o.message) d.append(p);
      d.append(form);
      d.addEventListener("close", () => {
        resolve(d.returnValue === "confirm");
        d.remove();
      });
      document.body.appendChild(d);
      d.showModal();
      cancel.focus();
    });
  };

  // "Delete this page? It cannot be undone." → heading and message.
  function split(question) {
    const at = question.indexOf("?");
    if (at < 0 || at === question.length - 1) return { heading: question, message: "" };
    return { heading: question.slice(0, at + 1), message: question.slice(at + 1).trim() };
  }

  document.addEventListener("htmx:confirm", (e) => {
    const q = e.detail.question;
    if (!q) return;
    e.preventDefault();
    const elt = e.detail.elt;
    const parts = split(q);
    const heading = (elt.dataset && elt.dataset.confirmHeading) || parts.heading;
    const message = elt.dataset && elt.dataset.confirmHeading ? q : parts.message;
    // The button says what it does: the form's own words, as the page's.
    const button = elt.matches && (elt.matches("button") ? elt : elt.querySelector("button[type=submit], button:not([type])"));
    const confirm = (elt.dataset && elt.dataset.confirmLabel) || (button && button.textContent.replace(/\s+/g, " ").trim()) || "Continue";
    ns.ask({ heading: heading, message: message, confirm: confirm }).then((yes) => {
      if (yes) e.detail.issueRequest(true);
    });
  });
})();

// ---------------------------------------------------------------------------
// Pages: the editor and the proposal cards of its chat panel. Everything
// works without this; it adds All / None and the live "Accept (k)" count to
// section patches, keeps track of unsaved edits (a note, a warning before
// leaving, a question before a restore or an accepted proposal replaces
// them) and saves on Ctrl+S / Cmd+S.
(function () {
  const CARD = "[data-testid=proposal]";
  const SECTIONS_FORM = "form[data-proposal-sections]";

  const editor = () => document.getElementById("page-content");
  const titleField = () => document.getElementById("page-title");
  const changed = (f) => !!f && f.value !== f.defaultValue;
  const dirty = () => changed(editor()) || changed(titleField());

  // Section patches: the Accept button counts the checked sections and is off
  // when none is (a stale card stays off whatever is checked).
  function refreshCard(form) {
    const card = form.closest(CARD);
    if (!card) return;
    const k = form.querySelectorAll("input[name=sections]:checked").length;
    const count = card.querySelector("[data-apply-count]");
    if (count) count.textContent = String(k);
    const apply = card.querySelector("[data-testid=proposal-accept]");
    if (apply && card.dataset.stale !== "true") apply.disabled = k === 0;
  }

  function initCards(root) {
    if (!(root instanceof Element || root instanceof Document)) return;
    root.querySelectorAll(SECTIONS_FORM).forEach((form) => {
      const toggles = form.closest(CARD).querySelector("[data-section-toggles]");
      if (toggles) toggles.hidden = false;
      refreshCard(form);
    });
  }

  document.addEventListener("change", (e) => {
    const form = e.target.closest && e.target.closest(SECTIONS_FORM);
    if (form) refreshCard(form);
  });

  document.addEventListener("click", (e) => {
    const b = e.target.closest && e.target.closest("[data-select-sections]");
    if (!b) return;
    const form = b.closest(CARD).querySelector(SECTIONS_FORM);
    const all = b.dataset.selectSections === "all";
    form.querySelectorAll("input[name=sections]:not(:disabled)").forEach((box) => { box.checked = all; });
    refreshCard(form);
  });

  // Unsaved edits.
  function refreshStatus() {
    const status = document.getElementById("page-status");
    if (!status) return;
    if (dirty()) {
      status.textContent = "Unsaved changes";
      status.title = "The assistant reads the page as last saved.";
      status.dataset.dirty = "true";
    } else if (status.dataset.dirty) {
      status.textContent = "";
      status.title = "";
      delete status.dataset.dirty;
    }
  }

  document.addEventListener("input", (e) => {
    if (e.target === editor() || e.target === titleField()) refreshStatus();
  });

  window.addEventListener("beforeunload", (e) => {
    if (dirty()) {
      e.preventDefault();
      e.returnValue = "";
    }
  });

  // A restore or an accepted proposal replaces the editor's text: ask first
  // when it holds edits that are not saved.
  document.addEventListener("htmx:confirm", (e) => {
    const elt = e.detail.elt;
    if (!(elt instanceof Element) || !elt.matches("form[data-replaces-content]") || !dirty()) return;
    e.preventDefault();
    window.Palaver.ask({
      heading: "Replace your unsaved changes?",
      message: "The editor has changes that are not saved, and this replaces them.",
      confirm: "Replace them",
    }).then((yes) => {
      if (yes) e.detail.issueRequest(true);
    });
  });

  // A successful save makes what was sent the saved state (text typed while
  // it was on its way stays unsaved).
  let sent = null;
  // The text on its way is marked on the editor too: the live section knows
  // the page's new state from the socket for this tab's own save.
  document.addEventListener("htmx:beforeRequest", (e) => {
    if (e.detail.elt && e.detail.elt.matches && e.detail.elt.matches("form[data-page-form]")) {
      sent = { content: editor() && editor().value, title: titleField() && titleField().value };
      if (editor()) editor().dataset.saving = sent.content;
    }
  });
  document.addEventListener("htmx:afterRequest", (e) => {
    if (!(e.detail.elt && e.detail.elt.matches && e.detail.elt.matches("form[data-page-form]"))) return;
    if (e.detail.successful && sent) {
      if (editor() && sent.content !== null) editor().defaultValue = sent.content;
      if (titleField() && sent.title !== null) titleField().defaultValue = sent.title;
      const notice = document.getElementById("page-changed");
      if (notice) notice.hidden = true; // the page is what this tab saved now
    }
    if (editor()) delete editor().dataset.saving;
    sent = null;
    refreshStatus();
  });

  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === "s") {
      const form = document.querySelector("form[data-page-form]");
      if (!form) return;
      e.preventDefault();
      form.requestSubmit();
    }
  });

  document.addEventListener("DOMContentLoaded", () => {
    initCards(document);
    // The chat's script focuses the composer; on a narrow screen the panel
    // sits under the editor, and a page opens on its text, not the keyboard.
    const input = document.querySelector("[data-testid=page-chat] [data-testid=chat-input]");
    if (input && document.activeElement === input && window.matchMedia("(max-width: 1023px)").matches) {
      input.blur();
      window.scrollTo(0, 0);
    }
  });
  document.addEventListener("htmx:load", (e) => initCards(e.detail.elt));
  document.addEventListener("htmx:afterSettle", () => initCards(document));
})();

// ---------------------------------------------------------------------------
// Live updates (handlers/live.go). htmx-ext-ws opens the tab's websocket on
// #live and swaps what the server pushes out of band by element id. This
// section tells the server which exchange the tab shows and the highest seq
// it has (on every open, so a reconnect resumes, and when a first message
// made a new exchange), drops what the tab has already (the send answer and
// the socket may both bring a message), keeps the transcript at the bottom
// when the reader was there, and shows "Reconnecting…" while the socket is
// down. On the page editor it also names the page (page_id), and the server
// pushes the page's new text when it changes elsewhere: an editor holding
// unsaved edits keeps them, and says that the page changed instead.
(function () {
  const RETRIED = [1006, 1011, 1012, 1013]; // the close codes htmx-ext-ws reconnects on
  const APPEND_ONCE = ["#transcript", "#transcript-pending"];
  const NEAR_BOTTOM = 80; // px from the newest message
  let socket = null; // the open socket (htmx-ext-ws's public interface)
  let watching = null; // the exchange id last sent in a watch
  let stick = false; // the reader was at the bottom when a message came in

  // The exchange on screen: the composer's, which a first message updates.
  function shownExchange() {
    const f = document.getElementById("composer-exchange");
    return f ? Number(f.value) || 0 : 0;
  }

  // The transcript may show a window of a long log (a search hit's): the
  // server says where the log ends, and the socket resumes from there.
  function maxSeq() {
    const t = document.getElementById("transcript");
    let max = t && t.dataset.lastSeq !== undefined ? Number(t.dataset.lastSeq) : -1;
    document.querySelectorAll("#transcript [data-seq]").forEach((m) => {
      max = Math.max(max, Number(m.dataset.seq));
    });
    return max;
  }

  // The page whose editor the tab shows (0: none).
  function shownPage() {
    const p = document.querySelector("[data-live-page]");
    return p ? Number(p.dataset.livePage) || 0 : 0;
  }

  // The seqs of the entries that show a branch switcher: the server takes
  // one away when its branch is deleted elsewhere.
  function switches() {
    return Array.from(document.querySelectorAll("#transcript [data-seq]"))
      .filter((m) => m.querySelector("[data-testid=branch-switch]"))
      .map((m) => Number(m.dataset.seq));
  }

  function watch() {
    if (!socket) return;
    watching = shownExchange();
    socket.send(JSON.stringify({ type: "watch", exchange_id: watching, since: maxSeq(), page_id: shownPage(), switches: switches() }));
  }

  // The page's new text from the socket, before htmx swaps it in. Text the
  // editor already has (or this tab is saving) is not swapped: the person
  // keeps their cursor and what they typed since. Text from elsewhere
  // replaces a clean editor; a dirty one keeps its edits (and its preview),
  // and a notice offers to reload.
  function pageText(tpl) {
    const next = Array.from(tpl.content.children).find((el) => el.id === "page-content");
    const ed = document.getElementById("page-content");
    if (!next || !ed) return;
    const incoming = next.value; // a template's textarea: its text as sent
    const preview = () => {
      const p = Array.from(tpl.content.children).find((el) => el.id === "page-preview");
      if (p) p.remove();
    };
    if (incoming === ed.value) {
      ed.defaultValue = incoming; // saved as it stands
      next.remove();
      return;
    }
    if (ed.value === ed.defaultValue) return; // clean: take the new text
    next.remove();
    preview();
    if (incoming === ed.defaultValue || incoming === ed.dataset.saving) return; // this tab's own save
    const notice = document.getElementById("page-changed");
    if (notice) notice.hidden = false;
  }

  function status(down) {
    const s = document.getElementById("live-status");
    if (s) s.hidden = !down;
  }

  const messageID = (el) => Number(el.id.replace(/^msg-/, "")) || 0;

  // A message, a sidebar item or the pending cell can reach the tab twice
  // (the send answer and the socket): keep the first. The pending cell goes
  // once a reply newer than the message it answers is in the transcript.
  function reconcile() {
    ["transcript", "transcript-pending", "history-items"].forEach((id) => {
      const box = document.getElementById(id);
      if (!box) return;
      const seen = new Set();
      Array.from(box.children).forEach((el) => {
        if (!el.id) return;
        if (seen.has(el.id)) el.remove();
        else seen.add(el.id);
      });
    });
    const cell = document.getElementById("pending-reply");
    if (cell) {
      const after = Number(cell.dataset.after) || 0;
      const replies = document.querySelectorAll("#transcript > [data-role=assistant], #transcript > [data-role=error]");
      if (Array.from(replies).some((m) => messageID(m) > after)) cell.remove();
    }
  }

  function scroller() {
    return document.getElementById("transcript-scroll");
  }

  // The transcript scrolls in a column-reverse box: its scrollTop is 0 at
  // the newest message and negative above it.
  function distanceFromBottom(s) {
    if (getComputedStyle(s).flexDirection === "column-reverse") return Math.abs(s.scrollTop);
    return s.scrollHeight - s.clientHeight - s.scrollTop;
  }

  // Before htmx swaps a message from the socket: leave out the parts that
  // target nothing on this page (another screen, a cell the tab has not
  // got) and the appended elements the tab has already.
  // The parts of one message swap one after the other: a part can take
  // away what a later one targets (the family's sidebar item replaced by
  // its heir's before the deleted branch's item goes). gone holds the ids
  // the earlier parts remove, so that a later part counts them as missing.
  function idsIn(nodes) {
    const ids = new Set();
    nodes.forEach((n) => {
      if (n.id) ids.add(n.id);
      n.querySelectorAll("[id]").forEach((d) => ids.add(d.id));
    });
    return ids;
  }
  function removes(gone, targets, incoming) {
    const kept = idsIn(incoming);
    idsIn(targets).forEach((id) => { if (!kept.has(id)) gone.add(id); });
  }

  htmx.defineExtension("live", {
    transformResponse: function (text) {
      const tpl = document.createElement("template");
      tpl.innerHTML = text;
      pageText(tpl);
      const deleted = new Set(); // ids this message removes before it appends
      const gone = new Set(); // ids an earlier part of this message takes away
      const onPage = (sel) => Array.from(document.querySelectorAll(sel)).filter((t) => !(t.id && gone.has(t.id)));
      Array.from(tpl.content.children).forEach((el) => {
        const oob = el.getAttribute("hx-swap-oob") || "true";
        const colon = oob.indexOf(":");
        const style = colon > 0 ? oob.slice(0, colon) : oob;
        const selector = colon > 0 ? oob.slice(colon + 1) : el.id ? "#" + CSS.escape(el.id) : "";
        if (style === "delete") {
          // By id, or every element a selector matches (a family's
          // sidebar item, whichever branch it shows).
          const targets = selector ? onPage(selector) : [];
          if (targets.length === 0) el.remove();
          targets.forEach((g) => { if (g.id) deleted.add(g.id); });
          removes(gone, targets, []);
          return;
        }
        const earlier = selector ? tpl.content.querySelector(selector) : null; // made by this message
        const targets = selector ? onPage(selector) : [];
        const target = targets[0] || (earlier && !el.contains(earlier) ? earlier : null);
        if (!target) {
          el.remove();
          return;
        }
        if (style === "true" || style === "outerHTML") removes(gone, targets, [el]);
        else if (style === "innerHTML") removes(gone, targets.flatMap((t) => Array.from(t.children)), Array.from(el.children));
        if (style === "beforeend" && APPEND_ONCE.includes(selector)) {
          Array.from(el.children).forEach((child) => {
            if (child.id && !deleted.has(child.id) && document.getElementById(child.id)) child.remove();
          });
          if (el.children.length === 0) el.remove();
        }
      });
      return tpl.innerHTML;
    },
  });

  document.addEventListener("htmx:wsOpen", (e) => {
    socket = e.detail.socketWrapper;
    status(false);
    watch();
  });

  document.addEventListener("htmx:wsClose", (e) => {
    if (e.detail.socketWrapper !== socket) return; // a page left behind closed its socket
    socket = null;
    const live = document.getElementById("live");
    status(!!live && document.body.contains(live) && RETRIED.includes(e.detail.event.code));
  });

  document.addEventListener("htmx:wsBeforeMessage", () => {
    const s = scroller();
    stick = !!s && distanceFromBottom(s) < NEAR_BOTTOM;
  });

  document.addEventListener("htmx:wsAfterMessage", () => {
    reconcile();
    const s = scroller();
    if (s && stick) s.scrollTop = getComputedStyle(s).flexDirection === "column-reverse" ? 0 : s.scrollHeight;
  });

  // A page kept in the back/forward cache would keep its socket open (and
  // the server's subscription) while hidden: it lets go of it, and takes a
  // new one, which catches up, when it is shown again. htmx-ext-ws exposes
  // no close, so this reaches its wrapper through htmx's element data.
  function wrapper() {
    const live = document.getElementById("live");
    const data = live && live["htmx-internal-data"];
    return data && data.webSocket;
  }
  window.addEventListener("pagehide", (e) => {
    const w = wrapper();
    if (e.persisted && w) w.close();
  });
  window.addEventListener("pageshow", (e) => {
    const w = wrapper();
    if (e.persisted && w) w.init();
  });

  // After any swap: drop what came twice, and follow the composer to the
  // exchange a first message created.
  document.addEventListener("htmx:afterSettle", () => {
    reconcile();
    if (socket && shownExchange() !== watching) watch();
  });
})();

// ---------------------------------------------------------------------------
// Code blocks in replies and previews get a Copy button. The block goes in a
// frame, so that the button stays in its corner while the code scrolls
// sideways. Without JavaScript the code is there to select by hand.
(function () {
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    // Plain http on another host: the older way, through a selection.
    const ta = document.createElement("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.className = "sr-only";
    document.body.appendChild(ta);
    ta.select();
    const ok = document.execCommand("copy");
    ta.remove();
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function addButtons(root) {
    if (!(root instanceof Element || root instanceof Document)) return;
    root.querySelectorAll(".prose-chat pre:not([data-copy])").forEach((pre) => {
      pre.setAttribute("data-copy", "true");
      const frame = document.createElement("div");
      frame.className = "code-frame";
      pre.replaceWith(frame);
      frame.appendChild(pre);
      const b = document.createElement("button");
      b.type = "button";
      b.className = "code-copy";
      b.textContent = "Copy";
      b.setAttribute("data-testid", "code-copy");
      b.setAttribute("aria-label", "Copy the code");
      frame.appendChild(b);
    });
  }

  document.addEventListener("click", (e) => {
    const b = e.target.closest && e.target.closest(".code-copy");
    if (!b) return;
    const pre = b.parentElement.querySelector("pre");
    const code = pre.querySelector("code") || pre;
    copyText(code.innerText).then(
      () => { b.textContent = "Copied"; },
      () => { b.textContent = "Select and copy"; },
    ).finally(() => {
      b.setAttribute("data-copied", "true");
      setTimeout(() => { b.textContent = "Copy"; b.removeAttribute("data-copied"); }, 1500);
    });
  });

  // A button that carries its text (the account page's new API key): copy
  // it. Without JavaScript the key beside it is selectable text.
  document.addEventListener("click", (e) => {
    const b = e.target.closest && e.target.closest("[data-copy-text]");
    if (!b) return;
    copyText(b.getAttribute("data-copy-text")).then(
      () => { b.textContent = "Copied"; },
      () => { b.textContent = "Select and copy"; },
    ).finally(() => {
      b.setAttribute("data-copied", "true");
      setTimeout(() => { b.textContent = "Copy"; b.removeAttribute("data-copied"); }, 1500);
    });
  });

  document.addEventListener("DOMContentLoaded", () => addButtons(document));
  document.addEventListener("htmx:load", (e) => addButtons(e.detail.elt));
  document.addEventListener("htmx:afterSettle", () => addButtons(document));
})();

// ---------------------------------------------------------------------------
// Phones: the conversations drawer (chat_history.templ). The top bar's button
// opens it; choosing a chat, New chat, the close button, the backdrop and
// Escape close it. Without JavaScript the button's #conversations opens it
// through :target and choosing a chat loads a page without the hash.
(function () {
  const ROOT = document.documentElement;
  const isOpen = () => ROOT.dataset.drawer === "open";

  function toggles() {
    return document.querySelectorAll("[data-drawer-toggle]");
  }

  function setOpen(open) {
    if (open) ROOT.dataset.drawer = "open";
    else delete ROOT.dataset.drawer;
    toggles().forEach((b) => b.setAttribute("aria-expanded", String(open)));
    if (location.hash === "#conversations") history.replaceState(history.state, "", location.pathname + location.search);
    if (open) {
      const first = document.querySelector("#conversations input, #conversations [data-testid=new-chat]");
      if (first) first.focus();
    }
  }

  document.addEventListener("click", (e) => {
    if (!(e.target instanceof Element)) return;
    if (e.target.closest("[data-drawer-toggle]")) {
      e.preventDefault();
      setOpen(!isOpen());
      return;
    }
    if (e.target.closest("[data-drawer-close]")) {
      e.preventDefault();
      setOpen(false);
      return;
    }
    if (isOpen() && e.target.closest("#conversations a[href^='/chat']")) setOpen(false); // a chat was chosen
  });
  document.addEventListener("submit", (e) => {
    if (isOpen() && e.target instanceof Element && e.target.closest("#conversations") && e.target.matches("form[action='/chat/new']")) {
      setOpen(false);
    }
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && isOpen()) setOpen(false);
  });
  // A page opened with the drawer's hash (a link from a page without
  // JavaScript) shows it open, the script's way.
  document.addEventListener("DOMContentLoaded", () => {
    if (location.hash === "#conversations") setOpen(true);
  });
})();

// ---------------------------------------------------------------------------
// The page editor's tabs below lg (page.templ, app.css): a tab shows its pane
// without touching the address or the scroll. A page opened on a pane's
// hash (a link followed without JavaScript) starts on that pane.
(function () {
  const FROM_HASH = { "#page-content-pane": "edit", "#page-preview-pane": "preview", "#page-chat": "chat" };

  function show(box, tab) {
    box.dataset.tab = tab;
    box.querySelectorAll(".page-tab").forEach((a) => {
      if (a.dataset.tab === tab) a.setAttribute("aria-current", "true");
      else a.removeAttribute("aria-current");
    });
  }

  function init() {
    const box = document.querySelector("[data-page-tabs]");
    if (!box || box.dataset.tab) return;
    show(box, FROM_HASH[location.hash] || "edit");
    if (FROM_HASH[location.hash]) history.replaceState(history.state, "", location.pathname + location.search);
  }

  document.addEventListener("click", (e) => {
    const a = e.target instanceof Element && e.target.closest(".page-tab");
    if (!a) return;
    e.preventDefault();
    show(a.closest("[data-page-tabs]"), a.dataset.tab);
  });
  document.addEventListener("DOMContentLoaded", init);
  document.addEventListener("htmx:load", init);
})();

// ---------------------------------------------------------------------------
// Search (chat_history.templ) and landing on a message. "/" focuses the
// sidebar's search box (not while typing in a field); in the box the arrows
// move through the hits, Enter opens the chosen one (with none chosen, the
// form searches as it does without JavaScript), Escape clears the box and
// brings the history back. A conversation opened on a message (?seq=, the
// entry marked data-highlight) scrolls it into view and flashes it once.
(function () {
  const BOX = "#history-search";
  const HITS = "#search-results [data-testid=search-hit]";
  const FLASH = "msg-flash"; // app.css
  const box = () => document.querySelector(BOX);
  const hits = () => Array.from(document.querySelectorAll(HITS));
  const typing = (t) => t instanceof Element && (t.matches("input, textarea, select") || t.isContentEditable);

  // The chosen hit is marked aria-selected; focus stays in the box.
  function choose(list, i) {
    list.forEach((h, j) => {
      if (j === i) {
        h.setAttribute("aria-selected", "true");
        h.scrollIntoView({ block: "nearest" });
      } else {
        h.removeAttribute("aria-selected");
      }
    });
  }

  // Empties the box; the empty search htmx sends (which replaces one still
  // on its way) empties the results, and the history shows again.
  function clear(input) {
    input.value = "";
    const results = document.getElementById("search-results");
    if (results) results.replaceChildren();
    htmx.trigger(input, "search");
  }

  function chosen() {
    return hits().find((h) => h.getAttribute("aria-selected") === "true");
  }

  function open(hit) {
    if (hit.dataset.opening) return;
    hit.dataset.opening = "true";
    remember(hit);
    window.location.assign(hit.href);
  }

  // The word a hit matched (its snippet's first <mark>, as the message
  // writes it), kept for the conversation the hit opens: there the match,
  // not only its message, is brought into view. The link stays the
  // contract's /chat/{id}?seq={seq}.
  const MATCH = "palaver:search-match";
  function remember(hit) {
    const mark = hit.querySelector("mark");
    try {
      if (mark) sessionStorage.setItem(MATCH, JSON.stringify({ href: hit.href, text: mark.textContent }));
    } catch (_) { /* no storage: the message alone is brought into view */ }
  }
  document.addEventListener("click", (e) => {
    const hit = e.target instanceof Element && e.target.closest("a[data-testid=search-hit]");
    if (hit) remember(hit);
  }, true);

  // The remembered word for this address, once.
  function remembered() {
    try {
      const want = JSON.parse(sessionStorage.getItem(MATCH) || "null");
      sessionStorage.removeItem(MATCH);
      return want && want.href === location.href && want.text ? want.text : null;
    } catch (_) {
      return null;
    }
  }

  // Wraps the first occurrence of text in the message's own words (not
  // its controls) in <mark id="search-match">, and returns it.
  function markMatch(m, text) {
    const body = m.querySelector("[data-testid=message-body]") || m;
    const want = text.toLowerCase();
    const walk = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const at = n.data.toLowerCase().indexOf(want);
      if (at < 0) continue;
      const range = document.createRange();
      range.setStart(n, at);
      range.setEnd(n, at + want.length);
      const mark = document.createElement("mark");
      mark.id = "search-match";
      mark.dataset.testid = "search-match";
      range.surroundContents(mark);
      return mark;
    }
    return null;
  }

  // Some keyboards (automation, some IMEs) deliver the Enter's text apart
  // from its keydown, and the form submits anyway: with a hit chosen, the
  // hit opens instead of the results screen.
  document.addEventListener("submit", (e) => {
    const hit = e.target instanceof Element && e.target.matches("form[data-search-form]") && chosen();
    if (!hit) return;
    e.preventDefault();
    open(hit);
  });

  // On the window, capturing: Escape in the box clears it before the
  // drawer's handler would close the drawer around it.
  window.addEventListener("keydown", (e) => {
    if (e.key === "/" && !e.ctrlKey && !e.metaKey && !e.altKey && !typing(e.target)) {
      const b = box();
      if (b && b.getClientRects().length > 0) {
        e.preventDefault();
        b.focus();
        b.select();
      }
      return;
    }
    if (!(e.target instanceof Element) || !e.target.matches(BOX) || e.isComposing) return;
    const list = hits();
    const at = list.findIndex((h) => h.getAttribute("aria-selected") === "true");
    switch (e.key) {
      case "ArrowDown":
        if (list.length === 0) return;
        e.preventDefault();
        choose(list, Math.min(at + 1, list.length - 1));
        break;
      case "ArrowUp":
        if (list.length === 0) return;
        e.preventDefault();
        choose(list, at - 1); // above the first: none chosen
        break;
      case "Enter":
        if (at < 0) return;
        e.preventDefault();
        open(list[at]);
        break;
      case "Escape":
        if (e.target.value === "") return;
        e.preventDefault();
        e.stopPropagation();
        clear(e.target);
        break;
    }
  }, true);

  function land() {
    const m = document.querySelector("[data-highlight=true]");
    if (!m) return;
    // Below lg the page editor shows one pane at a time: the chat's.
    const tab = m.closest("#page-chat") && document.querySelector(".page-tab[data-tab=chat]");
    if (tab && tab.getClientRects().length > 0) tab.click();
    // A long message centred would leave its match out of sight: the
    // match is what comes into view.
    const text = remembered();
    const match = text && markMatch(m, text);
    (match || m).scrollIntoView({ block: "center" });
    m.classList.add(FLASH);
    m.addEventListener("animationend", () => m.classList.remove(FLASH), { once: true });
  }
  // After the composer's own start (which scrolls to the newest message).
  document.addEventListener("DOMContentLoaded", land);
})();

// ---------------------------------------------------------------------------
// Branches (issue 11). The composer sends after_seq, the last seq of the
// log its tab had when the person began to type: a message from another
// tab that arrived meanwhile means this one answers an earlier point, and
// the server makes it a new branch instead of putting it after the other.
// Without JavaScript the composer's hidden after_seq is the last seq the
// page showed. The edit form of a message is fetched on demand (one at a
// time); Cancel takes it away (without JavaScript it is a page of its own,
// and Cancel a link back).
(function () {
  let typingFrom = null; // the last seq shown when the person began typing

  const composerField = (elt) => elt instanceof Element && elt.matches("form[data-composer] textarea[name=query]");

  // The last seq the tab has of the log: the transcript may show a window
  // of it (a search hit's), whose end the server wrote in data-last-seq;
  // entries that came live since are in the transcript.
  function lastSeq() {
    const t = document.getElementById("transcript");
    let max = t && t.dataset.lastSeq !== undefined ? Number(t.dataset.lastSeq) : -1;
    document.querySelectorAll("#transcript [data-seq]").forEach((m) => {
      max = Math.max(max, Number(m.dataset.seq));
    });
    return max;
  }

  // The point the message answers: just before the first user message that
  // arrived after the person began typing, else the end of what is shown.
  function afterSeq() {
    let first = Infinity;
    if (typingFrom !== null) {
      document.querySelectorAll("#transcript [data-role=user][data-seq]").forEach((m) => {
        const s = Number(m.dataset.seq);
        if (s > typingFrom) first = Math.min(first, s);
      });
    }
    return first === Infinity ? lastSeq() : first - 1;
  }

  document.addEventListener("input", (e) => {
    if (!composerField(e.target)) return;
    if (e.target.value.trim() === "") typingFrom = null;
    else if (typingFrom === null) typingFrom = lastSeq();
  });

  document.addEventListener("htmx:configRequest", (e) => {
    const elt = e.detail.elt;
    if (elt instanceof Element && elt.matches("form[data-composer]") && elt.querySelector("[data-after-seq]")) {
      e.detail.parameters.after_seq = String(afterSeq());
      return;
    }
    // One edit form per message: a second click goes back to it.
    if (elt instanceof Element && elt.matches("[data-testid=edit-message]")) {
      const open = elt.closest("[data-testid=message]").querySelector("form[data-edit-form]");
      if (open) {
        e.preventDefault();
        const ta = open.querySelector("textarea");
        if (ta) ta.focus();
      }
    }
  });

  document.addEventListener("htmx:beforeRequest", (e) => {
    if (e.detail.elt instanceof Element && e.detail.elt.matches("form[data-composer]")) typingFrom = null;
  });

  document.addEventListener("click", (e) => {
    const cancel = e.target.closest && e.target.closest("#transcript [data-edit-cancel]");
    if (!cancel) return;
    e.preventDefault();
    cancel.closest("form").remove();
  });

  // In the edit form Enter sends, as in the composer (Ctrl+Enter and
  // ⌘+Enter too), Shift+Enter breaks the line, Escape puts the form away.
  let editEnter = false; // from an Enter's keydown to its keyup
  document.addEventListener("keydown", (e) => {
    const form = e.target.closest && e.target.closest("#transcript form[data-edit-form]");
    if (!form || e.isComposing) return;
    if (e.key === "Enter" && !e.shiftKey && !e.altKey && e.target.matches("textarea")) {
      e.preventDefault();
      editEnter = true;
      if (e.target.value.trim() !== "") form.requestSubmit();
    } else if (e.key === "Escape") {
      e.preventDefault();
      form.remove();
    }
  });
  document.addEventListener("keyup", (e) => {
    if (e.key === "Enter") editEnter = false;
  });
  // As the composer's: an Enter's text delivered apart from its keydown
  // does not land in the field.
  document.addEventListener("beforeinput", (e) => {
    if (editEnter && e.target.matches && e.target.matches("form[data-edit-form] textarea") &&
        (e.inputType === "insertLineBreak" || e.inputType === "insertParagraph")) {
      e.preventDefault();
    }
  });
})();

// ---------------------------------------------------------------------------
// Long transcripts and time travel (branches.templ). A long conversation
// opens on its latest messages; the sentinel at the top loads older ones
// when it comes into view (htmx), and this keeps what the person reads where
// it was while they go in above (or, in a window opened on a search hit,
// below) it. Time travel's range goes to the message chosen as it moves
// (without JavaScript its Go button does).
(function () {
  const SENTINELS = ["transcript-older", "transcript-newer"];
  let anchor = null; // {el, top}: a message in view before a window went in

  function inView() {
    const box = document.getElementById("transcript-scroll");
    if (!box) return null;
    const b = box.getBoundingClientRect();
    const msgs = document.querySelectorAll("#transcript > [id^=msg-]");
    for (const m of msgs) {
      const r = m.getBoundingClientRect();
      if (r.bottom > b.top && r.top < b.bottom) return { el: m, top: r.top, box: box };
    }
    return null;
  }

  document.addEventListener("htmx:beforeSwap", (e) => {
    const t = e.detail.target;
    if (t && SENTINELS.includes(t.id)) anchor = inView();
  });

  function restore() {
    if (!anchor) return;
    const a = anchor;
    anchor = null;
    if (!document.body.contains(a.el)) return;
    const moved = a.el.getBoundingClientRect().top - a.top;
    if (Math.abs(moved) >= 1) a.box.scrollTop += moved;
  }
  document.addEventListener("htmx:load", restore);
  document.addEventListener("htmx:afterSettle", restore);

  document.addEventListener("change", (e) => {
    const range = e.target instanceof Element && e.target.closest("form[data-time-travel-range] input[type=range]");
    if (range) range.form.requestSubmit();
  });
})();

// ---------------------------------------------------------------------------
// Branches: the tree's Compare button is on once exactly two branches are
// ticked, and says what it waits for. Without this, the server answers a
// wrong count with the tree and the same words inline.
(function () {
  const FORM = "form[data-compare-form]";

  function refresh(form) {
    const n = form.querySelectorAll("input[name=branch]:checked").length;
    const button = form.querySelector("[data-testid=branches-compare]");
    const hint = form.querySelector("[data-compare-hint]");
    if (button) button.disabled = n !== 2;
    if (hint) {
      hint.hidden = n === 2;
      hint.textContent = n > 2 ? "Tick only two branches to compare them." : "Tick two branches to compare them.";
    }
  }

  function init(root) {
    if (!(root instanceof Element || root instanceof Document)) return;
    root.querySelectorAll(FORM).forEach(refresh);
  }

  document.addEventListener("change", (e) => {
    const form = e.target instanceof Element && e.target.closest(FORM);
    if (form) refresh(form);
  });
  document.addEventListener("htmx:load", (e) => init(e.detail.elt));
  init(document);
})();

// ---------------------------------------------------------------------------
// Unread conversations: the browser tab's title begins with their count,
// "(2) …", from the sidebar's #unread-count, which the server renders and
// /live replaces as marks come and go. Without JavaScript the sidebar's dots
// still show them.
(function () {
  const PREFIX = /^\(\d+\) /;

  function sync() {
    const el = document.getElementById("unread-count");
    const n = el ? parseInt(el.getAttribute("data-count") || "0", 10) : 0;
    const base = document.title.replace(PREFIX, "");
    const want = n > 0 ? "(" + n + ") " + base : base;
    if (document.title !== want) document.title = want;
  }

  // The count and the title both change under htmx and the live socket:
  // whatever changed them, the title follows.
  new MutationObserver(sync).observe(document.documentElement, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ["data-count"],
    characterData: true,
  });
  sync();
})();

// ---------------------------------------------------------------------------
// Browser notifications of finished replies (issue 28), only once the
// person switched them on in the account page (which asks the browser's
// permission) and only while this tab is in the background: the reply of
// the conversation it shows ended, or another conversation became unread.
// The choice is kept in this browser, as the permission is.
(function () {
  const KEY = "palaver.notifications";
  const supported = "Notification" in window;

  function enabled() {
    try {
      return supported && Notification.permission === "granted" && localStorage.getItem(KEY) === "on";
    } catch (err) {
      return false; // storage refused
    }
  }

  function notify(body) {
    if (!document.hidden || !enabled()) return;
    const title = document.title.replace(/^\(\d+\) /, "");
    const n = new Notification(title, { body: body, tag: "palaver-reply" });
    n.onclick = () => { window.focus(); n.close(); };
  }

  function turnStatus() {
    const t = document.getElementById("composer-turn");
    return t ? t.getAttribute("data-turn-status") : "";
  }
  function unreadCount() {
    const el = document.getElementById("unread-count");
    return el ? parseInt(el.getAttribute("data-count") || "0", 10) : 0;
  }
  let turn = turnStatus();
  let unread = unreadCount();
  document.addEventListener("htmx:oobAfterSwap", (e) => {
    const id = e.target && e.target.id;
    if (id === "composer-turn") {
      const now = turnStatus();
      if (turn === "running" && now !== "running") notify("The reply is ready.");
      turn = now;
    } else if (id === "unread-count" || id === "history") {
      const now = unreadCount();
      if (now > unread) notify(now === 1 ? "A reply is waiting for you." : now + " conversations have replies waiting for you.");
      unread = now;
    }
  });
  // A page swapped in (boosted navigation) starts from what it shows.
  document.addEventListener("htmx:afterSwap", () => { turn = turnStatus(); unread = unreadCount(); });

  // The account page's switch.
  function showSwitch(section) {
    const button = section.querySelector("[data-testid=notifications-toggle]");
    const state = section.querySelector("[data-testid=notifications-state]");
    const draw = (note) => {
      const on = enabled();
      button.textContent = on ? "Switch off" : "Switch on";
      button.setAttribute("aria-pressed", on ? "true" : "false");
      state.textContent = note || (on ? "Notifications are on in this browser." : "Notifications are off.");
    };
    button.addEventListener("click", () => {
      if (enabled()) {
        localStorage.removeItem(KEY);
        draw();
        return;
      }
      Notification.requestPermission().then((p) => {
        if (p === "granted") localStorage.setItem(KEY, "on");
        draw(p === "granted" ? "" : "Your browser did not allow notifications: allow them for this site in its settings, then switch them on again.");
      });
    });
    section.hidden = false;
    draw();
  }
  function init(root) {
    if (!supported || !root.querySelectorAll) return;
    root.querySelectorAll("[data-notifications]").forEach((s) => {
      if (s.dataset.enhanced) return;
      s.dataset.enhanced = "1";
      showSwitch(s);
    });
  }
  document.addEventListener("htmx:load", (e) => init(e.detail.elt));
  init(document);
})();

// ---------------------------------------------------------------------------
// Tool calls that wait for the browser (issue 25). A read_editor call's
// card in a tab that holds the page editor is answered here at once, with
// the editor's text as this tab holds it (unsaved edits included) and its
// selection, through the JSON API; its "Send the editor's text" button does
// the same on a click (without JavaScript it submits the editor's form to
// the card's action). The live update then takes the card away in every tab.
(function () {
  const CARD = "[data-testid=tool-approval][data-tool=read_editor][data-awaiting=client]";
  const sent = new Set();

  function csrf() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRF-Token"] || "";
    } catch (_) {
      return "";
    }
  }

  function answer(card) {
    const editor = document.getElementById("page-content");
    const id = card.dataset.callId;
    if (!editor || !id || sent.has(id)) return;
    sent.add(id);
    const output = { content: editor.value, selection_start: editor.selectionStart || 0, selection_end: editor.selectionEnd || 0 };
    fetch("/api/chat/exchange/" + encodeURIComponent(card.dataset.exchangeId) + "/tool_results", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
      body: JSON.stringify({ results: [{ call_id: id, output: output }] }),
    }).then((r) => {
      if (!r.ok && r.status !== 409) sent.delete(id); // 409: answered elsewhere already
    }).catch(() => sent.delete(id));
  }

  function scan(root) {
    if (!(root instanceof Element || root instanceof Document)) return;
    if (root instanceof Element && root.matches(CARD)) answer(root);
    root.querySelectorAll(CARD).forEach(answer);
  }

  document.addEventListener("click", (e) => {
    const b = e.target.closest && e.target.closest("[data-read-editor]");
    if (!b || !document.getElementById("page-content")) return;
    e.preventDefault();
    const card = b.closest(CARD);
    if (card) {
      sent.delete(card.dataset.callId);
      answer(card);
    }
  });

  document.addEventListener("DOMContentLoaded", () => {
    scan(document);
    new MutationObserver((records) => {
      records.forEach((r) => r.addedNodes.forEach(scan));
    }).observe(document.body, { childList: true, subtree: true });
  });
})();

// ---------------------------------------------------------------------------
// Attachments (issue 26): the composer's files. A file chosen with the
// paperclip, dropped on the conversation or pasted is uploaded at once
// (POST /api/files, a progress bar on its chip); the message then carries
// the ids of the uploaded files as hidden "attachments" fields. Without
// JavaScript the form's file input is sent with the message instead.
(function () {
  const BIG = 256 << 10; // files this large show their upload's progress

  const csrf = () => {
    try { return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRF-Token"] || ""; } catch (_) { return ""; }
  };
  const composer = () => document.querySelector("form[data-composer]");
  const size = (n) => n < 1000 ? n + " B" : n < 1e6 ? Math.round(n / 1000) + " KB" : (n / 1e6).toFixed(1) + " MB";

  function upload(form, file) {
    const chips = form.querySelector("[data-attach-chips]");
    if (!chips) return;
    const chip = document.createElement("span");
    chip.className = "relative inline-flex items-center gap-1.5 overflow-hidden rounded-lg border border-slate-300 bg-slate-50 px-2 py-1 text-xs text-slate-700";
    chip.setAttribute("data-testid", "attach-chip");
    chip.setAttribute("data-state", "uploading");
    const name = document.createElement("span");
    name.className = "max-w-[12rem] truncate font-medium";
    name.textContent = file.name || "pasted image";
    const sz = document.createElement("span");
    sz.className = "text-slate-500";
    sz.textContent = size(file.size);
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "ml-1 rounded px-1 text-slate-500 hover:bg-slate-200 hover:text-slate-900";
    remove.setAttribute("aria-label", "Remove " + name.textContent);
    remove.setAttribute("data-testid", "attach-remove");
    remove.textContent = "×";
    chip.append(name, sz, remove);
    let bar = null;
    if (file.size >= BIG) {
      bar = document.createElement("progress");
      bar.max = 100;
      bar.value = 0;
      bar.className = "h-1 w-16";
      bar.setAttribute("data-testid", "attach-progress");
      chip.append(bar);
    }
    chips.append(chip);
    const xhr = new XMLHttpRequest();
    remove.addEventListener("click", () => { xhr.abort(); chip.remove(); });
    xhr.open("POST", "/api/files");
    xhr.setRequestHeader("X-CSRF-Token", csrf());
    if (bar) xhr.upload.addEventListener("progress", (e) => { if (e.lengthComputable) bar.value = Math.round(100 * e.loaded / e.total); });
    xhr.addEventListener("load", () => {
      let out = {};
      try { out = JSON.parse(xhr.responseText); } catch (_) { /* shown below */ }
      if (xhr.status !== 201) {
        chip.setAttribute("data-state", "refused");
        chip.classList.add("border-rose-300", "bg-rose-50", "text-rose-800");
        sz.textContent = out.err_msg || ("upload failed (" + xhr.status + ")");
        if (bar) bar.remove();
        return;
      }
      chip.setAttribute("data-state", "done");
      chip.setAttribute("data-file-id", String(out.id));
      if (bar) bar.remove();
      if (out.width && /^image\//.test(out.content_type || "")) {
        // The server's own thumbnail (same origin, EXIF gone), not a
        // blob: URL, which the CSP's img-src does not allow.
        const preview = document.createElement("img");
        preview.src = "/api/files/" + encodeURIComponent(String(out.id)) + "/thumbnail";
        preview.alt = "";
        preview.className = "h-8 w-8 shrink-0 rounded object-cover";
        preview.setAttribute("data-testid", "attach-preview");
        chip.prepend(preview);
      }
      const hidden = document.createElement("input");
      hidden.type = "hidden";
      hidden.name = "attachments";
      hidden.value = String(out.id);
      chip.append(hidden);
    });
    xhr.addEventListener("error", () => { chip.setAttribute("data-state", "refused"); sz.textContent = "upload failed"; });
    const body = new FormData();
    body.append("file", file, file.name || "pasted.png");
    xhr.send(body);
  }

  function init(root) {
    const scope = root && root.querySelectorAll ? root : document;
    scope.querySelectorAll("input[data-attach-input]").forEach((input) => {
      if (input.dataset.enhanced) return;
      input.dataset.enhanced = "1";
      input.classList.add("sr-only");
      input.addEventListener("change", () => {
        const form = input.closest("form");
        for (const f of Array.from(input.files || [])) upload(form, f);
        input.value = ""; // the message carries the ids, not the bytes
      });
    });
  }

  document.addEventListener("DOMContentLoaded", () => init(document));
  document.addEventListener("htmx:load", (e) => init(e.detail.elt));

  // Drop files anywhere on the conversation; paste an image in the composer.
  document.addEventListener("dragover", (e) => {
    if (composer() && e.dataTransfer && Array.from(e.dataTransfer.types || []).includes("Files")) e.preventDefault();
  });
  document.addEventListener("drop", (e) => {
    const form = composer();
    if (!form || !e.dataTransfer || !e.dataTransfer.files.length) return;
    e.preventDefault();
    for (const f of Array.from(e.dataTransfer.files)) upload(form, f);
  });
  document.addEventListener("paste", (e) => {
    const form = e.target instanceof Element && e.target.closest("form[data-composer]");
    if (!form || !e.clipboardData) return;
    const files = Array.from(e.clipboardData.files || []);
    if (!files.length) return;
    e.preventDefault();
    for (const f of files) upload(form, f);
  });

  // A message sent: its chips go (the files are in the transcript now).
  document.addEventListener("htmx:afterRequest", (e) => {
    const form = e.detail.elt;
    if (!(form instanceof Element) || !form.matches("form[data-composer]") || !e.detail.successful) return;
    const chips = form.querySelector("[data-attach-chips]");
    if (chips) chips.replaceChildren();
  });
})();

// Drag a chat of the sidebar onto one of its projects to move it there;
// the move form (/chat/{id}/project, the row menu's "Move to project")
// does the same without JavaScript. Every tab's sidebar, this one's too,
// follows over the live connection.
(function () {
  const TYPE = "application/x-palaver-chat";

  function csrf() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRF-Token"] || "";
    } catch (_) {
      return "";
    }
  }

  function project(e) {
    return e.target instanceof Element ? e.target.closest("#history [data-testid=project-item][data-project-id]") : null;
  }

  function carries(e) {
    return !!e.dataTransfer && Array.from(e.dataTransfer.types || []).includes(TYPE);
  }

  document.addEventListener("dragstart", (e) => {
    const row = e.target instanceof Element && e.target.closest("#history [data-testid=history-item][data-exchange-id]");
    if (!row || !e.dataTransfer) return;
    e.dataTransfer.setData(TYPE, row.dataset.exchangeId);
    e.dataTransfer.effectAllowed = "move";
  });
  document.addEventListener("dragover", (e) => {
    const p = project(e);
    if (!p || !carries(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "move";
    p.dataset.dropTarget = "true";
  });
  document.addEventListener("dragleave", (e) => {
    const p = project(e);
    if (p && !p.contains(e.relatedTarget)) delete p.dataset.dropTarget;
  });
  document.addEventListener("drop", (e) => {
    const p = project(e);
    if (!p || !carries(e)) return;
    e.preventDefault();
    delete p.dataset.dropTarget;
    const id = e.dataTransfer.getData(TYPE);
    if (!/^\d+$/.test(id)) return;
    fetch("/chat/" + id + "/project", {
      method: "POST",
      credentials: "same-origin",
      redirect: "manual",
      headers: { "X-CSRF-Token": csrf() },
      body: new URLSearchParams({ project_id: p.dataset.projectId }),
    });
  });
})();

// ---------------------------------------------------------------------------
// The model picker's search (issue 29). A long list of models gets a search
// field above the select (views.ModelPicker renders it hidden): typing hides
// the options, and the groups, that do not match, and selects the first
// that does. Without JavaScript the select alone works.
(function () {
  function initSearch(root) {
    root.querySelectorAll("[data-model-search]").forEach((input) => {
      if (input.dataset.ready) return;
      input.dataset.ready = "1";
      input.hidden = false;
      const select = document.getElementById(input.dataset.modelSearch);
      if (!select) return;
      // Enter filters, it does not submit: the form's first button (the
      // favourite star) would take it as its own.
      for (const type of ["keydown", "keypress"]) {
        input.addEventListener(type, (e) => { if (e.key === "Enter") e.preventDefault(); });
      }
      input.addEventListener("input", () => {
        const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
        let first = null;
        select.querySelectorAll("optgroup").forEach((g) => {
          let shown = 0;
          g.querySelectorAll("option").forEach((o) => {
            const text = ((o.dataset.connection || g.label) + " " + o.textContent).toLowerCase();
            const match = words.every((w) => text.includes(w));
            o.hidden = !match;
            o.disabled = !match;
            if (match) { shown++; if (!first) first = o; }
          });
          g.hidden = shown === 0;
        });
        if (first && select.selectedOptions[0] && select.selectedOptions[0].hidden) select.value = first.value;
      });
    });
  }
  initSearch(document);
  document.addEventListener("htmx:load", (e) => { if (e.detail.elt instanceof Element) initSearch(e.detail.elt); });
  // The star says whether the model now chosen is a favourite.
  document.addEventListener("change", (e) => {
    if (!(e.target instanceof HTMLSelectElement) || e.target.id !== "model-picker") return;
    const star = document.querySelector("#model-picker-box [data-testid=model-favourite]");
    const o = e.target.selectedOptions[0];
    if (star && o) star.setAttribute("aria-pressed", o.dataset.favourite !== undefined ? "true" : "false");
  });
})();
