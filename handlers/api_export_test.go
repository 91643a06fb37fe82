package handlers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"palaver/transfer"
)

// TestAPIExport: GET /api/export streams the user's pages then exchanges as
// a Palaver export that the format's own reader accepts: forks name their
// parent by uid, page chats their page, ratings and comments kept, and
// nothing of another user's.
func TestAPIExport(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	root := *ann.apiChat("pelicans in winter", 0).ExchangeID
	ann.apiChat("and in summer", root)
	var fork struct {
		ExchangeID int64 `json:"exchange_id"`
	}
	ann.apiJSON(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/fork", root), map[string]any{"seq": 2}, http.StatusCreated, &fork)
	reply := ann.apiMessages(root)[1].ID
	ann.apiJSON(http.MethodPut, fmt.Sprintf("/api/chat/message/%d/feedback", reply), map[string]any{"feedback": 1, "comment": "spot on"}, http.StatusOK, nil)
	page := ann.apiPageCreate("Trip", pageTrip)
	pageChat := *ann.apiPageChat(page.ID, "what is in the plan?", 0).ExchangeID
	bob.apiChat("bob's secret walrus", 0)

	res, body := ann.api(http.MethodGet, "/api/export", nil)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/x-ndjson") ||
		!strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("GET /api/export: %d %v", res.StatusCode, res.Header)
	}
	if bytes.Contains(body, []byte("walrus")) {
		t.Fatal("the export holds another user's message")
	}
	r, err := transfer.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the export's header: %v\n%s", err, body)
	}
	var pages []*transfer.Page
	var exchanges []*transfer.Exchange
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the export does not read back: %v\n%s", err, body)
		}
		if it.Page != nil {
			if len(exchanges) > 0 {
				t.Fatal("a page line after an exchange line")
			}
			pages = append(pages, it.Page)
		} else {
			exchanges = append(exchanges, it.Exchange)
		}
	}
	if len(pages) != 1 || len(exchanges) != 3 {
		t.Fatalf("%d pages and %d exchanges, want 1 and 3", len(pages), len(exchanges))
	}
	byUID := map[transfer.UID]*transfer.Exchange{}
	for _, e := range exchanges {
		byUID[e.UID] = e
	}
	var sawFork, sawPageChat, sawRating bool
	for _, e := range exchanges {
		if e.ForkedFrom != nil {
			parent := byUID[e.ForkedFrom.ExchangeUID]
			sawFork = parent != nil && e.ForkedFrom.Seq == 2 && len(e.Messages) == 2 && parent.Messages[0].Content == e.Messages[0].Content
		}
		if e.Scope == "page" {
			sawPageChat = e.PageUID != nil && *e.PageUID == pages[0].UID
		}
		for _, m := range e.Messages {
			if m.Feedback != nil && *m.Feedback == 1 && m.Comment != nil && *m.Comment == "spot on" {
				sawRating = true
			}
		}
	}
	if !sawFork || !sawPageChat || !sawRating {
		t.Fatalf("fork %v, page chat %v, rating %v in %s", sawFork, sawPageChat, sawRating, body)
	}
	_ = pageChat
}

func TestAPIExchangeExport(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	ex := *ann.apiChat("how do ```fences``` look?", 0).ExchangeID
	path := fmt.Sprintf("/api/chat/exchange/%d/export", ex)

	res, body := ann.api(http.MethodGet, path, nil)
	var line transfer.Exchange
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") ||
		json.Unmarshal(body, &line) != nil || line.Validate() != nil || len(line.Messages) != 2 {
		t.Fatalf("json export: %d %v %s", res.StatusCode, res.Header, body)
	}
	res, body = ann.api(http.MethodGet, path+"?format=md", nil)
	md := string(body)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/markdown") ||
		!strings.Contains(md, "## Turn 1") || !strings.Contains(md, "**You**") || !strings.Contains(md, "how do ```fences``` look?") {
		t.Fatalf("markdown export: %d %s", res.StatusCode, md)
	}
	if res, body := ann.api(http.MethodGet, path+"?format=pdf", nil); res.StatusCode != http.StatusBadRequest {
		t.Errorf("format=pdf: %d %s", res.StatusCode, body)
	}
	if res, body := bob.api(http.MethodGet, path, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("another user's export: %d %s", res.StatusCode, body)
	}
}
