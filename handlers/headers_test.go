package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// headersCSPRequired are the directives API.md requires of every HTML page.
var headersCSPRequired = []string{
	"default-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'", "form-action 'self'",
}

// headersCheck fails unless res carries the security headers: the CSP with
// the required directives and no source wider than 'self' or 'none', nosniff,
// the referrer policy and X-Frame-Options.
func headersCheck(t *testing.T, what string, res *http.Response) {
	t.Helper()
	csp := res.Header.Get("Content-Security-Policy")
	for _, d := range headersCSPRequired {
		if !strings.Contains(csp, d) {
			t.Errorf("%s: Content-Security-Policy %q lacks %q", what, csp, d)
		}
	}
	// Same-origin and nonces only: no data:, https:, *, nor any inline or
	// eval escape hatch.
	for _, directive := range strings.Split(csp, ";") {
		fields := strings.Fields(directive)
		if len(fields) == 0 {
			t.Errorf("%s: empty directive in %q", what, csp)
			continue
		}
		for _, src := range fields[1:] {
			if src != "'self'" && src != "'none'" && !strings.HasPrefix(src, "'nonce-") {
				t.Errorf("%s: %s allows %s", what, fields[0], src)
			}
		}
	}
	for k, want := range map[string]string{
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "same-origin",
		"X-Frame-Options":        "DENY",
	} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s: %s is %q, want %q", what, k, got, want)
		}
	}
}

// Every kind of response carries the security headers: pages, the JSON
// API, static files, htmx fragments, redirects, error pages and 404s, the
// API's errors and the health check.
func TestSecurityHeaders(t *testing.T) {
	a := newTestApp(t)
	alice := a.register("alice")
	key := a.apiClient("alice")
	anon := a.anon()

	login := anon.get("/login")
	mustStatus(t, login, http.StatusOK)
	scripts := regexp.MustCompile(`src="(/static/app\.js\?v=[0-9a-f]+)"`).FindStringSubmatch(bodyOf(login))
	if scripts == nil {
		t.Fatalf("the login page names no app.js: %s", bodyOf(login))
	}

	htmx := alice.htmx(http.MethodGet, "/chat/history", nil)
	if htmx.StatusCode != http.StatusOK || strings.Contains(bodyOf(htmx), "<html") {
		t.Fatalf("htmx history: status %d, a fragment expected: %.200s", htmx.StatusCode, bodyOf(htmx))
	}
	apiRes, _ := key.api(http.MethodGet, "/api/chat/history", nil)
	apiMissing, _ := key.api(http.MethodGet, "/api/chat/exchange/999/messages", nil)
	apiUnauth, _ := anon.api(http.MethodGet, "/api/chat/history", nil)
	htmxErr := alice.htmx(http.MethodPost, "/chat/999/rename", url.Values{"title": {"x"}})
	for _, tc := range []struct {
		what   string
		res    *http.Response
		status int
		ctype  string
	}{
		{"HTML page", login, http.StatusOK, "text/html"},
		{"signed-in page", alice.get("/chat"), http.StatusOK, "text/html"},
		{"htmx fragment", htmx, http.StatusOK, "text/html"},
		{"htmx error", htmxErr, http.StatusNotFound, "text/html"},
		{"redirect", anon.get("/"), http.StatusSeeOther, ""},
		{"JSON API", apiRes, http.StatusOK, "application/json"},
		{"JSON API 404", apiMissing, http.StatusNotFound, "application/json"},
		{"JSON API 401", apiUnauth, http.StatusUnauthorized, "application/json"},
		{"static file", anon.get(scripts[1]), http.StatusOK, "text/javascript"},
		{"static 404", anon.get("/static/nothing.js"), http.StatusNotFound, "text/html"},
		{"route 404", alice.get("/no/such/page"), http.StatusNotFound, "text/html"},
		{"error page", alice.get("/chat/999"), http.StatusNotFound, "text/html"},
		{"health check", anon.get("/healthz"), http.StatusOK, "application/json"},
	} {
		if tc.res.StatusCode != tc.status || !strings.HasPrefix(tc.res.Header.Get("Content-Type"), tc.ctype) {
			t.Errorf("%s: status %d (%s), want %d (%s)", tc.what, tc.res.StatusCode, tc.res.Header.Get("Content-Type"), tc.status, tc.ctype)
		}
		headersCheck(t, tc.what, tc.res)
	}
}

