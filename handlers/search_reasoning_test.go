package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Search finds a word of a reply's reasoning only for a person who opted
// in on the account page, through the API and the search screen alike.
func TestSearchReasoningOptIn(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	bob := a.register("bob")
	fake, _ := fakeModels(t, a, admin)
	var out apiChatOut
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "tell me", "model": fake.ID}, http.StatusOK, &out)
	if out.AgentResponse == nil || out.AgentResponse.Reasoning != "hmm" {
		t.Fatalf("the fake's reply has no reasoning: %+v", out.AgentResponse)
	}
	found := func(c *client) (api []apiSearchOut, screen string) {
		t.Helper()
		return c.apiSearch("hmm"), bodyOf(c.get("/chat/search?q=hmm"))
	}
	if api, screen := found(bob); len(api) != 0 || strings.Contains(screen, "<mark>hmm</mark>") {
		t.Fatalf("found in reasoning without the opt-in: %+v\n%s", api, screen)
	}
	if page := bodyOf(bob.get("/account")); !strings.Contains(page, `data-testid="search-reasoning"`) ||
		strings.Contains(page, `checked data-testid="search-reasoning"`) {
		t.Fatalf("no opt-in box, or ticked by default:\n%s", page)
	}
	mustStatus(t, bob.postForm("/account/search-reasoning", url.Values{"on": {"yes"}}), http.StatusUnprocessableEntity)
	if api, _ := found(bob); len(api) != 0 {
		t.Fatalf("a refused form opted in: %+v", api)
	}
	mustStatus(t, bob.postForm("/account/search-reasoning", url.Values{"on": {"1"}}), http.StatusSeeOther)
	api, screen := found(bob)
	if len(api) != 1 || api[0].MessageID == nil || api[0].Role != "assistant" || api[0].Snippet != "<mark>hmm</mark>" {
		t.Fatalf("with the opt-in, the API found %+v", api)
	}
	if !strings.Contains(screen, "<mark>hmm</mark>") || !strings.Contains(screen, "Assistant&#39;s thinking") {
		t.Fatalf("with the opt-in, the search screen shows no thinking hit:\n%s", screen)
	}
	if page := bodyOf(bob.get("/account")); !strings.Contains(page, `checked data-testid="search-reasoning"`) {
		t.Fatalf("the opt-in is not shown ticked:\n%s", page)
	}
	// Another person finds nothing of bob's, opted in or not.
	mustStatus(t, admin.postForm("/account/search-reasoning", url.Values{"on": {"1"}}), http.StatusSeeOther)
	if api, _ := found(admin); len(api) != 0 {
		t.Fatalf("ann finds bob's reasoning: %+v", api)
	}
	// Off again: an unticked box posts no field.
	mustStatus(t, bob.postForm("/account/search-reasoning", url.Values{}), http.StatusSeeOther)
	if api, _ := found(bob); len(api) != 0 {
		t.Fatalf("found after opting out: %+v", api)
	}
}
