package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"golang.org/x/net/html"

	"palaver/agents"
	"palaver/handlers"
	"palaver/internal/htmltest"
	"palaver/models"
)

// The live tests' helpers: the app on a real listener, real websocket
// clients that keep what a tab would have got, and turns committed through
// the store and announced on the hub, so that the database and the events
// agree as they do when the agent service runs a turn.

// liveWait bounds every read: a test fails rather than hangs.
const liveWait = 5 * time.Second

// liveOwner holds the turn leases the tests take.
const liveOwner = "live-test"

// listen serves the app on a random loopback port and returns its address.
func (a *testApp) listen() string {
	a.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		a.t.Fatal(err)
	}
	go func() { _ = a.app.Listener(handlers.Listener(ln)) }() // as palaver serve does
	a.t.Cleanup(func() { _ = a.app.ShutdownWithTimeout(2 * time.Second) })
	return ln.Addr().String()
}

// cookieHeader is the client's cookie jar as a Cookie header.
func (c *client) cookieHeader() string {
	var parts []string
	for k, v := range c.cookies {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, "; ")
}

// dialLive opens /live with the client's cookies and the given Origin
// ("" sends none).
func (c *client) dialLive(addr, origin string) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	if ck := c.cookieHeader(); ck != "" {
		h.Set("Cookie", ck)
	}
	d := websocket.Dialer{HandshakeTimeout: liveWait}
	return d.Dial("ws://"+addr+"/live", h)
}

// liveTab is one browser tab's live connection, and what it was sent.
type liveTab struct {
	t       *testing.T
	c       *client // whose tab it is
	conn    *websocket.Conn
	frames  []string
	entries []string // message element ids appended to the transcript, in order, repeats kept
	maxSeq  int64
	deltas  strings.Builder
	opened  int      // pending reply cells opened
	closed  int      // pending reply cells removed
	pending bool     // a pending reply cell is open, as the tab applied them in order
	turn    string   // the composer's last turn state
	history []string // "history-N:status" for each sidebar item sent
}

// openTab connects the client's tab to the server at addr, from its own
// origin.
func (c *client) openTab(t *testing.T, addr string) *liveTab {
	t.Helper()
	conn, res, err := c.dialLive(addr, "http://"+addr)
	if err != nil {
		status := 0
		if res != nil {
			status = res.StatusCode
		}
		t.Fatalf("dial /live: %v (status %d)", err, status)
	}
	tab := &liveTab{t: t, c: c, conn: conn, maxSeq: -1}
	t.Cleanup(func() { _ = conn.Close() })
	return tab
}

// watch tells the server which exchange the tab shows and what it has.
func (l *liveTab) watch(exchangeID, since int64) {
	l.t.Helper()
	msg := fmt.Sprintf(`{"type":"watch","exchange_id":%d,"since":%d}`, exchangeID, since)
	if err := l.conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		l.t.Fatalf("send watch: %v", err)
	}
}

// read waits for one message and records what it shows.
func (l *liveTab) read() string {
	l.t.Helper()
	_ = l.conn.SetReadDeadline(time.Now().Add(liveWait))
	_, data, err := l.conn.ReadMessage()
	if err != nil {
		l.t.Fatalf("read live message: %v (so far: %q)", err, l.frames)
	}
	frame := string(data)
	l.frames = append(l.frames, frame)
	doc, err := html.Parse(strings.NewReader(frame))
	if err != nil {
		l.t.Fatalf("parse %q: %v", frame, err)
	}
	for _, n := range htmltest.FindAll(doc, func(*html.Node) bool { return true }) {
		id, _ := htmltest.Attr(n, "id")
		oob, _ := htmltest.Attr(n, "hx-swap-oob")
		testid, _ := htmltest.Attr(n, "data-testid")
		switch {
		case testid == "message":
			l.entries = append(l.entries, id)
			if s, ok := htmltest.Attr(n, "data-seq"); ok {
				seq, _ := strconv.ParseInt(s, 10, 64)
				l.maxSeq = max(l.maxSeq, seq)
			}
		case oob == "beforeend:#pending-reply-text":
			if n.FirstChild != nil {
				l.deltas.WriteString(n.FirstChild.Data) // exactly as sent: spaces count
			}
		case id == "pending-reply-text" && oob == "innerHTML": // the reply so far
			l.deltas.Reset()
			if n.FirstChild != nil {
				l.deltas.WriteString(n.FirstChild.Data)
			}
		case testid == "pending-reply":
			l.opened++
			l.pending = true
		case id == "pending-reply" && oob == "delete":
			l.closed++
			l.pending = false
		case testid == "composer-turn":
			l.turn, _ = htmltest.Attr(n, "data-turn-status")
		case testid == "history-item":
			status, _ := htmltest.Attr(n, "data-turn-status")
			l.history = append(l.history, id+":"+status)
		}
	}
	return frame
}

