package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"golang.org/x/net/html"
)

// The end of an account reaches the sockets and streams another process
// holds for it (issue 22): deleting or disabling an account, changing its
// password and revoking a key through A close the tabs and end the
// streams B serves under them, through the database's notification, well
// before B's own pings (25 s) or keep-alives would look again.

// endWithin bounds how long B may take.
const endWithin = 8 * time.Second

// signedBrowser is a signed-in browser on one server: its cookies, and the CSRF
// token of the last page it read.
type signedBrowser struct {
	t    *testing.T
	s    *server
	c    *http.Client
	csrf string
}

var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// signInAs signs name in on s through the login form.
func signInAs(t *testing.T, s *server, name string) *signedBrowser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &signedBrowser{t: t, s: s, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
	b.get("/login")
	if code := b.post("/login", url.Values{"username": {name}, "password": {"correct horse"}}); code != http.StatusSeeOther {
		t.Fatalf("sign %s in on %s: %d", name, s.base, code)
	}
	b.get("/account")
	return b
}

// get reads a page and keeps its CSRF token.
func (b *signedBrowser) get(path string) string {
	b.t.Helper()
	res, err := b.c.Get(b.s.base + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if m := csrfInput.FindSubmatch(body); m != nil {
		b.csrf = html.UnescapeString(string(m[1]))
	}
	return string(body)
}

// post sends a form with the CSRF token and returns the status.
func (b *signedBrowser) post(path string, form url.Values) int {
	b.t.Helper()
	form.Set("csrf_token", b.csrf)
	res, err := b.c.PostForm(b.s.base+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if m := csrfInput.FindSubmatch(body); m != nil {
		b.csrf = html.UnescapeString(string(m[1]))
	}
	return res.StatusCode
}

// cookie is the browser's Cookie header for its server.
func (b *signedBrowser) cookie() string {
	u, _ := url.Parse(b.s.base)
	var parts []string
	for _, ck := range b.c.Jar.Cookies(u) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	return strings.Join(parts, "; ")
}

// closedAsSignedOut waits for the server to close the tab with 1008.
func (tb *tab) closedAsSignedOut() {
	tb.t.Helper()
	_ = tb.conn.SetReadDeadline(time.Now().Add(endWithin))
	for {
		_, _, err := tb.conn.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation {
			tb.t.Fatalf("the tab on B was not closed as signed out within %s: %v", endWithin, err)
		}
		return
	}
}

// endsSoon waits for the server to end the stream within endWithin.
func (st *stream) endsSoon() {
	st.t.Helper()
	timeout := time.After(endWithin)
	for {
		select {
		case _, ok := <-st.events:
			if !ok {
				return
			}
		case <-timeout:
			st.t.Fatalf("the stream on B did not end within %s", endWithin)
		}
	}
}

func TestAccountEndsReachOtherProcesses(t *testing.T) {
	ts := startTwo(t)
	keys := map[string]string{}
	chats := map[string]int64{}
	for _, name := range []string{"bob", "cyd", "dan"} {
		cli(t, ts.bin, "user", "add", name, "--password", "correct horse", "--db", ts.dsn)
		keys[name] = cli(t, ts.bin, "user", "key", name, "--db", ts.dsn)
		var out apiAnswer
		if code := ts.a.api(http.MethodPost, "/api/chat", keys[name], map[string]any{"query": "hello"}, &out); code != http.StatusOK {
			t.Fatalf("%s's chat on A: %d", name, code)
		}
		chats[name] = out.ExchangeID
	}
	// on opens name's tab and key stream on B, each past its catch-up.
	on := func(name string, b *signedBrowser) (*tab, *stream) {
		tb := ts.openTab(ts.b, b.cookie())
		tb.watch(chats[name], -1)
		tb.until("the turn state", func() bool { return tb.turn == "idle" })
		ts.key = keys[name]
		st := ts.openStream(ts.b, chats[name], -1)
		st.until("the turn state", func(e sseEvent) bool { return e.kind == "turn" })
		return tb, st
	}

	// Deleted: bob deletes the account in a browser on A.
	{
		tb, st := on("bob", signInAs(t, ts.b, "bob"))
		bob := signInAs(t, ts.a, "bob")
		if code := bob.post("/account/delete", url.Values{"password": {"correct horse"}}); code != http.StatusOK {
			t.Fatalf("delete through A: %d", code)
		}
		if code := bob.post("/account/delete", url.Values{"confirmed": {"1"}}); code != http.StatusOK {
			t.Fatalf("confirm the deletion through A: %d", code)
		}
		tb.closedAsSignedOut()
		st.endsSoon()
	}

	// Disabled: ann, the administrator, disables cyd on A.
	{
		tb, st := on("cyd", signInAs(t, ts.b, "cyd"))
		var id int64
		if err := ts.shared.QueryRow(t.Context(), "SELECT id FROM users WHERE username = 'cyd'").Scan(&id); err != nil {
			t.Fatal(err)
		}
		ann := signInAs(t, ts.a, "ann")
		if code := ann.post(fmt.Sprintf("/admin/users/%d/disable", id), url.Values{"confirmed": {"1"}}); code != http.StatusSeeOther {
			t.Fatalf("disable through A: %d", code)
		}
		tb.closedAsSignedOut()
		st.endsSoon()
	}

	// Password and key: dan changes the password on A (his session on B
	// ends, his streams opened with keys go on), then revokes a key.
	{
		other := signInAs(t, ts.b, "dan")
		tb, st := on("dan", other)
		second := cli(t, ts.bin, "user", "key", "dan", "--db", ts.dsn)
		ts.key = second
		revoked := ts.openStream(ts.b, chats["dan"], -1)
		revoked.until("the turn state", func(e sseEvent) bool { return e.kind == "turn" })

		dan := signInAs(t, ts.a, "dan")
		if code := dan.post("/account/password", url.Values{"current": {"correct horse"}, "password": {"a brand new one"}}); code != http.StatusSeeOther {
			t.Fatalf("change the password through A: %d", code)
		}
		tb.closedAsSignedOut()
		if !strings.Contains(dan.get("/account"), `data-testid="api-keys"`) {
			t.Fatal("the changing session on A was signed out")
		}

		var list []struct {
			ID int64 `json:"id"`
		}
		if code := ts.a.api(http.MethodGet, "/api/keys", keys["dan"], nil, &list); code != http.StatusOK || len(list) != 2 {
			t.Fatalf("dan's keys on A: %d %v", code, list)
		}
		if code := ts.a.api(http.MethodDelete, fmt.Sprintf("/api/keys/%d", list[1].ID), keys["dan"], nil, nil); code != http.StatusOK {
			t.Fatalf("revoke through A: %d", code)
		}
		revoked.endsSoon()
		// The first key's stream outlived both: a password change keeps keys.
		ts.key = keys["dan"]
		ts.chat(ts.a, chats["dan"], "still here?")
		st.until("the new entry", func(e sseEvent) bool { return e.kind == "entry" && e.entry.Content == "still here?" })
	}
}
