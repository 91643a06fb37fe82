package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/fasthttp/websocket"

	"palaver/agents"
	"palaver/internal/htmltest"
	"palaver/models"
)

func TestLiveHandshakeIsGuarded(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	own := "http://" + addr
	ann := a.register("ann")
	tests := []struct {
		name   string
		c      *client
		origin string
		status int // 0: upgraded
	}{
		{"visitor", a.anon(), own, http.StatusUnauthorized},
		{"foreign origin", ann, "http://evil.example", http.StatusForbidden},
		{"other port", ann, "http://127.0.0.1:1", http.StatusForbidden},
		{"other scheme", ann, "https://" + addr, http.StatusForbidden},
		{"sandboxed page", ann, "null", http.StatusForbidden},
		{"own origin", ann, own, 0},
		{"no origin: not a browser", ann, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, res, err := tt.c.dialLive(addr, tt.origin)
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				conn.Close()
				return
			}
			if err == nil {
				conn.Close()
				t.Fatalf("upgraded, want %d", tt.status)
			}
			if !isHandshakeStatus(err, res, tt.status) {
				t.Fatalf("dial: %v, response %+v, want status %d", err, res, tt.status)
			}
		})
	}
	// A plain GET is not an upgrade.
	mustStatus(t, ann.get("/live"), http.StatusUpgradeRequired)
}

func TestLiveTwoTabsSeeTheSameEntries(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	ex, q1 := a.liveStart(ann.user.ID, 0, "first question")
	r1 := a.liveFinish(ann.user.ID, ex.ID, "first answer")

	tabs := []*liveTab{ann.openTab(t, addr), ann.openTab(t, addr)}
	for _, tab := range tabs {
		tab.watch(ex.ID, -1)
		tab.hasEntries(msgID(q1), msgID(r1))
		if tab.turn != models.TurnIdle {
			t.Fatalf("composer turn state %q, want idle", tab.turn)
		}
	}

	// A second turn, as another tab or the API would start it.
	closed := []int{tabs[0].closed, tabs[1].closed}
	_, q2 := a.liveStart(ann.user.ID, ex.ID, "second question")
	a.liveDelta(ann.user.ID, ex.ID, "second ")
	a.liveDelta(ann.user.ID, ex.ID, "answer")
	// Both tabs show the reply being written. (A tab that hears the reply
	// in the same message as its pieces is sent the reply alone: the cell
	// would be deleted as it is filled; TestLiveTurnsHeardAtOnceEndAsTheyShould.)
	for i, tab := range tabs {
		tab.readUntil("the pieces", func() bool { return tab.deltas.String() == "second answer" })
		if tab.opened != 1 || !tab.pending {
			t.Fatalf("tab %d: %d pending cells opened, open %v; want 1, open", i, tab.opened, tab.pending)
		}
	}
	r2 := a.liveFinish(ann.user.ID, ex.ID, "second answer")
	for i, tab := range tabs {
		tab.hasEntries(msgID(q1), msgID(r1), msgID(q2), msgID(r2))
		tab.readUntil("the turn's end", func() bool { return tab.turn == models.TurnIdle && tab.closed > closed[i] && !tab.pending })
		if tab.opened != 1 {
			t.Fatalf("tab %d: %d pending cells opened, want 1", i, tab.opened)
		}
	}
}