// readUntil reads messages until done says the tab has what it waits for.
func (l *liveTab) readUntil(what string, done func() bool) {
	l.t.Helper()
	deadline := time.Now().Add(liveWait)
	for !done() {
		if time.Now().After(deadline) {
			l.t.Fatalf("waiting for %s: got %q", what, l.frames)
		}
		l.read()
	}
}

// hasEntries waits until the transcript got the ids, then checks that it got
// exactly these since the tab opened, in order, each once.
func (l *liveTab) hasEntries(ids ...string) {
	l.t.Helper()
	l.readUntil("entries "+strings.Join(ids, ","), func() bool { return len(l.entries) >= len(ids) })
	if strings.Join(l.entries, ",") != strings.Join(ids, ",") {
		l.t.Fatalf("transcript got %v, want %v", l.entries, ids)
	}
}

// msgID is a message's element id.
func msgID(m *models.Message) string { return "msg-" + strconv.FormatInt(m.ID, 10) }

// liveStart commits a user message that starts a turn (exchangeID 0: in a
// new general exchange) and announces it as the agent service does.
func (a *testApp) liveStart(userID, exchangeID int64, query string) (*models.Exchange, *models.Message) {
	a.t.Helper()
	ex, msg, err := a.store.StartTurn(context.Background(), models.TurnStart{
		UserID: userID, ExchangeID: exchangeID, Scope: models.ScopeGeneral, AgentType: "router",
		Query: query, Owner: liveOwner,
	})
	if err != nil {
		a.t.Fatal(err)
	}
	if a.written == nil {
		a.written = map[int64]int{}
	}
	a.written[ex.ID] = 0
	a.hub.Publish(agents.Event{Kind: agents.EventEntry, UserID: userID, ExchangeID: ex.ID, Exchange: ex, Entry: msg})
	a.hub.Publish(agents.Event{Kind: agents.EventTurn, UserID: userID, ExchangeID: ex.ID, Exchange: ex})
	return ex, msg
}

// liveDelta announces a piece of the reply being written, at its offset.
func (a *testApp) liveDelta(userID, exchangeID int64, text string) {
	a.hub.Publish(agents.Event{Kind: agents.EventDelta, UserID: userID, ExchangeID: exchangeID, Delta: text, Offset: a.written[exchangeID]})
	a.written[exchangeID] += len(text)
}

// liveFinish commits the turn's reply and announces it.
func (a *testApp) liveFinish(userID, exchangeID int64, reply string) *models.Message {
	a.t.Helper()
	m := &models.Message{Role: models.RoleAssistant, Content: reply}
	if err := a.store.FinishTurn(context.Background(), exchangeID, liveOwner, m); err != nil {
		a.t.Fatal(err)
	}
	a.livePublishOutcome(userID, exchangeID, m)
	return m
}

// liveFail records the turn's failure as an error row and announces it.
func (a *testApp) liveFail(userID, exchangeID int64, reason string) *models.Message {
	a.t.Helper()
	m, err := a.store.FailTurn(context.Background(), exchangeID, liveOwner, reason)
	if err != nil {
		a.t.Fatal(err)
	}
	a.livePublishOutcome(userID, exchangeID, m)
	return m
}

func (a *testApp) livePublishOutcome(userID, exchangeID int64, m *models.Message) {
	a.t.Helper()
	ex, err := a.store.Exchange(context.Background(), userID, exchangeID)
	if err != nil {
		a.t.Fatal(err)
	}
	a.hub.Publish(agents.Event{Kind: agents.EventEntry, UserID: userID, ExchangeID: ex.ID, Exchange: ex, Entry: m})
	a.hub.Publish(agents.Event{Kind: agents.EventTurn, UserID: userID, ExchangeID: ex.ID, Exchange: ex})
}

// waitSubscribers waits until the hub has n subscribers (connections are
// subscribed from their first moment, and unsubscribed when they end).
func (a *testApp) waitSubscribers(n int) {
	a.t.Helper()
	deadline := time.Now().Add(liveWait)
	for a.hub.Subscribers() != n {
		if time.Now().After(deadline) {
			a.t.Fatalf("%d hub subscribers, want %d", a.hub.Subscribers(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitWatching waits until a tab of the user shows the exchange, as the
// server has it.
func (a *testApp) waitWatching(userID, exchangeID int64) {
	a.t.Helper()
	deadline := time.Now().Add(liveWait)
	for !a.hub.Watching(userID, exchangeID) {
		if time.Now().After(deadline) {
			a.t.Fatalf("no tab of user %d shows exchange %d", userID, exchangeID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// isHandshakeStatus says whether a dial failed with the given HTTP status.
func isHandshakeStatus(err error, res *http.Response, status int) bool {
	return errors.Is(err, websocket.ErrBadHandshake) && res != nil && res.StatusCode == status
}
