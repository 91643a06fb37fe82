// The account page's export, with progress: a large account's export takes
// a while, so the download is read here as it streams and the page counts
// the conversations written so far. Without this script (or without
// streaming fetch) the link is a plain download.
//
// Why in the browser: the count is of what has reached this tab, true
// whichever server process writes the export, with no state kept on the
// server. The price is that the file is assembled in the browser's memory
// (a Blob) before it is saved.
"use strict";

(function () {
  const EXCHANGE_LINE = '{"type":"exchange"'; // how an exchange's line begins
  // An exchange's fields before its messages say whether it is a branch
  // (a fork) of another. Inside a JSON string a quote is escaped, so these
  // keys cannot be mistaken for text of a title.
  const FORK_KEY = '"forked_from":{';
  const MESSAGES_KEY = '"messages":';
  const HEAD_MAX = 64 << 10; // an exchange's fields before its messages fit in this

  // lineCounter counts, over the chunks of a stream, the exchanges (every
  // branch) and the conversations (those that are no fork of another, as
  // the sidebar shows one item per family); only the start of each line
  // is looked at.
  function lineCounter() {
    let head = null; // the start of the current line while it is read; null: skipping to the next line
    let branches = 0;
    let roots = 0;
    const decide = () => {
      // The head is long enough to tell: an exchange's, up to its messages.
      if (!head.startsWith(EXCHANGE_LINE)) return true;
      const end = head.indexOf(MESSAGES_KEY);
      if (end < 0 && head.length < HEAD_MAX) return false;
      branches++;
      if (!head.slice(0, end < 0 ? head.length : end).includes(FORK_KEY)) roots++;
      return true;
    };
    return {
      scan(text) {
        let i = 0;
        while (i < text.length) {
          const nl = text.indexOf("\n", i);
          const piece = text.slice(i, nl < 0 ? text.length : nl);
          if (head !== null) {
            head += piece;
            if ((head.length >= EXCHANGE_LINE.length || nl >= 0) && decide()) head = null;
          }
          if (nl < 0) return;
          head = ""; // the next line

          i = nl + 1;
        }
      },
      get branches() {
        return branches;
      },
      get conversations() {
        return roots;
      },
    };
  }

  const plural = (n, one, many) => n + " " + (n === 1 ? one : many);
  // "6 conversations (11 branches)": the sidebar shows a family once.
  const conversations = (c) => plural(c.conversations, "conversation", "conversations") +
    (c.branches > c.conversations ? " (" + plural(c.branches, "branch", "branches") + ")" : "");

  async function exportWithProgress(link, status) {
    status.hidden = false;
    status.textContent = "Exporting…";
    link.setAttribute("aria-disabled", "true");
    try {
      const res = await fetch(link.href, { credentials: "same-origin" });
      if (!res.ok || !res.body) throw new Error("the server answered " + res.status);
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      const counter = lineCounter();
      const chunks = [];
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        counter.scan(decoder.decode(value, { stream: true }));
        status.textContent = "Exporting… " + conversations(counter) + " written so far.";
      }
      const url = URL.createObjectURL(new Blob(chunks, { type: "application/x-ndjson" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = link.getAttribute("download") || "palaver-export.ndjson";
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      status.textContent = "Done: " + conversations(counter) + " exported.";
      status.setAttribute("data-done", "true");
    } catch (err) {
      status.textContent = "The export failed (" + err.message + "). Try again.";
      status.setAttribute("data-failed", "true");
    } finally {
      link.removeAttribute("aria-disabled");
    }
  }

  document.addEventListener("click", (e) => {
    const link = e.target.closest && e.target.closest("a[data-export-progress]");
    if (!link || !window.fetch || !window.ReadableStream || !window.TextDecoder) return;
    const status = document.getElementById(link.getAttribute("data-export-progress"));
    if (!status) return;
    e.preventDefault();
    if (link.getAttribute("aria-disabled") === "true") return;
    exportWithProgress(link, status);
  });
})();
