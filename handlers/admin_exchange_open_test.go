package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"palaver/internal/htmltest"
	"palaver/models"
)

// TestAdminOpenExchange: the gate shows no log and records nothing; each
// opening records an audit row and shows the whole log read-only; the owner
// then sees the notice on their conversation, and /admin/audit lists it.
func TestAdminOpenExchange(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	bob := a.register("bob")
	ann := a.register("ann")
	ex := a.adminExchange(bob.user.ID, adminEx{queries: []string{"my secret plan", "and then?"}, fail: true, tools: true})
	other := a.adminExchange(bob.user.ID, adminEx{queries: []string{"another chat"}})
	gate := fmt.Sprintf("/admin/exchanges/%d", ex)

	doc := admin.chatScreen(t, gate)
	// The gate names the conversation (its title, as the list does) and its
	// owner, but shows none of its messages.
	if body := htmltest.Text(doc); strings.Contains(body, "and then?") || strings.Contains(body, "reply to") ||
		!strings.Contains(htmltest.Text(htmltest.ByTestID(doc, "admin-exchange-facts")[0]), "bob") {
		t.Fatalf("the gate shows the log, or not the owner: %s", body)
	}
	if len(htmltest.ByTestID(doc, "admin-log")) != 0 || a.apiCount("admin_audit") != 0 {
		t.Fatal("the gate showed the log or recorded an opening")
	}
	if len(htmltest.ByTestID(doc, "admin-open-form")) != 1 {
		t.Fatal("no form to open the conversation")
	}
	// Not opened yet: the owner sees nothing.
	if n := len(htmltest.ByTestID(bob.chatScreen(t, fmt.Sprintf("/chat/%d", ex)), "admin-viewed")); n != 0 {
		t.Fatal("the owner sees a notice before any opening")
	}

	for i, reason := range []string{"support ticket 12", ""} {
		res := admin.postForm(gate, url.Values{"reason": {reason}})
		mustStatus(t, res, http.StatusOK)
		doc := chatDoc(t, res)
		if n := a.apiCount("admin_audit"); n != i+1 {
			t.Fatalf("after opening %d times, %d audit rows", i+1, n)
		}
		var roles []string
		for _, e := range htmltest.ByTestID(doc, "admin-log-entry") {
			r, _ := htmltest.Attr(e, "data-role")
			roles = append(roles, r)
		}
		if got := strings.Join(roles, " "); got != "user tool_call tool_result assistant user error" {
			t.Fatalf("log rows %q", got)
		}
		body := htmltest.Text(doc)
		// Entries are named in a person's words, counted from 1 as the
		// chat's time travel counts them: not "#0 USER".
		if first := htmltest.Text(htmltest.ByTestID(doc, "admin-log-entry")[0]); !strings.Contains(first, "Message 1") || !strings.Contains(first, "The user") ||
			strings.Contains(body, "#0") {
			t.Errorf("the first entry reads %q", first)
		}
		for _, want := range []string{"my secret plan", "search_docs", "pelicans", "the model endpoint timed out", "model test-model"} {
			if !strings.Contains(body, want) {
				t.Errorf("the log lacks %q", want)
			}
		}
		// Read-only: no rating controls, no composer.
		if len(htmltest.ByTestID(doc, "feedback")) != 0 || len(htmltest.ByTestID(doc, "chat-input")) != 0 ||
			strings.Contains(bodyOf(res), "/chat/message/") {
			t.Fatal("the admin view has the owner's controls")
		}
		note := htmltest.Text(htmltest.ByTestID(doc, "admin-audit-note")[0])
		if reason != "" && !strings.Contains(note, reason) {
			t.Fatalf("audit note %q lacks the reason", note)
		}
	}
	// htmx-boosted opening records one more.
	mustStatus(t, admin.htmx("POST", gate, url.Values{"reason": {"boosted"}}), http.StatusOK)
	if n := a.apiCount("admin_audit"); n != 3 {
		t.Fatalf("%d audit rows after three openings", n)
	}

	// The owner sees it on that conversation, not on another; ann sees nothing of bob's.
	notice := htmltest.ByTestID(bob.chatScreen(t, fmt.Sprintf("/chat/%d", ex)), "admin-viewed")
	if len(notice) != 1 || !strings.Contains(htmltest.Text(notice[0]), "An administrator opened this conversation on") ||
		!strings.Contains(htmltest.Text(notice[0]), "3 times") {
		t.Fatalf("owner's notice: %v", notice)
	}
	if len(htmltest.ByTestID(bob.chatScreen(t, fmt.Sprintf("/chat/%d", other)), "admin-viewed")) != 0 {
		t.Fatal("the notice shows on a conversation nobody opened")
	}
	mustStatus(t, ann.get(fmt.Sprintf("/chat/%d", ex)), http.StatusNotFound)

	// The audit log lists the openings, newest first, with reasons.
	doc = admin.chatScreen(t, "/admin/audit")
	rows := htmltest.ByTestID(doc, "admin-audit-row")
	if len(rows) != 3 || !strings.Contains(htmltest.Text(rows[0]), "boosted") || !strings.Contains(htmltest.Text(rows[2]), "support ticket 12") {
		t.Fatalf("audit rows: %d", len(rows))
	}
	for _, r := range rows {
		if txt := htmltest.Text(r); !strings.Contains(txt, "root") || !strings.Contains(txt, "bob") || !strings.Contains(txt, "my secret plan") {
			t.Fatalf("audit row %q", txt)
		}
	}

	// A missing exchange: 404, and nothing recorded.
	mustStatus(t, admin.postForm("/admin/exchanges/424242", url.Values{"reason": {"x"}}), http.StatusNotFound)
	mustStatus(t, admin.get("/admin/exchanges/424242"), http.StatusNotFound)
	mustStatus(t, admin.get("/admin/exchanges/abc"), http.StatusNotFound)
	// A reason too long is refused, and nothing recorded.
	mustStatus(t, admin.postForm(gate, url.Values{"reason": {strings.Repeat("x", models.MaxAuditReason+1)}}), http.StatusUnprocessableEntity)
	if n := a.apiCount("admin_audit"); n != 3 {
		t.Fatalf("%d audit rows after refused openings", n)
	}

	// Once the conversation is deleted the audit rows stay, naming it by number.
	if _, err := a.store.DeleteExchange(t.Context(), bob.user.ID, ex); err != nil {
		t.Fatal(err)
	}
	doc = admin.chatScreen(t, "/admin/audit")
	if rows := htmltest.ByTestID(doc, "admin-audit-row"); len(rows) != 3 || !strings.Contains(htmltest.Text(rows[0]), fmt.Sprintf("#%d (deleted)", ex)) {
		t.Fatalf("after deletion: %d rows, first %q", len(rows), htmltest.Text(rows[0]))
	}
}

