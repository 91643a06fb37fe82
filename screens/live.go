package screens

import (
	"context"
	"errors"

	"palaver/agents"
	"palaver/models"
	"palaver/views"
)

// LiveTab is what a live tab watches and has been sent of it: the
// exchange and page it shows, its pending reply cell, its switchers and
// its chat's name. LiveWatch sets it from the tab's watch message; each
// LiveEvent moves it on. The zero value watches nothing.
type LiveTab struct {
	// SoFar is the text written so far of a reply this process is writing
	// (the agents service's); nil: none. LiveWatch keeps it.
	SoFar func(exchangeID int64) string
	feed  *LiveFeed // the watched exchange; nil: none
	// feedPage is the page the watched exchange is a chat of (0: a general
	// chat): its entries are shown as the page's panel shows them.
	feedPage int64
	pageID   int64 // the page whose editor the tab shows; 0: none
	reply    bool  // the tab has a pending reply cell open, as far as we know
	// closed: the cell's removal was sent, and nothing since can have
	// given the tab another (a message of its, a cell opened): a second
	// removal would target nothing, which htmx reports as an error.
	closed bool
	// switches are the branch switchers sent to the tab since it began
	// watching, by seq: a new branch of the family sends only what changed.
	switches map[int64]views.BranchSwitch
	shown    ReplyView // how much of the reply being written the pending cell holds
	thinking bool      // the pending cell shows a Thinking section

	// named is the watched general chat's name as the tab shows it: a
	// header with another (a rename) sends the new one.
	named views.ChatHeading
}

// The live parts: what a tab lacks after it says what it shows
// (LiveWatch), and after each event of its user (LiveEvent), built from the
// store with the same functions as the screens (Tail, PageEntries,
// FamilyItem...), so that a live tab shows what a reload would. They know
// no socket: handlers/live_socket.go writes what they return.

// LiveWatch switches tab to the exchange the tab shows (exchangeID, 0:
// none) and returns what it lacks: the entries past seq since (-1: none),
// the turn's state and its sidebar item. pageID is the page whose editor
// the tab shows (0: none); switches are the seqs of the entries on which
// the page drew a branch switcher. Another user's exchange, or a missing
// one, is watched as none: nothing is returned.
func (s *Screens) LiveWatch(ctx context.Context, v Viewer, tab *LiveTab, exchangeID, since, pageID int64, switches []int64) (views.LiveUpdate, error) {
	var u views.LiveUpdate
	tab.unwatch()
	tab.pageID = max(pageID, 0)
	if exchangeID <= 0 {
		return u, nil
	}
	// What the page shows, before the catch-up: entries new to it move
	// the switchers it drew (SwitchPlaces).
	for _, seq := range switches {
		tab.showSwitch(seq, unknownSwitch)
	}
	l := &live{sc: s, ctx: ctx, v: v, LiveTab: tab}
	ex, err := l.catchUp(&u, exchangeID, since)
	if err != nil || ex == nil {
		return views.LiveUpdate{}, err
	}
	err = l.shownItem(&u, ex)
	return u, err
}

// LiveEvent returns what the tab lacks after e, an event of the user's
// data, and moves tab on. lagged says events were dropped before e: what
// they pointed to is read from the store.
func (s *Screens) LiveEvent(ctx context.Context, v Viewer, tab *LiveTab, e agents.Event, lagged bool) (views.LiveUpdate, error) {
	var u views.LiveUpdate
	if e.UserID != v.UserID {
		return u, nil // the hub is per user; this is a second lock on that door
	}
	err := (&live{sc: s, ctx: ctx, v: v, LiveTab: tab}).event(&u, e, lagged)
	return u, err
}

// live is one watch's or event's work for one tab.
type live struct {
	sc  *Screens
	ctx context.Context
	v   Viewer
	*LiveTab
}

// soFar is the text written so far of the exchange's reply.
func (s *live) soFar(exchangeID int64) string {
	if s.SoFar == nil {
		return ""
	}
	return s.SoFar(exchangeID)
}

