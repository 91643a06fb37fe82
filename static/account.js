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

  // lineCounter counts, over the chunks of a stream, the lines that
  // begin as an exchange's; only the start of each line is looked at.
  function lineCounter() {
    let start = null; // the start of the current line, until it is long enough to tell
    let n = 0;
    return {
      scan(text) {
        let i = 0;
        while (i < text.length) {
          if (start === null) {
            const nl = text.indexOf("\n", i);
            if (nl < 0) return;
            i = nl + 1;
            start = "";
            continue;
          }
          const piece = text.slice(i, i + EXCHANGE_LINE.length - start.length);
          const nl = piece.indexOf("\n");
          if (nl >= 0) {
            i += nl + 1;
            start = "";
            continue;
          }
          start += piece;
          i += piece.length;
          if (start.length === EXCHANGE_LINE.length) {
            if (start === EXCHANGE_LINE) n++;
            start = null;
          }
        }
      },
      get count() {
        return n;
      },
    };
  }

  const conversations = (n) => n + (n === 1 ? " conversation" : " conversations");

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
        status.textContent = "Exporting… " + conversations(counter.count) + " written so far.";
      }
      const url = URL.createObjectURL(new Blob(chunks, { type: "application/x-ndjson" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = link.getAttribute("download") || "palaver-export.ndjson";
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      status.textContent = "Done: " + conversations(counter.count) + " exported.";
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
