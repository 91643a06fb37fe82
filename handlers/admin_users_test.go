package handlers_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"palaver/internal/htmltest"
)

// TestAdminDisableUser: disabling ends the account's sessions, its API keys
// are refused and it cannot sign in; enabling lets it sign in again, but the
// sessions that ended stay ended.
func TestAdminDisableUser(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	bob := a.register("bob")
	key := a.apiClient("bob")
	key.apiJSON("GET", "/api/chat/history", nil, http.StatusOK, nil)
	mustStatus(t, bob.get("/chat"), http.StatusOK)
	path := fmt.Sprintf("/admin/users/%d/disable", bob.user.ID)

	// Without JavaScript: a confirmation page first, and nothing happens.
	res := admin.postForm(path, nil)
	mustStatus(t, res, http.StatusOK)
	if msg := htmltest.ByTestID(chatDoc(t, res), "confirm-message"); len(msg) != 1 || !strings.Contains(htmltest.Text(msg[0]), "sessions end") {
		t.Fatal("no confirmation page")
	}
	mustStatus(t, bob.get("/chat"), http.StatusOK)

	res = admin.postFormFrom(path, "http://example.com/admin/users", url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/admin/users" {
		t.Fatalf("back to %q", loc)
	}
	doc := admin.chatScreen(t, "/admin/users")
	if f := adminFlash(doc); !strings.Contains(f, "bob is disabled") {
		t.Fatalf("flash %q", f)
	}
	row := htmltest.ByID(doc, fmt.Sprintf("user-%d", bob.user.ID))
	if len(htmltest.ByTestID(row, "badge-disabled")) != 1 {
		t.Fatal("the row does not say disabled")
	}

	// bob's session is over; his key is refused; he cannot sign in.
	res = bob.get("/chat")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
		t.Fatalf("disabled user's session: status %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	res, b := key.api("GET", "/api/chat/history", nil)
	apiErr(t, res, b, http.StatusUnauthorized)
	login := a.anon()
	login.get("/login")
	res = login.postForm("/login", url.Values{"username": {"bob"}, "password": {"correct horse"}})
	mustStatus(t, res, http.StatusForbidden)
	if !strings.Contains(bodyOf(res), "This account is disabled") {
		t.Fatal("login refused without saying why")
	}
	// The wrong password does not learn that the account is disabled.
	res = login.postForm("/login", url.Values{"username": {"bob"}, "password": {"wrong password"}})
	mustStatus(t, res, http.StatusUnauthorized)
	if strings.Contains(bodyOf(res), "disabled") {
		t.Fatal("a wrong password learns the account is disabled")
	}

	// Enabled again (through htmx: the row comes back): the key works, he
	// can sign in, and his old session stays over.
	res = admin.htmx("POST", fmt.Sprintf("/admin/users/%d/enable", bob.user.ID), url.Values{})
	mustStatus(t, res, http.StatusOK)
	// A bare <tr> (htmx puts it in its table): read it as text.
	if frag := bodyOf(res); strings.Count(frag, `data-testid="admin-user-row"`) != 1 || strings.Contains(frag, "badge-disabled") {
		t.Fatalf("htmx got %s", frag)
	}
	key.apiJSON("GET", "/api/chat/history", nil, http.StatusOK, nil)
	res = bob.get("/chat")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a session that ended came back: %d", res.StatusCode)
	}
	res = login.postForm("/login", url.Values{"username": {"bob"}, "password": {"correct horse"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/chat" {
		t.Fatalf("enabled user cannot sign in: %d", res.StatusCode)
	}
	mustStatus(t, login.get("/chat"), http.StatusOK)
}

func TestAdminResetPassword(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	bob := a.register("bob")
	path := fmt.Sprintf("/admin/users/%d/password", bob.user.ID)

	// Too short: refused, nothing changes.
	res := admin.postFormFrom(path, "/admin/users", url.Values{"password": {"short"}})
	mustStatus(t, res, http.StatusSeeOther)
	if f := adminFlash(admin.chatScreen(t, "/admin/users")); !strings.Contains(f, "too short") {
		t.Fatalf("flash %q", f)
	}
	mustStatus(t, admin.htmx("POST", path, url.Values{"password": {"short"}}), http.StatusUnprocessableEntity)
	mustStatus(t, bob.get("/chat"), http.StatusOK)

	res = admin.postForm(path, url.Values{"password": {"a brand new secret"}})
	mustStatus(t, res, http.StatusSeeOther)
	if res := bob.get("/chat"); res.StatusCode != http.StatusSeeOther {
		t.Fatal("the reset did not end bob's session")
	}
	login := a.anon()
	login.get("/login")
	mustStatus(t, login.postForm("/login", url.Values{"username": {"bob"}, "password": {"correct horse"}}), http.StatusUnauthorized)
	mustStatus(t, login.postForm("/login", url.Values{"username": {"bob"}, "password": {"a brand new secret"}}), http.StatusSeeOther)

	// An administrator resetting their own password stays signed in.
	mustStatus(t, admin.postForm(fmt.Sprintf("/admin/users/%d/password", admin.user.ID), url.Values{"password": {"root's new secret"}}), http.StatusSeeOther)
	mustStatus(t, admin.get("/admin/users"), http.StatusOK)
}

// TestAdminLastAdmin: the only administrator can be neither demoted nor
// disabled nor deleted; with a second one, an administrator may step down.
func TestAdminLastAdmin(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	bob := a.register("bob")
	self := func(verb string) string { return fmt.Sprintf("/admin/users/%d/%s", admin.user.ID, verb) }
	before := a.adminCounts()

	// Stepping down is confirmed first, then refused: the last admin.
	res := admin.postForm(self("demote"), nil)
	mustStatus(t, res, http.StatusOK)
	if len(htmltest.ByTestID(chatDoc(t, res), "confirm")) != 1 {
		t.Fatal("stepping down is not confirmed first")
	}
	res = admin.postFormFrom(self("demote"), "/admin/users", url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	if f := adminFlash(admin.chatScreen(t, "/admin/users")); !strings.Contains(f, "no administrator who can sign in") {
		t.Fatalf("flash %q", f)
	}
	res = admin.htmx("POST", self("demote"), url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusConflict)
	if !strings.Contains(bodyOf(res), `data-testid="alert"`) {
		t.Fatal("htmx refusal without an alert")
	}
	for _, verb := range []string{"disable", "delete"} {
		mustStatus(t, admin.htmx("POST", self(verb), url.Values{"confirmed": {"1"}}), http.StatusConflict)
	}
	if u, _ := a.store.UserByID(t.Context(), admin.user.ID); !u.IsAdmin || u.Disabled {
		t.Fatalf("root changed: %+v", u)
	}
	if after := a.adminCounts(); !maps.Equal(after, before) {
		t.Fatalf("refused actions changed rows: %v, %v", before, after)
	}

	// Promote bob (htmx gets his row back, marked admin); then root may step down.
	res = admin.htmx("POST", fmt.Sprintf("/admin/users/%d/promote", bob.user.ID), url.Values{})
	mustStatus(t, res, http.StatusOK)
	if !strings.Contains(bodyOf(res), `data-testid="badge-admin"`) {
		t.Fatal("promoted row without the admin badge")
	}
	bob.get("/chat") // bob's pages now show him the admin link
	if !strings.Contains(bodyOf(bob.get("/chat")), `href="/admin"`) {
		t.Fatal("a new administrator gets no Admin link")
	}
	res = admin.postForm(self("demote"), url.Values{"confirmed": {"1"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/chat" {
		t.Fatalf("stepping down: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	mustStatus(t, admin.get("/admin"), http.StatusNotFound)
	mustStatus(t, bob.get("/admin"), http.StatusOK)
	// Now bob is the last one.
	mustStatus(t, bob.htmx("POST", fmt.Sprintf("/admin/users/%d/demote", bob.user.ID), url.Values{"confirmed": {"1"}}), http.StatusConflict)
}

// TestAdminDeleteUser deletes an account with data in every table and
// checks each table's row count.
func TestAdminDeleteUser(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	bob := a.register("bob")
	cy := a.register("cyd")
	a.apiClient("bob")
	page := a.adminPage(bob.user.ID, "Bob's page")
	a.chatExec("INSERT INTO page_revisions (page_id, content, edit_source, created_at) VALUES (?, 'v1', 'user', CURRENT_TIMESTAMP)", page)
	bobs := []int64{
		a.adminExchange(bob.user.ID, adminEx{queries: []string{"one", "two"}, fail: true}),
		a.adminExchange(bob.user.ID, adminEx{scope: "page", page: page, agent: "page_assistant", queries: []string{"edit it"}}),
	}
	cys := a.adminExchange(cy.user.ID, adminEx{queries: []string{"cy's"}})
	mustStatus(t, admin.postForm(fmt.Sprintf("/admin/exchanges/%d", bobs[0]), url.Values{"reason": {"check"}}), http.StatusOK)
	var bobMsgs int
	for _, id := range bobs {
		bobMsgs += len(a.chatMessages(bob.user.ID, id))
	}
	before := a.adminCounts()
	path := fmt.Sprintf("/admin/users/%d/delete", bob.user.ID)

	res := admin.postForm(path, nil)
	mustStatus(t, res, http.StatusOK)
	if msg := htmltest.Text(htmltest.ByTestID(chatDoc(t, res), "confirm-message")[0]); !strings.Contains(msg, "2 conversations") {
		t.Fatalf("confirmation %q", msg)
	}
	if after := a.adminCounts(); !maps.Equal(after, before) {
		t.Fatal("the confirmation page deleted something")
	}
	res = admin.postForm(path, url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	want := maps.Clone(before)
	want["users"]--
	want["api_keys"]--
	want["pages"]--
	want["page_revisions"]--
	want["exchanges"] -= 2
	want["messages"] -= bobMsgs
	if got := a.adminCounts(); !maps.Equal(got, want) {
		t.Fatalf("rows after deleting bob:\n got %v\nwant %v", got, want)
	}
	if f := adminFlash(admin.chatScreen(t, "/admin/users")); !strings.Contains(f, "Deleted bob with 2 conversations, "+fmt.Sprint(bobMsgs)+" messages, 1 page and 1 API key") {
		t.Fatalf("flash %q", f)
	}
	// cy's conversation is untouched; bob's session is over.
	if len(a.chatMessages(cy.user.ID, cys)) != 2 {
		t.Fatal("cy's conversation was touched")
	}
	if res := bob.get("/chat"); res.StatusCode != http.StatusSeeOther {
		t.Fatal("a deleted user is still signed in")
	}
	// The audit row stays, naming bob.
	doc := admin.chatScreen(t, "/admin/audit")
	if rows := htmltest.ByTestID(doc, "admin-audit-row"); len(rows) != 1 || !strings.Contains(htmltest.Text(rows[0]), "bob (deleted)") {
		t.Fatal("the audit row went with the account")
	}
	mustStatus(t, admin.postForm(path, url.Values{"confirmed": {"1"}}), http.StatusNotFound)
}

func TestAdminUsersList(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	bob := a.register("bob")
	a.adminExchange(bob.user.ID, adminEx{queries: []string{"one", "two"}})
	a.adminExchange(bob.user.ID, adminEx{queries: []string{"three"}})
	doc := admin.chatScreen(t, "/admin/users")
	rows := htmltest.ByTestID(doc, "admin-user-row")
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	var cells []string
	for _, td := range htmltest.FindAll(htmltest.ByID(doc, fmt.Sprintf("user-%d", bob.user.ID)), func(n *chatNode) bool { return n.Data == "td" }) {
		cells = append(cells, htmltest.Text(td))
	}
	// bob: 2 conversations, 6 messages, no API key, active just now.
	if len(cells) < 6 || cells[0] != "bob" || cells[2] != "2" || cells[3] != "6" || cells[4] != "0" || cells[5] != "just now" {
		t.Fatalf("bob's row %q", cells)
	}
	rootRow := htmltest.ByID(doc, fmt.Sprintf("user-%d", admin.user.ID))
	if len(htmltest.ByTestID(rootRow, "user-delete")) != 0 || len(htmltest.ByTestID(rootRow, "user-disable")) != 0 {
		t.Fatal("an admin is offered to delete or disable their own account")
	}
}

// TestAdminUsersPages: the account list comes a batch at a time, by name;
// following Next walks every account once, in order, and the last batch has
// no Next.
func TestAdminUsersPages(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	want := []string{"root"}
	for i := range 230 {
		name := fmt.Sprintf("user%03d", i)
		if _, err := a.store.CreateUser(context.Background(), name, "x", false); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	slices.Sort(want)

	var got []string
	pages := 0
	for path := "/admin/users"; path != ""; pages++ {
		doc := admin.chatScreen(t, path)
		rows := htmltest.ByTestID(doc, "admin-user-row")
		if len(rows) == 0 || len(rows) > 100 {
			t.Fatalf("%s shows %d accounts", path, len(rows))
		}
		for _, r := range rows {
			got = append(got, htmltest.Text(htmltest.ByTestID(r, "admin-user-name")[0]))
		}
		path = ""
		if next := htmltest.ByTestID(doc, "admin-users-next"); len(next) == 1 {
			path, _ = htmltest.Attr(next[0], "href")
		}
		if first := htmltest.ByTestID(doc, "admin-users-first"); (len(first) == 1) != (pages > 0) {
			t.Fatalf("page %d: %d links to the first page", pages+1, len(first))
		}
	}
	if pages != 3 || !slices.Equal(got, want) {
		t.Fatalf("%d pages listed %d accounts (first %q, last %q); want 3 pages of all %d in order",
			pages, len(got), got[0], got[len(got)-1], len(want))
	}
	mustStatus(t, admin.get("/admin/users?after="+strings.Repeat("x", 65)), http.StatusBadRequest)
}
