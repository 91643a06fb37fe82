package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAPIMessagesShape(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	id := *ada.apiChat("hello", 0).ExchangeID
	path := fmt.Sprintf("/api/chat/exchange/%d/messages", id)

	res, b := ada.api(http.MethodGet, path, nil)
	mustStatus(t, res, http.StatusOK)
	var items []map[string]any
	if err := json.Unmarshal(b, &items); err != nil || len(items) != 2 {
		t.Fatalf("messages %s: %v", b, err)
	}
	apiShape(t, "user message", items[0], map[string]string{
		"id": "number", "seq": "number", "role": "string", "content": "string", "timestamp": "string",
	})
	apiShape(t, "assistant message", items[1], map[string]string{
		"id": "number", "seq": "number", "role": "string", "content": "string", "timestamp": "string",
		"agent_type": "string", "agent_response": "object", "feedback": "null",
	})
	if _, err := time.Parse(time.RFC3339, items[0]["timestamp"].(string)); err != nil {
		t.Fatalf("timestamp is not RFC 3339: %v", err)
	}
	if items[1]["agent_type"] != "router" {
		t.Fatalf("assistant agent_type: %v", items[1]["agent_type"])
	}

	reply := int64(items[1]["id"].(float64))
	ada.apiJSON(http.MethodPut, fmt.Sprintf("/api/chat/message/%d/feedback", reply), map[string]any{"feedback": 1, "comment": "spot on"}, 200, nil)
	_, b = ada.api(http.MethodGet, path, nil)
	if err := json.Unmarshal(b, &items); err != nil {
		t.Fatal(err)
	}
	apiShape(t, "rated assistant message", items[1], map[string]string{
		"id": "number", "seq": "number", "role": "string", "content": "string", "timestamp": "string",
		"agent_type": "string", "agent_response": "object", "feedback": "number", "feedback_comment": "string",
	})
	if items[1]["feedback"] != 1.0 || items[1]["feedback_comment"] != "spot on" {
		t.Fatalf("rated message: %v", items[1])
	}
}

