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
	messages *Memo[ChatMessage, string]
	history  *Memo[HistoryItem, string]
	pending  *Memo[int64, string]       // the pending reply cell, by the entry it answers
	turns    *Memo[TurnControl, string] // the composer's turn state
}

// liveCached bounds each memo.
const liveCached = 1024

// NewLiveCache makes an empty cache.
func NewLiveCache() *LiveCache {
	return &LiveCache{messages: NewMemo[ChatMessage, string](liveCached), history: NewMemo[HistoryItem, string](liveCached),
		pending: NewMemo[int64, string](liveCached), turns: NewMemo[TurnControl, string](liveCached)}
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

// pendingReply is PendingReplyOOB, rendered once for every tab it goes to.
func (lc *LiveCache) pendingReply(afterID int64) templ.Component {
	if lc == nil {
		return PendingReplyOOB(afterID)
	}
	return remembered(lc.pending, afterID, PendingReplyOOB(afterID))
}

// composerTurn is ComposerTurn out of band, rendered once for every tab it
// goes to.
func (lc *LiveCache) composerTurn(t TurnControl) templ.Component {
	if lc == nil {
		return ComposerTurn(t, true)
	}
	return remembered(lc.turns, t, ComposerTurn(t, true))
}

// remembered renders with render the first time key is seen, and the same
// HTML after.
func remembered[K comparable](m *Memo[K, string], key K, render templ.Component) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		html, ok := m.Get(key)
		if !ok {
			var b strings.Builder
			if err := render.Render(ctx, &b); err != nil {
				return err
			}
			html = b.String()
			m.Put(key, html)
		}
		_, err := io.WriteString(w, html)
		return err
	})
}
