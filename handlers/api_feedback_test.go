package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"palaver/models"
)

func TestAPIExchangeFeedback(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	id := *ada.apiChat("hello", 0).ExchangeID
	ada.apiChat("again", id)
	path := fmt.Sprintf("/api/chat/exchange/%d/feedback", id)

	res, b := ada.api(http.MethodPut, path, "1")
	mustStatus(t, res, http.StatusOK)
	out := apiObject(t, b)
	apiShape(t, "feedback answer", out, map[string]string{"message": "string", "feedback": "number"})
	if out["message"] != "Feedback saved" || out["feedback"] != 1.0 {
		t.Fatalf("feedback answer: %s", b)
	}
	msgs := ada.apiMessages(id)
	if msgs[1].Feedback != nil || msgs[3].Feedback == nil || *msgs[3].Feedback != 1 {
		t.Fatalf("feedback did not go to the latest reply only: %+v / %+v", msgs[1], msgs[3])
	}
	if h := ada.apiHistory(""); h[0].Feedback == nil || *h[0].Feedback != 1 {
		t.Fatalf("history feedback: %+v", h[0])
	}

	// A comment on the reply survives a thumbs change on the exchange.
	ada.apiJSON(http.MethodPut, fmt.Sprintf("/api/chat/message/%d/feedback", msgs[3].ID), map[string]any{"feedback": 1, "comment": "kept"}, 200, nil)
	ada.apiJSON(http.MethodPut, path, " 0\n", 200, &out)
	if out["feedback"] != 0.0 {
		t.Fatalf("feedback answer: %v", out)
	}
	if m := ada.apiMessages(id)[3]; m.Feedback == nil || *m.Feedback != 0 || m.FeedbackComment == nil || *m.FeedbackComment != "kept" {
		t.Fatalf("after thumbs down: %+v", m)
	}

	for _, body := range []string{"2", "-1", `"1"`, "null", `{"feedback": 1}`, "", "1.0", "true", "1 1", "up"} {
		t.Run("body "+body, func(t *testing.T) {
			res, b := ada.api(http.MethodPut, path, body)
			apiErr(t, res, b, http.StatusBadRequest)
			if m := ada.apiMessages(id)[3]; m.Feedback == nil || *m.Feedback != 0 {
				t.Fatalf("a refused body changed the rating: %+v", m)
			}
		})
	}

	for _, p := range []string{"/api/chat/exchange/999999/feedback", "/api/chat/exchange/abc/feedback", "/api/chat/exchange/0/feedback"} {
		res, b := ada.api(http.MethodPut, p, "1")
		apiErr(t, res, b, http.StatusNotFound)
	}
}

