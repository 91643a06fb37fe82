package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"palaver/internal/htmltest"
)

// TestSubRunEntryOpensItsLog: the builtin router's search runs as a
// recorded sub-run; the conversation shows it as one compact entry whose
// link opens the sub-run's own log; another user, or another conversation,
// gets a 404.
func TestSubRunEntryOpensItsLog(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.register("ann"), a.register("bob")
	older := ann.chatSend(t, "where do pelicans winter", 0)
	ex := ann.chatSend(t, "search my chats for pelicans", 0)
	a.waitTurns()

	doc := ann.chatScreen(t, fmt.Sprintf("/chat/%d", ex))
	links := htmltest.ByTestID(doc, "sub-run-open")
	if len(links) != 1 {
		t.Fatalf("%d sub-run links in the conversation, want 1", len(links))
	}
	href, _ := htmltest.Attr(links[0], "href")
	if !strings.HasPrefix(href, fmt.Sprintf("/chat/%d/subruns/", ex)) {
		t.Fatalf("the link goes to %q", href)
	}
	page := ann.chatScreen(t, href)
	if st := htmltest.ByTestID(page, "sub-run-status"); len(st) != 1 {
		t.Fatal("no status on the sub-run's page")
	} else if v, _ := htmltest.Attr(st[0], "data-status"); v != "ok" {
		t.Fatalf("the sub-run's status is %q", v)
	}
	if msgs := htmltest.ByTestID(page, "message"); len(msgs) == 0 {
		t.Fatal("the sub-run's log is empty")
	}
	body := bodyOf(ann.get(href))
	if !strings.Contains(body, "pelicans") {
		t.Fatalf("the sub-run's log does not show the hit: %s", body)
	}

	// The administrator (ann, the first account) sees the sub-run listed
	// under the conversation's log.
	res := ann.postForm(fmt.Sprintf("/admin/exchanges/%d", ex), url.Values{"reason": {"checking the search"}})
	mustStatus(t, res, http.StatusOK)
	rows := htmltest.ByTestID(chatDoc(t, res), "admin-sub-run")
	if len(rows) != 1 {
		t.Fatalf("%d sub-runs listed in the admin view, want 1", len(rows))
	} else if st, _ := htmltest.Attr(rows[0], "data-status"); st != "ok" {
		t.Fatalf("the admin view lists the sub-run as %q", st)
	}

	sub := strings.TrimPrefix(href, fmt.Sprintf("/chat/%d/subruns/", ex))
	for _, tc := range []struct {
		c    *client
		path string
	}{
		{bob, href},
		{ann, fmt.Sprintf("/chat/%d/subruns/%s", older, sub)}, // not that conversation's
		{ann, fmt.Sprintf("/chat/%d/subruns/%d", ex, older)},  // not a sub-run
	} {
		if res := tc.c.get(tc.path); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", tc.path, res.StatusCode)
		}
	}
}
