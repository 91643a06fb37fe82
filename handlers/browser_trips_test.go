package handlers_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"palaver/models"
)

// The rough edges of a first tour ("What a person trips on"), each
// reproduced in Chromium.

// browserSwitchers lists the transcript's switchers as "seq:text", in
// document order.
func browserSwitchers(tab *browserTab) []string {
	return browserEval[[]string](tab, `Array.from(document.querySelectorAll("#transcript [data-testid=message]")).flatMap((m) => {
		const b = m.querySelector("[data-testid=branch-switch]");
		return b ? [m.dataset.seq + ":" + b.textContent.replace(/\s+/g, " ").trim()] : [];
	})`)
}

// browserTripsContinue: "Continue from here" makes a branch that parts
// after the entry shown last; the person sends in it. The switchers the tab
// shows live are the ones a reload shows: none on the unchanged reply
// before the point where the branches part.
func browserTripsContinue(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	tab := s.window("tcont")
	tab.register("tcont")
	u, err := s.app.store.UserByUsername(context.Background(), "tcont")
	if err != nil {
		s.fatalf("tcont: %v", err)
	}
	id := s.app.longChat(u.ID, 6)
	tab.visit(fmt.Sprintf("/chat/%d?at=2", id))
	tab.clickToLoad("[data-testid=time-travel-continue]")
	tab.waitVisible("[data-testid=chat-input]")
	loaded := browserSwitchers(tab)
	tab.send("and now something else")
	tab.waitFor("the transcript idle", browserTranscriptIdle)
	live, liveHTML := fmt.Sprint(browserSwitchers(tab)), browserEntriesHTML(tab)
	tab.reload()
	tab.waitVisible("[data-testid=chat-input]")
	if again := fmt.Sprint(browserSwitchers(tab)); live != again {
		s.fatalf("switchers live %s, after a reload %s (on opening: %v)", live, again, loaded)
	}
	if again := browserEntriesHTML(tab); fmt.Sprint(again) != fmt.Sprint(liveHTML) {
		for i := range min(len(again), len(liveHTML)) {
			if again[i] != liveHTML[i] {
				s.fatalf("entry %d live:\n%s\nafter a reload:\n%s", i, liveHTML[i], again[i])
			}
		}
		s.fatalf("%d entries live, %d after a reload", len(liveHTML), len(again))
	}
}

// browserEntriesHTML is the markup of each entry of the transcript, as the
// server drew it (what the page's scripts add when they enhance it is left
// out).
func browserEntriesHTML(tab *browserTab) []string {
	return browserEval[[]string](tab, `Array.from(document.querySelectorAll("#transcript [data-testid=message]")).map((m) => {
		const c = m.cloneNode(true);
		c.querySelectorAll("[data-enhanced]").forEach((e) => e.removeAttribute("data-enhanced"));
		c.removeAttribute("data-enhanced");
		return c.outerHTML.replace(/\s+/g, " ");
	})`)
}

// browserTripsArchive: the archive and the sidebar agree without a
// reload. /chat/archived marks no conversation as the one on screen; a
// conversation unarchived there comes back into the sidebar of every tab at
// once, in its place; the archive emptied says so.
func browserTripsArchive(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	tab := s.window("tarch")
	tab.register("tarch")
	u, err := s.app.store.UserByUsername(context.Background(), "tarch")
	if err != nil {
		s.fatalf("tarch: %v", err)
	}
	older := s.app.searchChat(u.ID, models.ScopeGeneral, nil, "an older chat", "older")
	put := s.app.searchChat(u.ID, models.ScopeGeneral, nil, "a chat to put away", "put away")
	newer := s.app.searchChat(u.ID, models.ScopeGeneral, nil, "a newer chat", "newer")
	tab.visit(fmt.Sprintf("/chat/%d", newer))
	s.app.waitSubscribers(1)
	tab.openMenu(fmt.Sprintf("#history-%d", put))
	tab.click(fmt.Sprintf("#history-%d [data-testid=archive-exchange]", put))
	tab.waitFor("the archived chat out of the sidebar", fmt.Sprintf(`!document.getElementById("history-%d")`, put))
	other := tab.tab("tarch2")
	other.visit(fmt.Sprintf("/chat/%d", older))

	tab.visit("/chat/archived")
	s.app.waitSubscribers(1) // the other tab's: the archive's page has no live connection
	if n := browserEval[int](tab, browserCount(`#history [aria-current]`)); n != 0 {
		s.fatalf("/chat/archived marks %d conversation(s) of the sidebar as current", n)
	}
	tab.waitVisible(fmt.Sprintf("[data-testid=archived-list] #history-%d", put))
	browserEval[bool](tab, fmt.Sprintf(`(document.querySelector("[data-testid=archived-list] #history-%d [data-testid=archive-exchange]").click(), true)`, put))
	order := fmt.Sprintf(`Array.from(document.querySelectorAll(%s)).map((e) => e.id).join() === %s`,
		browserQuote(browserHistoryItem), browserQuote(fmt.Sprintf("history-%d,history-%d,history-%d", newer, put, older)))
	for _, w := range []*browserTab{tab, other} {
		w.waitFor("the unarchived chat back in the sidebar, in its place", order)
	}
	tab.waitFor("the archive says it is empty", browserVisible("[data-testid=archived-empty]")+` && `+
		browserHasText("[data-testid=archived-empty]", "No archived conversations"))
}

