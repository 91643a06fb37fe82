package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"palaver/internal/htmltest"
	"palaver/models"
)

// unreadOf is whether the API's history says the exchange is unread.
func unreadOf(t *testing.T, c *client, exchangeID int64) bool {
	t.Helper()
	var items []struct {
		ID     int64 `json:"id"`
		Unread bool  `json:"unread"`
	}
	c.apiJSON(http.MethodGet, "/api/chat/history", nil, http.StatusOK, &items)
	for _, it := range items {
		if it.ID == exchangeID {
			return it.Unread
		}
	}
	t.Fatalf("exchange %d is not in the history", exchangeID)
	return false
}

// waitUnread waits until the history says want for the exchange (a turn's
// outcome is published after its answer is sent).
func waitUnread(t *testing.T, c *client, exchangeID int64, want bool) {
	t.Helper()
	for deadline := time.Now().Add(liveWait); unreadOf(t, c, exchangeID) != want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("exchange %d: unread is not %v", exchangeID, want)
		}
	}
}

// The marks across two tabs of one user: a reply that finishes while no tab
// shows its conversation makes it unread, and tab B's sidebar shows the dot
// and the count, live; opening it (tab A, or any device) takes both away in
// B, live; mark unread and mark all read do the same; a reply finishing in
// front of a tab stays read.
func TestUnreadAcrossTabs(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	alice := a.register("alice")
	ex1 := *alice.apiChat("hello", 0).ExchangeID
	waitUnread(t, alice, ex1, true)
	ex2 := *alice.apiChat("another chat", 0).ExchangeID
	alice.get(fmt.Sprintf("/chat/%d", ex2)) // read
	waitUnread(t, alice, ex2, false)
	if unreadOf(t, alice, ex1) != true {
		t.Fatal("opening one conversation marked another read")
	}

	// The sidebar: a dot on ex1's item, none on ex2's, the count 1.
	doc := htmltest.Parse(t, bodyOf(alice.get(fmt.Sprintf("/chat/%d", ex2))))
	for _, it := range htmltest.ByTestID(doc, "history-item") {
		id, _ := htmltest.Attr(it, "data-exchange-id")
		dots := len(htmltest.ByTestID(it, "unread"))
		if want := map[bool]int{true: 1, false: 0}[id == fmt.Sprint(ex1)]; dots != want {
			t.Errorf("item %s has %d unread dots, want %d", id, dots, want)
		}
	}
	if n := htmltest.ByTestID(doc, "unread-count"); len(n) != 1 || mustAttr(n[0], "data-count") != "1" {
		t.Fatal("the sidebar's unread count is not 1")
	}

	// Tab B shows ex2; opening ex1 elsewhere clears B's dot, live.
	b := alice.openTab(t, addr)
	b.watch(ex2, 1)
	a.waitSubscribers(1)
	b.read() // what the watch sends
	alice.get(fmt.Sprintf("/chat/%d", ex1))
	b.readUntil("ex1 read", func() bool { return strings.Contains(last(b.frames), `data-count="0"`) })
	if f := last(b.frames); strings.Contains(f, `data-testid="unread"`) || !strings.Contains(f, fmt.Sprintf(`data-exchange-id="%d"`, ex1)) {
		t.Fatalf("B's frame after ex1 was opened: %s", f)
	}

	// A reply in ex1 while B shows ex2 (and nothing shows ex1): B gets the dot.
	alice.apiChat("hello again", ex1)
	b.readUntil("ex1's dot", func() bool {
		f := last(b.frames)
		return strings.Contains(f, `data-testid="unread"`) && strings.Contains(f, `data-count="1"`)
	})

	// Mark all read (htmx: nothing in the answer, the sockets redraw).
	res := alice.htmx(http.MethodPost, "/chat/read-all", nil)
	mustStatus(t, res, http.StatusNoContent)
	b.readUntil("all read", func() bool { return strings.Contains(last(b.frames), `data-count="0"`) })
	waitUnread(t, alice, ex1, false)

	// Mark unread from the sidebar's menu; without JavaScript a 303.
	res = alice.postForm(fmt.Sprintf("/chat/%d/unread", ex2), nil)
	mustStatus(t, res, http.StatusSeeOther)
	b.readUntil("ex2 unread", func() bool { return strings.Contains(last(b.frames), `data-count="1"`) })
	if !unreadOf(t, alice, ex2) {
		t.Fatal("mark unread did not")
	}

	// A reply that finishes in front of tab B (it shows ex2) stays read.
	alice.get(fmt.Sprintf("/chat/%d", ex2))
	alice.apiChat("while you watch", ex2)
	time.Sleep(100 * time.Millisecond)
	waitUnread(t, alice, ex2, false)
}

func last(frames []string) string {
	if len(frames) == 0 {
		return ""
	}
	return frames[len(frames)-1]
}

func mustAttr(n *chatNode, key string) string { v, _ := htmltest.Attr(n, key); return v }

// The API: read up to a seq, read, unread; another user's exchange is a
// 404 and changes nothing; a conversation whose turn runs is not unread.
func TestUnreadAPI(t *testing.T) {
	a := newTestApp(t)
	alice := a.apiClient("alice")
	bob := a.apiClient("bob")
	ex := *alice.apiChat("hello", 0).ExchangeID
	waitUnread(t, alice, ex, true)
	alice.apiJSON(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/read", ex), nil, http.StatusOK, nil)
	if unreadOf(t, alice, ex) {
		t.Fatal("read did not")
	}
	alice.apiJSON(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/read", ex), `{"seq": 0}`, http.StatusOK, nil)
	if !unreadOf(t, alice, ex) {
		t.Fatal("read up to seq 0 left the reply read")
	}
	alice.apiJSON(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/read", ex), `{"seq": 1}`, http.StatusOK, nil)
	alice.apiJSON(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/unread", ex), nil, http.StatusOK, nil)
	if !unreadOf(t, alice, ex) {
		t.Fatal("unread did not")
	}
	for _, p := range []string{"read", "unread"} {
		res, _ := bob.api(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/%s", ex, p), nil)
		mustStatus(t, res, http.StatusNotFound)
	}
	res, _ := alice.api(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/read", ex), `{"seq": -2}`)
	mustStatus(t, res, http.StatusBadRequest)
	if !unreadOf(t, alice, ex) {
		t.Fatal("bob's requests changed alice's mark")
	}

	// While a turn runs, not unread; once it ends, unread again.
	_, _, err := a.store.StartTurn(context.Background(), models.TurnStart{UserID: alice.user.ID, ExchangeID: ex, Query: "more", AgentType: "router", Owner: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if unreadOf(t, alice, ex) {
		t.Fatal("a conversation being written counts as unread")
	}
	if err := a.store.FinishTurn(context.Background(), ex, "t", &models.Message{Role: models.RoleAssistant, Content: "done"}); err != nil {
		t.Fatal(err)
	}
	if !unreadOf(t, alice, ex) {
		t.Fatal("the finished turn's conversation is not unread")
	}
}
