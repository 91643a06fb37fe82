package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// favouritesGroup is the picker's Favourites group, as the page has it.
var favouritesGroup = regexp.MustCompile(`(?s)<optgroup label="Favourites">(.*?)</optgroup>`)

// Favourite models: starred through the API, the account page's list or
// the picker's star, listed first in the picker of the chat's composer
// and of the page panel's alike, marked in GET /api/models; an unknown or
// disabled model is refused and nothing changes; each person has their own.
func TestModelFavourites(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	bob := a.register("bob")
	fake, other := fakeModels(t, a, admin)
	favourites := func(c *client) map[int64]bool {
		t.Helper()
		var choices []struct {
			ID        int64 `json:"id"`
			Favourite bool  `json:"favourite"`
		}
		c.apiJSON("GET", "/api/models", nil, http.StatusOK, &choices)
		out := map[int64]bool{}
		for _, ch := range choices {
			if ch.Favourite {
				out[ch.ID] = true
			}
		}
		return out
	}
	if page := bodyOf(bob.get("/chat")); favouritesGroup.MatchString(page) || !strings.Contains(page, `data-testid="model-favourite"`) {
		t.Fatalf("a Favourites group before any star, or no star:\n%s", page)
	}

	// Refused: a model that does not exist, a disabled one.
	admin.apiJSON("PUT", fmt.Sprintf("/api/admin/models/%d", other.ID), map[string]any{"enabled": false}, http.StatusOK, nil)
	disabled := other.ID
	for _, id := range []int64{424242, disabled} {
		res, body := bob.api("PUT", "/api/models/favourites", map[string]any{"model": id, "favourite": true})
		mustStatus(t, res, http.StatusBadRequest)
		if !strings.Contains(string(body), "gpt-fake") && !strings.Contains(string(body), fake.Name) {
			t.Fatalf("the refusal does not name the choices: %s", body)
		}
		mustStatus(t, bob.postForm("/account/models/favourite", url.Values{"model": {fmt.Sprint(id)}, "favourite": {"1"}}), http.StatusBadRequest)
		mustStatus(t, bob.postForm("/account/models/favourite", url.Values{"model": {fmt.Sprint(id)}}), http.StatusBadRequest)
	}
	admin.apiJSON("PUT", fmt.Sprintf("/api/admin/models/%d", other.ID), map[string]any{"enabled": true}, http.StatusOK, nil)
	mustStatus(t, bob.postForm("/account/models/favourite", url.Values{"model": {fmt.Sprint(fake.ID)}, "favourite": {"yes"}}), http.StatusUnprocessableEntity)
	mustStatus(t, bob.postForm("/account/models/favourite", url.Values{"model": {"x"}}), http.StatusUnprocessableEntity)
	res, _ := bob.api("PUT", "/api/models/favourites", map[string]any{"model": fake.ID})
	mustStatus(t, res, http.StatusBadRequest)
	if got := favourites(bob); len(got) != 0 {
		t.Fatalf("refused stars were kept: %v", got)
	}

	// The JSON API stars and unstars.
	var put struct {
		Model     int64 `json:"model"`
		Favourite bool  `json:"favourite"`
	}
	bob.apiJSON("PUT", "/api/models/favourites", map[string]any{"model": other.ID, "favourite": true}, http.StatusOK, &put)
	if put.Model != other.ID || !put.Favourite {
		t.Fatalf("PUT answered %+v", put)
	}
	if got := favourites(bob); len(got) != 1 || !got[other.ID] {
		t.Fatalf("GET /api/models favourites %v, want %d", got, other.ID)
	}
	if got := favourites(admin); len(got) != 0 {
		t.Fatalf("bob's star shows for ann: %v", got)
	}
	// The picker lists it first, once, in the chat's composer and the page
	// panel's.
	pageID := bob.pageCreate(t, "Notes", "# Notes\n")
	for _, path := range []string{"/chat", fmt.Sprintf("/pages/%d/edit", pageID)} {
		page := bodyOf(bob.get(path))
		group := favouritesGroup.FindStringSubmatch(page)
		if group == nil || !strings.Contains(group[1], fmt.Sprintf(`value="%d"`, other.ID)) || strings.Contains(group[1], fmt.Sprintf(`value="%d"`, fake.ID)) ||
			strings.Index(page, `<optgroup label="Favourites">`) > strings.Index(page, `<optgroup label="fake">`) ||
			strings.Count(page, fmt.Sprintf(`<option value="%d"`, other.ID)) != 1 {
			t.Fatalf("%s: the favourite is not first, alone, once:\n%s", path, page)
		}
	}
	bob.apiJSON("PUT", "/api/models/favourites", map[string]any{"model": other.ID, "favourite": false}, http.StatusOK, &put)
	if got := favourites(bob); put.Favourite || len(got) != 0 {
		t.Fatalf("unstarring left %v (%+v)", got, put)
	}

	// The account page's list, without JavaScript, then with htmx.
	if page := bodyOf(bob.get("/account")); strings.Count(page, `data-testid="model-favourite-row"`) < 3 {
		t.Fatalf("no list of models to star:\n%s", page)
	}
	res = bob.postForm("/account/models/favourite", url.Values{"model": {fmt.Sprint(fake.ID)}, "favourite": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/account" {
		t.Fatalf("went to %q", loc)
	}
	res = bob.htmx("POST", "/account/models/favourite", url.Values{"model": {fmt.Sprint(other.ID)}, "favourite": {"1"}})
	mustStatus(t, res, http.StatusOK)
	if frag := bodyOf(res); !strings.HasPrefix(strings.TrimSpace(frag), `<div id="model-favourites"`) ||
		strings.Count(frag, `aria-pressed="true"`) != 2 {
		t.Fatalf("the htmx answer is not the list with two stars:\n%s", frag)
	}
	if got := favourites(bob); len(got) != 2 {
		t.Fatalf("favourites %v, want both", got)
	}

	// The picker's star toggles the chosen model: without JavaScript back
	// to the page it was on, with htmx the picker in place, still chosen.
	res = bob.postFormFrom("/account/models/favourite", "http://example.com/chat?x=1", url.Values{"model": {fmt.Sprint(fake.ID)}, "query": {"unsent"}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/chat?x=1" {
		t.Fatalf("the star went to %q", loc)
	}
	if got := favourites(bob); got[fake.ID] || !got[other.ID] {
		t.Fatalf("the star did not unstar: %v", got)
	}
	res = bob.postFormFrom("/account/models/favourite", "http://elsewhere.test/x", url.Values{"model": {fmt.Sprint(fake.ID)}})
	if loc := res.Header.Get("Location"); loc != "/chat" {
		t.Fatalf("another site's Referer was followed: %q", loc)
	}
	res = bob.htmx("POST", "/account/models/favourite", url.Values{"model": {fmt.Sprint(fake.ID)}})
	mustStatus(t, res, http.StatusOK)
	frag := bodyOf(res)
	if !strings.HasPrefix(strings.TrimSpace(frag), `<div id="model-picker-box"`) ||
		!strings.Contains(frag, fmt.Sprintf(`<option value="%d" selected data-connection="fake">`, fake.ID)) ||
		!strings.Contains(frag, `aria-pressed="false"`) {
		t.Fatalf("the htmx answer is not the picker, the model chosen and unstarred:\n%s", frag)
	}
	if got := favourites(bob); got[fake.ID] {
		t.Fatalf("toggled twice, still starred: %v", got)
	}
	if msgs := bob.apiHistory(""); len(msgs) != 0 {
		t.Fatalf("the star sent the composer's message: %+v", msgs)
	}
}
