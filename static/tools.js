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
