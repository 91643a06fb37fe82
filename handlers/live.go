package handlers

import (
	"errors"

	"palaver/agents"
	"palaver/models"
	"palaver/views"
)

// Live updates: one websocket per tab at /live. The tab says which exchange
// it shows, and the highest seq it has, in a watch message:
//
//	{"type": "watch", "exchange_id": N, "since": S, "page_id": P, "switches": [Q, …]}   // S = -1: none
//
// sent on open, on a switch of conversation, and after a reconnect.
//   - Q (optional) are the seqs of the entries on which the tab shows a
//     branch switcher: one that goes when its branch is deleted elsewhere
//     is taken away.
//   - P is the page whose editor the tab shows (absent or 0: none): when it
//     changes (a save, an accepted proposal, a restore, in any tab or the
//     API), the server pushes its text, preview, revisions and the watched
//     chat's proposal cards. The entries of a page's chat come as the panel
//     shows them, a proposal with its card.
//
// The server answers with rendered fragments that htmx swaps out of band by
// element id (views.LiveMessage): the entries past S, then as they happen
// the watched exchange's new entries, the text of the reply being written,
// and its turn state; and for every general exchange of the user, its
// sidebar item. The connection subscribes to the user's hub events before
// it reads anything, so what the catch-up read misses arrives as an event,
// and what both bring is sent once.
//
// The parts: live_socket.go is the connection (upgrade, read loop, pings,
// batching, writes); live_watch.go is what the tab watches and has been
// sent; this file turns one event into the parts the tab lacks.

// event shows one thing that happened to the user's data.
func (s *liveSession) event(e agents.Event) error {
	if e.UserID != s.userID {
		return nil // the hub is per user; this is a second lock on that door
	}
	var u views.LiveUpdate
	if s.sub.Lagged() {
		// Events were dropped: what they pointed to is in the database.
		if s.feed != nil {
			ex, err := s.catchUp(&u, s.feed.exchangeID, -1)
			if err != nil {
				return err
			}
			if ex == nil { // deleted meanwhile, its event among those dropped
				s.closeReply(&u)
				u.Gone = true
			}
		}
		if err := s.page(&u); err != nil {
			return err
		}
	}
	if s.feed == nil && s.pageID != 0 && e.PageID == s.pageID && e.ExchangeID != 0 &&
		(e.Kind == agents.EventEntry || e.Kind == agents.EventTurn) {
		// The panel shows a new chat of this page and another tab (or the
		// API) started one: follow it, from its first entry.
		ex, err := s.catchUp(&u, e.ExchangeID, -1)
		if err != nil {
			return err
		}
		if ex != nil {
			u.Adopted = e.ExchangeID
		}
	}
	watched := s.feed != nil && e.ExchangeID == s.feed.exchangeID
	switch e.Kind {
	case agents.EventEntry:
		if watched && e.Entry != nil {
			if err := s.entries(&u, []models.Message{*e.Entry}, e.Exchange); err != nil {
				return err
			}
		}
	case agents.EventPage:
		if s.pageID != 0 && e.PageID == s.pageID && u.Page == nil {
			if err := s.page(&u); err != nil {
				return err
			}
		}
	case agents.EventDelta:
		if watched && e.Delta != "" {
			s.delta(&u, e)
		}
	case agents.EventTurn:
		if err := s.turn(&u, e, watched); err != nil {
			return err
		}
	}
	return s.send(u)
}

