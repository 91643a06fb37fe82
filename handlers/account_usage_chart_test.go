package handlers_test

import (
	"context"
	"fmt"
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
	admin.apiJSON("PUT", fmt.Sprintf("/api/admin/models/%d", fake.ID), map[string]any{"input_price": 1, "output_price": 2}, http.StatusOK, nil)
	var out apiChatOut
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "one", "model": fake.ID}, http.StatusOK, &out)
	priced := *out.ExchangeID
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "two", "model": other.ID}, http.StatusOK, &out)
	free := *out.ExchangeID
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
	// The month's latest conversations, newest first, with what each cost.
	cost, err := a.store.ExchangeCost(context.Background(), bob.user.ID, priced)
	if err != nil || cost == 0 {
		t.Fatalf("the priced chat cost %v, %v", cost, err)
	}
	rows := regexp.MustCompile(`(?s)<tr data-testid="usage-conversation"><td class="py-1"><a href="([^"]*)"[^>]*>[^<]*</a></td><td class="text-right" data-testid="usage-conversation-cost">([^<]*)</td>`).FindAllStringSubmatch(page, -1)
	if len(rows) != 2 || rows[0][1] != fmt.Sprintf("/chat/%d", free) || rows[0][2] != "$0.0000" ||
		rows[1][1] != fmt.Sprintf("/chat/%d", priced) || rows[1][2] != fmt.Sprintf("$%.4f", cost) {
		t.Fatalf("the conversations' costs %q, want chat %d at $0 then chat %d at $%.4f", rows, free, priced, cost)
	}
	// Another person's page charts their own (no) usage.
	if page := bodyOf(admin.get("/account")); strings.Contains(page, `data-testid="usage-chart"`) {
		t.Fatal("ann's page charts bob's usage")
	}
}
