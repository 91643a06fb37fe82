package handlers_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"palaver/accounts"
	"palaver/internal/htmltest"
	"palaver/paths"
)

// accountLogin signs name in on a fresh browser with password.
func accountLogin(t *testing.T, a *testApp, name, password string) *client {
	t.Helper()
	c := a.anon()
	c.get(paths.Login)
	res := c.postForm(paths.Login, url.Values{"username": {name}, "password": {password}})
	mustStatus(t, res, http.StatusSeeOther)
	c.get(paths.Account) // the signed-in session's CSRF token
	return c
}

// accountSignedIn says whether the client's session is still signed in:
// /account answers the page, not the way to /login.
func accountSignedIn(t *testing.T, c *client) bool {
	t.Helper()
	res := c.get(paths.Account)
	switch {
	case res.StatusCode == http.StatusOK:
		return true
	case res.StatusCode == http.StatusSeeOther && res.Header.Get("Location") == paths.Login:
		return false
	}
	t.Fatalf("GET /account: status %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	return false
}

func TestAccountPageVisitorGoesToLogin(t *testing.T) {
	a := newTestApp(t)
	v := a.anon()
	for _, p := range []string{paths.Account} {
		res := v.get(p)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != paths.Login {
			t.Errorf("visitor GET %s: %d %q, want 303 to /login", p, res.StatusCode, res.Header.Get("Location"))
		}
	}
	v.get(paths.Login)
	for _, p := range []string{paths.AccountPassword, paths.AccountKeys, paths.AccountKeyRevoke(1), paths.AccountDelete, paths.AccountImport} {
		res := v.postForm(p, url.Values{"password": {"correct horse"}, "name": {"x"}})
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != paths.Login {
			t.Errorf("visitor POST %s: %d %q, want 303 to /login", p, res.StatusCode, res.Header.Get("Location"))
		}
	}
}

func TestAccountPageSections(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	res := ann.get(paths.Account)
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	for _, id := range []string{"api-keys", "api-key-create", "export-data", "delete-account", "account-link"} {
		if len(htmltest.ByTestID(doc, id)) != 1 {
			t.Errorf("/account has %d %q, want 1", len(htmltest.ByTestID(doc, id)), id)
		}
	}
	if href, _ := htmltest.Attr(htmltest.ByTestID(doc, "export-data")[0], "href"); href != "/api/export" {
		t.Errorf("export-data links to %q", href)
	}
	if href, _ := htmltest.Attr(htmltest.ByTestID(doc, "account-link")[0], "href"); href != paths.Account {
		t.Errorf("the top bar's name links to %q", href)
	}
	// Every state-changing form carries the CSRF field.
	for _, f := range htmltest.FindAll(doc, func(n *chatNode) bool { return n.Data == "form" }) {
		if m, _ := htmltest.Attr(f, "method"); m != "post" {
			continue
		}
		if len(htmltest.FindAll(f, func(n *chatNode) bool { v, _ := htmltest.Attr(n, "name"); return v == "csrf_token" })) != 1 {
			action, _ := htmltest.Attr(f, "action")
			t.Errorf("the form to %s has no CSRF field", action)
		}
	}
	// The download works with the session.
	res = ann.get("/api/export")
	mustStatus(t, res, http.StatusOK)
	if ct := res.Header.Get("Content-Type"); !strings.Contains(ct, "ndjson") {
		t.Errorf("export Content-Type %q", ct)
	}
}

func TestAccountKeysCreateUseRevoke(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	mal := a.register("mallory")
	ann.get(paths.Account)

	// A name is required.
	res := ann.postForm(paths.AccountKeys, url.Values{"name": {"   "}})
	mustStatus(t, res, http.StatusUnprocessableEntity)
	if !strings.Contains(bodyOf(res), "Give the key a name") || a.apiCount("api_keys") != 0 {
		t.Fatalf("an empty name: %s", bodyOf(res))
	}

	res = ann.postForm(paths.AccountKeys, url.Values{"name": {"laptop"}})
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	vals := htmltest.ByTestID(doc, "api-key-value")
	if len(vals) != 1 {
		t.Fatalf("the new key is shown %d times", len(vals))
	}
	key := strings.TrimSpace(htmltest.Text(vals[0]))
	if !strings.HasPrefix(key, "pal_") {
		t.Fatalf("the key shown: %q", key)
	}
	if copyBtn := htmltest.ByTestID(doc, "api-key-copy"); len(copyBtn) != 1 {
		t.Fatal("no Copy button")
	} else if v, _ := htmltest.Attr(copyBtn[0], "data-copy-text"); v != key {
		t.Errorf("the Copy button copies %q", v)
	}
	items := htmltest.ByTestID(doc, "api-key")
	if len(items) != 1 || !strings.Contains(htmltest.Text(items[0]), "laptop") || !strings.Contains(htmltest.Text(items[0]), "last used never") {
		t.Fatalf("the key list: %d items", len(items))
	}
	idAttr, _ := htmltest.Attr(items[0], "data-key-id")
	id, _ := strconv.ParseInt(idAttr, 10, 64)

	// Shown once: the page does not show it again.
	res = ann.get(paths.Account)
	if strings.Contains(bodyOf(res), key) {
		t.Fatal("the key is shown again")
	}

	// It works with the API, and its use shows.
	api := &client{a: a, cookies: map[string]string{}, apiKey: key}
	r, _ := api.api("GET", "/api/chat/history", nil)
	mustStatus(t, r, http.StatusOK)
	if strings.Contains(bodyOf(ann.get(paths.Account)), "last used never") {
		t.Error("the key's use does not show")
	}

	// Another user's key id: 404, and nothing changes.
	mal.get(paths.Account)
	res = mal.postForm(paths.AccountKeyRevoke(id), nil)
	mustStatus(t, res, http.StatusNotFound)
	if a.apiCount("api_keys") != 1 {
		t.Fatal("another user revoked the key")
	}
	if r, _ := api.api("GET", "/api/chat/history", nil); r.StatusCode != http.StatusOK {
		t.Fatal("the key stopped working after another user's revoke")
	}

	// The owner revokes it: gone, and refused.
	res = ann.postForm(paths.AccountKeyRevoke(id), nil)
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != paths.Account {
		t.Fatalf("revoke goes to %q", loc)
	}
	doc = chatDoc(t, ann.get(paths.Account))
	if len(htmltest.ByTestID(doc, "api-key")) != 0 || len(htmltest.ByTestID(doc, "account-notice")) != 1 {
		t.Error("after revoking: the key is still listed, or no notice")
	}
	if r, _ := api.api("GET", "/api/chat/history", nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a revoked key: %d", r.StatusCode)
	}
	// Twice: 404.
	mustStatus(t, ann.postForm(paths.AccountKeyRevoke(id), nil), http.StatusNotFound)
}

func TestAccountPasswordChange(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	other := accountLogin(t, a, "ann", "correct horse")
	ann.get(paths.Account)

	// The current password is required.
	res := ann.postForm(paths.AccountPassword, url.Values{"current": {"wrong horse"}, "password": {"a brand new one"}})
	mustStatus(t, res, http.StatusUnprocessableEntity)
	if !strings.Contains(bodyOf(res), "current password is not right") {
		t.Errorf("a wrong current password: %s", bodyOf(res))
	}
	// The new one follows the rules.
	res = ann.postForm(paths.AccountPassword, url.Values{"current": {"correct horse"}, "password": {"short"}})
	mustStatus(t, res, http.StatusUnprocessableEntity)
	if !strings.Contains(bodyOf(res), accounts.ErrPasswordShort.Error()) {
		t.Errorf("a short new password: %s", bodyOf(res))
	}
	u, _ := a.store.UserByUsername(context.Background(), "ann")
	if !accounts.CheckPassword(u.PasswordHash, "correct horse") || !accountSignedIn(t, other) {
		t.Fatal("a refused change changed something")
	}

	res = ann.postForm(paths.AccountPassword, url.Values{"current": {"correct horse"}, "password": {"a brand new one"}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != paths.Account {
		t.Fatalf("the change goes to %q", loc)
	}
	res = ann.get(paths.Account)
	mustStatus(t, res, http.StatusOK) // this session stays signed in
	if !strings.Contains(bodyOf(res), "other sessions are signed out") {
		t.Error("the page does not say the other sessions ended")
	}
	if accountSignedIn(t, other) {
		t.Fatal("the other session is still signed in")
	}
	// The other client, sent to sign in, can with the new password only.
	o := a.anon()
	o.get(paths.Login)
	mustStatus(t, o.postForm(paths.Login, url.Values{"username": {"ann"}, "password": {"correct horse"}}), http.StatusUnauthorized)
	accountLogin(t, a, "ann", "a brand new one")
	if !accountSignedIn(t, ann) {
		t.Fatal("this session ended after signing in elsewhere")
	}
}

func TestAccountDelete(t *testing.T) {
	a := newTestApp(t)
	a.register("admin") // the first account is the administrator
	ann := a.register("ann")
	bob := a.register("bob")
	other := accountLogin(t, a, "ann", "correct horse")
	ctx := context.Background()
	a.adminExchange(ann.user.ID, adminEx{queries: []string{"one", "two"}})
	a.adminExchange(ann.user.ID, adminEx{queries: []string{"three"}})
	a.adminPage(ann.user.ID, "Notes")
	bobEx := a.adminExchange(bob.user.ID, adminEx{queries: []string{"bob's"}})
	a.apiClient("ann")
	owned := func(table, where string) int {
		db, _ := a.store.SQL()
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM "+table+" WHERE "+where, ann.user.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	msgs := owned("messages", "exchange_id IN (SELECT id FROM exchanges WHERE user_id = ?)")
	if msgs == 0 || owned("exchanges", "user_id = ?") != 2 || owned("pages", "user_id = ?") != 1 {
		t.Fatal("the fixture")
	}
	before := a.adminCounts()

	// A wrong password is refused; nothing changes.
	ann.get(paths.Account)
	res := ann.postForm(paths.AccountDelete, url.Values{"password": {"wrong horse"}})
	mustStatus(t, res, http.StatusUnprocessableEntity)
	if !strings.Contains(bodyOf(res), "not your password") {
		t.Errorf("a wrong password: %s", bodyOf(res))
	}
	// A confirmation without a checked password is refused too.
	res = ann.postForm(paths.AccountDelete, url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusUnprocessableEntity)
	if after := a.adminCounts(); !equalCounts(before, after) {
		t.Fatalf("a refused deletion changed rows: %v -> %v", before, after)
	}

	// The right password: a confirmation page with what will go.
	res = ann.postForm(paths.AccountDelete, url.Values{"password": {"correct horse"}})
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	if len(htmltest.ByTestID(doc, "confirm")) != 1 || !strings.Contains(htmltest.Text(htmltest.ByTestID(doc, "confirm-message")[0]), "2 conversations") {
		t.Fatalf("the confirmation page: %s", bodyOf(res))
	}
	if after := a.adminCounts(); !equalCounts(before, after) {
		t.Fatal("the confirmation page deleted something")
	}

	// Confirmed: everything of ann's goes, and ann is signed out.
	res = ann.postForm(paths.AccountDelete, url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusOK)
	body := bodyOf(res)
	for _, want := range []string{"2 conversations", strconv.Itoa(msgs) + " messages", "1 page", "is deleted"} {
		if !strings.Contains(body, want) {
			t.Errorf("the deleted page does not say %q", want)
		}
	}
	if _, err := a.store.UserByUsername(ctx, "ann"); err == nil {
		t.Fatal("the account still exists")
	}
	for table, where := range map[string]string{
		"exchanges": "user_id = ?", "pages": "user_id = ?", "api_keys": "user_id = ?",
		"page_revisions": "page_id IN (SELECT id FROM pages WHERE user_id = ?)",
	} {
		if n := owned(table, where); n != 0 {
			t.Errorf("%d rows of %s left", n, table)
		}
	}
	after := a.adminCounts()
	if after["users"] != before["users"]-1 || after["exchanges"] != before["exchanges"]-2 ||
		after["messages"] != before["messages"]-msgs || after["pages"] != before["pages"]-1 || after["api_keys"] != before["api_keys"]-1 {
		t.Errorf("counts %v -> %v", before, after)
	}
	if accountSignedIn(t, ann) || accountSignedIn(t, other) {
		t.Fatal("a session of the deleted account is still signed in")
	}
	// Bob's things stay.
	if _, err := a.store.UserByUsername(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if len(a.chatMessages(bob.user.ID, bobEx)) == 0 {
		t.Fatal("bob's conversation went too")
	}
}

// The last administrator cannot delete their account.
func TestAccountDeleteLastAdmin(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("admin")
	admin.get(paths.Account)
	mustStatus(t, admin.postForm(paths.AccountDelete, url.Values{"password": {"correct horse"}}), http.StatusOK)
	res := admin.postForm(paths.AccountDelete, url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusConflict)
	if !strings.Contains(bodyOf(res), "last administrator") || a.apiCount("users") != 1 {
		t.Fatal("the last administrator deleted their account")
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Wrong passwords on the account page count against the sign-in throttle:
// after five, even the right one is refused with 429 until the window passes.
func TestAccountPasswordThrottled(t *testing.T) {
	a := newTestApp(t)
	a.register("admin")
	ann := a.register("ann")
	ann.get(paths.Account)
	for i := 0; i < 5; i++ {
		mustStatus(t, ann.postForm(paths.AccountDelete, url.Values{"password": {"wrong horse"}}), http.StatusUnprocessableEntity)
	}
	res := ann.postForm(paths.AccountPassword, url.Values{"current": {"correct horse"}, "password": {"a brand new one"}})
	mustStatus(t, res, http.StatusTooManyRequests)
	if res.Header.Get("Retry-After") == "" || !strings.Contains(bodyOf(res), "Too many wrong passwords") {
		t.Errorf("the throttled answer: %q %s", res.Header.Get("Retry-After"), bodyOf(res))
	}
	mustStatus(t, ann.postForm(paths.AccountDelete, url.Values{"password": {"correct horse"}}), http.StatusTooManyRequests)
	u, _ := a.store.UserByUsername(context.Background(), "ann")
	if !accounts.CheckPassword(u.PasswordHash, "correct horse") {
		t.Fatal("the password changed")
	}
}

// accountImport posts the account page's import form (its fields first,
// then the file), with the CSRF header when header is set.
func accountImport(c *client, fields map[string]string, file []byte, header string) *http.Response {
	c.a.t.Helper()
	ctype, body := multipartFile(c.a.t, fields, file)
	req := httptest.NewRequest(http.MethodPost, paths.AccountImport, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	if header != "" {
		req.Header.Set("X-CSRF-Token", header)
	}
	return c.do(req)
}

// importNote is the text of the one element with the test id, spaces
// folded; "" when there is none.
func importNote(doc *html.Node, id string) string {
	n := htmltest.ByTestID(doc, id)
	if len(n) != 1 {
		return ""
	}
	return strings.Join(strings.Fields(htmltest.Text(n[0])), " ")
}

// TestAccountImport: the account page's form imports a file and shows the
// counts imported and skipped; a second time, all skipped. A form without
// the CSRF token (field or header) is refused before the file is read, and
// a bad file shows why, with nothing stored.
func TestAccountImport(t *testing.T) {
	a := newTestApp(t)
	bob := a.apiClient("bob")
	bob.apiChat("walruses in spring", 0)
	a.waitTurns()
	_, file := bob.exportItems()
	ann := a.register("ann")
	ann.get(paths.Account)
	rows := a.apiRows()

	res := accountImport(ann, map[string]string{"csrf_token": "wrong"}, file, "")
	mustStatus(t, res, http.StatusForbidden)
	res = accountImport(ann, nil, file, "")
	mustStatus(t, res, http.StatusForbidden)
	if a.apiRows() != rows {
		t.Fatal("a refused form stored rows")
	}

	res = accountImport(ann, map[string]string{"csrf_token": ann.csrf}, file, "")
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	if got := importNote(doc, "import-result"); !strings.Contains(got, "Imported 1 conversation (2 messages) and 0 pages; skipped 0 conversations and 0 pages") {
		t.Fatalf("import result %q", got)
	}
	res = accountImport(ann, nil, file, ann.csrf) // htmx sends the header
	mustStatus(t, res, http.StatusOK)
	if got := importNote(chatDoc(t, res), "import-result"); !strings.Contains(got, "Imported 0 conversations (0 messages) and 0 pages; skipped 1 conversation and 0 pages") {
		t.Fatalf("second import result %q", got)
	}

	rows = a.apiRows()
	res = accountImport(ann, map[string]string{"csrf_token": ann.csrf}, file[:len(file)-5], "")
	mustStatus(t, res, http.StatusBadRequest)
	if got := importNote(chatDoc(t, res), "import-error"); !strings.Contains(got, "Nothing was imported: line 2") {
		t.Fatalf("a truncated file: %q", got)
	}
	if a.apiRows() != rows {
		t.Fatal("a truncated file stored rows")
	}
}