func TestLiveReconnectMissesNothingAndRepeatsNothing(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	ex, q1 := a.liveStart(ann.user.ID, 0, "hello")
	r1 := a.liveFinish(ann.user.ID, ex.ID, "Hello!")

	tab := ann.openTab(t, addr)
	tab.watch(ex.ID, -1)
	tab.hasEntries(msgID(q1), msgID(r1))
	since := tab.maxSeq
	if since != 1 {
		t.Fatalf("max seq %d, want 1", since)
	}
	// Events of entries the tab has are not shown again.
	a.livePublishOutcome(ann.user.ID, ex.ID, r1)
	tab.readUntil("the repeated turn event", func() bool { return len(tab.history) == 1 })
	tab.hasEntries(msgID(q1), msgID(r1))
	tab.conn.Close()
	a.waitSubscribers(0)

	// While the tab is away: a turn that fails (an error row, seq NULL), and
	// its retry, half written.
	_, q2 := a.liveStart(ann.user.ID, ex.ID, "tell me more")
	e2 := a.liveFail(ann.user.ID, ex.ID, "the provider is down")
	if _, _, err := a.store.RetryTurn(context.Background(), ann.user.ID, ex.ID, liveOwner, 5); err != nil {
		t.Fatal(err)
	}

	back := ann.openTab(t, addr)
	back.watch(ex.ID, since)
	back.hasEntries(msgID(q2), msgID(e2))
	if strings.Contains(strings.Join(back.frames, ""), `data-testid="retry"`) {
		t.Fatal("Retry offered while the retry runs")
	}
	back.readUntil("the running turn", func() bool { return back.turn == models.TurnRunning && back.opened == 1 })

	// The live tail continues on the new connection, once.
	r2 := a.liveFinish(ann.user.ID, ex.ID, "More, after a retry.")
	back.hasEntries(msgID(q2), msgID(e2), msgID(r2))
	back.readUntil("the turn's end", func() bool { return back.turn == models.TurnIdle })

	// A tab that has everything gets nothing but the turn's state.
	again := ann.openTab(t, addr)
	again.watch(ex.ID, 3)
	again.readUntil("the turn state", func() bool { return again.turn != "" })
	if len(again.entries) != 0 {
		t.Fatalf("a tab with every entry got %v", again.entries)
	}
}

func TestLiveDeltasFillThePendingCell(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	ex, q := a.liveStart(ann.user.ID, 0, "write slowly")

	// A tab that opens while the reply is being written gets the cell.
	tab := ann.openTab(t, addr)
	tab.watch(ex.ID, -1)
	tab.hasEntries(msgID(q))
	tab.readUntil("the pending cell", func() bool { return tab.opened == 1 && tab.turn == models.TurnRunning })
	if !strings.Contains(strings.Join(tab.frames, ""), `action="/chat/`+strconv.FormatInt(ex.ID, 10)+`/stop"`) {
		t.Fatalf("no Stop form while running: %q", tab.frames)
	}

	a.liveDelta(ann.user.ID, ex.ID, "Once ")
	a.liveDelta(ann.user.ID, ex.ID, "<b>upon</b>")
	tab.readUntil("the deltas", func() bool { return tab.deltas.String() == "Once <b>upon</b>" })
	if !strings.Contains(tab.frames[len(tab.frames)-1], "&lt;b&gt;upon&lt;/b&gt;") {
		t.Fatalf("delta not escaped: %q", tab.frames[len(tab.frames)-1])
	}
	if tab.opened != 1 {
		t.Fatalf("%d cells opened, want 1", tab.opened)
	}

	r := a.liveFinish(ann.user.ID, ex.ID, "Once upon a time.")
	tab.hasEntries(msgID(q), msgID(r))
	tab.readUntil("the cell's removal", func() bool { return tab.closed > 0 && tab.turn == models.TurnIdle })

	// A delta with no turn event before it opens the cell too.
	ex2, q2, err := a.store.StartTurn(context.Background(), models.TurnStart{
		UserID: ann.user.ID, ExchangeID: ex.ID, AgentType: "router", Query: "again", Owner: liveOwner,
	})
	if err != nil {
		t.Fatal(err)
	}
	a.hub.Publish(agents.Event{Kind: agents.EventEntry, UserID: ann.user.ID, ExchangeID: ex.ID, Exchange: ex2, Entry: q2})
	a.liveDelta(ann.user.ID, ex.ID, "x")
	tab.readUntil("the delta", func() bool { return strings.HasSuffix(tab.deltas.String(), "x") })
	tab.hasEntries(msgID(q), msgID(r), msgID(q2))
	if tab.opened != 2 {
		t.Fatalf("%d cells opened, want 2", tab.opened)
	}
}

