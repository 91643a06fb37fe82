package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"palaver/internal/htmltest"
)

// Regenerating a reply with another model makes a branch answered by that
// model; each branch shows what it cost at its model's prices, and the
// compare view shows the two answers with the models that wrote them.
func TestRegenerateWithAnotherModelThenCompare(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	bob := a.register("bob")
	fake, other := fakeModels(t, a, admin)
	admin.apiJSON("PUT", fmt.Sprintf("/api/admin/models/%d", fake.ID), map[string]any{"input_price": 1.0, "output_price": 2.0}, http.StatusOK, nil)
	admin.apiJSON("PUT", fmt.Sprintf("/api/admin/models/%d", other.ID), map[string]any{"input_price": 10.0, "output_price": 10.0}, http.StatusOK, nil)

	var out apiChatOut
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "compare us", "model": fake.ID}, http.StatusOK, &out)
	root := *out.ExchangeID
	if page := bodyOf(bob.get(fmt.Sprintf("/chat/%d", root))); !strings.Contains(page, "This conversation has cost $0.0050.") {
		t.Fatalf("the conversation's cost:\n%s", page)
	}
	res, _ := bob.api("POST", fmt.Sprintf("/api/chat/exchange/%d/regenerate", root), map[string]any{"model": 424242})
	mustStatus(t, res, http.StatusBadRequest)
	bob.apiJSON("POST", fmt.Sprintf("/api/chat/exchange/%d/regenerate", root), map[string]any{"model": other.ID}, http.StatusOK, &out)
	fork := *out.ExchangeID
	if fork == root || modelIDOf(t, out) != other.ID {
		t.Fatalf("regenerated %+v", out)
	}
	// 1000 input and 2000 output tokens at $10 per million each.
	if page := bodyOf(bob.get(fmt.Sprintf("/chat/%d", fork))); !strings.Contains(page, "This conversation has cost $0.0300.") {
		t.Fatalf("the branch's cost:\n%s", page)
	}
	if page := bodyOf(bob.get(fmt.Sprintf("/chat/%d", root))); !strings.Contains(page, "This conversation has cost $0.0050.") {
		t.Fatalf("the first branch's cost changed:\n%s", page)
	}
	doc := bob.chatScreen(t, fmt.Sprintf("/chat/%d/compare/%d", root, fork))
	for side, want := range map[string]string{"compare-a": "gpt-fake", "compare-b": "gpt-other"} {
		nodes := htmltest.ByTestID(doc, side)
		if len(nodes) != 1 || !strings.Contains(htmltest.Text(nodes[0]), want) || !strings.Contains(htmltest.Text(nodes[0]), "From the fake.") {
			t.Fatalf("%s does not show the answer of %s", side, want)
		}
	}
}
