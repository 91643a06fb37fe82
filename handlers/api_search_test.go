package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// apiSearchOut is one search result as the API answers it.
type apiSearchOut struct {
	ExchangeID int64  `json:"exchange_id"`
	MessageID  *int64 `json:"message_id"`
	Seq        *int64 `json:"seq"`
	Role       string `json:"role"`
	Title      string `json:"title"`
	Snippet    string `json:"snippet"`
	Timestamp  string `json:"timestamp"`
	Cursor     string `json:"cursor"`
}

// apiSearch searches through the API and expects a 200.
func (c *client) apiSearch(q string, extra ...string) []apiSearchOut {
	c.a.t.Helper()
	var out []apiSearchOut
	path := "/api/chat/search?q=" + url.QueryEscape(q)
	if len(extra) > 0 {
		path += "&" + strings.Join(extra, "&")
	}
	c.apiJSON(http.MethodGet, path, nil, http.StatusOK, &out)
	return out
}

func TestAPISearchFindsTheMessage(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	first := ann.apiChat("Where do pelicans winter?", 0)
	ann.apiChat("something else entirely", 0)
	bob.apiChat("pelicans of bob", 0)

	hits := ann.apiSearch("PELICAN")
	if len(hits) != 3 { // the question, its quote in the reply, the title
		t.Fatalf("%d hits, want 3: %+v", len(hits), hits)
	}
	roles := map[string]int{}
	for _, h := range hits {
		roles[h.Role]++
		if h.ExchangeID != *first.ExchangeID {
			t.Errorf("a hit in exchange %d, want %d only", h.ExchangeID, *first.ExchangeID)
		}
		if !strings.Contains(h.Snippet, "<mark>") || h.Cursor == "" || h.Timestamp == "" || h.Title == "" {
			t.Errorf("hit %+v", h)
		}
		if h.Role == "title" && (h.MessageID != nil || h.Seq != nil) {
			t.Errorf("a title hit with a message: %+v", h)
		}
		if h.Role == "user" && (h.MessageID == nil || h.Seq == nil || *h.Seq != 0) {
			t.Errorf("the question's hit: %+v", h)
		}
	}
	if roles["user"] != 1 || roles["assistant"] != 1 || roles["title"] != 1 {
		t.Errorf("roles %v", roles)
	}
	// A batch of one, then the next from its cursor: no hit twice.
	page1 := ann.apiSearch("pelican", "limit=1")
	page2 := ann.apiSearch("pelican", "limit=2", "before="+url.QueryEscape(page1[0].Cursor))
	if len(page1) != 1 || len(page2) != 2 {
		t.Fatalf("pages of %d and %d, want 1 and 2", len(page1), len(page2))
	}
	for _, h := range page2 {
		if h.Role == page1[0].Role {
			t.Errorf("the second page repeats %+v", h)
		}
	}
}

