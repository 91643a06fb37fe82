package handlers_test

import (
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
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

// sessionRows counts the stored sessions.
func (a *testApp) sessionRows() int64 {
	a.t.Helper()
	db, err := a.store.SQL()
	if err != nil {
		a.t.Fatal(err)
	}
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM sessions").Scan(&n); err != nil {
		a.t.Fatal(err)
	}
	return n
}

// TestVisitorsStoreNoSession: pages shown to visitors, the forms they post
// and fail, and a forged post store no session; signing in stores one.
func TestVisitorsStoreNoSession(t *testing.T) {
	a := newTestApp(t)
	for range 200 {
		mustStatus(t, a.anon().get("/login"), http.StatusOK)
	}
	if n := a.sessionRows(); n != 0 {
		t.Fatalf("200 cookie-less GET /login stored %d sessions, want 0", n)
	}
	c := a.anon()
	mustStatus(t, c.get("/register"), http.StatusOK)
	mustStatus(t, c.postForm("/register", url.Values{"username": {"a"}, "password": {"correct horse"}}), http.StatusUnprocessableEntity)
	mustStatus(t, c.postForm("/login", url.Values{"username": {"nobody"}, "password": {"wrong password"}}), http.StatusUnauthorized)
	mustStatus(t, c.postForm("/login", url.Values{"csrf_token": {"forged"}}), http.StatusForbidden)
	mustStatus(t, c.get("/chat"), http.StatusSeeOther)
	if n := a.sessionRows(); n != 0 {
		t.Fatalf("a visitor's failed posts stored %d sessions, want 0", n)
	}
	a.register("ann")
	if n := a.sessionRows(); n != 1 {
		t.Fatalf("%d sessions after signing in, want 1", n)
	}
}

// TestVisitorCSRF: a visitor's post needs the token of their own signed
// cookie, in the body or the header; not a token of another cookie, not a
// cookie the server did not sign, not a token in the URL's query.
func TestVisitorCSRF(t *testing.T) {
	a := newTestApp(t)
	a.register("ann")
	login := url.Values{"username": {"ann"}, "password": {"correct horse"}}
	post := func(c *client, path, query string, form url.Values, header string) *http.Response {
		req := httptest.NewRequest(http.MethodPost, path+query, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if header != "" {
			req.Header.Set("X-CSRF-Token", header)
		}
		return c.do(req)
	}

	mustStatus(t, post(a.anon(), "/login", "", login, ""), http.StatusForbidden) // no cookie, no token
	c := a.anon()
	c.get("/login")
	if c.csrf == "" || c.cookies["palaver_csrf"] != c.csrf {
		t.Fatalf("the form's token %q is not the cookie's %q", c.csrf, c.cookies["palaver_csrf"])
	}
	mustStatus(t, post(c, "/login", "", login, ""), http.StatusForbidden)                                     // cookie, no token
	mustStatus(t, post(c, "/login", "?csrf_token="+url.QueryEscape(c.csrf), login, ""), http.StatusForbidden) // token in the query
	other := a.anon()
	other.get("/login")
	mustStatus(t, post(c, "/login", "", withCSRF(login, other.csrf), ""), http.StatusForbidden) // another visitor's token
	// A cookie and token made up alike but not signed by the server.
	forged := a.anon()
	forged.cookies["palaver_csrf"] = "bm9uY2U.c2lnbmF0dXJl"
	mustStatus(t, post(forged, "/login", "", withCSRF(login, "bm9uY2U.c2lnbmF0dXJl"), ""), http.StatusForbidden)
	if _, ok := c.cookies["palaver_session"]; ok {
		t.Fatal("a refused post signed in")
	}

	mustStatus(t, post(c, "/login", "", login, c.csrf), http.StatusSeeOther) // in the header
	d := a.anon()
	d.get("/login")
	mustStatus(t, post(d, "/login", "", withCSRF(login, d.csrf), ""), http.StatusSeeOther) // in the body
	mustStatus(t, d.get("/chat"), http.StatusOK)
}

func withCSRF(form url.Values, token string) url.Values {
	out := url.Values{"csrf_token": {token}}
	for k, v := range form {
		out[k] = v
	}
	return out
}

// TestSignedInCSRFNotFromQuery: a signed-in form post with the session's
// token only in the query string is refused, and nothing changes.
func TestSignedInCSRFNotFromQuery(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	req := httptest.NewRequest(http.MethodPost, "/logout?csrf_token="+url.QueryEscape(ann.csrf), nil)
	mustStatus(t, ann.do(req), http.StatusForbidden)
	mustStatus(t, ann.get("/chat"), http.StatusOK)
	mustStatus(t, ann.postForm("/chat/new", nil), http.StatusSeeOther)
	// A multipart body carries it as well as a URL-encoded one.
	var body strings.Builder
	mw := multipart.NewWriter(&body)
	mw.WriteField("csrf_token", ann.csrf)
	mw.Close()
	req = httptest.NewRequest(http.MethodPost, "/chat/new", strings.NewReader(body.String()))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	mustStatus(t, ann.do(req), http.StatusSeeOther)
}

// TestVisitorSessionLifetime: a session whose user was signed out (the
// account disabled) keeps what it had for at most a day, and signing out
// deletes the session.
func TestVisitorSessionLifetime(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	ann := a.register("ann")
	mustStatus(t, ann.postForm("/chat/new", nil), http.StatusSeeOther) // something kept in ann's session
	if left := ann.sessionLeft(); left < 29*24*time.Hour {
		t.Fatalf("a signed-in session lives %v, want the 30 days of before", left)
	}
	if _, err := a.store.AdminSetDisabled(context.Background(), admin.user.ID, ann.user.ID, true); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, ann.get("/chat"), http.StatusSeeOther)
	if left := ann.sessionLeft(); left <= 0 || left > 24*time.Hour {
		t.Fatalf("the signed-out session lives %v more, want at most a day", left)
	}

	token := admin.cookies["palaver_session"]
	mustStatus(t, admin.postForm("/logout", nil), http.StatusSeeOther)
	db, _ := a.store.SQL()
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM sessions WHERE token = ?", token).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the signed-out session is still stored (%d, %v)", n, err)
	}
	if admin.cookies["palaver_session"] != "" { // expired: an empty value, an expiry in 1970
		t.Fatal("the session cookie outlived signing out")
	}
}

// sessionLeft is how long the browser's stored session has to live.
func (c *client) sessionLeft() time.Duration {
	c.a.t.Helper()
	db, err := c.a.store.SQL()
	if err != nil {
		c.a.t.Fatal(err)
	}
	var days float64
	if err := db.QueryRow("SELECT expiry - julianday('now') FROM sessions WHERE token = ?", c.cookies["palaver_session"]).Scan(&days); err != nil {
		c.a.t.Fatalf("no stored session: %v", err)
	}
	return time.Duration(days * float64(24*time.Hour))
}
