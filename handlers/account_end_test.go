package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"palaver/handlers"
	"palaver/paths"
)

// The end of an account reaches everything that speaks as it (issue 22):
// deleting or disabling it, changing its password (its other sessions) and
// revoking a key close the sockets and end the streams opened under them,
// at once, not at their next ping; and no stale cookie or socket of a
// deleted account ever speaks as the next account to register.

// endWait bounds how long an ending may take: far below the sockets' 25 s
// ping and, with withStreamKeepAlive(time.Minute), the streams'
// keep-alives, so that only being told can pass.
const endWait = 3 * time.Second

// closedWithin reads the tab until the server closes it, and fails unless
// it does so within endWait with a policy-violation close ("Signed out").
// It returns what the tab was sent meanwhile.
func (l *liveTab) closedWithin(t *testing.T) string {
	t.Helper()
	var got strings.Builder
	_ = l.conn.SetReadDeadline(time.Now().Add(endWait))
	for {
		_, data, err := l.conn.ReadMessage()
		if err == nil {
			got.Write(data)
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation {
			t.Fatalf("the socket was not closed as signed out within %s: %v", endWait, err)
		}
		return got.String()
	}
}

// staysOpen checks that the server does not close the tab for a moment.
func (l *liveTab) staysOpen(t *testing.T) {
	t.Helper()
	_ = l.conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	for {
		_, _, err := l.conn.ReadMessage()
		if err == nil {
			continue
		}
		var ne interface{ Timeout() bool }
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("the socket ended: %v", err)
		}
		return
	}
}

// endsWithin reads the stream until the server ends it, and fails unless
// it does so within endWait. It returns the events read meanwhile.
func (s *sseStream) endsWithin(t *testing.T) []sseEvent {
	t.Helper()
	var got []sseEvent
	timeout := time.After(endWait)
	for {
		select {
		case e, ok := <-s.events:
			if !ok {
				return got
			}
			got = append(got, e)
		case <-timeout:
			t.Fatalf("the stream did not end within %s (events: %v)", endWait, got)
		}
	}
}

// endFixture is bob, signed in twice in browsers, with a chat, a tab and
// streams open on it; root is the administrator.
type endFixture struct {
	a          *testApp
	addr       string
	root       *client
	bob, other *client // two browser sessions of bob's
	key        *client // bob's API key
	exchange   int64
}

func newEndFixture(t *testing.T, opts ...appOption) *endFixture {
	a := newTestApp(t, append([]appOption{withStreamKeepAlive(time.Minute)}, opts...)...)
	f := &endFixture{a: a, addr: a.listen(), root: a.register("root")}
	f.bob = a.register("bob")
	f.other = accountLogin(t, a, "bob", "correct horse")
	f.key = a.apiClient("bob")
	f.exchange = *f.key.apiChat("pelicans?", 0).ExchangeID
	return f
}

// stream opens c's event stream of bob's chat and reads its catch-up.
func (f *endFixture) stream(t *testing.T, c *client) *sseStream {
	t.Helper()
	s := c.openStream(t, f.addr, fmt.Sprintf("/api/chat/exchange/%d/stream", f.exchange))
	s.entry()
	s.entry()
	s.expect("turn", `{"status":"idle"}`)
	return s
}

// tab opens c's live tab on bob's chat and reads its catch-up.
func (f *endFixture) tab(t *testing.T, c *client) *liveTab {
	t.Helper()
	tab := c.openTab(t, f.addr)
	tab.watch(f.exchange, -1)
	tab.read()
	return tab
}

// TestDeletedAccountInheritsNothing: bob's other session's cookie, after
// bob deletes the account, does not see the next account to register
// (its /account, history, API), and bob's open socket is closed at once,
// having been sent nothing of the new account's.
func TestDeletedAccountInheritsNothing(t *testing.T) {
	f := newEndFixture(t)
	a := f.a
	tab := f.tab(t, f.other)
	stream := f.stream(t, f.other)
	keyStream := f.stream(t, f.key)

	mustStatus(t, f.bob.postForm(paths.AccountDelete, url.Values{"password": {"correct horse"}}), http.StatusOK)
	mustStatus(t, f.bob.postForm(paths.AccountDelete, url.Values{"confirmed": {"1"}}), http.StatusOK)
	cy := a.register("cyd")
	cyKey := a.apiClient("cyd")
	cyEx := *cyKey.apiChat("cy's secret plans", 0).ExchangeID
	a.waitTurns()

	if sent := tab.closedWithin(t); strings.Contains(sent, "secret") || strings.Contains(sent, "cyd") {
		t.Errorf("the deleted account's socket was sent the new account's: %s", sent)
	}
	for _, s := range []*sseStream{stream, keyStream} {
		for _, e := range s.endsWithin(t) {
			if strings.Contains(e.Data, "secret") {
				t.Errorf("the deleted account's stream carried the new account's: %+v", e)
			}
		}
	}
	if cy.user.ID == f.bob.user.ID {
		t.Errorf("the next account got the deleted one's id %d", cy.user.ID)
	}
	// The stale cookie: signed out everywhere, the new account unseen.
	res := f.other.get(paths.Account)
	if res.StatusCode != http.StatusSeeOther || strings.Contains(bodyOf(res), "cyd") {
		t.Fatalf("GET /account with the deleted account's cookie: %d %s", res.StatusCode, bodyOf(res))
	}
	for _, path := range []string{"/api/chat/history", fmt.Sprintf("/api/chat/exchange/%d/messages", cyEx)} {
		if res, b := f.other.api(http.MethodGet, path, nil); res.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), "secret") {
			t.Errorf("GET %s with the deleted account's cookie: %d %s", path, res.StatusCode, b)
		}
	}
	if res := f.other.get(paths.Chat(cyEx)); res.StatusCode != http.StatusSeeOther || strings.Contains(bodyOf(res), "secret") {
		t.Errorf("GET /chat/%d with the deleted account's cookie: %d", cyEx, res.StatusCode)
	}
	if _, _, err := f.other.dialLive(f.addr, "http://"+f.addr); err == nil {
		t.Error("the deleted account's cookie opened a socket")
	}
	if res, _ := f.key.api(http.MethodGet, "/api/chat/history", nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the deleted account's key: %d", res.StatusCode)
	}
}

