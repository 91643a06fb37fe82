package handlers_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestHealthz(t *testing.T) {
	a := newTestApp(t)
	res := a.anon().get("/healthz")
	mustStatus(t, res, http.StatusOK)
	var got map[string]string
	if err := json.Unmarshal([]byte(bodyOf(res)), &got); err != nil || got["status"] != "ok" {
		t.Fatalf("healthz body %q (%v)", bodyOf(res), err)
	}
	if res.Header.Get("Set-Cookie") != "" {
		t.Fatal("healthz started a session")
	}
}

func TestStaticAssetsCacheBusting(t *testing.T) {
	a := newTestApp(t)
	page := bodyOf(a.anon().get("/login"))
	m := regexp.MustCompile(`src="(/static/app\.js\?v=([0-9a-f]+))"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("login page has no versioned app.js: %s", page)
	}
	res := a.anon().get(m[1])
	mustStatus(t, res, http.StatusOK)
	if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=31536000") {
		t.Fatalf("versioned asset Cache-Control %q, want a year", cc)
	}
	if ct := res.Header.Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Fatalf("app.js Content-Type %q", ct)
	}
	res = a.anon().get("/static/app.js?v=stale")
	if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Fatalf("stale-version asset Cache-Control %q, want no-cache", cc)
	}
	mustStatus(t, a.anon().get("/static/nope.js"), http.StatusNotFound)
}

func TestNotFoundPages(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	res := c.get("/no/such/page")
	mustStatus(t, res, http.StatusNotFound)
	if !strings.Contains(bodyOf(res), `data-testid="error-message"`) {
		t.Fatal("HTML 404 is not the error page")
	}
	res = c.get("/api/no/such/route")
	mustStatus(t, res, http.StatusNotFound)
	var e struct {
		ErrMsg  string `json:"err_msg"`
		ErrCode int    `json:"err_code"`
	}
	if err := json.Unmarshal([]byte(bodyOf(res)), &e); err != nil || e.ErrCode != 404 || e.ErrMsg == "" {
		t.Fatalf("API 404 body %q", bodyOf(res))
	}
}

func TestHomeRedirects(t *testing.T) {
	a := newTestApp(t)
	res := a.anon().get("/")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
		t.Fatalf("anonymous / → %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	res = a.register("ada").get("/")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/chat" {
		t.Fatalf("signed-in / → %d %q", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestHTMXErrorIsAlertFragment(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	res := c.htmx(http.MethodGet, "/no/such/page", nil)
	mustStatus(t, res, http.StatusNotFound)
	body := bodyOf(res)
	if strings.Contains(body, "<html") || !strings.Contains(body, `role="alert"`) {
		t.Fatalf("htmx error should be an alert fragment, got %s", body)
	}
	if res.Header.Get("HX-Reswap") != "none" {
		t.Fatal("htmx error fragment must not replace the request's target")
	}
	if !strings.Contains(res.Header.Get("Vary"), "HX-Request") {
		t.Fatalf("Vary %q lacks HX-Request", res.Header.Get("Vary"))
	}
}
