package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"palaver/paths"
)

// Every state-changing form ends one way (handlers.done): without
// JavaScript a 303 to the screen; for htmx the fragment in place; for an
// htmx request that wants no fragment (boosted), HX-Redirect to the same
// screen; and each varies on HX-Request.
func TestDoneEndsEveryWayTheSame(t *testing.T) {
	a := newTestApp(t)
	ada := a.register("ada")
	id := ada.pageCreate(t, "Plan", "# Plan\n")
	save := url.Values{"content": {"# Plan\n\nmore\n"}}

	save.Set("csrf_token", ada.csrf)
	plain := ada.postForm(paths.PageSave(id), save)
	mustStatus(t, plain, http.StatusSeeOther)
	if got := plain.Header.Get("Location"); got != paths.PageEdit(id) {
		t.Fatalf("plain form: Location %q, want %q", got, paths.PageEdit(id))
	}

	fragment := ada.htmx(http.MethodPost, paths.PageSave(id), save)
	mustStatus(t, fragment, http.StatusOK)
	if fragment.Header.Get("HX-Redirect") != "" || !strings.Contains(bodyOf(fragment), "hx-swap-oob") {
		t.Fatalf("htmx: want the out-of-band fragment, got HX-Redirect %q: %s", fragment.Header.Get("HX-Redirect"), bodyOf(fragment))
	}

	req := httptest.NewRequest(http.MethodPost, paths.PageSave(id), strings.NewReader(save.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Boosted", "true")
	boosted := ada.do(req)
	mustStatus(t, boosted, http.StatusNoContent)
	if got := boosted.Header.Get("HX-Redirect"); got != paths.PageEdit(id) {
		t.Fatalf("boosted: HX-Redirect %q, want %q", got, paths.PageEdit(id))
	}
	for _, r := range []*http.Response{plain, fragment, boosted} {
		if !strings.Contains(r.Header.Get("Vary"), "HX-Request") {
			t.Fatalf("%s: no Vary: HX-Request: %v", r.Request.Header.Get("HX-Boosted"), r.Header)
		}
	}
}

// An error answers an htmx fragment request with the alert (and no swap),
// and anything else, a history restore included (htmx puts what it gets
// in place of the whole page), with the full error screen.
func TestErrorsFollowIsFragment(t *testing.T) {
	a := newTestApp(t)
	ada := a.register("ada")
	for _, tc := range []struct {
		name    string
		headers map[string]string
		full    bool
	}{
		{"htmx", map[string]string{"HX-Request": "true"}, false},
		{"history restore", map[string]string{"HX-Request": "true", "HX-History-Restore-Request": "true"}, true},
		{"boosted", map[string]string{"HX-Request": "true", "HX-Boosted": "true"}, true},
		{"plain", nil, true},
	} {
		req := httptest.NewRequest(http.MethodGet, paths.Chat(999999), nil)
		for k, v := range tc.headers {
			req.Header.Set(k, v)
		}
		res := ada.do(req)
		mustStatus(t, res, http.StatusNotFound)
		body := bodyOf(res)
		if full := strings.Contains(body, "<html"); full != tc.full {
			t.Errorf("%s: full error screen %v, want %v: %s", tc.name, full, tc.full, body)
		}
		if reswap := res.Header.Get("HX-Reswap") == "none"; reswap == tc.full {
			t.Errorf("%s: HX-Reswap %q", tc.name, res.Header.Get("HX-Reswap"))
		}
	}
}
