package agents

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestReplyPiecesShareAFrame: pieces that come faster than one a
// replyFrame reach the tabs joined (the builtin agent sends a reply's
// words all at once: the first word, then the rest), pieces
// further apart one by one; either way they join into the reply, their
// offsets follow on, and all come before the reply's entry.
func TestReplyPiecesShareAFrame(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		most  func(words int) int // delta events at most
		least func(words int) int
	}{
		// Two here; a machine that stalls past a frame mid-burst may cut
		// it once more.
		{"burst", 0, func(w int) int { return w / 2 }, func(int) int { return 1 }},
		{"spaced", 2 * replyFrame, func(w int) int { return 2 * w }, func(w int) int { return w }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			ann := newUser(t, s, "ann")
			svc := New(s, &Builtin{Delay: tc.delay}, Options{Logger: quiet})
			sub := svc.Hub().Subscribe(ann)
			defer sub.Close()
			res, err := svc.Send(context.Background(), SendRequest{UserID: ann, Query: "tell me about the weather"})
			if err != nil || res.Failed {
				t.Fatalf("send: %+v, %v", res, err)
			}
			words := len(strings.Fields(res.Reply.Content))
			var text strings.Builder
			deltas, entry := 0, false
			for _, e := range events(sub) {
				switch {
				case e.Kind == EventDelta:
					if entry {
						t.Fatalf("a piece after the reply's entry: %q", e.Delta)
					}
					if e.Offset != text.Len() {
						t.Fatalf("piece at %d after %d bytes", e.Offset, text.Len())
					}
					text.WriteString(e.Delta)
					deltas++
				case e.Kind == EventEntry && e.Entry.ID == res.Reply.ID:
					entry = true
				}
			}
			if text.String() != res.Reply.Content || !entry {
				t.Fatalf("pieces %q (entry seen: %v); reply %q", text.String(), entry, res.Reply.Content)
			}
			if words < 8 || deltas > tc.most(words) || deltas < tc.least(words) {
				t.Fatalf("%d pieces for a reply of %d words", deltas, words)
			}
		})
	}
}