// entries adds the entries new to the tab to the transcript; a reply among
// them closes the pending reply cell. ex is the exchange's header as of the
// last of them (nil: unknown). A page chat's entries are mapped as its panel
// maps them (screens.PageEntries: a proposal with its card, against the
// page as it is now).
func (s *liveSession) entries(u *views.LiveUpdate, msgs []models.Message, ex *models.Exchange) error {
	var fresh []models.Message
	for i := range msgs {
		m := &msgs[i]
		if !s.feed.take(m) {
			continue
		}
		fresh = append(fresh, *m)
		if isReply(m) {
			s.closeReply(u)
		} else {
			s.closed = false // the tab that sent it opened a cell with its send answer
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	if s.feedPage != 0 {
		p, err := s.h.store.Page(s.ctx, s.userID, s.feedPage)
		if errors.Is(err, models.ErrNotFound) {
			return nil // deleted with its chats
		}
		if err != nil {
			return err
		}
		entries, err := s.h.screens.PageEntries(s.ctx, s.viewer(), p, fresh, nil)
		if err != nil {
			return err
		}
		u.PageEntries = append(u.PageEntries, entries...)
		return nil
	}
	if ex == nil {
		var err error
		if ex, err = s.h.store.Exchange(s.ctx, s.userID, s.feed.exchangeID); err != nil {
			return err
		}
	}
	if ex.Scope != models.ScopeGeneral { // a job's chat: its entries, without a general chat's controls
		u.Entries = append(u.Entries, s.h.screens.Messages(s.viewer(), fresh)...)
		return nil
	}
	// Built as the send answer and a reload build them (screens.Tail).
	entries, places, err := s.h.screens.Tail(s.ctx, s.viewer(), ex, fresh)
	if err != nil {
		return err
	}
	for i := range entries {
		if e := &entries[i]; e.Branch.Shown() {
			s.showSwitch(e.Seq, e.Branch)
		}
	}
	u.Entries = append(u.Entries, entries...)
	return s.moveSwitches(u, places)
}

// page adds the shown page's state as it is now: the editor's text,
// preview and revisions, and the watched chat's proposal cards when it is
// one of the page's (their staleness follows the page). Nothing when the
// tab shows no page, or the page is gone or not the user's.
func (s *liveSession) page(u *views.LiveUpdate) error {
	if s.pageID == 0 {
		return nil
	}
	p, err := s.h.store.Page(s.ctx, s.userID, s.pageID)
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var chat int64 // the watched chat, when it is one of the page's
	if s.feed != nil && s.feedPage == p.ID {
		chat = s.feed.exchangeID
	}
	saved, err := s.h.screens.PageChanged(s.ctx, s.viewer(), p, chat, nil)
	if err != nil {
		return err
	}
	saved.Content = true
	u.Page = &saved
	return nil
}

// publishHeader tells the user's open tabs that an exchange's header
// changed (a title, a pin, an archive), as a turn's change is told.
func (h *Handlers) publishHeader(ex *models.Exchange) {
	var page int64
	if ex.PageID != nil {
		page = *ex.PageID
	}
	h.hub.Publish(agents.Event{Kind: agents.EventTurn, UserID: ex.UserID, ExchangeID: ex.ID, PageID: page, Exchange: ex})
}

// publishRegroup tells the user's open tabs that an exchange changed its
// place among the sidebar's lists (a pin, an archive): they draw the lists
// again, as a reload would.
func (h *Handlers) publishRegroup(ex *models.Exchange) {
	var page int64
	if ex.PageID != nil {
		page = *ex.PageID
	}
	h.hub.Publish(agents.Event{Kind: agents.EventTurn, UserID: ex.UserID, ExchangeID: ex.ID, PageID: page, Exchange: ex, Regroup: true})
}

// publishPage tells the user's open tabs that a page changed.
func (h *Handlers) publishPage(userID, pageID int64) {
	h.hub.Publish(agents.Event{Kind: agents.EventPage, UserID: userID, PageID: pageID})
}

// replySoFar is the text written so far of a reply this process is writing.
func (h *Handlers) replySoFar(userID, exchangeID int64) string {
	if h.agents == nil {
		return ""
	}
	return h.agents.ReplySoFar(userID, exchangeID)
}

// turn shows an exchange's new header: its sidebar item (general chats,
// whichever the tab shows), and for the watched one its turn state.
func (s *liveSession) turn(u *views.LiveUpdate, e agents.Event, watched bool) error {
	ex := e.Exchange
	if ex == nil {
		return s.deleted(u, e, watched)
	}
	if e.Regroup && ex.Scope == models.ScopeGeneral && s.pageID == 0 {
		return s.sidebar(u, watched, ex)
	}
	if ex.Archived { // out of the sidebar
		u.Removed = e.ExchangeID
		return nil
	}
	if ex.Scope == models.ScopeGeneral {
		current := int64(0)
		if s.feed != nil {
			current = s.feed.exchangeID
		}
		// The sidebar shows one item per family: the branch on screen
		// when this is one of its family, with the family's size.
		it, err := s.h.screens.FamilyItem(s.ctx, s.viewer(), ex, current)
		if errors.Is(err, models.ErrNotFound) {
			return nil // deleted meanwhile: its own event removes it
		}
		if err != nil {
			return err
		}
		if it.ID == current && ex.ID != current && s.feedPage == 0 {
			// Another branch of the family on screen: a new one may part
			// from it somewhere, which the switchers show.
			if err := s.branchSwitches(u); err != nil {
				return err
			}
		}
		if ex.TurnStatus == models.TurnRunning && !ex.Pinned {
			// A new message is new activity: the item goes to the top, as
			// the history orders them. Other changes keep its place, and
			// so does a pinned one (in the Pinned group).
			it.Group, u.Moved = "", true
		} else {
			it.SwapOOB = true
		}
		u.History = &it
	}
	if watched {
		s.turnState(u, ex)
		s.rename(u, ex)
	}
	return nil
}

// sidebar draws the tab's sidebar lists again, after an exchange moved
// among them (publishRegroup): one brought back from the archive has no
// item to replace, and one pinned goes to another list. ex is its header.
func (s *liveSession) sidebar(u *views.LiveUpdate, watched bool, ex *models.Exchange) error {
	current := int64(0)
	if s.feed != nil {
		current = s.feed.exchangeID
	}
	side, err := s.h.screens.Sidebar(s.ctx, s.viewer(), current, nil)
	if err != nil {
		return err
	}
	u.Sidebar = &side
	if watched {
		s.turnState(u, ex)
	}
	return nil
}

// deleted shows that an exchange was deleted: its sidebar item goes; when
// it was a branch, the family's item shows the branch that stands for it
// now (one branch fewer), and the switchers of the family's branch on
// screen lose it; and a tab that showed it is told, its composer sending
// to a new chat from then on.
func (s *liveSession) deleted(u *views.LiveUpdate, e agents.Event, watched bool) error {
	u.Removed = e.ExchangeID
	if watched {
		s.closeReply(u)
		s.unwatch()
		u.Gone = true
	}
	heir := e.Heir
	if heir == nil || heir.Scope != models.ScopeGeneral || heir.UserID != s.userID {
		return nil
	}
	current := int64(0)
	if s.feed != nil && s.feedPage == 0 {
		current = s.feed.exchangeID
	}
	it, err := s.h.screens.FamilyItem(s.ctx, s.viewer(), heir, current)
	if errors.Is(err, models.ErrNotFound) {
		return nil // deleted meanwhile: its own event tells
	}
	if err != nil {
		return err
	}
	it.SwapFamily = views.FamilyItemsOf(e.Family, heir.Pinned)
	if heir.Archived {
		it.SwapFamily = "" // not in the sidebar
	}
	if it.SwapFamily != "" {
		u.History = &it
	}
	if current == 0 {
		return nil
	}
	heads, err := s.h.store.FamilyHeads(s.ctx, s.userID, []int64{heir.ID, current})
	if err != nil {
		return err
	}
	if h, c := heads[heir.ID], heads[current]; h.RootID != 0 && h.RootID == c.RootID {
		return s.branchSwitches(u) // a branch of the family on screen went
	}
	return nil
}