// browserTripsCompare: the tree's Compare button waits for two ticked
// branches (with JavaScript), and without JavaScript the tree says so
// inline instead of a bare error page. The tree and the comparison name
// branches by title and number, in a person's words.
func browserTripsCompare(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	s.expectConsole(`^error: Failed to load resource: the server responded with a status of 400 `) // Compare with one tick, without JS
	tab := s.window("tcmp")
	tab.register("tcmp")
	u, err := s.app.store.UserByUsername(context.Background(), "tcmp")
	if err != nil {
		s.fatalf("tcmp: %v", err)
	}
	first, fork, _ := s.app.branchFamily(u.ID)
	tree := fmt.Sprintf("/chat/%d/branches", first)
	const button = "[data-testid=branches-compare]"
	pick := func(w *browserTab, id int64) {
		w.click(fmt.Sprintf(`[data-testid=branch][data-exchange="%d"] [data-testid=branch-pick]`, id))
	}
	disabled := `document.querySelector(` + browserQuote(button) + `).disabled`

	tab.visit(tree)
	tab.waitFor("the Compare button off with nothing ticked", disabled)
	pick(tab, first)
	tab.waitFor("the hint with one ticked", disabled+` && `+browserHasText("[data-compare-hint]", "Tick two branches"))
	pick(tab, fork)
	tab.waitFor("the Compare button on with two ticked", "!"+disabled)
	tab.clickToLoad(button)
	tab.waitVisible("[data-testid=compare]")
	if got := browserTexts(tab, "[data-testid=compare-a] header, [data-testid=compare-b] header"); len(got) != 2 ||
		!strings.Contains(got[0], "branch 1") || !strings.Contains(got[1], "branch 2") || strings.Contains(got[0]+got[1], "#") {
		s.fatalf("the comparison's headings say %q", got)
	}
	tab.visit(tree)
	if body := tab.text("[data-testid=branches]"); strings.Contains(body, "Parts at") || !strings.Contains(body, "Differs from message 3 on") {
		s.fatalf("the tree says %q", body)
	}

	nojs := s.window("tcmp-nojs")
	nojs.disableJavaScript()
	nojs.visit("/login")
	nojs.typeInto(`form[action="/login"] input[name=username]`, "tcmp")
	nojs.typeInto(`form[action="/login"] input[name=password]`, browserPass)
	nojs.clickToLoad(`form[action="/login"] button[type=submit]`)
	nojs.visit(tree)
	pick(nojs, fork)
	nojs.do("compare one branch", chromedp.Click(chromedp.CSS(button), chromedp.NodeVisible))
	nojs.waitVisible("[data-testid=branches-compare-error]")
	if got := nojs.text("[data-testid=branches-compare-error]"); got != "Tick two branches to compare them." {
		s.fatalf("the tree says %q", got)
	}
	if !browserEval[bool](nojs, fmt.Sprintf(`document.querySelector('[data-exchange="%d"] [data-testid=branch-pick]').checked`, fork)) {
		s.fatalf("the ticked branch lost its tick")
	}
}

