package handlers_test

import (
	"strings"
	"testing"
	"time"

	"palaver/internal/htmltest"
	"palaver/models"
)

// TestAdminOverview: the dashboard draws each figure as an SVG chart with
// its numbers in a table beside it, and the numbers are today's activity.
func TestAdminOverview(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	bob := a.register("bob")
	down := int64(models.FeedbackDown)
	a.adminExchange(bob.user.ID, adminEx{queries: []string{"one", "two"}, rate: &down})
	a.adminExchange(bob.user.ID, adminEx{queries: []string{"three"}, fail: true})
	a.adminExchange(admin.user.ID, adminEx{queries: []string{"four"}, agent: "coder"})
	// Something older than the window does not count.
	old := a.adminExchange(bob.user.ID, adminEx{queries: []string{"ancient"}})
	a.chatExec("UPDATE exchanges SET created_at = ? WHERE id = ?", time.Now().UTC().AddDate(0, 0, -60), old)
	a.chatExec("UPDATE messages SET created_at = ? WHERE exchange_id = ?", time.Now().UTC().AddDate(0, 0, -60), old)

	doc := admin.chatScreen(t, "/admin")
	for _, id := range []string{"activity", "errors", "feedback", "proposals", "tokens"} {
		sec := htmltest.ByTestID(doc, "admin-chart-"+id)
		if len(sec) != 1 {
			t.Fatalf("no %s section", id)
		}
		svg := htmltest.FindAll(sec[0], func(n *chatNode) bool { return n.Data == "svg" })
		tables := htmltest.FindAll(sec[0], func(n *chatNode) bool { return n.Data == "table" })
		if len(svg) != 1 || len(tables) != 1 {
			t.Fatalf("%s: %d charts and %d tables", id, len(svg), len(tables))
		}
		if role, _ := htmltest.Attr(svg[0], "role"); role != "img" {
			t.Fatalf("%s chart has role %q", id, role)
		}
		if len(htmltest.FindAll(svg[0], func(n *chatNode) bool { return n.Data == "title" })) == 0 ||
			len(htmltest.FindAll(svg[0], func(n *chatNode) bool { return n.Data == "desc" })) != 1 {
			t.Fatalf("%s chart has no title or description", id)
		}
	}
	// Today's row, in UTC: 3 conversations; 4 turns, 3 replies and an error
	// row make 8 messages; one error in 4 turns; 2 active users.
	today := time.Now().UTC().Format(time.DateOnly)
	row := func(section, first string) string {
		for _, tr := range htmltest.FindAll(htmltest.ByTestID(doc, "admin-chart-"+section)[0], func(n *chatNode) bool { return n.Data == "tr" }) {
			var cells []string
			for c := tr.FirstChild; c != nil; c = c.NextSibling {
				if c.Data == "th" || c.Data == "td" {
					cells = append(cells, htmltest.Text(c))
				}
			}
			if len(cells) > 0 && cells[0] == first {
				return strings.Join(cells, " ")
			}
		}
		t.Fatalf("no row %q in %s", first, section)
		return ""
	}
	for _, tc := range []struct{ section, first, want string }{
		{"activity", today, " 3 8 2"},
		{"errors", today, " 4 1 25.0%"},
		{"feedback", "router", " 2 50.0% 0 1 0.0%"},
		{"feedback", "coder", " 1 0.0% 0 0 –"},
		{"tokens", "test-model", " 3 0 0 126"}, // 42 each; the old one is outside the window
	} {
		if got := row(tc.section, tc.first); got != tc.first+tc.want {
			t.Errorf("%s: %q, want %q", tc.section, got, tc.first+tc.want)
		}
	}
	cards := htmltest.Text(htmltest.ByTestID(doc, "admin-cards")[0])
	if !strings.Contains(cards, "Error rate25.0%") {
		t.Fatalf("cards %q", cards)
	}
}
