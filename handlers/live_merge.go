package handlers

import "palaver/views"

// Several events a tab hears together (it woke once for a whole turn: the
// user message, the turn started, the reply's pieces, the reply, the turn
// finished) go out as one message. Rendered one after the other, most of
// their fragments undo each other: the pending reply cell opened, filled
// and deleted, the composer's Stop button shown and taken away, the sidebar
// item sent twice. mergeLive folds an update into the one before it, so
// that the message carries the net effect only: what a tab shows after it
// is what it would show after the updates one by one, for fewer bytes to
// render, write and read.

// liveEmpty says whether u shows nothing.
func liveEmpty(u *views.LiveUpdate) bool {
	return len(u.Entries) == 0 && len(u.Switchers) == 0 && len(u.PageEntries) == 0 && u.Page == nil && !u.CloseReply &&
		u.OpenReply == nil && u.ReplyText == nil && u.Delta == "" && u.Turn == nil && u.History == nil && u.Removed == 0 && !u.Gone &&
		u.Heading == nil && u.Sidebar == nil && u.UnreadCount == nil && u.Reasoning == "" && !u.ReasoningStart && u.Budget == nil &&
		u.Projects == nil && len(u.Answered) == 0
}

// mergeLive returns a followed by b as one update, or false when the two
// cannot be told as one (a page's parts, a chat adopted, a sidebar item
// removed after another was shown, the shown chat deleted, waiting calls
// answered): they then go as two, in order.
func mergeLive(a, b views.LiveUpdate) (views.LiveUpdate, bool) {
	if a.Adopted != 0 || b.Adopted != 0 || len(a.PageEntries) > 0 || len(b.PageEntries) > 0 || a.Page != nil || b.Page != nil ||
		a.Gone || b.Gone || a.Sidebar != nil || b.Sidebar != nil || len(a.Answered) > 0 || len(b.Answered) > 0 {
		return a, false
	}
	m := a
	// The transcript: entries are appended in order, and b's switchers are
	// swapped in after a's (and after whatever a appended).
	m.Entries = append(m.Entries, b.Entries...)
	m.Switchers = append(m.Switchers, b.Switchers...)
	if !mergeReply(&m, a, b) {
		return a, false
	}
	// The composer's turn state is replaced whole: the later one stands,
	// and so does the later name.
	if b.Turn != nil {
		m.Turn = b.Turn
	}
	if b.Heading != nil {
		m.Heading = b.Heading
	}
	if b.UnreadCount != nil {
		m.UnreadCount = b.UnreadCount
	}
	if b.Budget != nil {
		m.Budget = b.Budget
	}
	if b.Projects != nil { // drawn whole: the later one stands
		m.Projects = b.Projects
	}
	// The sidebar: a removal renders before the item, so one after an item
	// does not fold; two states of one item fold into the later one, moved
	// to the top if either moved it.
	switch {
	case b.Removed != 0 && (a.Removed != 0 || a.History != nil):
		return a, false
	case b.Removed != 0:
		m.Removed = b.Removed
	}
	switch {
	case b.History == nil:
	case a.History == nil:
		m.History, m.Moved = b.History, b.Moved
	case a.History.ID != b.History.ID:
		return a, false
	default:
		it := *b.History
		if a.Moved && !b.Moved {
			it.SwapOOB, it.Group = false, "" // as turn shows a moved item
		}
		m.History, m.Moved = &it, a.Moved || b.Moved
	}
	return m, true
}

// mergeReply folds b's changes to the pending reply cell into m (a copy of
// a): a deletion of the cell undoes whatever a did to it; text that
// replaces the cell's undoes a's pieces.
func mergeReply(m *views.LiveUpdate, a, b views.LiveUpdate) bool {
	switch {
	case b.CloseReply:
		m.CloseReply, m.OpenReply, m.ReplyText, m.Delta = true, b.OpenReply, b.ReplyText, b.Delta
		m.Reasoning, m.ReasoningStart = b.Reasoning, b.ReasoningStart
		return true
	case b.OpenReply != nil:
		if a.OpenReply != nil || a.ReplyText != nil || a.Delta != "" || a.Reasoning != "" {
			return false // a cell opened over one a shows: not a sequence a tab is sent
		}
		m.OpenReply, m.ReplyText, m.Delta = b.OpenReply, b.ReplyText, b.Delta
	case b.ReplyText != nil:
		m.ReplyText, m.Delta = b.ReplyText, b.Delta
	default:
		m.Delta = a.Delta + b.Delta
	}
	// The Thinking section's text only grows, apart from the reply's.
	m.Reasoning, m.ReasoningStart = a.Reasoning+b.Reasoning, a.ReasoningStart || b.ReasoningStart
	return true
}