func TestAPIMessagesErrorRowShape(t *testing.T) {
	a := newTestApp(t, withAPIProvider(apiFailingProvider{}))
	ada := a.apiClient("ada")
	id := *ada.apiChat("hello", 0).ExchangeID
	_, b := ada.api(http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/messages", id), nil)
	var items []map[string]any
	if err := json.Unmarshal(b, &items); err != nil || len(items) != 2 {
		t.Fatalf("messages %s: %v", b, err)
	}
	apiShape(t, "error row", items[1], map[string]string{
		"id": "number", "seq": "null", "role": "string", "content": "string", "timestamp": "string",
	})
	if items[1]["role"] != "error" {
		t.Fatalf("error row role %v", items[1]["role"])
	}
}

func TestAPIMessagesTimeTravel(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	id := *ada.apiChat("one", 0).ExchangeID
	ada.apiChat("two", id)
	full := ada.apiMessages(id)
	for _, tc := range []struct {
		at   string
		want int
	}{{"0", 1}, {"1", 2}, {"2", 3}, {"3", 4}, {"99", 4}, {"", 4}} {
		var got []apiMsgOut
		ada.apiJSON(http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/messages?at=%s", id, tc.at), nil, 200, &got)
		if len(got) != tc.want {
			t.Fatalf("at=%s: %d messages, want %d", tc.at, len(got), tc.want)
		}
		for i := range got {
			if got[i].ID != full[i].ID || got[i].Content != full[i].Content {
				t.Fatalf("at=%s: message %d is %+v, want %+v", tc.at, i, got[i], full[i])
			}
		}
	}
}

func TestAPIMessagesTimeTravelKeepsErrorRows(t *testing.T) {
	a := newTestApp(t, withAPIProvider(apiFailingProvider{}))
	ada := a.apiClient("ada")
	id := *ada.apiChat("one", 0).ExchangeID
	ada.apiChat("two", id)
	// The log is user 0, error, user 1, error: at=0 is everything written
	// before seq 1, the first error row included.
	var got []apiMsgOut
	ada.apiJSON(http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/messages?at=0", id), nil, 200, &got)
	if len(got) != 2 || got[0].Content != "one" || got[1].Role != "error" || got[1].Seq != nil {
		t.Fatalf("at=0: %+v", got)
	}
}

func TestAPIMessagesErrors(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	id := *ada.apiChat("hello", 0).ExchangeID
	for _, tc := range []struct {
		path   string
		status int
		msg    string
	}{
		{fmt.Sprintf("/api/chat/exchange/%d/messages?at=-1", id), 400, "at must be a seq"},
		{fmt.Sprintf("/api/chat/exchange/%d/messages?at=one", id), 400, "at must be a seq"},
		{fmt.Sprintf("/api/chat/exchange/%d/messages?at=1.5", id), 400, "at must be a seq"},
		{"/api/chat/exchange/999999/messages", 404, "Not found"},
		{"/api/chat/exchange/abc/messages", 404, "Not found"},
		{"/api/chat/exchange/0/messages", 404, "Not found"},
		{"/api/chat/exchange/-1/messages", 404, "Not found"},
		{"/api/chat/exchange/99999999999999999999/messages", 404, "Not found"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res, b := ada.api(http.MethodGet, tc.path, nil)
			if msg := apiErr(t, res, b, tc.status); !strings.Contains(msg, tc.msg) {
				t.Fatalf("err_msg %q lacks %q", msg, tc.msg)
			}
		})
	}
}

// TestAPIMessagesBatches: ?limit and ?before_seq read a long log back from its
// end, error rows with the entries around them, each entry once; the whole
// log stays the default.
func TestAPIMessagesBatches(t *testing.T) {
	a := newTestApp(t, withChatProvider(chatDownProvider{}))
	ann := a.apiClient("ann")
	ex := *ann.apiChat("first, which fails", 0).ExchangeID // seq 0 and an error row
	a.chatExec(`UPDATE exchanges SET turn_status = 'idle' WHERE id = ?`, ex)
	for i := 1; i <= 6; i++ {
		// The fake that fails answers each: user messages and error rows.
		ann.apiChat(fmt.Sprintf("message %d", i), ex)
		a.chatExec(`UPDATE exchanges SET turn_status = 'idle' WHERE id = ?`, ex)
	}
	whole := ann.apiMessages(ex)
	errorRows := 0
	for _, m := range whole {
		if m.Seq == nil {
			errorRows++
		}
	}
	if errorRows < 5 || len(whole) < 10 {
		t.Fatalf("the log has %d entries, %d of them error rows: the test needs both", len(whole), errorRows)
	}
	var walked []apiMsgOut
	path := fmt.Sprintf("/api/chat/exchange/%d/messages?limit=2", ex)
	for range 20 {
		var page []apiMsgOut
		ann.apiJSON(http.MethodGet, path, nil, http.StatusOK, &page)
		if len(page) == 0 {
			break
		}
		walked = append(page, walked...)
		if page[0].Seq == nil {
			t.Fatalf("a page begins with an error row: %+v", page)
		}
		path = fmt.Sprintf("/api/chat/exchange/%d/messages?limit=2&before_seq=%d", ex, *page[0].Seq)
	}
	if len(walked) != len(whole) {
		t.Fatalf("paging walked %d entries, the log has %d", len(walked), len(whole))
	}
	for i := range whole {
		if walked[i].ID != whole[i].ID {
			t.Fatalf("entry %d: paged %d, whole %d", i, walked[i].ID, whole[i].ID)
		}
	}
	for _, q := range []string{"limit=0", "limit=1001", "before_seq=-1", "at=1&limit=2"} {
		res, body := ann.api(http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/messages?%s", ex, q), nil)
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d %s", q, res.StatusCode, body)
		}
	}
}
