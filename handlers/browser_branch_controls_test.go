package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The branches scenarios (issue 11): edit a message, regenerate a reply,
// switch between the branches, and two tabs answering the same reply.

const (
	browserTranscriptIdle = `!document.getElementById("pending-reply") && !document.querySelector("[data-pending]")`
	browserNotice         = `[data-testid=branch-notice]`
)

// browserEntry is the selector of the transcript's entry at seq.
func browserEntry(seq int) string {
	return fmt.Sprintf(`#transcript [data-testid=message][data-seq="%d"]`, seq)
}

// bodies lists the transcript's message texts (without their controls).
func browserBodies(tab *browserTab) []string {
	return browserTexts(tab, `#transcript [data-testid=message] [data-testid=message-body]`)
}

// waitBranch waits until the tab left the conversation from for another
// one, showing want user messages and a reply to each, and returns its
// path.
func (tab *browserTab) waitBranch(from string, users int) string {
	tab.s.t.Helper()
	tab.waitFor("a new branch in the address bar", fmt.Sprintf(
		`location.pathname !== %s && /^\/chat\/\d+$/.test(location.pathname)`, browserQuote(from)))
	tab.waitFor("the branch's messages and replies", fmt.Sprintf(`%s === %d && %s === %d && %s`,
		browserCount(browserUserMsg), users, browserCount(browserAssistantMsg), users, browserTranscriptIdle))
	return tab.location()
}

// browserBranchEdit: edit the second message; the page moves to the new
// branch with the new text and its answer; the switcher goes back to the
// original, whole; the sidebar shows the conversation once, with two
// branches.
func browserBranchEdit(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	tab := s.window("edit")
	tab.register("edna")
	tab.send("first question")
	tab.send("second question")
	orig := tab.location()
	before := browserBodies(tab)

	tab.click(browserEntry(2) + " [data-testid=edit-message]")
	tab.waitVisible(browserEntry(2) + " [data-testid=edit-input]")
	if got := browserEval[string](tab, `document.querySelector("[data-testid=edit-input]").value`); got != "second question" {
		s.fatalf("the edit form holds %q", got)
	}
	// A second click keeps the one form.
	tab.click(browserEntry(2) + " [data-testid=edit-message]")
	if n := browserEval[int](tab, browserCount("[data-testid=edit-form]")); n != 1 {
		s.fatalf("%d edit forms open", n)
	}
	// Escape puts it away; the control brings it back.
	tab.do("press Escape in the edit form", chromedp.Focus(chromedp.CSS("[data-testid=edit-input]")), chromedp.KeyEvent(kb.Escape))
	tab.waitFor("the edit form put away", browserCount("[data-testid=edit-form]")+" === 0")
	tab.click(browserEntry(2) + " [data-testid=edit-message]")
	tab.waitVisible(browserEntry(2) + " [data-testid=edit-input]")
	browserEval[bool](tab, `(document.querySelector("[data-testid=edit-input]").value = "", true)`)
	tab.typeInto("[data-testid=edit-input]", "second question, edited")
	tab.click("[data-testid=edit-send]")
	branch := tab.waitBranch(orig, 2)
	// The page that opens the branch may be drawn while its reply is being
	// written, and arrive after the socket said it was done: the sidebar
	// does not go on showing it as being written.
	tab.waitFor("the sidebar's item idle", `!document.querySelector("#history [data-turn-status=running]")`)

	got := browserBodies(tab)
	if len(got) != 4 || got[0] != "first question" || got[2] != "second question, edited" {
		s.fatalf("the new branch shows %q", got)
	}
	tab.waitFor("the branch's switcher at 2 / 2", browserHasText(browserEntry(2)+" [data-testid=branch-switch]", "2 / 2"))
	if n := browserEval[int](tab, browserCount(browserHistoryItem)); n != 1 {
		s.fatalf("the sidebar lists %d items for one conversation", n)
	}
	tab.waitFor("the count of branches in the sidebar", browserHasText(browserHistoryItem+" [data-testid=history-branches]", "2 branches"))

	// Back to the original: untouched.
	browserEval[bool](tab, `window.notReloaded = true`)
	tab.click(browserEntry(2) + " [data-testid=branch-prev]")
	tab.waitFor("the original conversation", fmt.Sprintf(`location.pathname === %s && %s`, browserQuote(orig),
		browserHasText(browserEntry(2), "1 / 2")))
	if got := browserBodies(tab); strings.Join(got, "|") != strings.Join(before, "|") {
		s.fatalf("the original shows %q, was %q", got, before)
	}
	if !browserEval[bool](tab, `window.notReloaded === true`) {
		s.fatalf("the switcher reloaded the page instead of swapping it")
	}
	// And forward again, as a link (the URL follows).
	tab.click(browserEntry(2) + " [data-testid=branch-next]")
	tab.waitFor("the edited branch again", fmt.Sprintf(`location.pathname === %s && %s`, browserQuote(branch),
		browserHasText(browserEntry(2), "second question, edited")))
}

// browserBranchRegenerate: a new answer in a new branch, the old one kept,
// a switcher on both.
func browserBranchRegenerate(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	tab := s.window("regen")
	tab.register("reg")
	tab.send("tell me something")
	orig := tab.location()

	tab.click(browserEntry(1) + " [data-testid=regenerate]")
	tab.waitBranch(orig, 1)
	tab.waitFor("the new answer's switcher at 2 / 2", browserHasText(browserEntry(1)+" [data-testid=branch-switch]", "2 / 2"))
	if n := browserEval[int](tab, browserCount(browserNotice)); n != 1 {
		s.fatalf("no notice on the new branch")
	}
	tab.click(browserEntry(1) + " [data-testid=branch-prev]")
	tab.waitFor("the first answer", fmt.Sprintf(`location.pathname === %s && %s`, browserQuote(orig),
		browserHasText(browserEntry(1)+" [data-testid=branch-switch]", "1 / 2")))
	if got := browserBodies(tab); len(got) != 2 || got[0] != "tell me something" {
		s.fatalf("the original shows %q", got)
	}
}

