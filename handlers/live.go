package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/contrib/websocket"
	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/screens"
	"palaver/views"
)

// Live updates: one websocket per tab at /live. The tab says which exchange
// it shows, and the highest seq it has, in a watch message:
//
//	{"type": "watch", "exchange_id": N, "since": S, "page_id": P, "switches": [Q, …]}   // S = -1: none
//
// sent on open, on a switch of conversation, and after a reconnect. Q
// (optional) are the seqs of the entries on which the tab shows a branch
// switcher: one that goes when its branch is deleted elsewhere is taken
// away. P is
// the page whose editor the tab shows (absent or 0: none): when it changes
// (a save, an accepted proposal, a restore, in any tab or the API), the
// server pushes its text, preview, revisions and the watched chat's
// proposal cards. The entries of a page's chat come as the panel shows
// them, a proposal with its card. The
// server answers with rendered fragments that htmx swaps out of band by
// element id (views.LiveMessage): the entries past S, then as they happen the
// watched exchange's new entries, the text of the reply being written, and
// its turn state; and for every general exchange of the user, its sidebar
// item. The connection subscribes to the user's hub events before it reads
// anything, so what the catch-up read misses arrives as an event, and what
// both bring is sent once.

// Limits of a live connection.
const (
	liveReadLimit    = 4 << 10          // a watch message is a few dozen bytes
	livePingEvery    = 25 * time.Second // under the usual 30–60 s proxy idle timeouts
	liveReadTimeout  = 60 * time.Second // renewed by each pong
	liveWriteTimeout = 10 * time.Second
)

// localLive carries what the connection needs of the request past the
// upgrade, when the session is no longer at hand.
const localLive = "live"

// liveClient is the signed-in tab, as resolved before the upgrade.
type liveClient struct {
	userID   int64
	who      principal       // checked again when the account changes (principal.go)
	csrf     string          // for the forms in the fragments
	shutdown <-chan struct{} // closed when the server shuts down
	slot     *liveSlot       // the user's live-socket slot this tab holds
}

// liveSlot is a websocket slot taken before the upgrade and handed to the
// connection. fasthttp runs the connection's handler only once the 101 has
// been written; if that write fails, or the server is closing, it never
// does, so a slot not claimed within liveClaimWithin is given back.
type liveSlot struct {
	state   atomic.Int32 // liveSlotPending, then claimed or abandoned
	release func()
}

const (
	liveSlotPending int32 = iota
	liveSlotClaimed
	liveSlotAbandoned
	liveClaimWithin = 10 * time.Second
)

// claim hands the slot to the connection; false: it was given back already.
func (s *liveSlot) claim() bool {
	return s.state.CompareAndSwap(liveSlotPending, liveSlotClaimed)
}

// abandon gives back a slot no connection claimed.
func (s *liveSlot) abandon() {
	if s.state.CompareAndSwap(liveSlotPending, liveSlotAbandoned) {
		s.release()
	}
}

// liveRequest is a message from the tab.
type liveRequest struct {
	Type       string `json:"type"`
	ExchangeID int64  `json:"exchange_id"`
	Since      *int64 `json:"since"`   // absent: -1, the tab has nothing
	PageID     int64  `json:"page_id"` // the page whose editor the tab shows; 0: none
	// Switches are the seqs of the entries on which the tab shows a
	// branch switcher (as the page drew them), so that one that goes (a
	// branch deleted elsewhere) can be taken away.
	Switches []int64 `json:"switches"`
}

// liveUpgrade admits a websocket handshake: a signed-in user (401), a real
// upgrade request (426), from one of Palaver's own pages (403), holding
// fewer than 32 live sockets (429, before the upgrade).
func (h *Handlers) liveUpgrade(c *fiber.Ctx) error {
	u := currentUser(c)
	if u == nil {
		return fiber.NewError(fiber.StatusUnauthorized, "Sign in to receive live updates")
	}
	if !websocket.IsWebSocketUpgrade(c) {
		return fiber.ErrUpgradeRequired
	}
	if !liveSameOrigin(c) {
		return fiber.NewError(fiber.StatusForbidden, "Live updates are only for Palaver's own pages")
	}
	release, err := h.slots.Acquire(c.UserContext(), agents.SlotSocket, u.ID)
	if err != nil {
		return err
	}
	slot := &liveSlot{release: release}
	c.Locals(localLive, &liveClient{userID: u.ID, who: h.principalOf(c), csrf: h.csrfToken(c), shutdown: c.Context().Done(), slot: slot})
	if err := c.Next(); err != nil {
		slot.abandon() // no upgrade
		return err
	}
	time.AfterFunc(liveClaimWithin, slot.abandon)
	return nil
}

