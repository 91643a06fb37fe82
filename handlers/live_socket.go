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
	s.tab.SoFar = func(exchangeID int64) string { return h.replySoFar(client.userID, exchangeID) }
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

// liveSession is one live connection: the socket, and what the tab
// watches (screens.LiveTab). Only run's goroutine touches it; read only hands
// over the tab's messages.
type liveSession struct {
	*liveClient
	h    *Handlers
	conn *websocket.Conn
	ctx  context.Context
	sub  *agents.Subscription
	tab  screens.LiveTab // what the tab watches and has been sent
	out  bytes.Buffer    // rendered, to be written as one message (flush)
	// shows is the exchange the tab shows (0: none), as the hub knows it
	// (Subscription.Watch): a reply that finishes in front of it is read.
	shows int64

	// queued is the update to render after out, the next ones folded
	// into it where they can be (send, mergeLive).
	queued *views.LiveUpdate
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

// watch switches the connection to the exchange the tab shows and sends it
// what it lacks (screens.LiveWatch).
func (s *liveSession) watch(req liveRequest) error {
	since := int64(-1)
	if req.Since != nil {
		since = *req.Since
	}
	u, err := s.h.screens.LiveWatch(s.ctx, s.viewer(), &s.tab, req.ExchangeID, since, req.PageID, req.Switches)
	if err != nil {
		return err
	}
	s.shows = max(req.ExchangeID, 0)
	s.sub.Watch(s.shows)
	if err := s.send(u); err != nil {
		return err
	}
	return s.flush()
}

// event shows one thing that happened to the user's data (screens.LiveEvent).
func (s *liveSession) event(e agents.Event) error {
	u, err := s.h.screens.LiveEvent(s.ctx, s.viewer(), &s.tab, e, s.sub.Lagged())
	if err != nil {
		return err
	}
	if err := s.seen(e); err != nil {
		return err
	}
	return s.send(u)
}

// seen marks the exchange the tab shows read when its turn ends and the
// reply was counted unread: the process that ran the turn did not know of
// this tab (it is another process's), or the tab came to it meanwhile.
func (s *liveSession) seen(e agents.Event) error {
	if e.Kind != agents.EventTurn || e.Exchange == nil || s.shows == 0 || e.ExchangeID != s.shows ||
		e.Exchange.TurnStatus == models.TurnRunning || e.Exchange.Scope != models.ScopeGeneral {
		return nil
	}
	unread := e.Unread // the event's, read once for every tab
	if unread == nil {
		var err error
		if unread, err = s.h.store.Unread(s.ctx, s.userID); err != nil {
			return err
		}
	}
	if !unread[s.shows] {
		return nil
	}
	changed, err := s.h.store.MarkRead(s.ctx, s.userID, s.shows, nil, s.h.now())
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if changed {
		s.h.publishRead(s.userID, s.shows)
	}
	return err
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