func TestAPISearchRefusesOnlyEmptyOrLong(t *testing.T) {
	a := newTestApp(t)
	ann := a.apiClient("ann")
	ann.apiChat("hello", 0)
	before := a.apiRows()
	for _, tc := range []struct{ query, why string }{
		{"", "empty"}, {"q=", "empty q"}, {"q=%20%20%09", "blank q"},
		{"q=" + strings.Repeat("a", 501), "501 characters"},
		{"q=hello&limit=0", "limit 0"}, {"q=hello&limit=101", "limit 101"},
		{"q=hello&before=not-a-cursor", "a bad cursor"}, {"q=hello&scope=secret", "a bad scope"},
		{"q=hello&archived=maybe", "a bad archived"},
	} {
		res, body := ann.api(http.MethodGet, "/api/chat/search?"+tc.query, nil)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"err_code":400`) {
			t.Errorf("%s: %d %s", tc.why, res.StatusCode, body)
		}
	}
	// 500 characters of any script get through: 500 emoji are 6,000 bytes
	// escaped, and hostile syntax is only words.
	for _, q := range []string{
		strings.Repeat("🦜", 500), strings.Repeat("é", 500), `"unbalanced`, "AND OR NOT NEAR", "(a OR b)", "col:val",
		"*", `\`, "\x01\x7f", strings.Repeat(`"x" `, 125),
	} {
		res, body := ann.api(http.MethodGet, "/api/chat/search?q="+url.QueryEscape(q), nil)
		if res.StatusCode != http.StatusOK {
			t.Errorf("q=%.40q: %d %s", q, res.StatusCode, body)
		}
	}
	if after := a.apiRows(); after != before {
		t.Errorf("searching changed the rows: %v → %v", before, after)
	}
}

// TestAPIDeletedMessagesLeaveTheIndex: a rare word of a deleted exchange
// is not found through the API in the same moment the delete answered.
func TestAPIDeletedMessagesLeaveTheIndex(t *testing.T) {
	a := newTestApp(t)
	ann := a.apiClient("ann")
	ex := ann.apiChat("the quokka question", 0)
	if len(ann.apiSearch("quokka")) == 0 {
		t.Fatal("quokka not found before the delete")
	}
	ann.apiJSON(http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", *ex.ExchangeID), nil, http.StatusOK, nil)
	if hits := ann.apiSearch("quokka"); len(hits) != 0 {
		t.Fatalf("after the delete: %+v", hits)
	}
	ann.apiChat("a second quokka", 0)
	ann.apiJSON(http.MethodDelete, "/api/chat/history", nil, http.StatusOK, nil)
	if hits := ann.apiSearch("quokka"); len(hits) != 0 {
		t.Fatalf("after clearing the history: %+v", hits)
	}
}

func TestAPIExchangeUpdate(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	ex := ann.apiChat("capybara facts", 0)
	other := ann.apiChat("another chat", 0)
	path := fmt.Sprintf("/api/chat/exchange/%d", *ex.ExchangeID)

	var it apiHistoryOut
	ann.apiJSON(http.MethodPatch, path, map[string]any{"title": "  Capybaras  ", "pinned": true}, http.StatusOK, &it)
	if it.ID != *ex.ExchangeID || it.Title != "Capybaras" || !it.Pinned || it.Archived || it.Query != "capybara facts" || it.MessageCount != 1 {
		t.Fatalf("after rename and pin: %+v", it)
	}
	// The title is found; the activity order did not change.
	if hits := ann.apiSearch("capybaras"); len(hits) == 0 {
		t.Fatal("the new title is not found")
	}
	if h := ann.apiHistory(""); len(h) != 2 || h[0].ID != *other.ExchangeID {
		t.Fatalf("the history order changed: %+v", h)
	}

	// Archived: out of the default history and search, in the archived ones.
	ann.apiJSON(http.MethodPatch, path, map[string]any{"archived": true}, http.StatusOK, &it)
	if !it.Archived || !it.Pinned || it.Title != "Capybaras" {
		t.Fatalf("after archiving: %+v", it)
	}
	if h := ann.apiHistory(""); len(h) != 1 || h[0].ID != *other.ExchangeID {
		t.Fatalf("the default history lists an archived chat: %+v", h)
	}
	if h := ann.apiHistory("?archived=true"); len(h) != 1 || h[0].ID != *ex.ExchangeID || !h[0].Archived {
		t.Fatalf("the archived history: %+v", h)
	}
	if hits := ann.apiSearch("capybaras"); len(hits) != 0 {
		t.Fatalf("search finds an archived chat by default: %+v", hits)
	}
	if hits := ann.apiSearch("capybaras", "archived=true"); len(hits) == 0 {
		t.Fatal("archived=true does not find the archived chat")
	}

	// Refusals change nothing.
	for _, tc := range []struct {
		c      *client
		path   string
		body   any
		status int
	}{
		{bob, path, map[string]any{"title": "mine now"}, http.StatusNotFound},
		{ann, "/api/chat/exchange/999999", map[string]any{"pinned": true}, http.StatusNotFound},
		{ann, path, map[string]any{"title": ""}, http.StatusBadRequest},
		{ann, path, map[string]any{"title": strings.Repeat("x", 201)}, http.StatusBadRequest},
		{ann, path, map[string]any{"pinned": "yes"}, http.StatusBadRequest},
		{ann, path, "not json", http.StatusBadRequest},
	} {
		res, body := tc.c.api(http.MethodPatch, tc.path, tc.body)
		if res.StatusCode != tc.status {
			t.Errorf("PATCH %s %v: %d %s, want %d", tc.path, tc.body, res.StatusCode, body, tc.status)
		}
	}
	if h := ann.apiHistory("?archived=true"); len(h) != 1 || h[0].Title != "Capybaras" || !h[0].Pinned {
		t.Fatalf("a refused update changed the chat: %+v", h)
	}
}