// event adds to u what e shows the tab.
func (s *live) event(u *views.LiveUpdate, e agents.Event, lagged bool) error {
	if lagged {
		// Events were dropped: what they pointed to is in the database.
		if s.feed != nil {
			ex, err := s.catchUp(u, s.feed.exchangeID, -1)
			if err != nil {
				return err
			}
			if ex == nil { // deleted meanwhile, its event among those dropped
				s.closeReply(u)
				u.Gone = true
			}
		}
		if err := s.page(u); err != nil {
			return err
		}
	}
	if s.feed == nil && s.pageID != 0 && e.PageID == s.pageID && e.ExchangeID != 0 &&
		(e.Kind == agents.EventEntry || e.Kind == agents.EventTurn) {
		// The panel shows a new chat of this page and another tab (or the
		// API) started one: follow it, from its first entry.
		ex, err := s.catchUp(u, e.ExchangeID, -1)
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
			return s.entries(u, []models.Message{*e.Entry}, e.Exchange)
		}
	case agents.EventPage:
		if s.pageID != 0 && e.PageID == s.pageID && u.Page == nil {
			return s.page(u)
		}
	case agents.EventDelta:
		if watched && e.Delta != "" {
			s.delta(u, e)
		}
	case agents.EventReasoning:
		if watched && e.Delta != "" {
			s.openReply(u)
			u.ReasoningStart = u.ReasoningStart || !s.thinking
			u.Reasoning += e.Delta
			s.thinking = true
		}
	case agents.EventTurn:
		if err := s.turn(u, e, watched); err != nil {
			return err
		}
		if err := s.budget(u, e); err != nil {
			return err
		}
		if e.Exchange != nil && e.Exchange.TurnStatus != models.TurnRunning && e.Exchange.Scope == models.ScopeGeneral && s.pageID == 0 {
			if err := s.projectCounts(u, e.Exchange); err != nil {
				return err
			}
			return s.unreadCount(u, e.Unread) // a finished reply may be unread
		}
	case agents.EventRead:
		return s.readMarks(u, e)
	case agents.EventProjects:
		return s.projects(u)
	}
	return nil
}

// budget draws the composer's budget warning again once a turn of the
// user's ended: its reply may have spent what was left (or a new day
// began), which the composer says before the next message, as a reload
// would. One read per finished turn, not per piece of the reply.
func (s *live) budget(u *views.LiveUpdate, e agents.Event) error {
	if e.Exchange == nil || e.Exchange.TurnStatus == models.TurnRunning {
		return nil
	}
	// Read once for all the tabs the event reaches (family_memo.go).
	w, err := s.sc.budgets.get(e.Exchange, s.v.UserID, func() (views.BudgetWarning, error) {
		var c views.Composer
		err := s.sc.composerBudget(s.ctx, s.v, &c)
		return c.Budget, err
	})
	if err != nil {
		return err
	}
	u.Budget = &w
	return nil
}

// projects draws the tab's sidebar again after the user's projects
// changed: their group, and the chats a deleted one let go or took with
// it. The page editor has no sidebar.
func (s *live) projects(u *views.LiveUpdate) error {
	if s.pageID != 0 || u.Sidebar != nil {
		return nil
	}
	return s.sidebar(u, false, nil)
}

