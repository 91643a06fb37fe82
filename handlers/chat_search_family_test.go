package handlers_test

import (
	"context"
	"net/http"
	"palaver/internal/htmltest"
	"testing"
)

// TestChatSearchFoldsAFamily: a conversation forked four times, and an
// imported one whose branch was written out whole (its own rows, the same
// text at the same places). The search screen shows each entry the family
// shares once, "in N branches", titles included; the JSON API keeps one
// item per matching message, as its contract says.
func TestChatSearchFoldsAFamily(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	ctx := context.Background()
	root := a.searchChat(ann.user.ID, "general", nil, "Where do okapis sleep?", "Okapis sleep in the forest.")
	if _, err := a.store.RenameExchange(ctx, ann.user.ID, root, "Okapi nights"); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := a.store.Fork(ctx, ann.user.ID, root, 2); err != nil {
			t.Fatal(err)
		}
	}
	imported := a.searchChat(ann.user.ID, "general", nil, "Do okapis swim?", "Okapis can swim.")
	branch := a.searchChat(ann.user.ID, "general", nil, "Do okapis swim?", "Okapis can swim.")
	a.chatExec("UPDATE exchanges SET forked_from_id = ?, forked_at_seq = 2 WHERE id = ?", imported, branch)
	a.searchChat(ann.user.ID, "general", nil, "Okapis at the zoo", "noted")

	doc := chatDoc(t, ann.htmx(http.MethodGet, "/chat/search?q=okapis", nil))
	seen := map[string]int{}
	branches := map[string]string{}
	for _, h := range htmltest.ByTestID(doc, "search-hit") {
		line := htmltest.Text(htmltest.ByTestID(h, "search-hit-title")[0]) + " | " + htmltest.Text(htmltest.ByTestID(h, "search-hit-role")[0]) +
			" | " + htmltest.Text(htmltest.ByTestID(h, "search-snippet")[0])
		seen[line]++
		if b := htmltest.ByTestID(h, "search-hit-branches"); len(b) == 1 {
			branches[line] = htmltest.Text(b[0])
		}
	}
	for line, n := range seen {
		if n > 1 {
			t.Errorf("%d hits for %q", n, line)
		}
	}
	want := map[string]string{
		"Okapi nights | You | Where do okapis sleep?":            "in 5 branches",
		"Okapi nights | Assistant | Okapis sleep in the forest.": "in 5 branches",
		"Okapi nights | Title | Okapi nights":                    "in 5 branches",
		"Do okapis swim? | You | Do okapis swim?":                "in 2 branches",
		"Do okapis swim? | Assistant | Okapis can swim.":         "in 2 branches",
		"Do okapis swim? | Title | Do okapis swim?":              "in 2 branches",
		"Okapis at the zoo | You | Okapis at the zoo":            "",
	}
	for line, b := range want {
		if _, ok := seen[line]; !ok {
			t.Errorf("no hit %q in %v", line, seen)
		} else if branches[line] != b {
			t.Errorf("%q says %q, want %q", line, branches[line], b)
		}
	}

	// The JSON API: one item per matching message, the branch's own rows
	// included.
	key := a.apiClient("ann")
	var items []struct {
		ExchangeID int64  `json:"exchange_id"`
		Role       string `json:"role"`
	}
	key.apiJSON(http.MethodGet, "/api/chat/search?q=swim", nil, http.StatusOK, &items)
	perExchange := map[int64]int{}
	for _, it := range items {
		if it.Role != "title" {
			perExchange[it.ExchangeID]++
		}
	}
	if perExchange[imported] != 2 || perExchange[branch] != 2 {
		t.Errorf("API items per exchange %v, want 2 for %d and for %d", perExchange, imported, branch)
	}
}