// The pages hold nothing the CSP refuses: no inline script or style, no
// event handler attribute, no style attribute, nothing loaded from another
// origin or a data: URL. (The browser tests also fail on any CSP report; this
// names the template at fault without a browser.)
func TestPagesNeedNoInlineCode(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann") // the first account: an administrator
	ex := ann.chatSend(t, "what is ![x](http://attacker.example/leak.png) **there**?", 0)
	a.waitTurns()
	page := ann.pageCreate(t, "Trip", pageTrip+"\n![map](https://maps.example/paris.png)\n")
	ann.pageSend(t, page, `replace "Paris" with "Rome"`, 0)
	a.waitTurns()

	paths := []string{"/login", "/register", "/chat", fmt.Sprintf("/chat/%d", ex), "/pages",
		fmt.Sprintf("/pages/%d/edit", page), "/admin", "/admin/exchanges",
		"/admin/users", "/admin/housekeeping", "/admin/audit", fmt.Sprintf("/admin/exchanges/%d", ex), "/chat/999"}
	for _, p := range paths {
		c := ann
		switch p {
		case "/login", "/register":
			c = a.anon()
		case "/chat": // a new chat's page: with a current one, /chat is a redirect to it
			c = a.register("cid")
		}
		res := c.get(p)
		if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusNotFound {
			t.Fatalf("GET %s: status %d", p, res.StatusCode)
		}
		headersCheck(t, p, res)
		if bad := headersInline(bodyOf(res)); bad != "" {
			t.Errorf("GET %s: %s", p, bad)
		}
	}
	// The admin's reading view and the preview, which are POST answers.
	res := ann.postForm(fmt.Sprintf("/admin/exchanges/%d", ex), url.Values{"reason": {"check"}})
	mustStatus(t, res, http.StatusOK)
	if bad := headersInline(bodyOf(res)); bad != "" {
		t.Errorf("admin reading view: %s", bad)
	}
	res = ann.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/preview", page), url.Values{"content": {"![x](//cdn.example/a.png)"}})
	mustStatus(t, res, http.StatusOK)
	if bad := headersInline(bodyOf(res)); bad != "" {
		t.Errorf("preview: %s", bad)
	}
	headersCheck(t, "preview", res)
}

// headersInline says what in a document the CSP would refuse ("" when
// nothing).
func headersInline(doc string) string {
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		return "unparsable: " + err.Error()
	}
	var bad []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			attr := map[string]string{}
			for _, a := range n.Attr {
				attr[strings.ToLower(a.Key)] = a.Val
				switch k := strings.ToLower(a.Key); {
				case strings.HasPrefix(k, "on"):
					bad = append(bad, fmt.Sprintf("<%s %s=…>", n.Data, k))
				case k == "style":
					bad = append(bad, fmt.Sprintf("<%s style=%q>", n.Data, a.Val))
				case strings.HasPrefix(k, "hx-on"), k == "hx-vars":
					bad = append(bad, fmt.Sprintf("<%s %s> (htmx evaluates it)", n.Data, k))
				case k == "hx-vals" && strings.HasPrefix(strings.TrimSpace(a.Val), "js:"),
					k == "hx-vals" && strings.HasPrefix(strings.TrimSpace(a.Val), "javascript:"):
					bad = append(bad, fmt.Sprintf("<%s hx-vals=%q> (htmx evaluates it)", n.Data, a.Val))
				}
			}
			switch n.DataAtom {
			case atom.Script:
				if attr["src"] == "" {
					bad = append(bad, "an inline <script>")
				}
			case atom.Style:
				bad = append(bad, "a <style> element")
			}
			for _, k := range []string{"src", "srcset", "poster", "data", "background"} {
				if v, ok := attr[k]; ok && (!strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//")) {
					bad = append(bad, fmt.Sprintf("<%s %s=%q> loads from elsewhere", n.Data, k, v))
				}
			}
			if n.DataAtom == atom.Link {
				if v := attr["href"]; !strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//") {
					bad = append(bad, fmt.Sprintf("<link href=%q> loads from elsewhere", v))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return strings.Join(bad, "; ")
}

// The checker catches what it must, so the test above cannot pass by
// checking nothing.
func TestHeadersInlineCatches(t *testing.T) {
	for _, doc := range []string{
		`<script>alert(1)</script>`,
		`<style>p{}</style>`,
		`<p style="color:red">x</p>`,
		`<button onclick="x()">x</button>`,
		`<div hx-on:click="x()"></div>`,
		`<form hx-vals='js:{a: 1}'></form>`,
		`<img src="http://a.example/x.png">`,
		`<img src="//a.example/x.png">`,
		`<link rel="icon" href="data:,">`,
	} {
		if headersInline(doc) == "" {
			t.Errorf("the checker passes %q", doc)
		}
	}
	if bad := headersInline(`<script src="/static/app.js?v=1" defer></script><img src="/static/a.png"><link rel="stylesheet" href="/static/app.css">`); bad != "" {
		t.Errorf("the checker refuses same-origin files: %s", bad)
	}
}
