package handlers_test

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// sessionRow is the stored session of a browser: its data and expiry as
// written, "" when there is none.
func (c *client) sessionRow() string {
	c.a.t.Helper()
	db, err := c.a.store.SQL()
	if err != nil {
		c.a.t.Fatal(err)
	}
	var data []byte
	var expiry string
	if err := db.QueryRow("SELECT data, expiry FROM sessions WHERE token = ?", c.cookies["palaver_session"]).Scan(&data, &expiry); err != nil {
		return ""
	}
	return string(data) + "|" + expiry
}

// setSeen rewrites when the browser's session was last used, through the
// app's own session manager.
func (c *client) setSeen(at time.Time) {
	c.a.t.Helper()
	sm := c.a.sessions
	ctx, err := sm.Load(context.Background(), c.cookies["palaver_session"])
	if err != nil {
		c.a.t.Fatal(err)
	}
	sm.Put(ctx, "seen", at.Unix())
	if _, _, err := sm.Commit(ctx); err != nil {
		c.a.t.Fatal(err)
	}
}

func (c *client) seen() time.Time {
	c.a.t.Helper()
	ctx, err := c.a.sessions.Load(context.Background(), c.cookies["palaver_session"])
	if err != nil {
		c.a.t.Fatal(err)
	}
	return time.Unix(c.a.sessions.GetInt64(ctx, "seen"), 0)
}

// TestSessionUseIsWrittenSparingly: reading pages does not rewrite the
// session on every request; its last use is written again once it is an
// hour old; a session unused for 14 days ends.
func TestSessionUseIsWrittenSparingly(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	if age := time.Since(ann.seen()); age < 0 || age > time.Minute {
		t.Fatalf("a new session was last used %v ago", age)
	}
	before := ann.sessionRow()
	if before == "" {
		t.Fatal("no stored session after signing in")
	}
	for _, path := range []string{"/chat", "/chat/history", "/pages"} {
		mustStatus(t, ann.get(path), http.StatusOK)
	}
	if after := ann.sessionRow(); after != before {
		t.Fatal("reading pages rewrote the session")
	}

	ann.setSeen(time.Now().Add(-2 * time.Hour))
	mustStatus(t, ann.get("/chat"), http.StatusOK)
	if age := time.Since(ann.seen()); age > time.Minute {
		t.Fatalf("a session last used 2 hours ago was not marked used: %v ago", age)
	}

	ann.setSeen(time.Now().Add(-15 * 24 * time.Hour))
	old := ann.cookies["palaver_session"]
	res := ann.get("/chat")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
		t.Fatalf("a session idle for 15 days: status %d, location %q", res.StatusCode, res.Header.Get("Location"))
	}
	db, _ := a.store.SQL()
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM sessions WHERE token = ?", old).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the idle session is still stored (%d, %v)", n, err)
	}
}
