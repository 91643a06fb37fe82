package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"palaver/internal/htmltest"
)

// pageRoute is one page route with what to send it.
type pageRoute struct {
	name, method, path string
	form               url.Values // HTML routes
	body               any        // API routes
}

// pageRoutes lists every page route, HTML and API, for one page, its
// proposal, its revision and its chat.
func pageRoutes(page, proposal, revision, exchange int64) (htmlRoutes, apiRoutes []pageRoute) {
	p := fmt.Sprintf("/pages/%d", page)
	htmlRoutes = []pageRoute{
		{"open", http.MethodGet, p, nil, nil},
		{"edit", http.MethodGet, p + "/edit", nil, nil},
		{"save", http.MethodPost, p + "/save", url.Values{"title": {"pwned"}, "content": {"pwned"}}, nil},
		{"preview", http.MethodPost, p + "/preview", url.Values{"content": {"x"}}, nil},
		{"delete unconfirmed", http.MethodPost, p + "/delete", url.Values{}, nil},
		{"delete", http.MethodPost, p + "/delete", url.Values{"confirmed": {"1"}}, nil},
		{"panel", http.MethodPost, p + "/panel", url.Values{"panel": {"closed"}}, nil},
		{"restore", http.MethodPost, fmt.Sprintf("%s/revisions/%d/restore", p, revision), url.Values{}, nil},
		{"send", http.MethodPost, p + "/chat", url.Values{"query": {"pwned"}, "exchange_id": {"0"}}, nil},
		{"send to the chat", http.MethodPost, p + "/chat", url.Values{"query": {"pwned"}, "exchange_id": {fmt.Sprint(exchange)}}, nil},
		{"new chat", http.MethodPost, p + "/chat/new", url.Values{}, nil},
		{"clear chats", http.MethodPost, p + "/chat/clear", url.Values{"confirmed": {"1"}}, nil},
		{"open chat", http.MethodGet, fmt.Sprintf("%s/chat/%d", p, exchange), nil, nil},
		{"delete chat", http.MethodPost, fmt.Sprintf("%s/chat/%d/delete", p, exchange), url.Values{"confirmed": {"1"}}, nil},
		{"accept", http.MethodPost, fmt.Sprintf("%s/proposals/%d/accept", p, proposal), url.Values{}, nil},
		{"reject", http.MethodPost, fmt.Sprintf("%s/proposals/%d/reject", p, proposal), url.Values{}, nil},
	}
	ap := fmt.Sprintf("/api/pages/%d", page)
	apiRoutes = []pageRoute{
		{"get", http.MethodGet, ap, nil, nil},
		{"put", http.MethodPut, ap, nil, map[string]any{"content": "pwned"}},
		{"delete", http.MethodDelete, ap, nil, nil},
		{"revisions", http.MethodGet, ap + "/revisions", nil, nil},
		{"accept", http.MethodPost, fmt.Sprintf("%s/proposals/%d/accept", ap, proposal), nil, nil},
		{"history", http.MethodGet, fmt.Sprintf("/api/chat/page/%d/history", page), nil, nil},
		{"clear history", http.MethodDelete, fmt.Sprintf("/api/chat/page/%d/history", page), nil, nil},
		{"chat", http.MethodPost, "/api/chat", nil, map[string]any{"query": "pwned", "page_id": page}},
		{"chat in the chat", http.MethodPost, "/api/chat", nil, map[string]any{"query": "pwned", "page_id": page, "exchange_id": exchange}},
	}
	return htmlRoutes, apiRoutes
}

// htmlCall sends an HTML route as a plain browser or as htmx.
func (c *client) htmlCall(r pageRoute, htmx bool) *http.Response {
	switch {
	case htmx:
		return c.htmx(r.method, r.path, r.form)
	case r.method == http.MethodGet:
		return c.get(r.path)
	default:
		return c.postForm(r.path, r.form)
	}
}

// Another user's page answers 404 on every page route, HTML and API, exactly
// like a missing one, shows nothing of it and changes nothing.
func TestPageCrossUser(t *testing.T) {
	a := newTestApp(t)
	bob := a.register("bob")
	page := bob.pageCreate(t, "Bob's secret plan", pageTrip)
	ex, proposal := bob.pageProposal(t, page, `replace section "Plan" with: secret`, 0)
	rev := a.revisions(bob.user.ID, page)[0].ID
	ada := a.register("ada")
	adaAPI := a.apiClient("ada")
	own := ada.pageCreate(t, "Ada's", "# A\n")

	htmlRoutes, apiRoutes := pageRoutes(page, proposal, rev, ex)
	for _, r := range htmlRoutes {
		for _, htmx := range []bool{false, true} {
			t.Run(fmt.Sprintf("html %s htmx=%v", r.name, htmx), func(t *testing.T) {
				before := a.pageSnapshot()
				res := ada.htmlCall(r, htmx)
				mustStatus(t, res, http.StatusNotFound)
				if strings.Contains(bodyOf(res), "secret") {
					t.Fatal("the answer shows bob's page")
				}
				if a.pageSnapshot() != before {
					t.Fatal("another user's request changed something")
				}
			})
		}
	}
	for _, r := range apiRoutes {
		t.Run("api "+r.name, func(t *testing.T) {
			before := a.pageSnapshot()
			res, b := adaAPI.api(r.method, r.path, r.body)
			apiErr(t, res, b, http.StatusNotFound)
			if a.pageSnapshot() != before {
				t.Fatal("another user's API request changed something")
			}
		})
	}
	// Bob's proposal through ada's own page is no proposal of it either.
	before := a.pageSnapshot()
	mustStatus(t, ada.postForm(fmt.Sprintf("/pages/%d/proposals/%d/accept", own, proposal), url.Values{}), http.StatusNotFound)
	mustStatus(t, ada.postForm(fmt.Sprintf("/pages/%d/proposals/%d/reject", own, proposal), url.Values{}), http.StatusNotFound)
	mustStatus(t, ada.get(fmt.Sprintf("/pages/%d/chat/%d", own, ex)), http.StatusNotFound)
	if a.pageSnapshot() != before {
		t.Fatal("routes through ada's page changed bob's data")
	}
	// Ada's list does not show it; bob's page is intact.
	if items := htmltest.ByTestID(ada.chatScreen(t, "/pages"), "page-item"); len(items) != 1 {
		t.Fatalf("ada lists %d pages", len(items))
	}
	if cards := pageCards(bob.pageEdit(t, page)); len(cards) != 1 || cards[0].Stale {
		t.Fatalf("bob's card %+v", cards)
	}
}

