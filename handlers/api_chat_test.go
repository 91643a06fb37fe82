package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"palaver/models"
)

func TestAPIChatRoundTrip(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")

	first := ada.apiChat("hello there", 0)
	if first.ErrorCode != 0 || first.ErrorMessage != "" || !strings.HasPrefix(first.Response, "Hello!") {
		t.Fatalf("first turn: %+v", first)
	}
	if first.AgentResponse == nil || first.AgentResponse.AgentType != "router" || first.AgentResponse.Content != first.Response {
		t.Fatalf("first turn agent_response: %+v", first.AgentResponse)
	}
	if first.ProcessingTime <= 0 || first.ProcessingTime > 60 {
		t.Fatalf("processing_time %v is not a duration in seconds", first.ProcessingTime)
	}
	id := *first.ExchangeID

	second := ada.apiChat("what is a keyset?", id)
	if *second.ExchangeID != id {
		t.Fatalf("continuing exchange %d answered in %d", id, *second.ExchangeID)
	}
	if !strings.Contains(second.Response, `You asked: "what is a keyset?"`) || !strings.Contains(second.Response, "message 2") {
		t.Fatalf("second reply does not quote the question or see the history: %q", second.Response)
	}

	hist := ada.apiHistory("")
	if len(hist) != 1 {
		t.Fatalf("history has %d items, want 1: %+v", len(hist), hist)
	}
	h := hist[0]
	if h.ID != id || h.Query != "hello there" || h.Response != first.Response || h.MessageCount != 2 ||
		h.Title != "hello there" || h.AgentType != "router" || h.AgentResponse == nil || h.Feedback != nil {
		t.Fatalf("history item: %+v", h)
	}

	msgs := ada.apiMessages(id)
	wantRoles := []string{"user", "assistant", "user", "assistant"}
	wantContent := []string{"hello there", first.Response, "what is a keyset?", second.Response}
	if len(msgs) != len(wantRoles) {
		t.Fatalf("%d messages, want %d: %+v", len(msgs), len(wantRoles), msgs)
	}
	for i, m := range msgs {
		if m.Role != wantRoles[i] || m.Seq == nil || *m.Seq != int64(i) || m.Content != wantContent[i] {
			t.Fatalf("message %d: role %s seq %v content %q; want %s, %d, %q", i, m.Role, m.Seq, m.Content, wantRoles[i], i, wantContent[i])
		}
		if i > 0 && m.ID <= msgs[i-1].ID {
			t.Fatalf("messages not in log order: %+v", msgs)
		}
	}
}

func TestAPIChatShape(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")

	res, b := ada.api(http.MethodPost, "/api/chat?agent_type=auto", map[string]any{"query": "hi", "context": "from a script", "exchange_id": nil})
	mustStatus(t, res, http.StatusOK)
	ok := apiObject(t, b)
	apiShape(t, "ChatResponse", ok, map[string]string{
		"response": "string", "error_code": "number", "error_message": "string",
		"agent_response": "object", "exchange_id": "number", "processing_time": "number",
	})
	if ok["error_code"] != 0.0 || ok["error_message"] != "" {
		t.Fatalf("success carries an error: %s", b)
	}
	if ar := ok["agent_response"].(map[string]any); ar["content"] != ok["response"] || ar["agent_type"] != "router" {
		t.Fatalf("agent_response does not hold the reply: %s", b)
	}

	res, b = ada.api(http.MethodPost, "/api/chat", map[string]any{"query": "   "})
	refused := apiObject(t, b)
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("empty query: status %d: %s", res.StatusCode, b)
	}
	apiShape(t, "refused ChatResponse", refused, map[string]string{
		"response": "string", "error_code": "number", "error_message": "string",
		"agent_response": "null", "exchange_id": "null", "processing_time": "number",
		"err_msg": "string", "err_code": "number",
	})
	if refused["error_code"] != 400.0 || refused["error_message"] != "No query provided" ||
		refused["err_code"] != 400.0 || refused["err_msg"] != "No query provided" {
		t.Fatalf("empty query answer: %s", b)
	}
}

