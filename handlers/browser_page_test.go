package handlers_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// browserPageProposals: in the page editor's chat panel the builtin page
// assistant proposes edits. An accepted proposal changes the editor's text
// and leaves a note; one made stale by a saved edit can only be rejected;
// a rejected one leaves a note, also after a reload.
func browserPageProposals(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("hal")
	w.register("hal")

	// A page, from the form on /pages.
	w.visit("/pages")
	w.typeInto("[data-testid=page-create-title]", "Trip")
	w.typeInto("[data-testid=page-create-content]", "# Trip\n\n## Plan\n\nWalk to the river.\n")
	w.clickToLoad("[data-testid=page-create-submit]")
	if loc := w.location(); !regexp.MustCompile(`^/pages/\d+/edit$`).MatchString(loc) {
		s.fatalf("creating a page landed on %q, want /pages/{id}/edit", loc)
	}
	w.waitVisible("[data-testid=page-chat] [data-testid=chat-input]")
	content := func() string { return browserEval[string](w, `document.getElementById("page-content").value`) }
	if got := content(); !strings.Contains(got, "Walk to the river.") {
		s.fatalf("the editor holds %q", got)
	}

	const (
		card     = "[data-testid=page-chat] [data-testid=proposal]"
		fresh    = card + `[data-stale="false"]`
		stale    = card + `[data-stale="true"]`
		applied  = "[data-testid=page-chat] [data-testid=proposal-applied]"
		accept   = " [data-testid=proposal-accept]"
		reject   = " [data-testid=proposal-reject]"
		noCards  = "document.querySelectorAll(" + `"[data-testid=page-chat] [data-testid=proposal]"` + ").length"
		editorID = "#page-content"
	)

	// 1. Accepted: the editor shows the new text, and a note replaces the card.
	w.send(`replace "Walk" with "Cycle"`)
	w.waitFor("a proposal card", browserCount(fresh)+" === 1")
	w.click(fresh + accept)
	w.waitFor("the accepted text in the editor", `document.getElementById("page-content").value.includes("Cycle to the river.")`)
	w.waitFor("the applied note", browserCount(applied)+" === 1 && "+noCards+" === 0")
	if got := content(); strings.Contains(got, "Walk") {
		s.fatalf("after accepting, the editor still holds %q", got)
	}

	// 2. Made stale: the page is edited and saved after the proposal.
	w.send(`replace "river" with "sea"`)
	w.waitFor("a second proposal card", browserCount(fresh)+" === 1")
	w.typeInto(editorID, "Pack light. ")
	w.waitFor("the unsaved edit", `document.getElementById("page-content").value.includes("Pack light.")`)
	w.click("[data-testid=page-save]")
	w.waitFor("the saved status", browserHasText("[data-testid=page-status]", "Saved"))
	w.waitFor("the card to turn stale", browserCount(stale)+" === 1 && "+browserCount(fresh)+" === 0")
	if !browserEval[bool](w, `document.querySelector(`+browserQuote(stale+accept)+`).disabled`) {
		s.fatalf("a stale proposal's Accept button is enabled")
	}
	w.reload()
	w.waitVisible(stale)
	if !browserEval[bool](w, `document.querySelector(`+browserQuote(stale+accept)+`).disabled`) {
		s.fatalf("after a reload, a stale proposal's Accept button is enabled")
	}
	if got := content(); !strings.Contains(got, "Pack light.") || !strings.Contains(got, "Cycle to the river.") {
		s.fatalf("after saving and reloading, the editor holds %q", got)
	}

	// 3. Rejected: the card leaves a short note, also after a reload, and
	// the reply above it speaks of the buttons the card has.
	w.send(`add section "Packing": Socks and a map.`)
	w.waitFor("a third proposal card", browserCount(fresh)+" === 1")
	id := browserEval[string](w, `document.querySelector(`+browserQuote(fresh)+`).dataset.messageId`)
	w.click(fresh + reject)
	rejected := `[data-testid=page-chat] #proposal-` + id + `[data-testid=proposal-rejected]`
	w.waitFor("the rejected card to leave its note", browserCount(fresh)+" === 0 && "+browserHasText(rejected, "Rejected"))
	w.reload()
	w.waitVisible(stale) // the page has loaded its panel
	if n := browserEval[int](w, browserCount(`[data-testid=page-chat] [data-message-id="`+id+`"]`)); n != 0 {
		s.fatalf("after a reload the rejected proposal shows again")
	}
	if !browserEval[bool](w, browserHasText(rejected, "Rejected")) {
		s.fatalf("after a reload the rejected proposal's note is gone")
	}
	for _, reply := range browserTexts(w, `[data-testid=page-chat] [data-testid=message][data-role=assistant]`) {
		if strings.Contains(strings.ToLower(reply), "apply") {
			s.fatalf("a reply speaks of a button the card does not have: %q", reply)
		}
	}
	if n := browserEval[int](w, browserCount(card)); n != 1 {
		s.fatalf("after a reload %d proposal cards show, want only the stale one", n)
	}
	if n := browserEval[int](w, browserCount(applied)); n != 1 {
		s.fatalf("after a reload %d applied notes show, want 1", n)
	}
	if got := content(); strings.Contains(got, "Packing") || strings.Contains(got, "sea") {
		s.fatalf("rejected or stale proposals changed the page: %q", got)
	}
}