// browserTripsWords: what a person reads says it in their words, and the
// account page's results show where the person is. The sidebar's line
// under a chat names no default agent and keeps its spaces; clearing the
// history asks in plain words; an import that fails says why at the top of
// the page, the reader's complaint folded away; the export counts
// conversations as the sidebar does, with their branches.
func browserTripsWords(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	s.expectConsole(`^error: Failed to load resource: the server responded with a status of 400 `) // the bad import
	tab := s.window("twords")
	tab.register("twords")
	u, err := s.app.store.UserByUsername(context.Background(), "twords")
	if err != nil {
		s.fatalf("twords: %v", err)
	}
	tab.visit("/chat")
	tab.send("hello there")
	// One conversation in three branches, active last.
	first := s.app.searchChat(u.ID, models.ScopeGeneral, nil, "plan a trip", "here is a plan")
	for range 2 {
		if _, err := s.app.store.Fork(context.Background(), u.ID, first, 2); err != nil {
			s.fatalf("fork: %v", err)
		}
	}
	tab.reload()
	line := browserTexts(tab, browserHistoryItem+` a > span:last-child`)
	if len(line) != 2 || !strings.Contains(line[1], "just now · 1 turn") || !strings.Contains(line[0], "just now · 3 branches · 1 turn") ||
		strings.Contains(strings.Join(line, "|"), "router") {
		s.fatalf("the sidebar's lines under the chats say %q", line)
	}
	if q := browserEval[string](tab, `document.querySelector("form.clear-all").getAttribute("hx-confirm")`); strings.Contains(q, "job") {
		s.fatalf("clearing the history asks %q", q)
	}

	tab.visit("/account")
	bad := filepath.Join(t.TempDir(), "notes.json")
	if err := os.WriteFile(bad, []byte("not json at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	tab.do("choose the file", chromedp.SetUploadFiles(chromedp.CSS(`[data-testid=import-file]`), []string{bad}, chromedp.NodeVisible))
	tab.click(`[data-testid=import-submit]`) // a 400 page: no clickToLoad
	tab.waitFor("the refusal", browserHasText(`[data-testid=import-error]`, "could not be read as a Palaver export"))
	if !browserEval[bool](tab, `(() => { const r = document.querySelector("[data-testid=import-error]").getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`) {
		s.fatalf("the import's refusal is out of sight")
	}
	if open := browserEval[bool](tab, `document.querySelector("[data-testid=import-error-detail]").open`); open {
		s.fatalf("the reader's complaint is not folded away")
	}
	if first := tab.text("[data-testid=import-error] p"); strings.Contains(first, "invalid") || strings.Contains(first, "byte") {
		s.fatalf("the refusal reads %q", first)
	}
	tab.click(`[data-testid=export-data]`)
	tab.waitFor("the export's end", `document.querySelector("[data-testid=export-progress]").hasAttribute("data-done")`)
	if got, want := tab.text(`[data-testid=export-progress]`), "Done: 2 conversations (4 branches) exported."; got != want {
		s.fatalf("the export's progress says %q, want %q", got, want)
	}
}

// browserTripsTimes: a message not from today says its date ("Yesterday
// 14:02", "20 Oct 02:22"), the full date and time on hover; and the notice
// of a new branch pushes the transcript down rather than covering its first
// message, at a desktop's width and a phone's.
func browserTripsTimes(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	tab := s.window("ttime")
	tab.register("ttime")
	u, err := s.app.store.UserByUsername(context.Background(), "ttime")
	if err != nil {
		s.fatalf("ttime: %v", err)
	}
	now := time.Now()
	yesterday := time.Date(now.Year(), now.Month(), now.Day()-1, 14, 2, 0, 0, time.Local)
	earlier := time.Date(now.Year(), now.Month(), now.Day()-45, 2, 22, 0, 0, time.Local)
	id := s.app.longChat(u.ID, 40)
	s.app.chatExec(`UPDATE messages SET created_at = ? WHERE exchange_id = ? AND seq = 1`, yesterday.UTC(), id)
	s.app.chatExec(`UPDATE messages SET created_at = ? WHERE exchange_id = ? AND seq = 39`, earlier.UTC(), id)
	tab.visit(fmt.Sprintf("/chat/%d", id))
	times := browserTexts(tab, "#transcript [data-testid=message][data-role=assistant] time")
	want := []string{"Yesterday 14:02", earlier.Format("2 Jan 15:04")}
	if earlier.Year() != now.Year() {
		want[1] = earlier.Format("2 Jan 2006 15:04")
	}
	if len(times) > 1 {
		times = []string{times[0], times[len(times)-1]}
	}
	if fmt.Sprint(times) != fmt.Sprint(want) {
		s.fatalf("the replies' times say %q, want %q", times, want)
	}
	if title := browserEval[string](tab, `document.querySelector("[data-seq='1'] time").title`); !strings.Contains(title, yesterday.Format("2 January 2006, 15:04")) {
		s.fatalf("the time's tooltip says %q", title)
	}

	for _, width := range []int64{1280, 390} {
		// The notice after a send: the reply comes in over the live
		// connection while the notice shows.
		tab.do("resize", chromedp.EmulateViewport(width, 640))
		tab.visit(fmt.Sprintf("/chat/%d?at=31", id))
		tab.clickToLoad("[data-testid=time-travel-continue]")
		tab.waitVisible("[data-testid=branch-notice]")
		covered := func(how string) {
			gap := browserEval[float64](tab, `(() => {
				const n = document.querySelector("[data-testid=branch-notice]").getBoundingClientRect();
				// The first message in view: the transcript scrolls under its own top.
				const top = document.getElementById("transcript-scroll").getBoundingClientRect().top;
				const m = Array.from(document.querySelectorAll("#transcript [data-testid=message]")).map((e) => e.getBoundingClientRect()).find((r) => r.bottom > top);
				return Math.max(m.top, top) - n.bottom;
			})()`)
			if gap < 0 {
				s.fatalf("at %d px, after %s, the branch notice covers the first message by %.0f px", width, how, -gap)
			}
		}
		covered("Continue from here")
		// An edit: the new branch's screen is swapped in, the notice on it.
		from := tab.location()
		tab.click(browserEntry(0) + " [data-testid=edit-message]")
		tab.waitVisible(browserEntry(0) + " [data-testid=edit-input]")
		tab.typeInto("[data-testid=edit-input]", " again")
		tab.click("[data-testid=edit-send]")
		tab.waitBranch(from, 1)
		tab.waitVisible("[data-testid=branch-notice]")
		covered("an edit")
	}
}