// readMarks redraws what the user's new read marks change: the item of
// the exchange they concern, or (ExchangeID 0) the sidebar, and the count.
func (s *live) readMarks(u *views.LiveUpdate, e agents.Event) error {
	if s.pageID != 0 {
		return nil // the page editor has no sidebar
	}
	if e.ExchangeID == 0 {
		return s.sidebar(u, false, nil)
	}
	current := int64(0)
	if s.feed != nil {
		current = s.feed.exchangeID
	}
	ex := e.Exchange
	if ex == nil {
		var err error
		if ex, err = s.sc.store.Exchange(s.ctx, s.v.UserID, e.ExchangeID); errors.Is(err, models.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
	}
	if ex.Scope == models.ScopeGeneral && !ex.Archived {
		it, err := s.sc.FamilyItemMarked(s.ctx, s.v, ex, current, e.Unread)
		if errors.Is(err, models.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		it.SwapOOB = true
		u.History = &it
		if err := s.projectCounts(u, ex); err != nil {
			return err
		}
	}
	return s.unreadCount(u, e.Unread)
}

// projectCounts draws the sidebar's projects again when ex is in one: its
// count of unread conversations may have changed.
func (s *live) projectCounts(u *views.LiveUpdate, ex *models.Exchange) error {
	if ex.ProjectID == nil {
		return nil
	}
	current, err := s.watchedProject(ex)
	if err != nil {
		return err
	}
	links, err := s.sc.ProjectLinks(s.ctx, s.v, current)
	u.Projects = &links
	return err
}

// watchedProject is the project of the chat the tab shows (0: none), as
// Sidebar marks it: read, unless ex is that chat.
func (s *live) watchedProject(ex *models.Exchange) (int64, error) {
	if s.feed == nil {
		return 0, nil
	}
	if s.feed.exchangeID != ex.ID {
		var err error
		if ex, err = s.sc.store.Exchange(s.ctx, s.v.UserID, s.feed.exchangeID); errors.Is(err, models.ErrNotFound) {
			return 0, nil
		} else if err != nil {
			return 0, err
		}
	}
	if ex.ProjectID == nil {
		return 0, nil
	}
	return *ex.ProjectID, nil
}

// unreadCount sends the count of unread conversations (the tab's title):
// the event's (unread), or read here when it carries none.
func (s *live) unreadCount(u *views.LiveUpdate, unread map[int64]bool) error {
	if unread != nil {
		n := len(unread)
		u.UnreadCount = &n
		return nil
	}
	n, err := s.sc.UnreadCount(s.ctx, s.v)
	u.UnreadCount = &n
	return err
}

// shownItem adds the sidebar item of the general chat the tab now watches,
// as it stands: the page the tab swapped in may have been drawn before
// what the socket told it since (a branch's first reply, which the
// builtin agent writes in a moment, can reach the tab before the page that
// opens the branch), and would keep showing the reply as being written.
// ex is the watched exchange's header, as catchUp read it.
func (s *live) shownItem(u *views.LiveUpdate, ex *models.Exchange) error {
	if s.feedPage != 0 || ex.Scope != models.ScopeGeneral || ex.Archived {
		return nil
	}
	it, err := s.sc.ShownItem(s.ctx, s.v, ex)
	if err != nil {
		return err
	}
	it.SwapOOB = true
	u.History = &it
	return nil
}

// catchUp reads the exchange's header and log and adds to u what the tab
// lacks. On the first read (no feed yet), the tab has the entries up to
// seq since; afterwards (a lagging subscription), what the feed sent. It
// returns the header read, or nil when the exchange is not the user's, or
// no longer exists.
func (s *live) catchUp(u *views.LiveUpdate, exchangeID, since int64) (*models.Exchange, error) {
	ex, err := s.sc.store.Exchange(s.ctx, s.v.UserID, exchangeID)
	if err == nil {
		var msgs []models.Message
		if msgs, err = s.sc.store.Messages(s.ctx, s.v.UserID, exchangeID, nil); err == nil {
			if s.feed == nil {
				s.feed = NewLiveFeed(exchangeID, LiveFloor(msgs, since))
			}
			s.feedPage = 0
			if ex.Scope == models.ScopePage && ex.PageID != nil {
				s.feedPage = *ex.PageID
			}
			if err = s.entries(u, msgs, ex); err == nil {
				s.turnState(u, ex)
				s.rename(u, ex)
				return ex, nil
			}
		}
	}
	if errors.Is(err, models.ErrNotFound) {
		s.unwatch()
		return nil, nil
	}
	return nil, err
}

// unwatch forgets the watched exchange and what the tab was sent of it.
func (s *LiveTab) unwatch() {
	s.feed, s.feedPage, s.reply, s.closed, s.shown, s.switches, s.named = nil, 0, false, false, ReplyView{}, nil, views.ChatHeading{}
}

// rename shows the watched general chat's name when its header (ex) names
// it otherwise than the tab does; on the first header, it notes the name
// the page was drawn with.
func (s *live) rename(u *views.LiveUpdate, ex *models.Exchange) {
	if s.feedPage != 0 || ex.Scope != models.ScopeGeneral {
		return
	}
	h := Heading(s.v, ex)
	switch {
	case s.named.ExchangeID == 0:
		s.named = h
	case h != s.named:
		s.named, u.Heading = h, &h
	}
}

// openReply opens the pending reply cell unless the tab has one, with the
// reply written so far: a tab that starts watching mid-reply (a new chat's
// first reply, a second tab, a reconnect) shows it from its first word. The
// tab that sent the message got a cell with its send answer, and drops this
// copy; the text replaces what its cell holds.
func (s *live) openReply(u *views.LiveUpdate) {
	if s.reply {
		return
	}
	after := s.feed.last
	u.OpenReply, s.reply, s.closed, s.thinking = &after, true, false, false
	s.resync(u)
}

// resync puts the whole reply written so far in the tab's pending cell.
func (s *live) resync(u *views.LiveUpdate) {
	s.shown = ReplyView{}
	u.ReplyText, u.Delta = nil, ""
	if text := s.soFar(s.feed.exchangeID); text != "" {
		u.ReplyText, s.shown.Shown = &text, len(text)
	}
}

// delta adds a piece of the reply to the tab's pending cell: the part of it
// the cell does not hold yet, or, when pieces were missed before it, the
// whole text so far.
func (s *live) delta(u *views.LiveUpdate, e agents.Event) {
	s.openReply(u) // with the text so far, which holds this piece
	text, whole := s.shown.Piece(e, func() string { return s.soFar(e.ExchangeID) })
	if whole {
		u.ReplyText, u.Delta = &text, ""
	} else {
		u.Delta += text
	}
}

// closeReply removes the pending reply cell, once.
func (s *LiveTab) closeReply(u *views.LiveUpdate) {
	if !s.closed {
		u.CloseReply = true
	}
	s.reply, s.closed, s.shown, s.thinking = false, true, ReplyView{}, false
	u.OpenReply, u.ReplyText, u.Delta, u.Reasoning, u.ReasoningStart = nil, nil, "", "", false
}

// turnState shows the watched exchange's turn: the composer's Stop button,
// and the pending reply cell while a turn runs.
func (s *live) turnState(u *views.LiveUpdate, ex *models.Exchange) {
	u.Turn = &views.TurnControl{ExchangeID: ex.ID, Status: ex.TurnStatus, CSRF: s.v.CSRF}
	if ex.TurnStatus == models.TurnRunning {
		s.openReply(u)
		return
	}
	s.closeReply(u)
}

// branchSwitches sends the watched chat's switchers that changed since the
// tab was sent one, after news of its family (a branch made or deleted).
func (s *live) branchSwitches(u *views.LiveUpdate) error {
	ex, err := s.sc.store.Exchange(s.ctx, s.v.UserID, s.feed.exchangeID)
	if err != nil {
		return err
	}
	places, err := s.sc.SwitchPlaces(s.ctx, s.v, ex)
	if err != nil {
		return err
	}
	return s.moveSwitches(u, places)
}

// moveSwitches sends the switchers of the entries the tab shows that
// differ from places (by entry seq): new ones, changed ones (a switcher the
// tab drew itself is replaced, the server not knowing which it is), and
// none where the tab shows one that is no more (a branch was deleted, an
// entry came after the log's end). Only the switcher is swapped: an edit
// form open on its entry, with what is typed in it, stays.
func (s *live) moveSwitches(u *views.LiveUpdate, places map[int64]views.BranchSwitch) error {
	var seqs []int64
	changed := map[int64]views.BranchSwitch{}
	for seq, b := range places {
		if s.switches[seq] != b {
			seqs = append(seqs, seq)
			changed[seq] = b
		}
	}
	for seq, was := range s.switches {
		if _, still := places[seq]; !still && was.Count != 0 {
			seqs = append(seqs, seq)
			changed[seq] = views.BranchSwitch{} // none any more
		}
	}
	if len(seqs) == 0 {
		return nil
	}
	msgs, err := s.sc.store.MessagesAtSeqs(s.ctx, s.v.UserID, s.feed.exchangeID, seqs)
	if err != nil {
		return err
	}
	for i := range msgs {
		m := &msgs[i]
		if !s.feed.sent[m.ID] && m.ID > s.feed.floor {
			continue // not on the tab yet: it comes with its switcher
		}
		b := changed[*m.Seq]
		s.showSwitch(*m.Seq, b)
		u.Switchers = append(u.Switchers, views.Switcher{MessageID: m.ID, Branch: b})
	}
	return nil
}

// showSwitch records the switcher the tab shows on its entry at seq.
func (s *LiveTab) showSwitch(seq int64, b views.BranchSwitch) {
	if s.switches == nil {
		s.switches = map[int64]views.BranchSwitch{}
	}
	s.switches[seq] = b
}

// unknownSwitch stands for a switcher the tab says it shows, as the page
// drew it: the server does not know which, so any news replaces it.
var unknownSwitch = views.BranchSwitch{Count: -1}

// entries adds the entries new to the tab to the transcript; a reply among
// them closes the pending reply cell. ex is the exchange's header as of the
// last of them (nil: unknown). A page chat's entries are mapped as its panel
// maps them (PageEntries: a proposal with its card, against the
// page as it is now).
func (s *live) entries(u *views.LiveUpdate, msgs []models.Message, ex *models.Exchange) error {
	var fresh []models.Message
	for i := range msgs {
		m := &msgs[i]
		if !s.feed.Take(m) {
			continue
		}
		fresh = append(fresh, *m)
		if IsReply(m) {
			s.closeReply(u)
		} else {
			s.closed = false // the tab that sent it opened a cell with its send answer
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	if err := s.answered(u, fresh); err != nil {
		return err
	}
	if s.feedPage != 0 {
		p, err := s.sc.store.Page(s.ctx, s.v.UserID, s.feedPage)
		if errors.Is(err, models.ErrNotFound) {
			return nil // deleted with its chats
		}
		if err != nil {
			return err
		}
		entries, err := s.sc.PageEntries(s.ctx, s.v, p, fresh, nil)
		if err != nil {
			return err
		}
		u.PageEntries = append(u.PageEntries, entries...)
		return nil
	}
	// Built as the send answer builds them (NewEntries).
	var t tail
	var err error
	if ex == nil {
		if ex, err = s.sc.store.Exchange(s.ctx, s.v.UserID, s.feed.exchangeID); err != nil {
			return err
		}
		t, err = s.sc.newTail(s.ctx, s.v, ex, fresh)
	} else { // the event's header: its tabs share the tail
		key := tailKey{userID: s.v.UserID, csrf: s.v.CSRF, first: fresh[0].ID, last: fresh[len(fresh)-1].ID, n: len(fresh)}
		t, err = s.sc.tails.get(ex, key, func() (tail, error) { return s.sc.newTail(s.ctx, s.v, ex, fresh) })
	}
	if err != nil {
		return err
	}
	entries, places := t.entries, t.places
	u.Entries = append(u.Entries, entries...)
	if ex.Scope != models.ScopeGeneral {
		return nil // a job's chat has no switchers
	}
	for i := range entries {
		if e := &entries[i]; e.Branch.Shown() {
			s.showSwitch(e.Seq, e.Branch)
		}
	}
	return s.moveSwitches(u, places)
}

// answered adds the cards the tab shows of calls that fresh answers (a
// result, an approval, a cancellation): each goes back to its plain entry,
// in every tab. The whole log is read (a new message's cancellations come
// after the calls' turn): answers are rare.
func (s *live) answered(u *views.LiveUpdate, fresh []models.Message) error {
	calls := map[string]bool{}
	for _, m := range fresh {
		if m.Tool != nil && (m.Role == models.RoleToolResult || m.Role == models.RoleToolCall && m.Tool.By != "") {
			calls[m.Tool.CallID] = true
		}
	}
	if len(calls) == 0 {
		return nil
	}
	log, err := s.sc.store.Messages(s.ctx, s.v.UserID, s.feed.exchangeID, nil)
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	done := AnsweredCalls(log)
	for i := range log {
		m := &log[i]
		if !done[m.ID] || !calls[m.Tool.CallID] || !(s.feed.sent[m.ID] || m.ID <= s.feed.floor) {
			continue // not one of these calls' cards in this tab
		}
		if e, ok := s.sc.Message(s.v, m); ok {
			e.Call, e.SwapOOB = views.ToolCard{}, true
			u.Answered = append(u.Answered, e)
		}
	}
	return nil
}

// tail is a live event's new entries as a tab shows them, with the
// branch switchers placed on the log (NewEntries); shared by the tabs of
// the event (Screens.tails), and only read.
type tail struct {
	entries []views.ChatMessage
	places  map[int64]views.BranchSwitch
}

// tailKey is what a tab's tail depends on besides the event: its viewer
// (the forms' token) and which of the event's entries are new to it.
type tailKey struct {
	userID      int64
	csrf        string
	first, last int64
	n           int
}

func (s *Screens) newTail(ctx context.Context, v Viewer, ex *models.Exchange, msgs []models.Message) (tail, error) {
	entries, places, err := s.NewEntries(ctx, v, ex, msgs)
	return tail{entries: entries, places: places}, err
}

// NewEntries maps entries new to a tab of ex's transcript (a general chat's
// or a job's), for the send answer (handlers' chatSent) and a live tab
// alike: a general chat's as a reload maps them (Tail, with the switchers'
// places), a job's as they are, without a general chat's controls.
func (s *Screens) NewEntries(ctx context.Context, v Viewer, ex *models.Exchange, msgs []models.Message) ([]views.ChatMessage, map[int64]views.BranchSwitch, error) {
	if ex.Scope != models.ScopeGeneral {
		return s.Messages(v, msgs), nil, nil
	}
	return s.Tail(ctx, v, ex, msgs)
}

// page adds the shown page's state as it is now: the editor's text,
// preview and revisions, and the watched chat's proposal cards when it is
// one of the page's (their staleness follows the page). Nothing when the
// tab shows no page, or the page is gone or not the user's.
func (s *live) page(u *views.LiveUpdate) error {
	if s.pageID == 0 {
		return nil
	}
	p, err := s.sc.store.Page(s.ctx, s.v.UserID, s.pageID)
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
	saved, err := s.sc.PageChanged(s.ctx, s.v, p, chat, nil)
	if err != nil {
		return err
	}
	saved.Content = true
	u.Page = &saved
	return nil
}

// turn shows an exchange's new header: its sidebar item (general chats,
// whichever the tab shows), and for the watched one its turn state.
func (s *live) turn(u *views.LiveUpdate, e agents.Event, watched bool) error {
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
		it, err := s.sc.FamilyItemMarked(s.ctx, s.v, ex, current, e.Unread)
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
func (s *live) sidebar(u *views.LiveUpdate, watched bool, ex *models.Exchange) error {
	current := int64(0)
	if s.feed != nil {
		current = s.feed.exchangeID
	}
	side, err := s.sc.Sidebar(s.ctx, s.v, current, nil)
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
func (s *live) deleted(u *views.LiveUpdate, e agents.Event, watched bool) error {
	u.Removed = e.ExchangeID
	if watched {
		s.closeReply(u)
		s.unwatch()
		u.Gone = true
	}
	heir := e.Heir
	if heir == nil || heir.Scope != models.ScopeGeneral || heir.UserID != s.v.UserID {
		return nil
	}
	current := int64(0)
	if s.feed != nil && s.feedPage == 0 {
		current = s.feed.exchangeID
	}
	it, err := s.sc.FamilyItem(s.ctx, s.v, heir, current)
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
	heads, err := s.sc.heads.FamilyHeads(s.ctx, s.v.UserID, []int64{heir.ID, current})
	if err != nil {
		return err
	}
	if h, c := heads[heir.ID], heads[current]; h.RootID != 0 && h.RootID == c.RootID {
		return s.branchSwitches(u) // a branch of the family on screen went
	}
	return nil
}
