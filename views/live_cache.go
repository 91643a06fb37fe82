package views

import (
	"context"
	"io"
	"strings"

	"github.com/a-h/templ"
)

// LiveCache remembers the fragments the live connection sends to every tab
// that shows a conversation (the message that arrived, the sidebar item
// that moved), so that each is rendered once. The key of each is its view
// model itself: the fragments are pure functions of their view models, and
// the view models hold plain values (TestCacheKeysArePlainValues), so a
// changed field is a new key and never the old HTML. One is made per
// server (NewLiveCache) and passed to LiveMessage.
type LiveCache struct {
	messages *memo[ChatMessage]
	history  *memo[HistoryItem]
}

// liveCached bounds each memo.
const liveCached = 1024

// NewLiveCache makes an empty cache.
func NewLiveCache() *LiveCache {
	return &LiveCache{messages: newMemo[ChatMessage](liveCached), history: newMemo[HistoryItem](liveCached)}
}

// message is Message, rendered once for every tab it goes to (nil: no
// cache, rendered each time).
func (lc *LiveCache) message(m ChatMessage) templ.Component {
	if lc == nil {
		return Message(m)
	}
	return remembered(lc.messages, m, Message(m))
}

// historyEntry is HistoryEntry, rendered once for every tab it goes to.
func (lc *LiveCache) historyEntry(it HistoryItem) templ.Component {
	if lc == nil {
		return HistoryEntry(it)
	}
	return remembered(lc.history, it, HistoryEntry(it))
}

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
