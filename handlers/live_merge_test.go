package handlers_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"palaver/handlers"
	"palaver/internal/htmltest"
	"palaver/models"
	"palaver/views"
)

// A tab that hears a whole turn at once (it woke once for all of it) is sent
// the turn's net effect in one message: both entries, no pending cell, the
// composer idle, the sidebar item once, moved to the top in its final state.
func TestLiveMergeFoldsAWholeTurn(t *testing.T) {
	after := int64(7)
	running := views.HistoryItem{ID: 3, Title: "t", TurnStatus: views.TurnRunning, Turns: 1}
	idle := views.HistoryItem{ID: 3, Title: "t", TurnStatus: views.TurnIdle, Turns: 1, SwapOOB: true, Group: "Today"}
	text := "Once "
	turn := []views.LiveUpdate{
		{Entries: []views.ChatMessage{{ID: 7, Role: "user", Text: "hi"}}, OpenReply: &after, ReplyText: &text,
			Turn: &views.TurnControl{ExchangeID: 3, Status: views.TurnRunning}, History: &running, Moved: true},
		{Delta: "upon "},
		{Delta: "a time"},
		{Entries: []views.ChatMessage{{ID: 8, Role: "assistant", HTML: "<p>Once upon a time</p>"}}, CloseReply: true},
		{CloseReply: true, Turn: &views.TurnControl{ExchangeID: 3, Status: views.TurnIdle}, History: &idle},
	}
	m := turn[0]
	for _, u := range turn[1:] {
		var ok bool
		if m, ok = handlers.MergeLive(m, u); !ok {
			t.Fatalf("a turn's update %+v did not fold", u)
		}
	}
	got := liveRender(t, m)
	if strings.Join(got.entries, ",") != "msg-7,msg-8" {
		t.Errorf("entries %v, want msg-7,msg-8", got.entries)
	}
	if got.opened != 0 || got.closed != 1 || got.deltas != "" {
		t.Errorf("pending cell: %d opened, %d deleted, text %q; want none opened, one deletion, no text", got.opened, got.closed, got.deltas)
	}
	if strings.Join(got.turns, ",") != views.TurnIdle {
		t.Errorf("composer states %v, want idle only", got.turns)
	}
	if strings.Join(got.history, ",") != "history-3:idle" || !got.moved || got.inPlace {
		t.Errorf("sidebar %v (moved %v, in place %v), want history-3:idle once, moved to the top", got.history, got.moved, got.inPlace)
	}
}

// What cannot be told as one goes as two, in order.
func TestLiveMergeKeepsOrderWhereItMatters(t *testing.T) {
	item := views.HistoryItem{ID: 3, Title: "t"}
	other := views.HistoryItem{ID: 4, Title: "u"}
	after := int64(1)
	tests := []struct {
		name string
		a, b views.LiveUpdate
	}{
		{"removed after shown", views.LiveUpdate{History: &item}, views.LiveUpdate{Removed: 3}},
		{"two removals", views.LiveUpdate{Removed: 4}, views.LiveUpdate{Removed: 3}},
		{"two items", views.LiveUpdate{History: &item}, views.LiveUpdate{History: &other}},
		{"a page's parts", views.LiveUpdate{Entries: []views.ChatMessage{{ID: 1}}}, views.LiveUpdate{Page: &views.PageSaved{}}},
		{"an adopted chat", views.LiveUpdate{Adopted: 5}, views.LiveUpdate{Delta: "x"}},
		{"a cell opened over an open one", views.LiveUpdate{OpenReply: &after}, views.LiveUpdate{OpenReply: &after}},
	}
	for _, tt := range tests {
		if _, ok := handlers.MergeLive(tt.a, tt.b); ok {
			t.Errorf("%s: folded", tt.name)
		}
	}
	// A removal before another item's update folds: it renders first.
	if m, ok := handlers.MergeLive(views.LiveUpdate{Removed: 4}, views.LiveUpdate{History: &item}); !ok || m.Removed != 4 || m.History == nil {
		t.Errorf("removal then item: %+v, %v", m, ok)
	}
	// Text that replaces the cell's undoes the pieces before it.
	whole := "all of it"
	m, ok := handlers.MergeLive(views.LiveUpdate{Delta: "al"}, views.LiveUpdate{ReplyText: &whole, Delta: "!"})
	if !ok || m.ReplyText == nil || *m.ReplyText != whole || m.Delta != "!" {
		t.Errorf("pieces then the whole text: %+v, %v", m, ok)
	}
}

