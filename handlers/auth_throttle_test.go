package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"palaver/handlers"
	"palaver/throttle"
)

// testClock is a settable clock for the throttle, so the tests move through
// its windows without sleeping.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// withClock gives the app an in-memory throttle on clk.
func withClock(clk *testClock) appOption {
	return func(d *handlers.Deps) { d.Throttle = throttle.NewMemory(clk.now, 0) }
}

// withLog sends the app's log to buf.
func withLog(buf *syncBuffer) appOption {
	return func(d *handlers.Deps) { d.Logger = slog.New(slog.NewTextHandler(buf, nil)) }
}

// trustingTestPeer trusts the peer app.Test connects from (0.0.0.0), so a
// test can say which address each client has through X-Forwarded-For.
func trustingTestPeer() appOption {
	return func(d *handlers.Deps) {
		d.Config.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/32")}
	}
}

// syncBuffer is a log that the app writes and the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// from is a browser whose requests come through the proxy from addr ("":
// with no X-Forwarded-For).
type from struct {
	*client
	addr string
}

func (f from) post(path string, form url.Values, htmx bool) *http.Response {
	f.a.t.Helper()
	if _, ok := form["csrf_token"]; !ok {
		form.Set("csrf_token", f.csrf)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if f.addr != "" {
		req.Header.Set("X-Forwarded-For", f.addr)
	}
	if htmx {
		req.Header.Set("HX-Request", "true")
	}
	return f.do(req)
}

// browserAt is a fresh visitor from addr who has loaded the login form.
func (a *testApp) browserAt(addr string) from {
	f := from{client: a.anon(), addr: addr}
	req := httptest.NewRequest(http.MethodGet, "/login", nil)
	if addr != "" {
		req.Header.Set("X-Forwarded-For", addr)
	}
	f.do(req)
	return f
}

func (f from) login(name, password string) *http.Response {
	return f.post("/login", url.Values{"username": {name}, "password": {password}}, false)
}

// mustThrottled checks a 429 with the Retry-After given and the form's message.
func mustThrottled(t *testing.T, res *http.Response, retryAfter, msg string) {
	t.Helper()
	mustStatus(t, res, http.StatusTooManyRequests)
	if got := res.Header.Get("Retry-After"); got != retryAfter {
		t.Errorf("Retry-After = %q, want %q", got, retryAfter)
	}
	if body := bodyOf(res); !strings.Contains(body, msg) || !strings.Contains(body, `data-testid="form-error"`) {
		t.Errorf("the form does not say %q: %s", msg, body)
	}
}

// TestSignInThrottledPerUsername: five wrong passwords for a name, in any
// spelling of it, and the right one is refused with 429 and Retry-After,
// as a page and for htmx, until the window passes; the failures are logged.
func TestSignInThrottledPerUsername(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	log := &syncBuffer{}
	a := newTestApp(t, withClock(clk), withLog(log))
	a.register("ada")

	b := a.browserAt("")
	for i, name := range []string{"ada", "ADA", "Ada", "ada", "ａｄａ"} {
		clk.advance(time.Minute)
		mustStatus(t, b.login(name, fmt.Sprintf("wrong %d", i)), http.StatusUnauthorized)
	}
	// The first failure was at 12:01; the window lets the next in at 12:16.
	clk.advance(time.Minute) // 12:06
	mustThrottled(t, b.login("ada", "correct horse"), "600", "Too many failed sign-ins. Try again in 10 minutes.")
	res := b.post("/login", url.Values{"username": {"ada"}, "password": {"correct horse"}}, true)
	mustThrottled(t, res, "600", "Too many failed sign-ins")
	if _, ok := b.cookies["palaver_session"]; ok {
		t.Fatal("a throttled sign-in got a session")
	}
	if got := log.String(); strings.Count(got, `msg="sign-in failed" username=ada addr=0.0.0.0`) != 2 ||
		!strings.Contains(got, `msg="sign-in failed" username=ADA addr=0.0.0.0`) ||
		!strings.Contains(got, `level=WARN msg="sign-in refused: too many failed attempts" username=ada addr=0.0.0.0 retry_after=10m0s`) {
		t.Errorf("the log does not tell the failures with their name and address:\n%s", got)
	}

	clk.advance(10*time.Minute - time.Second)
	mustThrottled(t, b.login("ada", "correct horse"), "1", "Try again in a second.")
	clk.advance(time.Second) // 12:16: the first failure has left the window
	mustStatus(t, b.login("ada", "correct horse"), http.StatusSeeOther)
	if res := b.get("/chat"); res.StatusCode != http.StatusOK {
		t.Fatalf("signed in after the window: /chat answers %d", res.StatusCode)
	}
}

// TestSignInThrottledPerAddress: twenty failures from one address, over any
// names, and the address is refused even for a right password, while
// another address signs in; a success takes back nothing of anyone else's.
func TestSignInThrottledPerAddress(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	a := newTestApp(t, withClock(clk), trustingTestPeer())
	a.register("ann")
	a.register("bob")

	attacker := a.browserAt("203.0.113.7")
	for i := range 20 {
		mustStatus(t, attacker.login(fmt.Sprintf("user%d", i%5), "guess"), http.StatusUnauthorized)
	}
	mustThrottled(t, attacker.login("ann", "correct horse"), "900", "Too many failed sign-ins")
	// The left of X-Forwarded-For is the client's own say: not believed.
	spoofed := a.browserAt("198.51.100.1, 203.0.113.7")
	mustThrottled(t, spoofed.login("ann", "correct horse"), "900", "Too many failed sign-ins")

	// bob fails four times from his address; ann signs in from the same
	// one; bob's fifth failure still counts, and then bob is refused.
	home := a.browserAt("192.0.2.10")
	for range 4 {
		mustStatus(t, home.login("bob", "typo"), http.StatusUnauthorized)
	}
	ann := a.browserAt("192.0.2.10")
	mustStatus(t, ann.login("ann", "correct horse"), http.StatusSeeOther)
	mustStatus(t, home.login("bob", "typo"), http.StatusUnauthorized)
	mustThrottled(t, home.login("bob", "correct horse"), "900", "Too many failed sign-ins")
	// The attacker's address is still refused after ann's success elsewhere.
	mustThrottled(t, attacker.login("ann", "correct horse"), "900", "Too many failed sign-ins")

	clk.advance(15 * time.Minute)
	mustStatus(t, attacker.login("ann", "correct horse"), http.StatusSeeOther)
	mustStatus(t, home.login("bob", "correct horse"), http.StatusSeeOther)
}

// TestSignInThrottleUsesThePeer: without trusted proxies, X-Forwarded-For is
// anyone's to write and counts for nothing: twenty failures under twenty
// claimed addresses are twenty from the one real peer.
func TestSignInThrottleUsesThePeer(t *testing.T) {
	a := newTestApp(t, withClock(&testClock{t: time.Now()}))
	for i := range 20 {
		b := a.browserAt(fmt.Sprintf("198.51.100.%d", i))
		mustStatus(t, b.login(fmt.Sprintf("user%d", i), "guess"), http.StatusUnauthorized)
	}
	a.register("ann")
	b := a.browserAt("192.0.2.99")
	mustThrottled(t, b.login("ann", "correct horse"), "900", "Too many failed sign-ins")
}

// TestSignInSuccessClearsTheName: a right password clears the name's
// earlier failures (its owner's typing), so a later typo is not the fifth.
func TestSignInSuccessClearsTheName(t *testing.T) {
	a := newTestApp(t)
	a.register("ann")
	b := a.browserAt("")
	for range 4 {
		mustStatus(t, b.login("ann", "typo"), http.StatusUnauthorized)
	}
	mustStatus(t, b.login("ann", "correct horse"), http.StatusSeeOther)
	c := a.browserAt("")
	for range 4 {
		mustStatus(t, c.login("ann", "typo"), http.StatusUnauthorized)
	}
	mustStatus(t, c.login("ann", "correct horse"), http.StatusSeeOther)
}

// TestRegistrationThrottledPerAddress: ten registrations an hour from one
// address; the eleventh is refused with 429 and nothing is created; another
// address registers; an hour later the first may again.
func TestRegistrationThrottledPerAddress(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	a := newTestApp(t, withClock(clk), trustingTestPeer())
	register := func(b from, name string) *http.Response {
		return b.post("/register", url.Values{"username": {name}, "password": {"correct horse"}}, false)
	}
	for i := range 10 {
		b := a.browserAt("203.0.113.7")
		mustStatus(t, register(b, fmt.Sprintf("user%d", i)), http.StatusSeeOther)
		clk.advance(time.Minute)
	}
	b := a.browserAt("203.0.113.7")
	mustThrottled(t, register(b, "user10"), "3000", "Too many accounts were created from your address. Try again in 50 minutes.")
	if _, err := a.store.UserByUsername(context.Background(), "user10"); err == nil {
		t.Fatal("a throttled registration created its account")
	}
	mustStatus(t, register(a.browserAt("192.0.2.1"), "other"), http.StatusSeeOther)
	clk.advance(50 * time.Minute)
	mustStatus(t, register(a.browserAt("203.0.113.7"), "user10"), http.StatusSeeOther)
}
