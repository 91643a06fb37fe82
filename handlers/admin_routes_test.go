package handlers_test

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// adminRoute is one admin route and a concrete request to it.
type adminRoute struct {
	method  string
	pattern string // as registered
	path    string // with its parameters filled in
	form    url.Values
}

// adminRouteTable lists every admin route. TestAdminRoutesAreGuarded fails
// when the app has one that is not here, so a new route cannot be left out.
func adminRouteTable(exchangeID, userID int64) []adminRoute {
	ex, u := strconv.FormatInt(exchangeID, 10), strconv.FormatInt(userID, 10)
	return []adminRoute{
		{"GET", "/admin/", "/admin", nil},
		{"GET", "/admin/exchanges", "/admin/exchanges?user=" + u, nil},
		{"GET", "/admin/exchanges/:id", "/admin/exchanges/" + ex, nil},
		{"POST", "/admin/exchanges/:id", "/admin/exchanges/" + ex, url.Values{"reason": {"curious"}}},
		{"GET", "/admin/audit", "/admin/audit", nil},
		{"GET", "/admin/users", "/admin/users", nil},
		{"POST", "/admin/users/:id/promote", "/admin/users/" + u + "/promote", nil},
		{"POST", "/admin/users/:id/demote", "/admin/users/" + u + "/demote", url.Values{"confirmed": {"1"}}},
		{"POST", "/admin/users/:id/disable", "/admin/users/" + u + "/disable", url.Values{"confirmed": {"1"}}},
		{"POST", "/admin/users/:id/enable", "/admin/users/" + u + "/enable", nil},
		{"POST", "/admin/users/:id/password", "/admin/users/" + u + "/password", url.Values{"password": {"a new password"}}},
		{"POST", "/admin/users/:id/delete", "/admin/users/" + u + "/delete", url.Values{"confirmed": {"1"}}},
		{"GET", "/admin/housekeeping", "/admin/housekeeping", nil},
		{"POST", "/admin/housekeeping/vacuum", "/admin/housekeeping/vacuum", nil},
		{"POST", "/admin/housekeeping/orphans", "/admin/housekeeping/orphans", url.Values{"confirmed": {"1"}}},
		{"POST", "/admin/housekeeping/retention", "/admin/housekeeping/retention", url.Values{"enabled": {"1"}, "days": {"1"}}},
		{"POST", "/admin/housekeeping/retention/dry-run", "/admin/housekeeping/retention/dry-run", nil},
		{"POST", "/admin/housekeeping/retention/run", "/admin/housekeeping/retention/run", url.Values{"confirmed": {"1"}}},
	}
}

// TestAdminRoutesAreGuarded sends every admin route, GET and POST, as a
// visitor (sent to the login page), as a signed-in user who is not an
// administrator (the 404 of a page that does not exist, and nothing changes)
// and as an administrator (the route exists).
func TestAdminRoutesAreGuarded(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("ann") // the first account is the administrator
	bob := a.register("bob")
	victim := a.register("cy")
	ex := a.adminExchange(victim.user.ID, adminEx{queries: []string{"cy's private question"}, ago: 400 * 24 * 3600e9})
	routes := adminRouteTable(ex, victim.user.ID)

	// The table lists exactly the admin routes the app has.
	registered := map[string]bool{}
	for _, r := range a.app.GetRoutes(true) {
		if strings.HasPrefix(r.Path, "/admin") && (r.Method == http.MethodGet || r.Method == http.MethodPost) {
			registered[r.Method+" "+r.Path] = true
		}
	}
	listed := map[string]bool{}
	for _, r := range routes {
		listed[r.method+" "+r.pattern] = true
	}
	for k := range registered {
		if !listed[k] {
			t.Errorf("admin route %s is not in adminRouteTable: add it so its guard is tested", k)
		}
	}
	for k := range listed {
		if !registered[k] {
			t.Errorf("adminRouteTable lists %s, which the app does not have", k)
		}
	}
	if len(registered) < 18 {
		t.Fatalf("only %d admin routes found: %v", len(registered), slices.Sorted(maps.Keys(registered)))
	}

	visitor := a.anon()
	visitor.get("/login") // a session with a CSRF token, so POSTs pass that check
	notFound := withoutTokens(bodyOf(bob.get("/no-such-page")))
	before := a.adminCounts()
	snapshot := a.chatSnapshot()
	for _, r := range append(routes, adminRoute{"GET", "", "/admin/no-such-thing", nil}) {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			var res *http.Response
			send := func(c *client) *http.Response {
				if r.method == "GET" {
					return c.get(r.path)
				}
				return c.postForm(r.path, maps.Clone(r.form)) // postForm adds the sender's token
			}
			res = send(visitor)
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
				t.Fatalf("visitor: status %d, location %q; want 303 to /login", res.StatusCode, res.Header.Get("Location"))
			}
			if r.method == "POST" {
				res = visitor.htmx("POST", r.path, maps.Clone(r.form))
				if res.Header.Get("HX-Redirect") != "/login" {
					t.Fatalf("visitor via htmx: status %d, HX-Redirect %q", res.StatusCode, res.Header.Get("HX-Redirect"))
				}
			}
			res = send(bob)
			mustStatus(t, res, http.StatusNotFound)
			if got := withoutTokens(bodyOf(res)); got != notFound {
				t.Fatalf("a non-admin's 404 differs from a missing page's:\n%s\n---\n%s", got, notFound)
			}
			if r.method == "POST" {
				mustStatus(t, bob.htmx("POST", r.path, maps.Clone(r.form)), http.StatusNotFound)
			}
		})
	}
	if after := a.adminCounts(); !maps.Equal(after, before) || a.chatSnapshot() != snapshot {
		t.Fatalf("requests by a visitor and a non-admin changed the database:\n before %v\n after  %v", before, after)
	}
	if u, _ := a.store.UserByID(t.Context(), victim.user.ID); u.IsAdmin || u.Disabled {
		t.Fatalf("cy was changed: %+v", u)
	}

	// The administrator reaches every route (the delete last: it takes cy).
	for _, r := range routes {
		var res *http.Response
		if r.method == "GET" {
			res = admin.get(r.path)
		} else {
			res = admin.postForm(r.path, maps.Clone(r.form))
		}
		if res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusMethodNotAllowed || res.StatusCode >= 500 {
			t.Errorf("admin %s %s: status %d: %s", r.method, r.path, res.StatusCode, bodyOf(res))
		}
	}
	if n := a.apiCount("users"); n != 2 {
		t.Fatalf("%d accounts after the admin's run: the delete did not reach cy", n)
	}
}