func TestAPIChatErrors(t *testing.T) {
	a := newTestApp(t)
	ada, bob := a.apiClient("ada"), a.apiClient("bob")
	own := *ada.apiChat("my conversation", 0).ExchangeID
	bobs := *bob.apiChat("bob's conversation", 0).ExchangeID

	for _, tc := range []struct {
		name, query string
		body        any
		status      int
		msg         string
	}{
		{"empty query", "", map[string]any{"query": ""}, 400, "No query provided"},
		{"whitespace query", "", map[string]any{"query": " \n\t "}, 400, "No query provided"},
		{"no query", "", map[string]any{"context": "x"}, 400, "No query provided"},
		{"null query", "", `{"query": null}`, 400, "No query provided"},
		{"query too long", "", map[string]any{"query": strings.Repeat("a", 100_001)}, 400, "limit is 100000"},
		{"query too long in characters", "", map[string]any{"query": strings.Repeat("é", 100_001)}, 400, "limit is 100000"},
		{"empty body", "", "", 400, "No query provided"},
		{"empty object", "", "{}", 400, "No query provided"},
		{"form body", "", "query=hello", 400, "Invalid JSON"},
		{"truncated JSON", "", `{"query": "hello"`, 400, "Invalid JSON"},
		{"two values", "", `{"query": "hello"} {"query": "again"}`, 400, "single JSON value"},
		{"a list", "", `["hello"]`, 400, "Invalid JSON"},
		{"query a number", "", `{"query": 5}`, 400, `"query" must be a string`},
		{"exchange_id a string", "", map[string]any{"query": "hi", "exchange_id": fmt.Sprint(own)}, 400, `"exchange_id" must be an integer`},
		{"exchange_id a fraction", "", `{"query": "hi", "exchange_id": 1.5}`, 400, `"exchange_id" must be an integer`},
		{"regenerate a string", "", `{"query": "hi", "regenerate": "yes"}`, 400, `"regenerate" must be true or false`},
		{"context an object", "", `{"query": "hi", "context": {}}`, 400, `"context" must be a string`},
		{"page_id a string", "", `{"query": "hi", "page_id": "abc"}`, 400, `"page_id" must be an integer`},
		{"missing exchange", "", map[string]any{"query": "hi", "exchange_id": 999_999}, 404, "Not found"},
		{"another user's exchange", "", map[string]any{"query": "hi", "exchange_id": bobs}, 404, "Not found"},
		{"exchange 0", "", map[string]any{"query": "hi", "exchange_id": 0}, 404, "Not found"},
		{"negative exchange", "", map[string]any{"query": "hi", "exchange_id": -own}, 404, "Not found"},
		{"page_id", "", map[string]any{"query": "hi", "page_id": 1}, 404, "Not found"},
		{"page_id with exchange", "", map[string]any{"query": "hi", "page_id": 1, "exchange_id": own}, 404, "Not found"},
		{"unknown agent_type", "?agent_type=oracle", map[string]any{"query": "hi"}, 400, "valid ones are: auto, router"},
		{"unknown agent_type on an exchange", "?agent_type=oracle", map[string]any{"query": "hi", "exchange_id": own}, 400, "valid ones are"},
		{"job_id empty", "?job_id=", map[string]any{"query": "hi"}, 400, "job_id must be 1 to 128 printable ASCII characters"},
		{"job_id too long", "?job_id=" + strings.Repeat("a", 129), map[string]any{"query": "hi"}, 400, "job_id must be 1 to 128"},
		{"job_id a control character", "?job_id=a%01b", map[string]any{"query": "hi"}, 400, "job_id must be 1 to 128"},
		{"job_id a tab", "?job_id=a%09b", map[string]any{"query": "hi"}, 400, "job_id must be 1 to 128"},
		{"job_id DEL", "?job_id=a%7F", map[string]any{"query": "hi"}, 400, "job_id must be 1 to 128"},
		{"job_id not ASCII", "?job_id=caf%C3%A9", map[string]any{"query": "hi"}, 400, "job_id must be 1 to 128"},
		{"job_id with a general exchange", "?job_id=77", map[string]any{"query": "hi", "exchange_id": own}, 400, "belongs to another conversation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := a.apiRows()
			res, b := ada.api(http.MethodPost, "/api/chat"+tc.query, tc.body)
			if msg := apiErr(t, res, b, tc.status); !strings.Contains(msg, tc.msg) {
				t.Fatalf("err_msg %q lacks %q", msg, tc.msg)
			}
			if after := a.apiRows(); after != before {
				t.Fatalf("rows (exchanges, messages) went from %v to %v", before, after)
			}
		})
	}
	if msgs := ada.apiMessages(own); len(msgs) != 2 {
		t.Fatalf("refused sends changed ada's exchange: %+v", msgs)
	}
	if msgs := bob.apiMessages(bobs); len(msgs) != 2 {
		t.Fatalf("ada's sends changed bob's exchange: %+v", msgs)
	}
}

func TestAPIChatQueryLimits(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	// The limit counts characters, not bytes: 100,000 two-byte characters pass.
	long := strings.Repeat("é", 100_000)
	out := ada.apiChat(long, 0)
	msgs := ada.apiMessages(*out.ExchangeID)
	if len(msgs) != 2 || msgs[0].Content != long {
		t.Fatalf("a query of exactly the limit was not stored whole (%d messages)", len(msgs))
	}
}

