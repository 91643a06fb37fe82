package views

import (
	"context"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

func renderString(t *testing.T, c templ.Component) string {
	t.Helper()
	var b strings.Builder
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The live fragments rendered once are the fragments: the same HTML as a
// fresh render, and a changed input (a rating, a status) is a new render.
func TestLiveFragmentsFollowTheirInputs(t *testing.T) {
	seq := int64(3)
	m := ChatMessage{ID: 7, Seq: &seq, Role: RoleAssistant, HTML: "<p>hi</p>", Time: "10:00", TimeFull: "2026-12-02T10:00:00Z",
		Feedback: &FeedbackView{MessageID: 7, CSRF: "tok"}}
	for range 2 {
		if got, want := renderString(t, liveMessage(m)), renderString(t, Message(m)); got != want {
			t.Fatalf("live message\n%s\nwant\n%s", got, want)
		}
	}
	rated := m
	rated.Feedback = &FeedbackView{MessageID: 7, CSRF: "tok", Value: FeedbackUp}
	if got, want := renderString(t, liveMessage(rated)), renderString(t, Message(rated)); got != want {
		t.Fatalf("a rated message came out as the unrated one:\n%s", got)
	}
	other := m
	other.Feedback = &FeedbackView{MessageID: 7, CSRF: "another tab's token"}
	if got := renderString(t, liveMessage(other)); !strings.Contains(got, "another tab&#39;s token") && !strings.Contains(got, "another tab's token") {
		t.Fatalf("another session's token is not in its fragment:\n%s", got)
	}

	it := HistoryItem{ID: 9, Title: "Plans", When: "just now", WhenFull: "2026-12-02T10:00:00Z", Turns: 1, CSRF: "tok", TurnStatus: "running"}
	if got, want := renderString(t, liveHistoryEntry(it)), renderString(t, HistoryEntry(it)); got != want {
		t.Fatalf("live history item\n%s\nwant\n%s", got, want)
	}
	it.TurnStatus = "idle"
	if got, want := renderString(t, liveHistoryEntry(it)), renderString(t, HistoryEntry(it)); got != want {
		t.Fatalf("the idle item came out as the running one:\n%s", got)
	}
}