// TestDisabledAccountsSocketsAndStreamsEnd: an administrator disables bob;
// bob's tabs and streams, by cookie or key, end at once.
func TestDisabledAccountsSocketsAndStreamsEnd(t *testing.T) {
	f := newEndFixture(t)
	tabs := []*liveTab{f.tab(t, f.bob), f.tab(t, f.other)}
	streams := []*sseStream{f.stream(t, f.bob), f.stream(t, f.key)}
	f.root.get(paths.AdminUsers)
	res := f.root.postForm(paths.AdminUserDisable(f.bob.user.ID), url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	for _, tab := range tabs {
		tab.closedWithin(t)
	}
	for _, s := range streams {
		s.endsWithin(t)
	}
}

// TestPasswordChangeEndsTheOtherSessionsSocketsAndStreams: bob changes the
// password in one session; the other session's tab and stream end at once,
// the changing session stays signed in (and opens a socket again), and the
// stream opened with bob's key goes on: a password change keeps keys.
func TestPasswordChangeEndsTheOtherSessionsSocketsAndStreams(t *testing.T) {
	f := newEndFixture(t)
	otherTab := f.tab(t, f.other)
	otherStream := f.stream(t, f.other)
	keyStream := f.stream(t, f.key)
	f.bob.get(paths.Account)
	res := f.bob.postForm(paths.AccountPassword, url.Values{"current": {"correct horse"}, "password": {"a brand new one"}})
	mustStatus(t, res, http.StatusSeeOther)

	otherTab.closedWithin(t)
	otherStream.endsWithin(t)
	if !accountSignedIn(t, f.bob) {
		t.Fatal("the changing session was signed out")
	}
	tab := f.tab(t, f.bob)
	f.key.apiChat("still there?", f.exchange)
	if _, m := keyStream.entry(); m.Content != "still there?" {
		t.Fatalf("the key's stream: %+v", m)
	}
	tab.staysOpen(t)
}

// TestRevokedKeysStreamEnds: bob revokes one key; the stream opened with it
// ends at once; one opened with another key, and bob's tab, go on.
func TestRevokedKeysStreamEnds(t *testing.T) {
	f := newEndFixture(t)
	second := &client{a: f.a, cookies: map[string]string{}, apiKey: "pal_test_bob_2", user: f.key.user}
	if _, err := f.a.store.CreateAPIKey(context.Background(), f.key.user.ID, "second", handlers.HashAPIKey(second.apiKey)); err != nil {
		t.Fatal(err)
	}
	tab := f.tab(t, f.bob)
	revoked := f.stream(t, f.key)
	kept := f.stream(t, second)
	keys, err := f.a.store.APIKeys(context.Background(), f.key.user.ID)
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %v (%v)", keys, err)
	}
	f.bob.get(paths.Account)
	mustStatus(t, f.bob.postForm(paths.AccountKeyRevoke(keys[0].ID), nil), http.StatusSeeOther)

	revoked.endsWithin(t)
	second.apiChat("and now?", f.exchange)
	if _, m := kept.entry(); m.Content != "and now?" {
		t.Fatalf("the other key's stream: %+v", m)
	}
	tab.staysOpen(t)
}

// TestSignOutClosesTheSessionsSocket: a session that signs out takes its
// tab with it; the account's other session keeps its own.
func TestSignOutClosesTheSessionsSocket(t *testing.T) {
	f := newEndFixture(t)
	tab, otherTab := f.tab(t, f.bob), f.tab(t, f.other)
	f.bob.get(paths.Account)
	mustStatus(t, f.bob.postForm(paths.Logout, nil), http.StatusSeeOther)
	tab.closedWithin(t)
	otherTab.staysOpen(t)
}

// TestAdminPasswordResetEndsEverything: an administrator's reset of bob's
// password, revoking the keys, ends bob's tabs and the key's stream.
func TestAdminPasswordResetEndsEverything(t *testing.T) {
	f := newEndFixture(t)
	tab := f.tab(t, f.bob)
	stream := f.stream(t, f.key)
	f.root.get(paths.AdminUsers)
	res := f.root.postForm(paths.AdminUserPassword(f.bob.user.ID), url.Values{"password": {"a brand new one"}, "revoke_keys": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	tab.closedWithin(t)
	stream.endsWithin(t)
}

// TestStreamRechecksAtKeepAlive: what no one announces here (a sign-out
// served by another process deletes the session's row; so does its
// expiry) ends a stream opened with that session at its next keep-alive.
func TestStreamRechecksAtKeepAlive(t *testing.T) {
	f := newEndFixture(t, withStreamKeepAlive(200*time.Millisecond))
	stream := f.stream(t, f.other)
	kept := f.stream(t, f.bob)
	db, err := f.a.store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	token := f.other.cookies[f.a.sessions.Cookie.Name]
	if res, err := db.Exec("DELETE FROM sessions WHERE token = ?", token); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("deleted %d session rows", n)
	}
	stream.endsWithin(t)
	f.key.apiChat("anyone?", f.exchange)
	if _, m := kept.entry(); m.Content != "anyone?" {
		t.Fatalf("the other session's stream: %+v", m)
	}
}