// The pieces of a reply that queue up while the server writes to a tab go
// out together, in order, and nothing is lost or repeated.
func TestLiveQueuedDeltasGoOutTogether(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	ex, q := a.liveStart(ann.user.ID, 0, "write fast")
	tab := ann.openTab(t, addr)
	tab.watch(ex.ID, -1)
	tab.hasEntries(msgID(q))
	tab.readUntil("the pending cell", func() bool { return tab.opened == 1 })

	const pieces = 300
	var want strings.Builder
	for i := range pieces {
		piece := "w" + strconv.Itoa(i) + " "
		want.WriteString(piece)
		a.liveDelta(ann.user.ID, ex.ID, piece)
	}
	before := len(tab.frames)
	tab.readUntil("every piece", func() bool { return tab.deltas.Len() >= want.Len() })
	if tab.deltas.String() != want.String() {
		t.Fatalf("the tab got %q,\nwant %q", tab.deltas.String(), want.String())
	}
	if sent := len(tab.frames) - before; sent > pieces/2 {
		t.Fatalf("%d messages for %d pieces published at once: they were not sent together", sent, pieces)
	}
	if tab.opened != 1 {
		t.Fatalf("%d cells opened, want 1", tab.opened)
	}
}

func TestLiveFailedTurnOffersRetry(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	ex, q := a.liveStart(ann.user.ID, 0, "will fail")
	tab := ann.openTab(t, addr)
	tab.watch(ex.ID, -1)
	tab.hasEntries(msgID(q))
	e := a.liveFail(ann.user.ID, ex.ID, "the provider is down")
	tab.hasEntries(msgID(q), msgID(e))
	retry := `action="/chat/` + strconv.FormatInt(ex.ID, 10) + `/retry"`
	if !strings.Contains(tab.frames[len(tab.frames)-1], retry) {
		t.Fatalf("the error row has no Retry: %q", tab.frames[len(tab.frames)-1])
	}
	// A tab that opens later gets it with the catch-up.
	late := ann.openTab(t, addr)
	late.watch(ex.ID, -1)
	late.hasEntries(msgID(q), msgID(e))
	if !strings.Contains(late.frames[0], retry) {
		t.Fatalf("the caught-up error row has no Retry: %q", late.frames[0])
	}
}

func TestLiveSidebarFollowsEveryExchange(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	shown, q := a.liveStart(ann.user.ID, 0, "on screen")
	a.liveFinish(ann.user.ID, shown.ID, "yes")

	tab := ann.openTab(t, addr)
	tab.watch(shown.ID, -1)
	tab.readUntil("the catch-up", func() bool { return len(tab.entries) == 2 && tab.turn != "" })
	// The catch-up brings the shown conversation's item as it stands (the
	// page may have been drawn while its turn still ran).
	if got, want := strings.Join(tab.history, ","), "history-"+strconv.FormatInt(shown.ID, 10)+":idle"; got != want {
		t.Fatalf("the catch-up's sidebar updates %s, want %s", got, want)
	}
	tab.history = nil

	// A conversation the tab does not show: its sidebar item moves and marks
	// the turn running, then failed; nothing reaches the transcript.
	other, _ := a.liveStart(ann.user.ID, 0, "elsewhere")
	item := "history-" + strconv.FormatInt(other.ID, 10)
	tab.readUntil("the running item", func() bool { return len(tab.history) >= 1 })
	a.liveDelta(ann.user.ID, other.ID, "ignored")
	a.liveFail(ann.user.ID, other.ID, "down")
	tab.readUntil("the failed item", func() bool { return len(tab.history) >= 2 })
	if got := strings.Join(tab.history, ","); got != item+":running,"+item+":failed" {
		t.Fatalf("sidebar updates %s", got)
	}
	if len(tab.entries) != 2 || tab.entries[0] != msgID(q) || tab.deltas.Len() != 0 || tab.opened != 0 {
		t.Fatalf("another exchange reached the transcript: %q", tab.frames)
	}
	last := tab.frames[len(tab.frames)-1]
	if !strings.Contains(last, `data-testid="history-failed"`) || !strings.Contains(last, `hx-swap-oob="true"`) {
		t.Fatalf("failed item not replaced in place: %q", last)
	}
}

