package handlers

import (
	"errors"
	"time"

	fws "github.com/fasthttp/websocket"

	"palaver/views"
)

// Every tab of a user that hears the same events in the same state is sent
// the same frame: the turn's reply with the composer and the sidebar item,
// to each of the tabs on a conversation. Handlers.liveFrames keeps such frames
// rendered and framed once (a websocket prepared message), so that each tab
// writes the bytes as they are, without rendering them again or copying them
// into its own buffer. A frame is kept by its update's content
// (liveFrameKey): the fragments are pure functions of their view models, so
// the same key is the same bytes.

const (
	liveFramesKept = 64       // frames kept; the oldest goes first
	liveFrameMax   = 64 << 10 // a bigger frame (a long reply) is not kept
)

// liveFrameKey is a live update's whole content, for the updates that many
// tabs receive alike: up to two entries appended, the pending cell, the
// composer, the sidebar. Updates with other parts (switchers, a page's
// parts, an adopted chat, the shown chat gone, more entries, as a catch-up
// has) are rendered per tab.
type liveFrameKey struct {
	entries    [2]views.ChatMessage
	nEntries   int
	closeReply bool
	openReply  int64
	hasOpen    bool
	replyText  string
	hasText    bool
	delta      string
	reasoning  string
	thinkStart bool
	turn       views.TurnControl
	hasTurn    bool
	heading    views.ChatHeading
	hasHeading bool
	removed    int64
	history    views.HistoryItem
	hasHistory bool
	moved      bool
	unread     int
	hasUnread  bool
	budget     views.BudgetWarning
	hasBudget  bool
}

// liveFrameKeyOf returns u's key, or false when u is not one kept.
func liveFrameKeyOf(u *views.LiveUpdate) (liveFrameKey, bool) {
	if u.Adopted != 0 || len(u.Switchers) > 0 || len(u.PageEntries) > 0 || u.Page != nil || len(u.Entries) > 2 || u.Gone || u.Sidebar != nil ||
		len(u.Answered) > 0 || u.Projects != nil { // answered cards, projects' counts: rare, rendered per tab
		return liveFrameKey{}, false
	}
	k := liveFrameKey{nEntries: len(u.Entries), closeReply: u.CloseReply, delta: u.Delta, reasoning: u.Reasoning, thinkStart: u.ReasoningStart, removed: u.Removed, moved: u.Moved}
	copy(k.entries[:], u.Entries)
	if u.OpenReply != nil {
		k.openReply, k.hasOpen = *u.OpenReply, true
	}
	if u.ReplyText != nil {
		k.replyText, k.hasText = *u.ReplyText, true
	}
	if u.Turn != nil {
		k.turn, k.hasTurn = *u.Turn, true
	}
	if u.Heading != nil {
		k.heading, k.hasHeading = *u.Heading, true
	}
	if u.History != nil {
		k.history, k.hasHistory = *u.History, true
	}
	if u.UnreadCount != nil {
		k.unread, k.hasUnread = *u.UnreadCount, true
	}
	if u.Budget != nil {
		k.budget, k.hasBudget = *u.Budget, true
	}
	return k, true
}

// flushShared writes the queued update, alone in its message, as the frame
// kept for its content, rendering and keeping it first if none is.
func (s *liveSession) flushShared(k liveFrameKey) error {
	pm, ok := s.h.liveFrames.Get(k)
	if !ok {
		if err := s.render(); err != nil {
			return err
		}
		if s.out.Len() > liveFrameMax {
			return s.write()
		}
		defer s.out.Reset()
		var err error
		if pm, err = fws.NewPreparedMessage(fws.TextMessage, s.out.Bytes()); err != nil {
			return err
		}
		s.h.liveFrames.Put(k, pm)
	}
	s.queued = nil
	_ = s.conn.SetWriteDeadline(time.Now().Add(liveWriteTimeout))
	if err := s.conn.WritePreparedMessage(pm); err != nil {
		return errors.Join(errLiveWrite, err)
	}
	return nil
}
