package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"palaver/accounts"
)

// browserAccount: register, open the account page from the top bar, create
// an API key and read it from the page, use it with the API, revoke it (the
// API refuses it), import ChatGPT's conversations.json through the form (the
// counts; again: all skipped; a file that is not one: refused), download my
// data (its progress counts every conversation), export one chat from its
// menu, and delete the account with the password: everything goes (the
// counts), signed out.
func browserAccount(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	// A bad import file (400) and a wrong password to delete the account
	// (422) answer error pages on purpose.
	s.expectConsole(`^error: Failed to load resource: the server responded with a status of (400|422) `)
	a := s.app
	// An administrator first: the first account would be the last admin,
	// who cannot delete their account.
	hash, err := accounts.HashPassword(browserPass)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.CreateUser(context.Background(), "root", hash, true); err != nil {
		t.Fatal(err)
	}
	w := s.window("ann")
	w.register("ann")
	w.send("hello")

	// On a phone the name is there too, and the top bar fits.
	w.do("phone", chromedp.EmulateViewport(390, 844))
	w.reload()
	if !browserEval[bool](w, browserVisible("[data-testid=account-link]")) {
		s.fatalf("at 390 px the top bar has no link to the account page")
	}
	if browserEval[bool](w, `document.documentElement.scrollWidth > window.innerWidth`) {
		s.fatalf("at 390 px the page scrolls sideways")
	}
	w.do("desktop", chromedp.EmulateViewport(1280, 900))
	w.reload()

	w.clickToLoad(`[data-testid=account-link]`)
	if loc := w.location(); loc != "/account" {
		s.fatalf("the top bar's name led to %q", loc)
	}

	// A key, shown once, with a Copy button.
	w.typeInto(`[data-testid=api-key-create] input[name=name]`, "laptop")
	w.clickToLoad(`[data-testid=api-key-create] button[type=submit]`)
	w.waitVisible(`[data-testid=api-key-value]`)
	key := w.text(`[data-testid=api-key-value]`)
	if !strings.HasPrefix(key, "pal_") {
		s.fatalf("the key on the page: %q", key)
	}
	w.click(`[data-testid=api-key-copy]`)
	w.waitFor("the Copy button's answer", `document.querySelector("[data-testid=api-key-copy]").hasAttribute("data-copied")`)
	if names := browserTexts(w, `[data-testid=api-keys] [data-testid=api-key-name]`); len(names) != 1 || names[0] != "laptop" {
		s.fatalf("the key list: %q", names)
	}

	history := func() int {
		req, err := http.NewRequest("GET", s.base+"/api/chat/history", nil)
		if err != nil {
			s.fatalf("%v", err)
		}
		req.Header.Set("x-api-key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			s.fatalf("GET /api/chat/history: %v", err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if st := history(); st != http.StatusOK {
		s.fatalf("the new key: GET /api/chat/history answered %d", st)
	}

	// Revoked: gone from the list, refused by the API.
	w.clickToLoad(`[data-testid=api-key-revoke]`)
	w.waitVisible(`[data-testid=account-notice]`)
	if n := browserEval[int](w, browserCount(`[data-testid=api-key]`)); n != 0 {
		s.fatalf("%d keys listed after revoking", n)
	}
	if st := history(); st != http.StatusUnauthorized {
		s.fatalf("the revoked key: GET /api/chat/history answered %d", st)
	}

	// Import: ChatGPT's conversations.json through the form shows what it
	// stored; the same file again, that it skipped it all.
	chatgpt, err := filepath.Abs("../transfer/testdata/conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	importFile := func(path string) (imported, skipped string) {
		w.do("choose the file", chromedp.SetUploadFiles(chromedp.CSS(`[data-testid=import-file]`), []string{path}, chromedp.NodeVisible))
		w.clickToLoad(`[data-testid=import-submit]`)
		w.waitVisible(`[data-testid=import-result]`)
		return w.text(`[data-testid=imported-exchanges]`), w.text(`[data-testid=skipped-exchanges]`)
	}
	imported, skipped := importFile(chatgpt)
	if nImported, _ := strconv.Atoi(strings.Fields(imported)[0]); nImported < 2 || skipped != "0 conversations" {
		s.fatalf("the ChatGPT import: imported %q, skipped %q", imported, skipped)
	}
	// The file's branches are counted as the sidebar shows them: a
	// conversation once, "(N branches)" beside it.
	if !strings.Contains(imported, "branches)") {
		s.fatalf("the ChatGPT import, whose file has branches, says %q", imported)
	}
	if again, skipped := importFile(chatgpt); again != "0 conversations" || skipped != imported {
		s.fatalf("the same file again: imported %q, skipped %q", imported, skipped)
	}
	// A file that is not an export: refused, saying why.
	bad := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(bad, []byte("just some notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.do("choose the file", chromedp.SetUploadFiles(chromedp.CSS(`[data-testid=import-file]`), []string{bad}, chromedp.NodeVisible))
	w.click(`[data-testid=import-submit]`) // a 400 page: no clickToLoad
	w.waitFor("the refusal", browserHasText(`[data-testid=import-error]`, "Nothing was imported"))
	rows := a.apiRows()

	// Download my data: the link streams the export and counts the
	// conversations written as they arrive; without JavaScript it is a plain
	// download (the same address, with the session).
	if href := browserEval[string](w, `document.querySelector("[data-testid=export-data]").getAttribute("href")`); href != "/api/export" {
		s.fatalf("export-data links to %q", href)
	}
	w.click(`[data-testid=export-data]`)
	w.waitFor("the export's end", `document.querySelector("[data-testid=export-progress]").hasAttribute("data-done")`)
	// ChatGPT's other branches became forks: the sidebar shows a family
	// once, and so does the count.
	ann, err := a.store.UserByUsername(context.Background(), "ann")
	if err != nil {
		s.fatalf("ann: %v", err)
	}
	roots := a.pageCount("exchanges", "user_id = ? AND forked_from_id IS NULL", ann.ID)
	if got, want := w.text(`[data-testid=export-progress]`), fmt.Sprintf("Done: %d conversations (%d branches) exported.", roots, a.pageCount("exchanges", "user_id = ?", ann.ID)); got != want {
		s.fatalf("the export's progress says %q, want %q", got, want)
	}
	browserEval[bool](w, `(window.__export = null, fetch("/api/export").then(async (r) => { window.__export = r.status + " " + r.headers.get("content-type") + " " + (await r.text()).split("\n").filter(Boolean).length; }), true)`)
	w.waitFor("the export's answer", `window.__export`)
	got := browserEval[string](w, `window.__export`)
	if want := fmt.Sprintf("200 application/x-ndjson %d", 1+a.pageCount("exchanges", "user_id = ?", ann.ID)); got != want {
		s.fatalf("the export answered %q, want %q", got, want)
	}

	// The chat's menu exports one conversation, as JSON or Markdown.
	w.visit("/chat") // the conversation ann had open
	w.click(`[data-testid=export-exchange] summary`)
	w.waitVisible(`[data-testid=export-exchange-md]`)
	browserEval[bool](w, `(window.__md = null, fetch(document.querySelector("[data-testid=export-exchange-md]").href).then(async (r) => { window.__md = r.status + " " + (await r.text()); }), true)`)
	w.waitFor("the Markdown export", `window.__md`)
	if md := browserEval[string](w, `window.__md`); !strings.HasPrefix(md, "200 ") || !strings.Contains(md, "hello") {
		s.fatalf("the chat's Markdown export: %.200q", md)
	}
	w.visit("/account")
	if a.apiRows() != rows {
		s.fatalf("exports changed the database")
	}

	// Delete the account: a wrong password is refused, the right one asks
	// once more, then everything goes and ann is signed out.
	w.typeInto(`[data-testid=delete-account-password]`, "wrong horse")
	w.click(`[data-testid=delete-account]`) // a 422 page: no clickToLoad
	w.waitFor("the refusal", browserHasText(`[data-testid=form-error]`, "not your password"))
	w.typeInto(`[data-testid=delete-account-password]`, browserPass)
	w.clickToLoad(`[data-testid=delete-account]`)
	w.waitVisible(`[data-testid=confirm]`)
	w.clickToLoad(`[data-testid=confirm]`)
	w.waitVisible(`[data-testid=account-deleted]`)
	// The imported branches are counted once per conversation, the
	// branches beside: "4 conversations (6 branches)".
	if txt, want := w.text(`[data-testid=deleted-exchanges]`), fmt.Sprintf(" conversations (%d branches)", rows[0]); !strings.HasSuffix(txt, want) {
		s.fatalf("the deleted page says %q, want %q", txt, want)
	}
	if txt, want := w.text(`[data-testid=deleted-messages]`), fmt.Sprintf("%d messages", rows[1]); txt != want {
		s.fatalf("the deleted page says %q, want %q", txt, want)
	}
	if n := a.apiCount("users"); n != 1 {
		s.fatalf("%d accounts left", n)
	}
	if n := a.apiCount("messages"); n != 0 {
		s.fatalf("%d messages left", n)
	}
	w.visit("/account")
	if loc := w.location(); loc != "/login" {
		s.fatalf("after deleting, /account led to %q, want /login", loc)
	}
}
