package views

import (
	"context"
	"io"
	"strings"

	"github.com/a-h/templ"
)

// The live connection sends the same fragments to every tab that shows a
// conversation: the message that arrived, the sidebar item that moved. Each
// is rendered once and the HTML reused while its inputs are the same (the
// fragments are pure functions of their view models).

// liveCached bounds each memo.
const liveCached = 1024

// remembered renders with render the first time key is seen, and the same
// HTML after.
func remembered[K comparable](m *memo[K], key K, render templ.Component) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		html, ok := m.get(key)
		if !ok {
			var b strings.Builder
			if err := render.Render(ctx, &b); err != nil {
				return err
			}
			html = b.String()
			m.put(key, html)
		}
		_, err := io.WriteString(w, html)
		return err
	})
}

var (
	liveHistory  = newMemo[HistoryItem](liveCached)
	liveMessages = newMemo[messageKey](liveCached)
)

// messageKey is a ChatMessage by value (the view model holds pointers).
type messageKey struct {
	ID                           int64
	Seq                          int64
	HasSeq                       bool
	Role, Text, HTML, Time, When string
	Feedback                     FeedbackView
	HasFeedback                  bool
	Retry                        RetryView
	HasRetry                     bool
	Detail                       string
}

func keyOf(m ChatMessage) messageKey {
	k := messageKey{ID: m.ID, Role: m.Role, Text: m.Text, HTML: m.HTML, Time: m.Time, When: m.TimeFull, Detail: m.Detail}
	if m.Seq != nil {
		k.Seq, k.HasSeq = *m.Seq, true
	}
	if m.Feedback != nil {
		k.Feedback, k.HasFeedback = *m.Feedback, true
	}
	if m.Retry != nil {
		k.Retry, k.HasRetry = *m.Retry, true
	}
	return k
}

// liveMessage is Message, rendered once for every tab it goes to.
func liveMessage(m ChatMessage) templ.Component {
	return remembered(liveMessages, keyOf(m), Message(m))
}

// liveHistoryEntry is HistoryEntry, rendered once for every tab it goes to.
func liveHistoryEntry(it HistoryItem) templ.Component {
	return remembered(liveHistory, it, HistoryEntry(it))
}