// liveSameOrigin checks the handshake's Origin against the server's own
// address: the scheme and host the request came to (through a proxy, its
// X-Forwarded-Proto and X-Forwarded-Host). Browsers always send Origin on a
// websocket handshake, and a cross-site hijack needs a browser to carry the
// victim's cookie, so a handshake without one is a script or a CLI holding
// the cookie itself: it is let in. "null" (sandboxed frames, file: pages)
// matches nothing and is refused.
func liveSameOrigin(c *fiber.Ctx) bool {
	origin := c.Get(fiber.HeaderOrigin)
	return origin == "" || strings.EqualFold(origin, c.Protocol()+"://"+c.Hostname())
}

// liveSocket upgrades an admitted handshake and serves the connection. The
// upgrader admits any origin: liveUpgrade checked it, per request.
func (h *Handlers) liveSocket() fiber.Handler {
	return websocket.New(h.live, websocket.Config{ReadBufferSize: 1 << 10, WriteBufferSize: 4 << 10})
}

// live serves one tab's connection until either side ends it.
func (h *Handlers) live(conn *websocket.Conn) {
	client, _ := conn.Locals(localLive).(*liveClient)
	if client == nil {
		return
	}
	if !client.slot.claim() {
		return // too late: its slot was given back
	}
	defer client.slot.release()
	h.observer.LiveOpened("websocket")
	defer h.observer.LiveClosed("websocket")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &liveSession{h: h, conn: conn, ctx: ctx, liveClient: client, sub: h.hub.Subscribe(client.userID)}
	defer s.sub.Close()

	conn.SetReadLimit(liveReadLimit)
	_ = conn.SetReadDeadline(time.Now().Add(liveReadTimeout))
	conn.SetPongHandler(func(string) error {
		return conn.SetReadDeadline(time.Now().Add(liveReadTimeout))
	})
	watches := make(chan liveRequest)
	done := make(chan struct{})
	go s.read(watches, done)
	if err := s.run(watches, done); err != nil {
		h.log.Error("live connection failed", "user", client.userID, "err", err)
		s.close(websocket.CloseInternalServerErr, "Server error") // the tab reconnects
	}
	// The connection goes back to a pool when this returns: end the reader
	// first.
	cancel()
	_ = conn.Close()
	<-done
}

// liveSession is one live connection's state. Only run's goroutine
// touches it; read only hands over the tab's messages.
type liveSession struct {
	*liveClient
	h    *Handlers
	conn *websocket.Conn
	ctx  context.Context
	sub  *agents.Subscription
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
	out   bytes.Buffer // rendered, to be written as one message (flush)

	// queued is the update to render after out, the next ones folded
	// into it where they can be (send, mergeLive).
	queued *views.LiveUpdate
}

// unwatch forgets the watched exchange and what the tab was sent of it.
func (s *liveSession) unwatch() {
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

// viewer is who the connection's parts are built for.
func (s *liveSession) viewer() screens.Viewer { return screens.Viewer{UserID: s.userID, CSRF: s.csrf} }

// read hands the tab's watch messages to run, until the connection fails
// (the tab went away, or no pong came within the read deadline).
func (s *liveSession) read(watches chan<- liveRequest, done chan<- struct{}) {
	defer close(done)
	for {
		_, data, err := s.conn.ReadMessage()
		if err != nil {
			return
		}
		var req liveRequest
		if err := json.Unmarshal(data, &req); err != nil {
			s.close(websocket.CloseUnsupportedData, "Expected a JSON message")
			return
		}
		if req.Type != "watch" {
			continue // a message type of a newer client: nothing to do
		}
		select {
		case watches <- req:
		case <-s.ctx.Done():
			return
		}
	}
}

// run sends what the tab asks for and what happens, and pings, until the
// connection or the server ends. An error is the server's own.
func (s *liveSession) run(watches <-chan liveRequest, done <-chan struct{}) error {
	ping := time.NewTicker(livePingEvery)
	defer ping.Stop()
	for {
		var err error
		select {
		case <-done:
			return nil
		case <-s.shutdown:
			s.close(websocket.CloseServiceRestart, "Palaver is restarting") // the tab reconnects
			return nil
		case <-ping.C:
			if !s.signedIn() {
				return nil
			}
			if s.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(liveWriteTimeout)) != nil {
				return nil
			}
			continue
		case <-s.sub.Check:
			if !s.signedIn() {
				return nil
			}
			continue
		case req := <-watches:
			err = s.watch(req)
		case e := <-s.sub.C:
			err = s.events(e)
		}
		if errors.Is(err, errLiveWrite) {
			return nil // the tab went away
		}
		if err != nil {
			return err
		}
	}
}

