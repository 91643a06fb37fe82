package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The composer warns before sending: once the person's budget is nearly
// spent (90%), and once it is spent; a message sent then is kept and
// answered at once with the error that names the budget.
func TestComposerBudgetWarning(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	bob := a.register("bob")
	fake, _ := fakeModels(t, a, admin)
	admin.apiJSON("PUT", "/api/admin/quotas", map[string]any{"daily_tokens": 3200}, http.StatusOK, nil)

	if page := bodyOf(bob.get("/chat")); strings.Contains(page, `data-testid="budget-warning"`) {
		t.Fatal("a warning with no tokens used")
	}
	var out apiChatOut
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "hello", "model": fake.ID}, http.StatusOK, &out) // 3000 tokens
	ex := *out.ExchangeID
	page := bodyOf(bob.get(fmt.Sprintf("/chat/%d", ex)))
	if !strings.Contains(page, `data-testid="budget-warning"`) || strings.Contains(page, "data-spent") ||
		!strings.Contains(page, "You have used 3000 of your 3200 daily tokens") {
		t.Fatalf("no warning at 94%%:\n%s", page)
	}
	pageID := bob.pageCreate(t, "Notes", "# Notes")
	if panel := bodyOf(bob.get(fmt.Sprintf("/pages/%d/edit", pageID))); !strings.Contains(panel, "You have used 3000 of your 3200 daily tokens") {
		t.Fatalf("the page's chat panel does not warn:\n%s", panel)
	}

	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "again", "exchange_id": ex, "model": fake.ID}, http.StatusOK, &out) // spent now
	page = bodyOf(bob.get(fmt.Sprintf("/chat/%d", ex)))
	if !strings.Contains(page, "data-spent") || !strings.Contains(page, "Your daily token budget (3200 tokens) is spent") {
		t.Fatalf("no warning once spent:\n%s", page)
	}
	res := bob.postForm("/chat/send", url.Values{"query": {"one more"}, "exchange_id": {fmt.Sprint(ex)}})
	mustStatus(t, res, http.StatusSeeOther)
	page = bodyOf(bob.get(res.Header.Get("Location")))
	if !strings.Contains(page, "one more") || !strings.Contains(page, `data-role="error"`) {
		t.Fatalf("the refused message:\n%s", page)
	}
}

// A reply that spends the rest of the budget shows the warning in the
// open tab's composer at once, without a reload (the live frame of the
// turn's end draws the warning's slot again).
func TestComposerBudgetWarningFollowsReply(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	bob := a.register("bob")
	fake, _ := fakeModels(t, a, admin)
	admin.apiJSON("PUT", "/api/admin/quotas", map[string]any{"daily_tokens": 5000}, http.StatusOK, nil)
	addr := a.listen()

	var out apiChatOut
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "hello", "model": fake.ID}, http.StatusOK, &out) // 3000 of 5000
	ex := *out.ExchangeID
	page := bodyOf(bob.get(fmt.Sprintf("/chat/%d", ex)))
	if !strings.Contains(page, `<div id="composer-budget">`) || strings.Contains(page, `data-testid="budget-warning"`) {
		t.Fatalf("the composer has no budget slot, or warns at 60%%:\n%s", page)
	}
	tab := bob.openTab(t, addr)
	tab.watch(ex, 1)
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "again", "exchange_id": ex}, http.StatusOK, &out) // spent now
	tab.readUntil("the budget warning", func() bool {
		for _, f := range tab.frames {
			if strings.Contains(f, `<div id="composer-budget" hx-swap-oob="innerHTML">`) && strings.Contains(f, `data-testid="budget-warning"`) {
				return true
			}
		}
		return false
	})
	all := strings.Join(tab.frames, "")
	if !strings.Contains(all, "data-spent") || !strings.Contains(all, "Your daily token budget (5000 tokens) is spent") {
		t.Fatalf("the live warning does not say the budget is spent: %q", tab.frames)
	}
}
