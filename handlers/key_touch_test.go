package handlers_test

import (
	"net/http"
	"testing"
	"time"

	"palaver/handlers"
	"palaver/internal/dbtest"
)

// An API key not used for a while is let in while another connection
// holds SQLite's writer past the busy timeout: noting its use
// (last_used_at) is bookkeeping, and waits for another request. The
// request failed 500 "user by api key: touch: database is locked", so an
// import's batch or a long delete by one user failed other users' calls.
func TestKeyLetInWhileWriterHeld(t *testing.T) {
	const busy = 200 * time.Millisecond
	a := newBusyApp(t, busy)
	bob := a.apiClient("bob") // never used: its first request notes its use
	released := dbtest.HoldWriter(t, a.store, 4*busy)
	res, body := bob.api(http.MethodGet, "/api/chat/history", nil)
	<-released
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	var keys []apiKeyOut // the writer is free again: this request notes the use
	bob.apiJSON(http.MethodGet, "/api/keys", nil, http.StatusOK, &keys)
	if len(keys) != 1 || keys[0].LastUsedAt == nil {
		t.Fatalf("keys %+v: the use was not noted once the writer was free", keys)
	}
}

// A send that finds SQLite's writer held elsewhere for longer than the
// request's deadline answers 503, to be tried again in a moment, and
// stores nothing: it answered 500 "start turn: database is locked", a
// fault of the server's own.
func TestChatWhileWriterHeldPastTheDeadlineAnswers503(t *testing.T) {
	const busy = 200 * time.Millisecond
	a := newBusyApp(t, busy, func(d *handlers.Deps) { d.Config.DBDeadline = 300 * time.Millisecond })
	bob := a.apiClient("bob")
	bob.apiHistory("") // the key's use is noted
	before := a.chatSnapshot()
	released := dbtest.HoldWriter(t, a.store, 8*busy)
	res, body := bob.api(http.MethodPost, "/api/chat", map[string]string{"query": "hello"})
	<-released
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q: %s", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	if after := a.chatSnapshot(); after != before {
		t.Fatalf("a refused send changed the database:\n%s\n---\n%s", before, after)
	}
}
