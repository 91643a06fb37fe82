package main

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"palaver/internal/pgtest"
)

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// browser is a cookie jar talking to palaver processes, without following
// redirects.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// signIn loads base's sign-in form and posts it: the status and Retry-After.
func signIn(t *testing.T, c *http.Client, base, name, password string) (int, string) {
	t.Helper()
	res, err := c.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(res)
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field on %s/login", base)
	}
	res, err = c.PostForm(base+"/login", url.Values{"csrf_token": {m[1]}, "username": {name}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	readAll(res)
	return res.StatusCode, res.Header.Get("Retry-After")
}

func readAll(res *http.Response) string {
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// TestTwoServeProcessesShareState runs two real `palaver serve` processes
// on one PostgreSQL database: failed sign-ins spread over both are counted
// together, so are a user's running replies, and a session signed in on
// one is signed in on the other.
func TestTwoServeProcessesShareState(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary")
	}
	store := pgtest.Fresh(t)
	dsn := pgtest.DSN(t)
	bin := buildBinary(t)
	cli(t, bin, "user", "add", "ann", "--password", "correct horse", "--db", dsn)
	cli(t, bin, "user", "add", "bob", "--password", "correct horse", "--db", dsn)
	key := cli(t, bin, "user", "key", "bob", "--db", dsn)
	// Replies of the builtin agent take a second a word: they stay running.
	a := startServer(t, bin, dsn, freeAddr(t), "--builtin-delay", "1s")
	b := startServer(t, bin, dsn, freeAddr(t), "--builtin-delay", "1s")
	procs := []*server{a, b}

	for i := range 5 {
		if code, _ := signIn(t, browser(t), procs[i%2].base, "ann", "wrong"); code != http.StatusUnauthorized {
			t.Fatalf("failed sign-in %d: %d", i+1, code)
		}
	}
	for i, p := range procs {
		if code, wait := signIn(t, browser(t), p.base, "ann", "correct horse"); code != http.StatusTooManyRequests || wait == "" {
			t.Fatalf("6th sign-in on process %d: %d (Retry-After %q), want 429", i+1, code, wait)
		}
	}

	c := browser(t)
	if code, _ := signIn(t, c, a.base, "bob", "correct horse"); code != http.StatusSeeOther {
		t.Fatalf("bob's sign-in on the first process: %d", code)
	}
	res, err := c.Get(b.base + "/chat")
	if err != nil {
		t.Fatal(err)
	}
	if page := readAll(res); res.StatusCode != http.StatusOK || !strings.Contains(page, `title="Signed in as bob"`) {
		t.Fatalf("bob's session on the second process: %d", res.StatusCode)
	}

	for i := range 4 {
		go func() { // answered after the test: the processes are killed first
			req, _ := http.NewRequest(http.MethodPost, procs[i%2].base+"/api/chat", strings.NewReader(`{"query":"tell me a long story"}`))
			req.Header.Set("x-api-key", key)
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
			}
		}()
	}
	ctx := context.Background()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		running, err := store.RunningTurns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(running) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 4 replies running", len(running))
		}
	}
	for i, p := range procs {
		var out struct {
			ErrMsg string `json:"err_msg"`
		}
		if code := p.api(http.MethodPost, "/api/chat", key, map[string]any{"query": "one too many"}, &out); code != http.StatusTooManyRequests ||
			!strings.Contains(out.ErrMsg, "4 replies") {
			t.Fatalf("a 5th reply through process %d: %d %q", i+1, code, out.ErrMsg)
		}
	}
}