func TestAPIExchangeFeedbackNoReply(t *testing.T) {
	a := newTestApp(t, withAPIProvider(apiFailingProvider{}))
	ada := a.apiClient("ada")
	failed := *ada.apiChat("hello", 0).ExchangeID
	pending, _, err := a.store.StartTurn(context.Background(), models.TurnStart{
		UserID: ada.user.ID, Scope: models.ScopeGeneral, AgentType: "router", Query: "waiting", Owner: "elsewhere",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{failed, pending.ID} {
		res, b := ada.api(http.MethodPut, fmt.Sprintf("/api/chat/exchange/%d/feedback", id), "1")
		if msg := apiErr(t, res, b, http.StatusConflict); !strings.Contains(msg, "no reply to rate") {
			t.Fatalf("exchange %d: err_msg %q", id, msg)
		}
	}
}

func TestAPIMessageFeedback(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	id := *ada.apiChat("hello", 0).ExchangeID
	msgs := ada.apiMessages(id)
	userMsg, reply := msgs[0].ID, msgs[1].ID
	path := fmt.Sprintf("/api/chat/message/%d/feedback", reply)

	res, b := ada.api(http.MethodPut, path, map[string]any{"feedback": 1, "comment": "useful"})
	mustStatus(t, res, http.StatusOK)
	out := apiObject(t, b)
	apiShape(t, "rated message", out, map[string]string{
		"id": "number", "seq": "number", "role": "string", "content": "string", "timestamp": "string",
		"agent_type": "string", "agent_response": "object", "feedback": "number", "feedback_comment": "string",
	})
	if out["id"] != float64(reply) || out["feedback"] != 1.0 || out["feedback_comment"] != "useful" || out["content"] != msgs[1].Content {
		t.Fatalf("rated message: %s", b)
	}

	// null clears the rating; a missing comment clears the comment (PUT
	// replaces the message's feedback as a whole).
	res, b = ada.api(http.MethodPut, path, `{"feedback": null}`)
	mustStatus(t, res, http.StatusOK)
	out = apiObject(t, b)
	if v, ok := out["feedback"]; !ok || v != nil {
		t.Fatalf("cleared rating: %s", b)
	}
	if _, ok := out["feedback_comment"]; ok {
		t.Fatalf("comment kept after a PUT without one: %s", b)
	}
	if m := ada.apiMessages(id)[1]; m.Feedback != nil || m.FeedbackComment != nil {
		t.Fatalf("stored after clearing: %+v", m)
	}

	longest := strings.Repeat("ü", 2000)
	ada.apiJSON(http.MethodPut, path, map[string]any{"feedback": 0, "comment": longest}, 200, nil)
	if m := ada.apiMessages(id)[1]; m.Feedback == nil || *m.Feedback != 0 || m.FeedbackComment == nil || *m.FeedbackComment != longest {
		t.Fatalf("a 2,000-character comment was not stored: %+v", m.Feedback)
	}

	for _, tc := range []struct {
		name   string
		path   string
		body   any
		status int
		msg    string
	}{
		{"no feedback key", path, `{}`, 400, `"feedback" is required`},
		{"comment only", path, map[string]any{"comment": "x"}, 400, `"feedback" is required`},
		{"feedback 2", path, map[string]any{"feedback": 2}, 400, "0, 1 or null"},
		{"feedback -1", path, map[string]any{"feedback": -1}, 400, "0, 1 or null"},
		{"feedback a string", path, `{"feedback": "1"}`, 400, "0, 1 or null"},
		{"feedback a fraction", path, `{"feedback": 0.5}`, 400, "0, 1 or null"},
		{"comment a number", path, `{"feedback": 1, "comment": 5}`, 400, `"comment" must be a string`},
		{"comment too long", path, map[string]any{"feedback": 1, "comment": longest + "!"}, 400, "limit is 2000"},
		{"not JSON", path, "feedback=1", 400, "Invalid JSON"},
		{"bare number", path, "1", 400, "Invalid JSON"},
		{"a user message", fmt.Sprintf("/api/chat/message/%d/feedback", userMsg), map[string]any{"feedback": 1}, 400, "Only assistant replies can be rated, not user messages"},
		{"missing message", "/api/chat/message/999999/feedback", map[string]any{"feedback": 1}, 404, "Not found"},
		{"bad id", "/api/chat/message/abc/feedback", map[string]any{"feedback": 1}, 404, "Not found"},
		{"id 0", "/api/chat/message/0/feedback", map[string]any{"feedback": 1}, 404, "Not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, b := ada.api(http.MethodPut, tc.path, tc.body)
			if msg := apiErr(t, res, b, tc.status); !strings.Contains(msg, tc.msg) {
				t.Fatalf("err_msg %q lacks %q", msg, tc.msg)
			}
			after := ada.apiMessages(id)
			if m := after[1]; m.Feedback == nil || *m.Feedback != 0 || *m.FeedbackComment != longest || after[0].Feedback != nil {
				t.Fatalf("a refused request changed feedback: %+v %+v", after[0], m)
			}
		})
	}
}

func TestAPIMessageFeedbackErrorRow(t *testing.T) {
	a := newTestApp(t, withAPIProvider(apiFailingProvider{}))
	ada := a.apiClient("ada")
	msgs := ada.apiMessages(*ada.apiChat("hello", 0).ExchangeID)
	res, b := ada.api(http.MethodPut, fmt.Sprintf("/api/chat/message/%d/feedback", msgs[1].ID), map[string]any{"feedback": 0})
	if msg := apiErr(t, res, b, http.StatusBadRequest); msg != "Only assistant replies can be rated, not error messages" {
		t.Fatalf("err_msg %q", msg)
	}
}