// A deleted page answers 404 everywhere, like a missing one.
func TestPageDeletedIsGone(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	page := c.pageCreate(t, "Doomed", pageTrip)
	ex, proposal := c.pageProposal(t, page, `add section "Z": z`, 0)
	rev := a.revisions(c.user.ID, page)[0].ID
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/delete", page), url.Values{"confirmed": {"1"}}), http.StatusSeeOther)
	api := a.apiClient("ada")
	htmlRoutes, apiRoutes := pageRoutes(page, proposal, rev, ex)
	for _, r := range htmlRoutes {
		for _, htmx := range []bool{false, true} {
			before := a.pageSnapshot()
			mustStatus(t, c.htmlCall(r, htmx), http.StatusNotFound)
			if a.pageSnapshot() != before {
				t.Fatalf("%s on a deleted page changed something", r.name)
			}
		}
	}
	for _, r := range apiRoutes {
		res, b := api.api(r.method, r.path, r.body)
		apiErr(t, res, b, http.StatusNotFound)
	}
	// And ids that name nothing at all.
	for _, path := range []string{"/pages/999/edit", "/pages/abc/edit", "/pages/0/edit", "/pages/-1/edit"} {
		mustStatus(t, c.get(path), http.StatusNotFound)
	}
}

// Every unsafe page route refuses a request without the session's CSRF token
// (form field or header) with 403, and changes nothing.
func TestPageCSRF(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	page := c.pageCreate(t, "Trip", pageTrip)
	ex, proposal := c.pageProposal(t, page, `add section "Z": z`, 0)
	rev := a.revisions(c.user.ID, page)[0].ID
	htmlRoutes, _ := pageRoutes(page, proposal, rev, ex)
	htmlRoutes = append(htmlRoutes, pageRoute{"create", http.MethodPost, "/pages", url.Values{"title": {"forged"}}, nil})
	for _, r := range htmlRoutes {
		if r.method == http.MethodGet {
			continue
		}
		for _, token := range []string{"", "forged-token"} {
			t.Run(fmt.Sprintf("%s token=%q", r.name, token), func(t *testing.T) {
				before := a.pageSnapshot()
				form := url.Values{}
				for k, v := range r.form {
					form[k] = v
				}
				form.Set("csrf_token", token)
				mustStatus(t, c.postForm(r.path, form), http.StatusForbidden)
				saved := c.csrf
				c.csrf = token
				res := c.htmx(r.method, r.path, r.form)
				c.csrf = saved
				mustStatus(t, res, http.StatusForbidden)
				if a.pageSnapshot() != before {
					t.Fatal("a request without the CSRF token changed the database")
				}
			})
		}
	}
	// The session's state did not move either: the panel is open on the chat.
	doc := c.pageEdit(t, page)
	if len(htmltest.ByTestID(doc, "page-chat")) != 1 || chatComposerExchange(t, doc) != fmt.Sprint(ex) || len(pageCards(doc)) != 1 {
		t.Fatal("a forged request changed the session's page state")
	}
}

// Signed-out visitors are sent to sign in.
func TestPageRequiresSignIn(t *testing.T) {
	a := newTestApp(t)
	owner := a.register("ada")
	page := owner.pageCreate(t, "Trip", pageTrip)
	anon := a.anon()
	anon.get("/login")
	for _, path := range []string{"/pages", fmt.Sprintf("/pages/%d/edit", page)} {
		res := anon.get(path)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
			t.Fatalf("GET %s signed out: %d %q", path, res.StatusCode, res.Header.Get("Location"))
		}
	}
	before := a.pageSnapshot()
	res := anon.postForm(fmt.Sprintf("/pages/%d/save", page), url.Values{"content": {"x"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" || a.pageSnapshot() != before {
		t.Fatalf("signed-out save: %d", res.StatusCode)
	}
	res, b := anon.api(http.MethodGet, fmt.Sprintf("/api/pages/%d", page), nil)
	apiErr(t, res, b, http.StatusUnauthorized)
}
