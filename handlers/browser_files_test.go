package handlers_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// browserAttachments: a file chosen with the paperclip, one dropped on the
// conversation and an image pasted into the composer are uploaded, shown as
// chips, and sent with the message: the transcript shows the image's
// thumbnail and chips for the others, and the builtin agent names each.
// Without JavaScript the composer's file input is sent with the form.
func browserAttachments(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("fay")
	w.register("fay")
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(notes, []byte("# Plan\nbuy milk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.waitFor("the composer's script", `document.querySelector("input[data-attach-input][data-enhanced]")`)
	w.do("choose a file with the paperclip", chromedp.SetUploadFiles(chromedp.CSS("input[data-attach-input]"), []string{notes}))
	w.waitFor("the paperclip's chip", `document.querySelectorAll("[data-testid=attach-chip][data-state=done]").length === 1`)
	// A drop on the conversation, and a paste into the composer, of files
	// made in the page (what the browser hands over in either case).
	browserEval[bool](w, `(() => {
		const dt = new DataTransfer();
		dt.items.add(new File(["a,b\n1,2\n"], "data.csv", {type: "text/csv"}));
		document.getElementById("transcript").dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
		return true;
	})()`)
	browserEval[bool](w, `(() => {
		const png = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAE0lEQVR4nGL6z8DAwPAfEAAA//8HDgIB5wu+FwAAAABJRU5ErkJggg=="), c => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([png], "image.png", {type: "image/png"}));
		document.querySelector("[data-testid=chat-input]").dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true}));
		return true;
	})()`)
	w.waitFor("three uploaded chips", `document.querySelectorAll("[data-testid=attach-chip][data-state=done]").length === 3`)
	// The image's chip previews it with its thumbnail; the others do not.
	w.waitFor("the pasted image's preview", `(() => {
		const p = document.querySelectorAll("[data-testid=attach-chip] img[data-testid=attach-preview]");
		return p.length === 1 && p[0].complete && p[0].naturalWidth > 0 &&
			p[0].closest("[data-testid=attach-chip]").textContent.includes("image.png");
	})()`)
	reply := w.send("what did I attach?")
	for _, want := range []string{"You attached notes.md", "You attached data.csv (text/csv", "You attached image.png (image/png, ", "2×1)"} {
		if !strings.Contains(reply, want) {
			s.fatalf("the reply %q lacks %q", reply, want)
		}
	}
	w.waitFor("the files in the transcript", `document.querySelectorAll("[data-testid=message][data-role=user] [data-testid=attachment]").length === 3`)
	w.waitFor("the thumbnail loaded", `(() => { const i = document.querySelector("[data-testid=attachment] img"); return !!i && i.complete && i.naturalWidth > 0; })()`)
	if n := browserEval[int](w, `document.querySelectorAll("[data-testid=attach-chip]").length`); n != 0 {
		s.fatalf("%d chips left in the composer after the send", n)
	}
	w.reload()
	w.waitFor("the files after a reload", `document.querySelectorAll("[data-testid=attachment]").length === 3`)

	// Without JavaScript: the form's own file input.
	v := s.window("gus-nojs")
	v.disableJavaScript()
	v.register("gus")
	v.do("choose a file", chromedp.SetUploadFiles(chromedp.CSS("input[name=file]"), []string{notes}))
	v.typeInto("[data-testid=chat-input]", "read my notes")
	v.clickToLoad("[data-testid=chat-send]")
	if got := browserEval[int](v, `document.querySelectorAll("[data-testid=attachment]").length`); got != 1 {
		s.fatalf("without JavaScript the conversation shows %d files, want 1", got)
	}
	if got := browserTexts(v, browserAssistantMsg); len(got) != 1 || !strings.Contains(got[0], "You attached notes.md (text/plain, 16 bytes), 2 lines; first line: # Plan") {
		s.fatalf("without JavaScript the reply is %q", got)
	}
}