// rendered is what one live message does to a tab, in document order.
type rendered struct {
	entries, turns, history []string
	opened, closed          int
	deltas                  string
	moved, inPlace          bool
}

func liveRender(t *testing.T, u views.LiveUpdate) rendered {
	t.Helper()
	var b bytes.Buffer
	if err := views.LiveMessage(u, nil).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var r rendered
	for _, n := range htmltest.FindAll(doc, func(*html.Node) bool { return true }) {
		id, _ := htmltest.Attr(n, "id")
		oob, _ := htmltest.Attr(n, "hx-swap-oob")
		testid, _ := htmltest.Attr(n, "data-testid")
		switch {
		case testid == "message":
			r.entries = append(r.entries, id)
		case oob == "beforeend:#pending-reply-text", id == "pending-reply-text" && oob == "innerHTML":
			if n.FirstChild != nil {
				r.deltas += n.FirstChild.Data
			}
		case testid == "pending-reply":
			r.opened++
		case id == "pending-reply" && oob == "delete":
			r.closed++
		case testid == "composer-turn":
			s, _ := htmltest.Attr(n, "data-turn-status")
			r.turns = append(r.turns, s)
		case testid == "history-item":
			s, _ := htmltest.Attr(n, "data-turn-status")
			r.history = append(r.history, id+":"+s)
			r.inPlace = r.inPlace || oob == "true"
		case strings.HasPrefix(oob, "afterend:#history-group-today"):
			r.moved = true
		}
	}
	return r
}

// Turns published faster than a tab is written to (a reply's pieces come
// as fast as the agent writes them) reach it as a few messages of their net
// effect: every entry once and in order, no pending cell left open, the
// composer and the sidebar item in the last turn's state.
func TestLiveTurnsHeardAtOnceEndAsTheyShould(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	ex, q := a.liveStart(ann.user.ID, 0, "first")
	r := a.liveFinish(ann.user.ID, ex.ID, "answer")
	tab := ann.openTab(t, addr)
	tab.watch(ex.ID, -1)
	tab.hasEntries(msgID(q), msgID(r))
	tab.readUntil("the catch-up's turn state", func() bool { return tab.turn == models.TurnIdle })

	want := []string{msgID(q), msgID(r)}
	const turns = 10
	for i := range turns {
		_, q := a.liveStart(ann.user.ID, ex.ID, "question "+strconv.Itoa(i))
		for w := range 20 {
			a.liveDelta(ann.user.ID, ex.ID, "w"+strconv.Itoa(w)+" ")
		}
		r := a.liveFinish(ann.user.ID, ex.ID, "answer "+strconv.Itoa(i))
		want = append(want, msgID(q), msgID(r))
	}
	frames := len(tab.frames)
	tab.hasEntries(want...)
	item := "history-" + strconv.FormatInt(ex.ID, 10)
	tab.readUntil("the last turn's end", func() bool {
		return tab.turn == models.TurnIdle && !tab.pending && len(tab.history) > 0 && tab.history[len(tab.history)-1] == item+":idle"
	})
	// Nothing more comes: a late message would undo the end state.
	_ = tab.conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, data, err := tab.conn.ReadMessage(); err == nil {
		t.Fatalf("a message after the last turn's end: %q", data)
	}
	t.Logf("%d turns (%d events) in %d messages", turns, turns*24, len(tab.frames)-frames)
}

