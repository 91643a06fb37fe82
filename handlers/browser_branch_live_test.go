package handlers_test

import (
	"context"
	"fmt"
	"testing"
)

// browserBranchLive: a person has opened the edit form on a message and is
// typing when another tab of theirs makes a branch there, then deletes it:
// the switcher on that message comes and goes, the form and its text stay,
// and sending it makes a branch with that text. The tab that showed the
// deleted branch is told; the sidebar's item shows the family with its
// count as it changes.
func browserBranchLive(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	one := s.window("live-tab1")
	one.register("liv")
	one.send("first question")
	orig := one.location()
	s.app.waitSubscribers(1)
	two := one.tab("live-tab2")
	two.visit(orig)
	s.app.waitSubscribers(2)

	// Tab one opens the edit form on the first message and types.
	one.click(browserEntry(0) + " [data-testid=edit-message]")
	one.waitVisible(browserEntry(0) + " [data-testid=edit-input]")
	browserEval[bool](one, `(document.querySelector("[data-testid=edit-input]").value = "", true)`)
	one.typeInto("[data-testid=edit-input]", "my unsent words")
	formStays := fmt.Sprintf(`%s === 1 && document.querySelector(%s).value === "my unsent words"`,
		browserCount(browserEntry(0)+" [data-testid=edit-form]"), browserQuote(browserEntry(0)+" [data-testid=edit-input]"))

	// Tab two edits the same message: a new branch, which tab one's
	// switcher shows at once.
	two.click(browserEntry(0) + " [data-testid=edit-message]")
	two.waitVisible(browserEntry(0) + " [data-testid=edit-input]")
	browserEval[bool](two, `(document.querySelector("[data-testid=edit-input]").value = "", true)`)
	two.typeInto("[data-testid=edit-input]", "tab two's words")
	two.click("[data-testid=edit-send]")
	branch := two.waitBranch(orig, 1)
	one.waitFor("the switcher in tab one", browserHasText(browserEntry(0)+" [data-testid=branch-switch]", "1 / 2"))
	one.waitFor("the family's count in tab one", browserHasText(browserHistoryItem+" [data-testid=history-branches]", "2 branches"))
	if !browserEval[bool](one, formStays) {
		s.fatalf("the switcher's update closed the edit form or lost its text")
	}

	// The branch is deleted (as through the API): tab one's switcher and
	// count go, its form stays; tab two, which shows it, is told.
	var branchID int64
	if _, err := fmt.Sscanf(branch, "/chat/%d", &branchID); err != nil {
		s.fatalf("branch path %q", branch)
	}
	u, err := s.app.store.UserByUsername(context.Background(), "liv")
	if err != nil {
		s.fatalf("user: %v", err)
	}
	if _, err := s.app.store.DeleteExchange(context.Background(), u.ID, branchID); err != nil {
		s.fatalf("delete the branch: %v", err)
	}
	one.waitFor("the switcher gone in tab one", browserCount(browserEntry(0)+" [data-testid=branch-switch]")+" === 0")
	one.waitFor("the family's count gone in tab one", browserCount(browserHistoryItem+" [data-testid=history-branches]")+" === 0 && "+
		browserCount(browserHistoryItem)+" === 1")
	if !browserEval[bool](one, formStays) {
		s.fatalf("the switcher's removal closed the edit form or lost its text")
	}
	two.waitFor("the notice in tab two", browserHasText("[data-testid=chat-deleted]", "deleted"))
	if id := two.exchangeID(); id != 0 {
		s.fatalf("tab two's composer still sends to %d", id)
	}
	two.waitFor("tab two's sidebar keeps the family, shown by the branch left", fmt.Sprintf(
		`%s === 1 && document.querySelector(%s).getAttribute("href") === %s`,
		browserCount(browserHistoryItem), browserQuote(browserHistoryItem+" a"), browserQuote(orig)))

	// Tab one sends what it typed: a branch with those words.
	one.click(browserEntry(0) + " [data-testid=edit-send]")
	one.waitBranch(orig, 1)
	if got := browserBodies(one); len(got) != 2 || got[0] != "my unsent words" {
		s.fatalf("the sent edit made a branch showing %q", got)
	}
}