func TestAPIChatTurnRunning(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	ex, _, err := a.store.StartTurn(context.Background(), models.TurnStart{
		UserID: ada.user.ID, Scope: models.ScopeGeneral, AgentType: "router",
		Query: "a question another tab sent", Owner: "another-server",
	})
	if err != nil {
		t.Fatal(err)
	}
	before := a.apiRows()
	res, b := ada.api(http.MethodPost, "/api/chat", map[string]any{"query": "me too", "exchange_id": ex.ID})
	if msg := apiErr(t, res, b, http.StatusConflict); !strings.Contains(msg, "still being written") {
		t.Fatalf("409 message: %q", msg)
	}
	if after := a.apiRows(); after != before {
		t.Fatalf("a refused send stored rows: %v → %v", before, after)
	}
}

func TestAPIChatJob(t *testing.T) {
	a := newTestApp(t)
	ada, bob := a.apiClient("ada"), a.apiClient("bob")

	var first apiChatOut
	ada.apiJSON(http.MethodPost, "/api/chat?job_id=42", map[string]any{"query": "why did my job fail?"}, 200, &first)
	if first.ExchangeID == nil || first.ErrorCode != 0 || !strings.Contains(first.Response, "why did my job fail?") {
		t.Fatalf("first job call: %+v", first)
	}
	id := *first.ExchangeID
	if n := len(ada.apiMessages(id)); n != 2 {
		t.Fatalf("job exchange has %d messages after the first call, want 2", n)
	}

	before := a.apiRows()
	var cached apiChatOut
	ada.apiJSON(http.MethodPost, "/api/chat?job_id=42", map[string]any{"query": "a different question"}, 200, &cached)
	if cached.ExchangeID == nil || *cached.ExchangeID != id || cached.Response != first.Response || cached.ErrorCode != 0 ||
		cached.AgentResponse == nil || cached.AgentResponse.Content != first.Response {
		t.Fatalf("second job call did not return the first answer: %+v (first %+v)", cached, first)
	}
	if after := a.apiRows(); after != before {
		t.Fatalf("the cached answer stored rows: %v → %v", before, after)
	}

	var again apiChatOut
	ada.apiJSON(http.MethodPost, "/api/chat?job_id=42", map[string]any{"query": "try once more", "regenerate": true}, 200, &again)
	if again.ExchangeID == nil || *again.ExchangeID != id || !strings.Contains(again.Response, "try once more") {
		t.Fatalf("regenerate did not run the agent on the job's exchange: %+v", again)
	}
	if msgs := ada.apiMessages(id); len(msgs) != 4 || msgs[2].Content != "try once more" {
		t.Fatalf("after regenerate: %+v", msgs)
	}

	if hist := ada.apiHistory(""); len(hist) != 0 {
		t.Fatalf("a job chat is in the general history: %+v", hist)
	}
	// The same job number for another user is another exchange.
	var bobs apiChatOut
	bob.apiJSON(http.MethodPost, "/api/chat?job_id=42", map[string]any{"query": "bob's job"}, 200, &bobs)
	if *bobs.ExchangeID == id || bobs.Response == first.Response {
		t.Fatalf("bob got ada's job chat: %+v", bobs)
	}
}

func TestAPIChatAgentFailure(t *testing.T) {
	a := newTestApp(t, withAPIProvider(apiFailingProvider{}))
	ada := a.apiClient("ada")

	res, b := ada.api(http.MethodPost, "/api/chat", map[string]any{"query": "please answer"})
	mustStatus(t, res, http.StatusOK)
	raw := apiObject(t, b)
	apiShape(t, "failed ChatResponse", raw, map[string]string{
		"response": "string", "error_code": "number", "error_message": "string",
		"agent_response": "null", "exchange_id": "number", "processing_time": "number",
	})
	msg, _ := raw["error_message"].(string)
	if raw["error_code"] != 500.0 || !strings.Contains(msg, "could not answer") || !strings.Contains(msg, "refused the connection") {
		t.Fatalf("failure answer: %s", b)
	}
	id := int64(raw["exchange_id"].(float64))

	msgs := ada.apiMessages(id)
	if len(msgs) != 2 || msgs[0].Role != "user" || msgs[0].Content != "please answer" || msgs[0].Seq == nil || *msgs[0].Seq != 0 ||
		msgs[1].Role != "error" || msgs[1].Seq != nil || msgs[1].Content != msg {
		t.Fatalf("log after a failed turn: %+v", msgs)
	}
	// A failed turn does not lock the exchange: the next message is taken.
	out := ada.apiChat("and now?", id)
	if out.ErrorCode != 500 || *out.ExchangeID != id {
		t.Fatalf("second failed turn: %+v", out)
	}
	msgs = ada.apiMessages(id)
	if len(msgs) != 4 || msgs[2].Role != "user" || *msgs[2].Seq != 1 || msgs[3].Role != "error" {
		t.Fatalf("log after two failed turns: %+v", msgs)
	}
	if hist := ada.apiHistory(""); len(hist) != 1 || hist[0].Query != "please answer" || hist[0].Response != "" || hist[0].MessageCount != 2 {
		t.Fatalf("history of a failed exchange: %+v", hist)
	}
}