// A tab that stops reading (a frozen page, a dead link) holds up no other:
// its writes block and its events queue, and another tab of the same user
// gets every piece meanwhile. Read again, it ends where the other does,
// each entry once.
func TestLiveStalledTabHoldsUpNoOther(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	ex, q := a.liveStart(ann.user.ID, 0, "first")
	stalled, live := ann.openTab(t, addr), ann.openTab(t, addr)
	stalled.watch(ex.ID, -1)
	stalled.readUntil("the pending cell", func() bool { return stalled.pending })
	live.watch(ex.ID, -1)
	live.readUntil("the pending cell", func() bool { return live.pending })

	// 10 MB of reply in 400 pieces: more than twice what the stalled
	// socket's kernel buffers hold on loopback (a 4 MB send buffer, and the
	// receive window of a socket nobody reads).
	piece := strings.Repeat("x", 24<<10) + " "
	var want strings.Builder
	for i := range 400 {
		p := strconv.Itoa(i) + piece
		want.WriteString(p)
		a.liveDelta(ann.user.ID, ex.ID, p)
	}
	live.readUntil("every piece", func() bool { return live.deltas.Len() >= want.Len() })
	if live.deltas.String() != want.String() {
		t.Fatalf("the reading tab got %d bytes of the reply, not the %d published", live.deltas.Len(), want.Len())
	}
	// What queued up goes out in messages of about 64 KB (a piece past
	// it), so that what comes next is not held up behind a huge one.
	for _, f := range live.frames {
		if len(f) > 128<<10 {
			t.Fatalf("a message of %d KB", len(f)>>10)
		}
	}
	r := a.liveFinish(ann.user.ID, ex.ID, "done")
	live.hasEntries(msgID(q), msgID(r))
	live.readUntil("the turn's end", func() bool { return live.turn == models.TurnIdle && !live.pending })

	stalled.hasEntries(msgID(q), msgID(r))
	stalled.readUntil("the turn's end", func() bool { return stalled.turn == models.TurnIdle && !stalled.pending })
}

// The budget warning a turn's end draws again survives the folding of the
// turn's updates, and the later state stands.
func TestLiveMergeKeepsTheBudgetWarning(t *testing.T) {
	near := views.BudgetWarning{Message: "nearly spent"}
	spent := views.BudgetWarning{Message: "spent", Spent: true}
	m, ok := handlers.MergeLive(views.LiveUpdate{Budget: &near}, views.LiveUpdate{Delta: "x"})
	if !ok || m.Budget == nil || *m.Budget != near {
		t.Fatalf("folded %+v (%v): the warning is lost", m, ok)
	}
	if m, ok = handlers.MergeLive(m, views.LiveUpdate{CloseReply: true, Budget: &spent}); !ok || m.Budget == nil || *m.Budget != spent {
		t.Fatalf("folded %+v (%v): the later warning does not stand", m, ok)
	}
}

// The sidebar's projects drawn again (their unread counts) survive a fold,
// the later drawing standing; answered calls are not folded at all (their
// cards are replaced where they are, which the updates before may add).
func TestLiveMergeKeepsTheProjectsAndAnsweredCalls(t *testing.T) {
	one := []views.ProjectLink{{ID: 1, Name: "Work", Unread: 1}}
	two := []views.ProjectLink{{ID: 1, Name: "Work", Unread: 2}}
	m, ok := handlers.MergeLive(views.LiveUpdate{Delta: "x"}, views.LiveUpdate{CloseReply: true, Projects: &one})
	if !ok || m.Projects == nil || (*m.Projects)[0].Unread != 1 {
		t.Fatalf("folded %+v (%v): the projects are lost", m, ok)
	}
	if m, ok = handlers.MergeLive(m, views.LiveUpdate{Projects: &two}); !ok || m.Projects == nil || (*m.Projects)[0].Unread != 2 {
		t.Fatalf("folded %+v (%v): the later projects do not stand", m, ok)
	}
	answered := views.LiveUpdate{Answered: []views.ChatMessage{{}}}
	if _, ok := handlers.MergeLive(views.LiveUpdate{Delta: "x"}, answered); ok {
		t.Fatal("answered calls were folded into the update before them")
	}
	if _, ok := handlers.MergeLive(answered, views.LiveUpdate{Delta: "x"}); ok {
		t.Fatal("an update was folded into answered calls")
	}
}
