package handlers_test

import (
	"context"
	"testing"
)

// browserFeedback: a rating and a comment on a reply are shown as chosen,
// and still after a reload; changing the rating sticks too.
func browserFeedback(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("fay")
	w.register("fay")
	w.send("hello")

	const (
		reply = "#transcript [data-testid=message][data-role=assistant]"
		up    = reply + " [data-testid=feedback-up]"
		down  = reply + " [data-testid=feedback-down]"
	)
	pressed := func(sel string) string {
		return `document.querySelector(` + browserQuote(sel) + `).getAttribute("aria-pressed") === "true"`
	}
	rating := func(wantUp, wantDown bool) {
		t.Helper()
		got := browserEval[[]string](w, `[`+browserQuote(up)+`, `+browserQuote(down)+`].map((s) => document.querySelector(s).getAttribute("aria-pressed"))`)
		want := []string{browserBool(wantUp), browserBool(wantDown)}
		if got[0] != want[0] || got[1] != want[1] {
			s.fatalf("thumbs up/down pressed = %v, want %v", got, want)
		}
	}

	rating(false, false)
	w.click(up)
	w.waitFor("thumbs up pressed", pressed(up))
	rating(true, false)

	// An optional comment, from the comment popover.
	w.click(reply + " [data-testid=feedback-comment-toggle]")
	w.waitVisible(reply + " [data-testid=feedback-comment]")
	w.typeInto(reply+" [data-testid=feedback-comment]", "Short and friendly")
	w.click(reply + " [data-testid=feedback-comment-save]")
	w.waitFor("the comment under the reply", browserHasText(reply+" [data-testid=feedback-comment-text]", "Short and friendly"))

	w.reload()
	rating(true, false)
	if got := w.text(reply + " [data-testid=feedback-comment-text]"); got != "“Short and friendly”" {
		s.fatalf("after a reload the comment reads %q", got)
	}

	// Thumbs down instead: it replaces the rating, and the comment stays.
	w.click(down)
	w.waitFor("thumbs down pressed", pressed(down))
	rating(false, true)
	w.reload()
	rating(false, true)
	w.waitVisible(reply + " [data-testid=feedback-comment-text]")
	if n := browserEval[int](w, browserCount(reply)); n != 1 {
		s.fatalf("the transcript shows %d replies, want 1", n)
	}
}

func browserBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