func TestAdminAuditPages(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	bob := a.register("bob")
	ex := a.adminExchange(bob.user.ID, adminEx{queries: []string{"q"}})
	for i := range 120 {
		if _, _, _, err := a.store.AdminOpenExchange(t.Context(), admin.user.ID, ex, fmt.Sprint("reason ", i)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	path, pages := "/admin/audit", 0
	for path != "" {
		doc := admin.chatScreen(t, path)
		for _, r := range htmltest.ByTestID(doc, "admin-audit-row") {
			id, _ := htmltest.Attr(r, "data-audit-id")
			if seen[id] {
				t.Fatalf("audit row %s shown twice", id)
			}
			seen[id] = true
		}
		path = ""
		if next := htmltest.ByTestID(doc, "admin-next"); len(next) == 1 {
			path, _ = htmltest.Attr(next[0], "href")
		}
		pages++
	}
	if len(seen) != 120 || pages != 3 {
		t.Fatalf("%d rows over %d pages, want 120 over 3", len(seen), pages)
	}
	mustStatus(t, admin.get("/admin/audit?before=x"), http.StatusBadRequest)
	doc := admin.chatScreen(t, fmt.Sprintf("/admin/audit?exchange=%d", ex+1))
	if len(htmltest.ByTestID(doc, "admin-audit-row")) != 0 {
		t.Fatal("another exchange's filter lists rows")
	}
}