func TestLiveNeverShowsAnotherUsersData(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann, bob := a.register("ann"), a.register("bob")
	bobs, bq := a.liveStart(bob.user.ID, 0, "bob's secret question")
	anns, _ := a.liveStart(ann.user.ID, 0, "ann's question")
	a.liveFinish(ann.user.ID, anns.ID, "ann's answer")

	bobTab := bob.openTab(t, addr)
	bobTab.watch(bobs.ID, -1)
	bobTab.hasEntries(msgID(bq))

	// Ann's tab asks for Bob's exchange: it is watched as none.
	annTab := ann.openTab(t, addr)
	annTab.watch(bobs.ID, -1)
	a.waitSubscribers(2)
	a.liveDelta(bob.user.ID, bobs.ID, "bob's secret reply")
	br := a.liveFinish(bob.user.ID, bobs.ID, "bob's secret reply")
	// A forged event that names Bob's exchange under Ann's id is still not
	// shown: Ann does not watch it.
	a.liveDelta(ann.user.ID, bobs.ID, "forged")

	// Bob sees his; Ann's first message is her own sidebar update.
	bobTab.hasEntries(msgID(bq), msgID(br))
	ex, err := a.store.Exchange(context.Background(), ann.user.ID, anns.ID)
	if err != nil {
		t.Fatal(err)
	}
	a.hub.Publish(agents.Event{Kind: agents.EventTurn, UserID: ann.user.ID, ExchangeID: anns.ID, Exchange: ex})
	first := annTab.read()
	if strings.Contains(first, "bob") || strings.Contains(first, "forged") || len(annTab.entries) != 0 {
		t.Fatalf("ann's tab got %q", first)
	}
	if len(annTab.history) != 1 || !strings.HasPrefix(annTab.history[0], "history-"+strconv.FormatInt(anns.ID, 10)+":") {
		t.Fatalf("ann's first message is not her sidebar item: %q", first)
	}
}

func TestLiveFollowsRealTurns(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	api := a.apiClient("ann")
	var first struct {
		ExchangeID int64 `json:"exchange_id"`
	}
	api.apiJSON(http.MethodPost, "/api/chat", map[string]any{"query": "hello"}, http.StatusOK, &first)

	tab := ann.openTab(t, addr)
	tab.watch(first.ExchangeID, 1) // the tab has the first turn
	tab.readUntil("the turn state", func() bool { return tab.turn == models.TurnIdle })

	// A turn started through the API shows in the tab: the message, the
	// reply, once each.
	api.apiJSON(http.MethodPost, "/api/chat", map[string]any{"query": "hi again", "exchange_id": first.ExchangeID}, http.StatusOK, nil)
	msgs := a.chatMessages(ann.user.ID, first.ExchangeID)
	if len(msgs) != 4 {
		t.Fatalf("%d messages stored, want 4", len(msgs))
	}
	tab.hasEntries(msgID(&msgs[2]), msgID(&msgs[3]))
	tab.readUntil("the turn's end", func() bool { return tab.turn == models.TurnIdle && tab.closed > 0 })
}

// A tab that cannot keep up loses events: it catches up from the database.
func TestLiveLaggingTabCatchesUpFromTheDatabase(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	ex, q1 := a.liveStart(ann.user.ID, 0, "first")
	r1 := a.liveFinish(ann.user.ID, ex.ID, "answer")
	tab := ann.openTab(t, addr)
	tab.watch(ex.ID, -1)
	tab.hasEntries(msgID(q1), msgID(r1))

	// An entry is committed; then, while the tab reads nothing, far more
	// than the socket buffers and the subscription's queue hold (96 MiB of
	// deltas): the server blocks writing and the hub drops the rest, the
	// entry's event with them.
	ex2, q2, err := a.store.StartTurn(context.Background(), models.TurnStart{
		UserID: ann.user.ID, ExchangeID: ex.ID, AgentType: "router", Query: "sent while the tab lagged", Owner: liveOwner,
	})
	if err != nil {
		t.Fatal(err)
	}
	piece := strings.Repeat("x", 64<<10)
	for range 1500 {
		a.liveDelta(ann.user.ID, ex.ID, piece)
	}
	a.hub.Publish(agents.Event{Kind: agents.EventEntry, UserID: ann.user.ID, ExchangeID: ex.ID, Exchange: ex2, Entry: q2})
	tab.hasEntries(msgID(q1), msgID(r1), msgID(q2))
}

