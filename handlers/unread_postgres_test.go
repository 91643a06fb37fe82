package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"palaver/agents"
	"palaver/internal/pgtest"
	"palaver/models"
)

// Read marks cross processes (PostgreSQL): a conversation opened through
// one process loses its dot, live, in a tab held by another; marking it
// unread and marking all read there reach that tab too.
func TestUnreadMarksAcrossProcessesPostgres(t *testing.T) {
	pgtest.Fresh(t)
	one := newProcess(t, pgtest.DSN(t), &agents.Builtin{})
	two := newProcess(t, pgtest.DSN(t), &agents.Builtin{})
	one.t, two.t = t, t
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	agents.StartWaker(ctx, two.agents, two.store, pgtest.DSN(t)) // as palaver serve does
	addr := two.listen()

	alice := one.register("alice")
	ex := one.adminExchangeMore(alice.user.ID, 0, "while away")
	other := one.adminExchangeMore(alice.user.ID, 0, "on screen")
	if err := one.store.ReplyFinished(ctx, alice.user.ID, ex, false, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	if !unreadOf(t, alice, ex) {
		t.Fatal("the conversation is not unread to begin with")
	}

	// Process two listens once it hears a marker sent through process one.
	sub := two.hub.Subscribe(alice.user.ID)
	defer sub.Close()
	const marker = 876_543
	payload, _ := json.Marshal(models.Notice{Kind: models.NotifyPage, User: alice.user.ID, Page: marker, Origin: "the test"})
	for heard, deadline := false, time.Now().Add(10*time.Second); !heard; {
		if time.Now().After(deadline) {
			t.Fatal("process two never listened")
		}
		if err := one.store.Notify(ctx, string(payload)); err != nil {
			t.Fatal(err)
		}
		for wait := time.After(200 * time.Millisecond); !heard; {
			select {
			case e := <-sub.C:
				heard = e.Kind == agents.EventPage && e.PageID == marker
				continue
			case <-wait:
			}
			break
		}
	}

	// Device B: a tab on process two, showing the other conversation.
	b := alice.at(two).openTab(t, addr)
	b.watch(other, 1)
	two.waitSubscribers(2)
	b.read() // what the watch sends

	// Opened through process one: B's dot goes, and its count.
	mustStatus(t, alice.get(fmt.Sprintf("/chat/%d", ex)), http.StatusOK)
	b.readUntil("the read mark from process one", func() bool { return strings.Contains(last(b.frames), `data-count="0"`) })
	if f := last(b.frames); strings.Contains(f, `data-testid="unread"`) || !strings.Contains(f, fmt.Sprintf(`data-exchange-id="%d"`, ex)) {
		t.Fatalf("B's frame after the conversation was opened on process one: %s", f)
	}

	// Marked unread through process one: the dot comes back in B.
	alice.apiJSON(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/unread", ex), nil, http.StatusOK, nil)
	b.readUntil("the unread mark from process one", func() bool {
		f := last(b.frames)
		return strings.Contains(f, `data-count="1"`) && strings.Contains(f, `data-testid="unread"`)
	})

	// Mark all read through process one: B's sidebar is drawn again, clear.
	mustStatus(t, alice.htmx(http.MethodPost, "/chat/read-all", nil), http.StatusNoContent)
	b.readUntil("mark all read from process one", func() bool { return strings.Contains(last(b.frames), `data-count="0"`) })
	if f := last(b.frames); strings.Contains(f, `data-testid="unread"`) {
		t.Fatalf("B's sidebar after mark all read: %s", f)
	}
}
