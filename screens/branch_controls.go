package screens

import (
	"context"
	"time"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// Branches (issue 11) as the chat screen shows them: each entry of a live
// general chat offers its edit or its regeneration, the entries where the
// family's branches part carry a switcher, and the sidebar shows one item
// per family.

// WithControls gives the entries of the general chat exchangeID their
// edit and regenerate controls.
func WithControls(entries []views.ChatMessage, exchangeID int64) {
	for i := range entries {
		entries[i].Exchange = exchangeID
	}
}

// WithBranches gives the entries of the user's exchange ex (a window of
// its log) their controls and the switchers of the places where its
// family's branches part, as SwitchPlaces places them.
func (s *Screens) WithBranches(ctx context.Context, v Viewer, ex *models.Exchange, entries []views.ChatMessage) error {
	WithControls(entries, ex.ID)
	if err := s.WithFiles(ctx, v, entries); err != nil {
		return err
	}
	places, err := s.SwitchPlaces(ctx, v, ex)
	if err != nil {
		return err
	}
	PlaceSwitches(entries, places)
	return nil
}

// SwitchPlaces is where the switchers of the user's exchange ex stand, by
// the seq of the entry that carries each: the seq where its family's
// branches part, or, for branches that go on past this one's end, its last
// entry. While a turn runs the entry it writes is on its way: a switcher at
// its seq waits for it (it comes with the entry, live). The chat screen
// and a live tab both place switchers by it, so that a tab shows what a
// reload would.
func (s *Screens) SwitchPlaces(ctx context.Context, v Viewer, ex *models.Exchange) (map[int64]views.BranchSwitch, error) {
	switches, err := s.BranchSwitches(ctx, v, ex.ID)
	if err != nil || len(switches) == 0 {
		return nil, err
	}
	last := int64(-1) // no switcher past the log's end
	if ex.TurnStatus != models.TurnRunning {
		if last, err = s.store.LastSeq(ctx, v.UserID, ex.ID); err != nil {
			return nil, err
		}
	}
	return switchPlaces(switches, last), nil
}

// switchPlaces places switchers on a log whose last entry is at seq last
// (-1: none past it): each at its seq, and those past the end on the last
// entry when no switcher of its own stands there.
func switchPlaces(switches []views.BranchSwitch, last int64) map[int64]views.BranchSwitch {
	places := make(map[int64]views.BranchSwitch, len(switches))
	for _, b := range switches {
		if last < 0 || b.Seq <= last {
			places[b.Seq] = b
		}
	}
	for _, b := range switches {
		if _, taken := places[last]; last >= 0 && b.Seq > last && !taken {
			places[last] = b
		}
	}
	return places
}

// BranchSwitches are the switchers of the user's exchange, by the seq
// where its family's branches part.
func (s *Screens) BranchSwitches(ctx context.Context, v Viewer, exchangeID int64) ([]views.BranchSwitch, error) {
	family, points, err := s.store.FamilyBranchPoints(ctx, v.UserID, exchangeID)
	if err != nil || len(points) == 0 {
		return nil, err
	}
	// Only general chats open in /chat: a job's own chat (the root of its
	// forks, which are general) is no branch to switch to.
	general := map[int64]bool{}
	for _, e := range family {
		general[e.ID] = e.Scope == models.ScopeGeneral
	}
	out := make([]views.BranchSwitch, 0, len(points))
	for _, p := range points {
		var branches []int64
		current := -1
		for i, id := range p.Branches {
			if i == p.Current {
				current = len(branches)
			} else if !general[id] {
				continue
			}
			branches = append(branches, id)
		}
		if len(branches) < 2 || current < 0 {
			continue
		}
		b := views.BranchSwitch{Seq: p.Seq, Index: current + 1, Count: len(branches)}
		if current > 0 {
			b.Prev = branches[current-1]
		}
		if current+1 < len(branches) {
			b.Next = branches[current+1]
		}
		out = append(out, b)
	}
	return out, nil
}

// PlaceSwitches puts on each entry the switcher placed at its seq.
func PlaceSwitches(entries []views.ChatMessage, places map[int64]views.BranchSwitch) {
	for i := range entries {
		if e := &entries[i]; e.HasSeq {
			if b, ok := places[e.Seq]; ok {
				e.Branch = b
			}
		}
	}
}

// familyHeads keeps, of one batch of a sidebar list, one exchange per
// family: the member of that list active last, or the conversation on
// screen when it is of that family and list (then shown with the family's
// last activity, where the family stands in the list). It returns the
// family summaries of those it keeps.
func (s *Screens) familyHeads(ctx context.Context, v Viewer, sums []models.ExchangeSummary, current int64) ([]models.Exchange, map[int64]models.FamilyHead, error) {
	ids := make([]int64, 0, len(sums)+1)
	for i := range sums {
		ids = append(ids, sums[i].ID)
	}
	if current != 0 {
		ids = append(ids, current)
	}
	heads, err := s.heads.FamilyHeads(ctx, v.UserID, ids)
	if err != nil {
		return nil, nil, err
	}
	out := make([]models.Exchange, 0, len(sums))
	shown := map[int64]models.FamilyHead{} // by the exchange shown
	for i := range sums {
		ex := sums[i].Exchange
		h, ok := heads[ex.ID]
		if _, done := shown[ex.ID]; done || (ok && !h.Head) {
			continue
		}
		if c, isCur := heads[current]; ok && isCur && current != ex.ID && c.RootID == h.RootID {
			cur, err := s.store.Exchange(ctx, v.UserID, current)
			if err != nil {
				return nil, nil, err
			}
			if cur.Scope == ex.Scope && cur.Pinned == ex.Pinned && cur.Archived == ex.Archived {
				at := ex.UpdatedAt
				ex = *cur
				ex.UpdatedAt = at
			}
		}
		if ok {
			shown[ex.ID] = h
		}
		out = append(out, ex)
	}
	return out, shown, nil
}

// familyItem is an exchange's sidebar item, with its family.
func familyItem(v Viewer, ex *models.Exchange, heads map[int64]models.FamilyHead, current int64, now time.Time) views.HistoryItem {
	it := HistoryItem(v, ex, current, now)
	if h, ok := heads[ex.ID]; ok {
		it.Family, it.Branches = h.RootID, h.Branches
	}
	return it
}

// FamilyItem is the sidebar item a family shows after activity in its
// member ex (a new branch, a new message), for a tab on the conversation
// current: ex itself, or the conversation on screen when it is of the same
// family and list, with the family's size.
func (s *Screens) FamilyItem(ctx context.Context, v Viewer, ex *models.Exchange, current int64) (views.HistoryItem, error) {
	return s.FamilyItemMarked(ctx, v, ex, current, nil)
}

// FamilyItemMarked is FamilyItem with the user's unread exchanges as an
// event carries them (nil: read here).
func (s *Screens) FamilyItemMarked(ctx context.Context, v Viewer, ex *models.Exchange, current int64, unread map[int64]bool) (views.HistoryItem, error) {
	ids := []int64{ex.ID}
	if current != 0 && current != ex.ID {
		ids = append(ids, current)
	}
	heads, err := s.eventFamilyHeads(ctx, v.UserID, ex, current, ids)
	if err != nil {
		return views.HistoryItem{}, err
	}
	// heads is shared with the event's other tabs: read, never written.
	shown := ex
	h, hasHead := heads[ex.ID]
	if c := heads[current]; current != ex.ID && c.RootID != 0 && c.RootID == h.RootID {
		cur, err := s.store.Exchange(ctx, v.UserID, current)
		if err != nil {
			return views.HistoryItem{}, err
		}
		if cur.Scope == ex.Scope && cur.Pinned == ex.Pinned && cur.Archived == ex.Archived {
			c := *cur
			c.UpdatedAt = ex.UpdatedAt
			shown = &c
		}
	}
	it := HistoryItem(v, shown, current, time.Now())
	if hasHead { // the family's, whichever member shows it
		it.Family, it.Branches = h.RootID, h.Branches
	}
	if unread != nil {
		it.Unread = unread[it.ID]
		return it, nil
	}
	return it, s.markUnread(ctx, v, &it)
}

// ShownItem is the sidebar item of the conversation on screen, ex, with its
// family's size: read for one tab (not shared as an event's FamilyItem is).
func (s *Screens) ShownItem(ctx context.Context, v Viewer, ex *models.Exchange) (views.HistoryItem, error) {
	heads, err := s.heads.FamilyHeads(ctx, v.UserID, []int64{ex.ID})
	if err != nil {
		return views.HistoryItem{}, err
	}
	it := familyItem(v, ex, heads, ex.ID, time.Now())
	return it, s.markUnread(ctx, v, &it)
}

// markUnread sets an item's unread mark as it stands.
func (s *Screens) markUnread(ctx context.Context, v Viewer, it *views.HistoryItem) error {
	unread, err := s.store.Unread(ctx, v.UserID)
	it.Unread = unread[it.ID]
	return err
}

// UnreadCount is how many of the user's conversations are unread.
func (s *Screens) UnreadCount(ctx context.Context, v Viewer) (int, error) {
	unread, err := s.store.Unread(ctx, v.UserID)
	return len(unread), err
}

// EditForm is the form that edits a user message of a general chat,
// holding text.
func EditForm(v Viewer, m *models.Message, text string) views.EditForm {
	return views.EditForm{Action: paths.MessageEdit(m.ID), Cancel: paths.Chat(m.ExchangeID), Seq: *m.Seq, Text: text,
		MaxLength: agents.MaxQueryLength, CSRF: v.CSRF}
}

// EditScreen is the edit form on a screen of its own (no JavaScript).
func EditScreen(v Viewer, f views.EditForm) views.EditScreen {
	return views.EditScreen{Base: v.base("Edit your message", "chat"), Form: f}
}
