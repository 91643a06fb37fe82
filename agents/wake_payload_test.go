package agents

import (
	"encoding/json"
	"strings"
	"testing"

	"palaver/models"
)

// TestDeltaPayloadsStayUnderTheLimit: a batch of reply pieces larger than a
// notification may carry is cut at character boundaries into payloads under
// PostgreSQL's 8000 bytes, whose pieces put together, at their offsets, are
// the batch.
func TestDeltaPayloadsStayUnderTheLimit(t *testing.T) {
	for _, text := range []string{
		"short",
		strings.Repeat("word ", 3000),
		strings.Repeat("é<b>\"\x01ü漢", 2500), // escapes grow 1 byte to 6
	} {
		n := &models.Notice{Kind: models.NotifyDelta, Exchange: 3, User: 4, Offset: 17, Text: text, Origin: "palaver/abc"}
		var got strings.Builder
		next := 17
		for _, p := range payloads(n) {
			if len(p) > 8000 {
				t.Fatalf("a payload of %d bytes", len(p))
			}
			var back models.Notice
			if err := json.Unmarshal([]byte(p), &back); err != nil {
				t.Fatal(err)
			}
			if back.Offset != next {
				t.Fatalf("a piece at offset %d, want %d", back.Offset, next)
			}
			next += len(back.Text)
			got.WriteString(back.Text)
		}
		if got.String() != text {
			t.Fatalf("the pieces put together differ from the text (%d bytes, want %d)", got.Len(), len(text))
		}
	}
}

// TestRemoteReplyPieces: the pieces heard of a reply another process writes
// make its text so far; a piece heard twice is dropped, a gap makes the text
// unknown, and pieces after the reply's end are late.
func TestRemoteReplyPieces(t *testing.T) {
	w := &Waker{replies: map[int64]*remoteReply{}}
	w.openReply(5, 1)
	piece := func(offset int, text string) bool {
		return w.heard(&models.Notice{Kind: models.NotifyDelta, Exchange: 5, User: 1, Offset: offset, Text: text})
	}
	if !piece(0, "Hello") || !piece(5, " there") {
		t.Fatal("pieces in order were not shown")
	}
	if piece(0, "Hello") {
		t.Fatal("a piece heard twice was shown again")
	}
	if got := w.replySoFar(1, 5); got != "Hello there" {
		t.Fatalf("text so far %q", got)
	}
	if got := w.replySoFar(2, 5); got != "" {
		t.Fatalf("another user reads %q", got)
	}
	if !piece(20, "later") || w.replySoFar(1, 5) != "" {
		t.Fatal("after a gap, the piece is shown as it is and the text so far is unknown")
	}
	w.closeReply(5)
	if piece(25, " end") {
		t.Fatal("a piece after the reply's end was shown")
	}
	w.openReply(5, 1) // the next turn
	if !piece(0, "Next") || w.replySoFar(1, 5) != "Next" {
		t.Fatalf("the next turn's reply: %q", w.replySoFar(1, 5))
	}
}