// signedIn checks that the tab's session may still speak as its user, and
// when it may not (the account was deleted or disabled, the session signed
// out or moved off its epoch by a password change), closes the connection:
// the tab's reconnect is refused unless its cookie signs it in again. A
// database that cannot say keeps the connection, to be checked again.
func (s *liveSession) signedIn() bool {
	ok, err := s.h.stillValid(s.ctx, s.who)
	if err != nil {
		s.h.log.Warn("live: check the session", "user", s.userID, "err", err)
		return true
	}
	if !ok {
		s.close(websocket.ClosePolicyViolation, "Signed out")
	}
	return ok
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

// How much one message may carry of what queued up.
const (
	liveBatch      = 256      // events
	liveBatchBytes = 64 << 10 // rendered bytes, or of a reply's pieces
)

// events shows e and whatever queued up behind it, in one message: a tab
// that falls behind (a slow link, a busy server, hundreds of tabs) catches
// up in a few writes instead of one per event, and what comes next is not
// held up behind them. The fragments keep their order, so the tab applies
// them as it would have one message at a time; a reply's pieces that queued
// one after another are joined into one.
func (s *liveSession) events(e agents.Event) error {
	for n := 1; ; n++ {
		var next *agents.Event
		if e.Kind == agents.EventDelta {
			var text strings.Builder
			text.WriteString(e.Delta)
		pieces:
			for ; n < liveBatch && text.Len() < liveBatchBytes; n++ {
				select {
				case f := <-s.sub.C:
					if f.Kind == agents.EventDelta && f.UserID == e.UserID && f.ExchangeID == e.ExchangeID &&
						f.Offset == e.Offset+text.Len() {
						text.WriteString(f.Delta)
						continue
					}
					next = &f
					break pieces
				default:
					break pieces
				}
			}
			e.Delta = text.String()
		}
		if err := s.event(e); err != nil {
			return err
		}
		if next == nil && n < liveBatch && s.pendingBytes() < liveBatchBytes {
			select {
			case f := <-s.sub.C:
				next = &f
			default:
			}
		}
		if next == nil {
			return s.flush()
		}
		e = *next
	}
}

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
func (s *liveSession) closeReply(u *views.LiveUpdate) {
	if !s.closed {
		u.CloseReply = true
	}
	s.reply, s.closed, s.shown = false, true, replyView{}
	u.OpenReply, u.ReplyText, u.Delta = nil, nil, ""
}

// replySoFar is the text written so far of a reply this process is writing.
func (h *Handlers) replySoFar(userID, exchangeID int64) string {
	if h.agents == nil {
		return ""
	}
	return h.agents.ReplySoFar(userID, exchangeID)
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
func (s *liveSession) showSwitch(seq int64, b views.BranchSwitch) {
	if s.switches == nil {
		s.switches = map[int64]views.BranchSwitch{}
	}
	s.switches[seq] = b
}

// unknownSwitch stands for a switcher the tab says it shows, as the page
// drew it: the session does not know which, so any news replaces it.
var unknownSwitch = views.BranchSwitch{Count: -1}

// errLiveWrite is a failed write: the tab is gone.
var errLiveWrite = errors.New("live: write failed")

// send adds u to what is waiting to be written (flush writes it), folded
// into the update before it where it can be (mergeLive); an empty update
// adds nothing.
func (s *liveSession) send(u views.LiveUpdate) error {
	if liveEmpty(&u) {
		return nil
	}
	if s.queued != nil {
		if m, ok := mergeLive(*s.queued, u); ok {
			*s.queued = m
			return nil
		}
		if err := s.render(); err != nil {
			return err
		}
	}
	s.queued = &u
	return nil
}

// pendingBytes is about how long the message waiting to be written is:
// what is rendered, and the text of the queued update.
func (s *liveSession) pendingBytes() int {
	n := s.out.Len()
	if q := s.queued; q != nil {
		n += len(q.Delta)
		if q.ReplyText != nil {
			n += len(*q.ReplyText)
		}
		for i := range q.Entries {
			n += len(q.Entries[i].HTML) + len(q.Entries[i].Text)
		}
	}
	return n
}

// render renders the queued update after what is rendered already.
func (s *liveSession) render() error {
	if s.queued == nil {
		return nil
	}
	u := s.queued
	s.queued = nil
	return views.LiveMessage(*u, s.h.liveCache).Render(s.ctx, &s.out)
}

// flush writes what send queued as one message: an update alone in it
// that other tabs may receive alike as the frame kept for it (liveFrames).
func (s *liveSession) flush() error {
	if s.out.Len() == 0 && s.queued != nil {
		if k, ok := liveFrameKeyOf(s.queued); ok {
			return s.flushShared(k)
		}
	}
	if err := s.render(); err != nil {
		return err
	}
	return s.write()
}

// write writes what is rendered as one message.
func (s *liveSession) write() error {
	if s.out.Len() == 0 {
		return nil
	}
	defer s.out.Reset()
	_ = s.conn.SetWriteDeadline(time.Now().Add(liveWriteTimeout))
	if err := s.conn.WriteMessage(websocket.TextMessage, s.out.Bytes()); err != nil {
		return errors.Join(errLiveWrite, err)
	}
	return nil
}

// close tells the tab why the server ends the connection.
func (s *liveSession) close(code int, reason string) {
	_ = s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason),
		time.Now().Add(time.Second))
}
