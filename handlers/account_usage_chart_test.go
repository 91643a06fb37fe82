package handlers_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"palaver/views"
)

// The account page charts this month's tokens per day from the usage
// rows: a bar for every day so far, today's the tokens the replies used;
// no chart before any reply.
func TestAccountUsageChart(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	bob := a.register("bob")
	fake, other := fakeModels(t, a, admin)
	if page := bodyOf(bob.get("/account")); strings.Contains(page, `data-testid="usage-chart"`) {
		t.Fatalf("a chart before any reply:\n%s", page)
	}
	var out apiChatOut
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "one", "model": fake.ID}, http.StatusOK, &out)
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "two", "model": other.ID}, http.StatusOK, &out)
	today, _, err := a.store.TokensUsed(context.Background(), bob.user.ID, time.Now())
	if err != nil || today == 0 {
		t.Fatalf("tokens used today %d, %v", today, err)
	}
	page := bodyOf(bob.get("/account"))
	chart := regexp.MustCompile(`(?s)<figure[^>]*data-testid="usage-chart"[^>]*>(.*?)</figure>`).FindStringSubmatch(page)
	if chart == nil || !strings.Contains(chart[1], `<svg`) || strings.Contains(chart[1], "style=") {
		t.Fatalf("no inline SVG chart (without style attributes):\n%s", page)
	}
	now := time.Now().UTC()
	bars := regexp.MustCompile(`<rect [^>]*data-value="([^"]*)"`).FindAllStringSubmatch(chart[1], -1)
	if len(bars) != now.Day() {
		t.Fatalf("%d bars, want one per day so far (%d):\n%s", len(bars), now.Day(), chart[1])
	}
	if got := bars[len(bars)-1][1]; got != views.Count(today) {
		t.Fatalf("today's bar says %s, want %d", got, today)
	}
	for _, b := range bars[:len(bars)-1] {
		if b[1] != "0" {
			t.Fatalf("an earlier day has tokens: %v", bars)
		}
	}
	// Another person's page charts their own (no) usage.
	if page := bodyOf(admin.get("/account")); strings.Contains(page, `data-testid="usage-chart"`) {
		t.Fatal("ann's page charts bob's usage")
	}
}