func TestLiveRefusesOversizeAndGarbage(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	for name, msg := range map[string]string{
		"over 4 KiB": `{"type":"watch","pad":"` + strings.Repeat("x", 5000) + `"}`,
		"not JSON":   "watch 1",
	} {
		t.Run(name, func(t *testing.T) {
			tab := ann.openTab(t, addr)
			if err := tab.conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
				t.Fatal(err)
			}
			_, _, err := tab.conn.ReadMessage()
			if !websocket.IsCloseError(err, websocket.CloseMessageTooBig, websocket.CloseUnsupportedData) {
				t.Fatalf("read after %s: %v, want a close", name, err)
			}
		})
	}
	a.waitSubscribers(0)
}

// The chat page connects: it carries the live element, the pending cell's
// place and the seq of each message.
func TestChatScreenIsLive(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	ex, _ := a.liveStart(ann.user.ID, 0, "hello")
	a.liveFinish(ann.user.ID, ex.ID, "Hello!")
	doc := ann.chatScreen(t, "/chat/"+strconv.FormatInt(ex.ID, 10))
	live := htmltest.ByID(doc, "live")
	if live == nil {
		t.Fatal("no #live element")
	}
	if v, _ := htmltest.Attr(live, "ws-connect"); v != "/live" {
		t.Fatalf("ws-connect %q", v)
	}
	if htmltest.ByID(doc, "transcript-pending") == nil || htmltest.ByID(doc, "composer-turn") == nil {
		t.Fatal("no place for the pending reply or the turn state")
	}
	var seqs []string
	for _, m := range htmltest.ByTestID(doc, "message") {
		s, _ := htmltest.Attr(m, "data-seq")
		seqs = append(seqs, s)
	}
	if strings.Join(seqs, ",") != "0,1" {
		t.Fatalf("message seqs %v", seqs)
	}
}

// gatedProvider writes its reply a word at a time: the first words at once,
// the rest once the test opens the gate.
type gatedProvider struct {
	first, rest []string
	wrote       chan struct{} // closed once the first words are written
	gate        chan struct{}
}

func (gatedProvider) Name() string { return "gated" }

func (p gatedProvider) Execute(ctx context.Context, _ agents.Request, onDelta func(string)) (*models.AgentResponse, error) {
	for _, w := range p.first {
		onDelta(w)
	}
	close(p.wrote)
	select {
	case <-p.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for _, w := range p.rest {
		onDelta(w)
	}
	return &models.AgentResponse{Content: strings.Join(p.first, "") + strings.Join(p.rest, ""), AgentType: "router"}, nil
}

// TestLiveLateWatcherSeesEveryWord is the first reply of a new chat: the
// tab learns the new exchange from its send answer and only then watches it,
// after the reply's first words went out. The pending cell must still show
// the reply from its first word, and each word once.
func TestLiveLateWatcherSeesEveryWord(t *testing.T) {
	p := gatedProvider{
		first: []string{"I ", "am ", "the ", "offline "}, rest: []string{"assistant. ", "No ", "model."},
		wrote: make(chan struct{}), gate: make(chan struct{}),
	}
	a := newTestApp(t, withChatProvider(p))
	addr := a.listen()
	ann := a.register("ann")
	tab := ann.openTab(t, addr)
	tab.watch(0, -1) // a new chat: nothing to watch yet

	res := ann.htmx(http.MethodPost, "/chat/send", url.Values{"query": {"who are you?"}, "exchange_id": {"0"}})
	mustStatus(t, res, http.StatusOK)
	<-p.wrote // the first words went out to no one
	exs, err := a.store.ListExchanges(context.Background(), ann.user.ID, models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 2})
	if err != nil || len(exs) != 1 {
		t.Fatalf("the new exchange: %v (%d exchanges)", err, len(exs))
	}
	exID := exs[0].ID

	tab.watch(exID, 0) // the send answer brought the user message (seq 0)
	tab.readUntil("the reply so far", func() bool { return tab.deltas.String() == "I am the offline " })
	close(p.gate)
	want := "I am the offline assistant. No model."
	tab.readUntil("the whole reply", func() bool { return tab.deltas.String() == want || tab.closed > 0 })
	if got := tab.deltas.String(); got != want {
		t.Fatalf("the pending cell showed %q, want %q (frames %q)", got, want, tab.frames)
	}
	a.waitTurns()
}
