package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"palaver/internal/htmltest"
)

// A refused input says the same reason through every surface it can come
// from (the JSON API, an htmx fragment, a page without JavaScript), each in
// its own shape, and is logged once, by the error handler, as a warning.
func TestRefusalSurfaces(t *testing.T) {
	var logs syncBuffer
	a := newTestApp(t, withLog(&logs))
	ada := a.register("ada")
	key := a.apiClient("bob")
	// logged counts the warnings for path since the last call.
	seen := 0
	logged := func(t *testing.T, path string) {
		t.Helper()
		all := strings.Count(logs.String(), `msg="request refused"`)
		if all-seen != 1 || strings.Count(logs.String(), `level=WARN msg="request refused" method=`) != all ||
			!strings.Contains(logs.String(), "path="+path+" ") {
			t.Fatalf("refusal of %s logged %d times, want once:\n%s", path, all-seen, logs.String())
		}
		seen = all
	}

	t.Run("a message too long", func(t *testing.T) {
		long := strings.Repeat("x", 100_001)
		const reason = "The message is 100001 characters long; the limit is 100000"

		res, b := key.api(http.MethodPost, "/api/chat", map[string]any{"query": long})
		mustStatus(t, res, http.StatusBadRequest)
		var chat map[string]any
		if err := json.Unmarshal(b, &chat); err != nil {
			t.Fatal(err)
		}
		if chat["error_code"] != 400.0 || chat["error_message"] != reason || chat["err_code"] != 400.0 ||
			chat["err_msg"] != reason || chat["exchange_id"] != nil {
			t.Fatalf("API: %s", b)
		}
		logged(t, "/api/chat")

		res = ada.htmx(http.MethodPost, "/chat/send", url.Values{"query": {long}, "exchange_id": {"0"}})
		mustStatus(t, res, http.StatusBadRequest)
		if body := bodyOf(res); res.Header.Get("HX-Reswap") != "none" || !chatHTMXAlert.MatchString(body) || !strings.Contains(body, reason) {
			t.Fatalf("htmx: HX-Reswap %q, %s", res.Header.Get("HX-Reswap"), body)
		}
		logged(t, "/chat/send")

		res = ada.postForm("/chat/send", url.Values{"query": {long}, "exchange_id": {"0"}})
		mustStatus(t, res, http.StatusUnprocessableEntity)
		if e := htmltest.ByTestID(chatDoc(t, res), "composer-error"); len(e) != 1 || !strings.Contains(htmltest.Text(e[0]), reason) {
			t.Fatal("no-JS: no composer error with the reason")
		}
		logged(t, "/chat/send")
	})

	t.Run("a search too long", func(t *testing.T) {
		q := url.Values{"q": {strings.Repeat("é", 501)}}.Encode()
		const reason = "The search is 501 characters long; the limit is 500"

		res, b := key.api(http.MethodGet, "/api/chat/search?"+q, nil)
		mustStatus(t, res, http.StatusBadRequest)
		var e struct {
			ErrMsg  string `json:"err_msg"`
			ErrCode int    `json:"err_code"`
		}
		if err := json.Unmarshal(b, &e); err != nil || e.ErrMsg != reason || e.ErrCode != 400 {
			t.Fatalf("API: %s", b)
		}
		logged(t, "/api/chat/search")

		for _, surface := range []struct {
			name string
			get  func() *http.Response
		}{
			{"htmx", func() *http.Response { return ada.htmx(http.MethodGet, "/chat/search?"+q, nil) }},
			{"no-JS", func() *http.Response { return ada.get("/chat/search?" + q) }},
		} {
			res := surface.get()
			mustStatus(t, res, http.StatusBadRequest)
			if e := htmltest.ByTestID(chatDoc(t, res), "search-error"); len(e) != 1 || htmltest.Text(e[0]) != reason+"." {
				t.Fatalf("%s: the reason is not where the hits would be", surface.name)
			}
			logged(t, "/chat/search")
		}
	})

}

// An administrator's refused action says the same reason as an htmx alert
// and, without JavaScript, as the flash of the page it goes back to; each
// logged once.
func TestRefusalSurfacesAdmin(t *testing.T) {
	var logs syncBuffer
	a := newTestApp(t, withLog(&logs))
	admin := a.register("root")
	path := fmt.Sprintf("/admin/users/%d/demote", admin.user.ID)
	const reason = "no administrator who can sign in"
	warnings := func() int {
		return strings.Count(logs.String(), `level=WARN msg="request refused" method=POST path=`+path+" status=409")
	}

	res := admin.htmx(http.MethodPost, path, url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusConflict)
	if body := bodyOf(res); res.Header.Get("HX-Reswap") != "none" || !chatHTMXAlert.MatchString(body) || !strings.Contains(body, reason) {
		t.Fatalf("htmx: %s", body)
	}
	if n := warnings(); n != 1 {
		t.Fatalf("htmx refusal logged %d times:\n%s", n, logs.String())
	}

	res = admin.postFormFrom(path, "/admin/users", url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	if f := adminFlash(admin.chatScreen(t, "/admin/users")); !strings.Contains(f, reason) {
		t.Fatalf("no-JS flash %q", f)
	}
	if n := warnings(); n != 2 {
		t.Fatalf("no-JS refusal logged %d times in all, want 2:\n%s", n, logs.String())
	}
}