// browserBranchCollision: two tabs show the same conversation. A message
// tab two reads before it begins to type is no collision: its answer goes
// on the same log (the page's own after_seq is out of date by then; the
// script's is not). Then tab two begins to answer, and tab one sends
// first: tab two's message starts a branch of its own, which it moves to
// and is told about; tab one keeps its own and sees the new branch appear
// (its switcher and the sidebar's count).
func browserBranchCollision(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	one := s.window("collide-tab1")
	one.register("col")
	one.send("the question")
	orig := one.location()
	s.app.waitSubscribers(1)

	two := one.tab("collide-tab2")
	two.visit(orig)
	s.app.waitSubscribers(2)
	one.send("read before typing")
	two.waitFor("tab one's first answer in tab two", browserHasText(browserUserMsg, "read before typing")+" && "+
		browserCount(browserAssistantMsg)+" === 2")
	two.send("an answer to what I read")
	if loc := two.location(); loc != orig {
		s.fatalf("an answer to the newest message moved tab two to %q", loc)
	}
	if n := browserEval[int](two, browserCount(browserNotice)); n != 0 {
		s.fatalf("an answer to the newest message was told it branched")
	}
	one.waitFor("tab two's answer in tab one", browserHasText(browserUserMsg, "an answer to what I read")+" && "+
		browserCount(browserAssistantMsg)+" === 3")

	// Now both answer the same reply.
	two.typeInto("[data-testid=chat-input]", "tab two's answer")
	one.send("tab one's answer")
	two.waitFor("tab one's message in tab two", browserHasText(browserUserMsg, "tab one's answer")+" && "+
		browserCount(browserAssistantMsg)+" === 4")
	two.typeInto("[data-testid=chat-input]", "\n")
	two.waitFor("the notice in tab two", browserHasText(browserNotice, "You were answering an earlier point"))
	two.waitBranch(orig, 4)
	if got := browserBodies(two); len(got) != 8 || got[6] != "tab two's answer" || got[4] != "an answer to what I read" {
		s.fatalf("tab two's branch shows %q", got)
	}

	// Tab one stays where it was, whole, and sees the branch appear.
	if loc := one.location(); loc != orig {
		s.fatalf("tab one moved to %q", loc)
	}
	one.waitFor("the switcher in tab one", browserHasText(browserEntry(6)+" [data-testid=branch-switch]", "1 / 2"))
	one.waitFor("the branch count in tab one's sidebar", browserHasText(browserHistoryItem+" [data-testid=history-branches]", "2 branches"))
	if got := browserBodies(one); len(got) != 8 || got[6] != "tab one's answer" {
		s.fatalf("tab one shows %q", got)
	}
	if n := browserEval[int](one, browserCount(browserHistoryItem)); n != 1 {
		s.fatalf("tab one's sidebar lists %d items for one conversation", n)
	}
}

// browserBranchNoJavaScript: with scripts off, the controls are plain
// links: edit opens a page with the form, regenerate a page that asks
// (confirm), the switcher's arrows open the sibling branch.
func browserBranchNoJavaScript(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("nojs-branches")
	w.disableJavaScript()
	w.register("nob")
	w.typeInto("[data-testid=chat-input]", "a question")
	w.clickToLoad("[data-testid=chat-send]")
	orig := w.location()
	if !browserChatPath.MatchString(orig) {
		s.fatalf("the send landed on %q", orig)
	}

	w.clickToLoad(browserEntry(0) + " [data-testid=edit-message]")
	browserEval[bool](w, `(document.querySelector("[data-testid=edit-input]").value = "", true)`)
	w.typeInto("[data-testid=edit-input]", "a better question")
	w.clickToLoad("[data-testid=edit-send]")
	edited := w.location()
	if edited == orig || !browserChatPath.MatchString(edited) {
		s.fatalf("the edit landed on %q (original %q)", edited, orig)
	}
	if got := browserBodies(w); len(got) != 2 || got[0] != "a better question" {
		s.fatalf("the edited branch shows %q (its reply is waited for)", got)
	}
	w.waitVisible(browserNotice)

	w.clickToLoad(browserEntry(1) + " [data-testid=regenerate]")
	w.clickToLoad("[data-testid=confirm]")
	regen := w.location()
	if regen == edited || !browserChatPath.MatchString(regen) {
		s.fatalf("the regeneration landed on %q", regen)
	}
	w.waitFor("the new answer's switcher at 2 / 2", browserHasText(browserEntry(1)+" [data-testid=branch-switch]", "2 / 2"))
	w.clickToLoad(browserEntry(1) + " [data-testid=branch-prev]")
	if loc := w.location(); !strings.HasPrefix(loc, edited+"?") {
		s.fatalf("the switcher went to %q, want %s", loc, edited)
	}
	w.clickToLoad(browserEntry(0) + " [data-testid=branch-prev]")
	if loc := w.location(); !strings.HasPrefix(loc, orig+"?") {
		s.fatalf("the switcher went to %q, want %s", loc, orig)
	}
	if got := browserBodies(w); len(got) != 2 || got[0] != "a question" {
		s.fatalf("the original shows %q", got)
	}
}
