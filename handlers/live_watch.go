package handlers

import (
	"errors"

	"palaver/agents"
	"palaver/models"
	"palaver/screens"
	"palaver/views"
)

// liveWatch is what a tab watches and has been sent of it: the exchange
// and page it shows, its pending reply cell, its switchers and its chat's
// name. watch sets it from the tab's message; the events move it on.
type liveWatch struct {
	feed *liveFeed // the watched exchange; nil: none
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
	shown    replyView // how much of the reply being written the pending cell holds
	// named is the watched general chat's name as the tab shows it: a
	// header with another (a rename) sends the new one.
	named views.ChatHeading
}

// watch switches the connection to the exchange the tab shows and sends it
// what it lacks: the entries past its seq, and the turn's state. Another
// user's exchange, or a missing one, is watched as none: nothing is sent.
func (s *liveSession) watch(req liveRequest) error {
	s.unwatch()
	s.pageID = max(req.PageID, 0)
	if req.ExchangeID <= 0 {
		return nil
	}
	since := int64(-1)
	if req.Since != nil {
		since = *req.Since
	}
	// What the page shows, before the catch-up: entries new to it move
	// the switchers it drew (SwitchPlaces).
	for _, seq := range req.Switches {
		if s.switches == nil {
			s.switches = map[int64]views.BranchSwitch{}
		}
		s.switches[seq] = unknownSwitch
	}
	var u views.LiveUpdate
	ex, err := s.catchUp(&u, req.ExchangeID, since)
	if err != nil || ex == nil {
		return err
	}
	if err := s.shownItem(&u, ex); err != nil {
		return err
	}
	if err := s.send(u); err != nil {
		return err
	}
	return s.flush()
}

// shownItem adds the sidebar item of the general chat the tab now watches,
// as it stands: the page the tab swapped in may have been drawn before
// what the socket told it since (a branch's first reply, which the
// builtin agent writes in a moment, can reach the tab before the page that
// opens the branch), and would keep showing the reply as being written.
// ex is the watched exchange's header, as catchUp read it.
func (s *liveSession) shownItem(u *views.LiveUpdate, ex *models.Exchange) error {
	if s.feedPage != 0 || ex.Scope != models.ScopeGeneral || ex.Archived {
		return nil
	}
	it, err := s.h.screens.ShownItem(s.ctx, s.viewer(), ex)
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
func (s *liveSession) catchUp(u *views.LiveUpdate, exchangeID, since int64) (*models.Exchange, error) {
	ex, err := s.h.store.Exchange(s.ctx, s.userID, exchangeID)
	if err == nil {
		var msgs []models.Message
		if msgs, err = s.h.store.Messages(s.ctx, s.userID, exchangeID, nil); err == nil {
			if s.feed == nil {
				s.feed = newLiveFeed(exchangeID, liveFloor(msgs, since))
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
func (s *liveWatch) unwatch() {
	s.feed, s.feedPage, s.reply, s.closed, s.shown, s.switches, s.named = nil, 0, false, false, replyView{}, nil, views.ChatHeading{}
}

// rename shows the watched general chat's name when its header (ex) names
// it otherwise than the tab does; on the first header, it notes the name
// the page was drawn with.
func (s *liveSession) rename(u *views.LiveUpdate, ex *models.Exchange) {
	if s.feedPage != 0 || ex.Scope != models.ScopeGeneral {
		return
	}
	h := screens.Heading(s.viewer(), ex)
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
func (s *liveSession) openReply(u *views.LiveUpdate) {
	if s.reply {
		return
	}
	after := s.feed.last
	u.OpenReply, s.reply, s.closed = &after, true, false
	s.resync(u)
}

// resync puts the whole reply written so far in the tab's pending cell.
func (s *liveSession) resync(u *views.LiveUpdate) {
	s.shown = replyView{}
	u.ReplyText, u.Delta = nil, ""
	if text := s.h.replySoFar(s.userID, s.feed.exchangeID); text != "" {
		u.ReplyText, s.shown.shown = &text, len(text)
	}
}

// delta adds a piece of the reply to the tab's pending cell: the part of it
// the cell does not hold yet, or, when pieces were missed before it, the
// whole text so far.
func (s *liveSession) delta(u *views.LiveUpdate, e agents.Event) {
	s.openReply(u) // with the text so far, which holds this piece
	text, whole := s.shown.piece(e, func() string { return s.h.replySoFar(s.userID, e.ExchangeID) })
	if whole {
		u.ReplyText, u.Delta = &text, ""
	} else {
		u.Delta += text
	}
}

// closeReply removes the pending reply cell, once.
func (s *liveWatch) closeReply(u *views.LiveUpdate) {
	if !s.closed {
		u.CloseReply = true
	}
	s.reply, s.closed, s.shown = false, true, replyView{}
	u.OpenReply, u.ReplyText, u.Delta = nil, nil, ""
}

// turnState shows the watched exchange's turn: the composer's Stop button,
// and the pending reply cell while a turn runs.
func (s *liveSession) turnState(u *views.LiveUpdate, ex *models.Exchange) {
	u.Turn = &views.TurnControl{ExchangeID: ex.ID, Status: ex.TurnStatus, CSRF: s.csrf}
	if ex.TurnStatus == models.TurnRunning {
		s.openReply(u)
		return
	}
	s.closeReply(u)
}

// branchSwitches sends the watched chat's switchers that changed since the
// tab was sent one, after news of its family (a branch made or deleted).
func (s *liveSession) branchSwitches(u *views.LiveUpdate) error {
	ex, err := s.h.store.Exchange(s.ctx, s.userID, s.feed.exchangeID)
	if err != nil {
		return err
	}
	places, err := s.h.screens.SwitchPlaces(s.ctx, s.viewer(), ex)
	if err != nil {
		return err
	}
	return s.moveSwitches(u, places)
}

// moveSwitches sends the switchers of the entries the tab shows that
// differ from places (by entry seq): new ones, changed ones (a switcher the
// tab drew itself is replaced, the session not knowing which it is), and
// none where the tab shows one that is no more (a branch was deleted, an
// entry came after the log's end). Only the switcher is swapped: an edit
// form open on its entry, with what is typed in it, stays.
func (s *liveSession) moveSwitches(u *views.LiveUpdate, places map[int64]views.BranchSwitch) error {
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
	msgs, err := s.h.store.MessagesAtSeqs(s.ctx, s.userID, s.feed.exchangeID, seqs)
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
func (s *liveWatch) showSwitch(seq int64, b views.BranchSwitch) {
	if s.switches == nil {
		s.switches = map[int64]views.BranchSwitch{}
	}
	s.switches[seq] = b
}

// unknownSwitch stands for a switcher the tab says it shows, as the page
// drew it: the session does not know which, so any news replaces it.
var unknownSwitch = views.BranchSwitch{Count: -1}
