package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAPIHistoryShape(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")

	res, b := ada.api(http.MethodGet, "/api/chat/history", nil)
	mustStatus(t, res, http.StatusOK)
	if strings.TrimSpace(string(b)) != "[]" {
		t.Fatalf("empty history is %s, want []", b)
	}

	id := *ada.apiChat("hello", 0).ExchangeID
	ada.apiJSON(http.MethodPut, fmt.Sprintf("/api/chat/exchange/%d/feedback", id), "1", 200, nil)
	ada.apiChat("tell me more", id)
	_, b = ada.api(http.MethodGet, "/api/chat/history", nil)
	var items []map[string]any
	if err := json.Unmarshal(b, &items); err != nil || len(items) != 1 {
		t.Fatalf("history %s: %v", b, err)
	}
	it := items[0]
	apiShape(t, "history item", it, map[string]string{
		"id": "number", "title": "string", "query": "string", "response": "string",
		"agent_type": "string", "agent_response": "object", "timestamp": "string",
		"updated_at": "string", "feedback": "number|null", "message_count": "number", "cursor": "string",
		"pinned": "bool", "archived": "bool", "forked_from": "null",
		"status": "string", // the run state (issue 25)
	})
	if it["id"] != float64(id) || it["message_count"] != 2.0 || it["query"] != "hello" || it["status"] != "idle" {
		t.Fatalf("history item: %v", it)
	}
	// The rating shown is the latest reply's, and the latest reply is not rated.
	if it["feedback"] != nil {
		t.Fatalf("feedback %v; the latest reply is unrated", it["feedback"])
	}
	created, err1 := time.Parse(time.RFC3339, it["timestamp"].(string))
	updated, err2 := time.Parse(time.RFC3339, it["updated_at"].(string))
	if err1 != nil || err2 != nil || !updated.After(created) {
		t.Fatalf("timestamp %v / updated_at %v: not RFC 3339 or not ordered (%v, %v)", it["timestamp"], it["updated_at"], err1, err2)
	}
}

func TestAPIHistoryPagination(t *testing.T) {
	a := newTestApp(t)
	ada, bob := a.apiClient("ada"), a.apiClient("bob")
	var ids []int64 // oldest first
	for i := range 7 {
		ids = append(ids, *ada.apiChat(fmt.Sprintf("question %d", i), 0).ExchangeID)
	}
	bob.apiChat("bob's", 0)
	ada.apiJSON(http.MethodPost, "/api/chat?job_id=7", map[string]any{"query": "a job"}, 200, nil)
	newestFirst := slices.Clone(ids)
	slices.Reverse(newestFirst)

	walk := func(first []apiHistoryOut, between func(page int)) []int64 {
		var seen []int64
		page := first
		for n := 1; ; n++ {
			if len(page) > 3 {
				t.Fatalf("page %d has %d items, limit 3", n, len(page))
			}
			for _, it := range page {
				seen = append(seen, it.ID)
			}
			if len(page) < 3 {
				return seen
			}
			if between != nil {
				between(n)
			}
			page = ada.apiHistory("?limit=3&before=" + page[len(page)-1].Cursor)
		}
	}
	if got := walk(ada.apiHistory("?limit=3"), nil); !slices.Equal(got, newestFirst) {
		t.Fatalf("walk: %v, want %v", got, newestFirst)
	}
	if got := ada.apiHistory(""); len(got) != 7 {
		t.Fatalf("default limit: %d items, want 7", len(got))
	}

	// New activity between pages: one already seen (ids[5]) and one not yet
	// (ids[1]) move to the top. Neither may show up twice.
	got := walk(ada.apiHistory("?limit=3"), func(page int) {
		if page == 1 {
			ada.apiChat("more", ids[5])
			ada.apiChat("more", ids[1])
		}
	})
	want := []int64{ids[6], ids[5], ids[4], ids[3], ids[2], ids[0]} // ids[1] moved above the cursor
	if !slices.Equal(got, want) {
		t.Fatalf("walk with activity: %v, want %v", got, want)
	}
	if top := ada.apiHistory("?limit=2"); top[0].ID != ids[1] || top[1].ID != ids[5] {
		t.Fatalf("the first page does not start with the latest activity: %+v", top)
	}
}

func TestAPIHistoryErrors(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	ada.apiChat("hello", 0)
	for _, tc := range []struct{ query, msg string }{
		{"?limit=0", "limit must be an integer from 1 to 200"},
		{"?limit=201", "limit must be an integer from 1 to 200"},
		{"?limit=-5", "limit must be"},
		{"?limit=ten", "limit must be"},
		{"?limit=2.5", "limit must be"},
		{"?before=not-a-cursor!", "Invalid cursor"},
		{"?before=eA", "Invalid cursor"},   // base64 of "x"
		{"?before=MS4w", "Invalid cursor"}, // "1.0": id 0
	} {
		t.Run(tc.query, func(t *testing.T) {
			res, b := ada.api(http.MethodGet, "/api/chat/history"+tc.query, nil)
			if msg := apiErr(t, res, b, http.StatusBadRequest); !strings.Contains(msg, tc.msg) {
				t.Fatalf("err_msg %q lacks %q", msg, tc.msg)
			}
		})
	}
	if got := ada.apiHistory("?limit=200"); len(got) != 1 {
		t.Fatalf("limit=200: %d items", len(got))
	}
	if got := ada.apiHistory("?limit=1"); len(got) != 1 {
		t.Fatalf("limit=1: %d items", len(got))
	}
}

func TestAPIClearHistory(t *testing.T) {
	a := newTestApp(t)
	ada, bob := a.apiClient("ada"), a.apiClient("bob")
	long := *ada.apiChat("first", 0).ExchangeID
	ada.apiChat("second turn", long)
	ada.apiChat("another", 0)
	var job apiChatOut
	ada.apiJSON(http.MethodPost, "/api/chat?job_id=9", map[string]any{"query": "about my job"}, 200, &job)
	bobs := *bob.apiChat("bob keeps this", 0).ExchangeID

	var out map[string]any
	ada.apiJSON(http.MethodDelete, "/api/chat/history", nil, 200, &out)
	apiShape(t, "clear answer", out, map[string]string{"message": "string"})
	if out["message"] != "Cleared 2 chat exchanges with 6 messages" {
		t.Fatalf("clear: %v", out)
	}
	if h := ada.apiHistory(""); len(h) != 0 {
		t.Fatalf("history after clear: %+v", h)
	}
	if msgs := ada.apiMessages(*job.ExchangeID); len(msgs) != 2 {
		t.Fatalf("the job chat went with the general history: %+v", msgs)
	}
	if msgs := bob.apiMessages(bobs); len(msgs) != 2 {
		t.Fatalf("bob's chat went with ada's history: %+v", msgs)
	}
	ada.apiJSON(http.MethodDelete, "/api/chat/history", nil, 200, &out)
	if out["message"] != "Cleared 0 chat exchanges with 0 messages" {
		t.Fatalf("second clear: %v", out)
	}
}
