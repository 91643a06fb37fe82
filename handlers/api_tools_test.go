package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

type apiPendingOut struct {
	CallID    string         `json:"call_id"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Tier      string         `json:"tier"`
	Awaiting  string         `json:"awaiting"`
}

// pausedChat sends query and expects a paused answer with one waiting call.
func pausedChat(t *testing.T, c *client, path string, body any) (int64, apiPendingOut) {
	t.Helper()
	var out struct {
		apiChatOut
		AgentResponse struct {
			Metadata struct {
				Paused  bool            `json:"paused"`
				Pending []apiPendingOut `json:"pending"`
			} `json:"metadata"`
		} `json:"agent_response"`
	}
	c.apiJSON("POST", path, body, http.StatusOK, &out)
	if !out.AgentResponse.Metadata.Paused || len(out.AgentResponse.Metadata.Pending) != 1 || out.ExchangeID == nil {
		t.Fatalf("POST %s %v: not paused with one call: %+v", path, body, out)
	}
	return *out.ExchangeID, out.AgentResponse.Metadata.Pending[0]
}

// TestToolsHeadlessFlow is the flow a headless client follows: a turn
// pauses, the client lists what waits, answers, and the turn resumes.
func TestToolsHeadlessFlow(t *testing.T) {
	a := newTestApp(t)
	ann := a.apiClient("ann")
	var first apiChatOut
	ann.apiJSON("POST", "/api/chat", map[string]any{"query": "Old plans"}, http.StatusOK, &first)

	id, call := pausedChat(t, ann, "/api/chat", map[string]any{"query": `delete my chat "Old plans"`})
	if call.Tool != "delete_conversation" || call.Awaiting != "approval" || call.Tier != "server" || call.Arguments["title"] != "Old plans" {
		t.Fatalf("pending call = %+v", call)
	}
	var pending []apiPendingOut
	ann.apiJSON("GET", fmt.Sprintf("/api/chat/exchange/%d/pending", id), nil, http.StatusOK, &pending)
	if len(pending) != 1 || pending[0].CallID != call.CallID {
		t.Fatalf("pending = %+v", pending)
	}
	var hist []struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	ann.apiJSON("GET", "/api/chat/history", nil, http.StatusOK, &hist)
	if hist[0].ID != id || hist[0].Status != "paused" {
		t.Fatalf("history = %+v; want the paused exchange first", hist)
	}

	// Bad input: each refused, nothing changes.
	bob := a.apiClient("bob")
	results := fmt.Sprintf("/api/chat/exchange/%d/tool_results", id)
	for _, bad := range []struct {
		c    *client
		body any
		want int
	}{
		{bob, map[string]any{"results": []any{map[string]any{"call_id": call.CallID, "approved": true}}}, 404},
		{ann, map[string]any{"results": []any{map[string]any{"call_id": "nope", "approved": true}}}, 409},
		{ann, map[string]any{"results": []any{}}, 400},
		{ann, `{"results": [{"call_id": 5}]}`, 400},
		{ann, `{"results": [{"call_id": "x", "approved": "yes"}]}`, 400},
		{ann, `not json`, 400},
		{ann, map[string]any{"results": []any{map[string]any{"call_id": call.CallID}}}, 400}, // an approval needs approved
		{ann, map[string]any{"results": []any{map[string]any{"call_id": call.CallID, "approved": true}, map[string]any{"call_id": call.CallID, "approved": false}}}, 409},
		{ann, `{"results": [{"call_id": "` + strings.Repeat("x", 1<<20) + `"}]}`, 413},
	} {
		res, b := bad.c.api("POST", results, bad.body)
		if res.StatusCode != bad.want {
			t.Fatalf("bad answer %.80v: %d, want %d: %s", bad.body, res.StatusCode, bad.want, b)
		}
	}
	ann.apiJSON("GET", fmt.Sprintf("/api/chat/exchange/%d/pending", id), nil, http.StatusOK, &pending)
	if len(pending) != 1 {
		t.Fatalf("a refused answer changed what waits: %+v", pending)
	}

	// Two answers at once: exactly one wins.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := ann.api("POST", results, map[string]any{"results": []any{map[string]any{"call_id": call.CallID, "approved": true}}})
			codes[i] = res.StatusCode
		}()
	}
	wg.Wait()
	if !(codes[0] == 200 && codes[1] == 409 || codes[0] == 409 && codes[1] == 200) {
		t.Fatalf("two approvals answered %v; want one 200 and one 409", codes)
	}
	res, _ := ann.api("GET", fmt.Sprintf("/api/chat/exchange/%d/messages", *first.ExchangeID), nil)
	mustStatus(t, res, http.StatusNotFound) // deleted

	var msgs []apiMsgOut
	ann.apiJSON("GET", fmt.Sprintf("/api/chat/exchange/%d/messages", id), nil, http.StatusOK, &msgs)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "user,tool_call,tool_call,tool_result,assistant" {
		t.Fatalf("log roles = %s", got)
	}
	meta := msgs[1].AgentResponse.Metadata
	if meta["call_id"] != call.CallID || meta["state"] != "done" || meta["tier"] != "server" || meta["tool"] != "delete_conversation" {
		t.Fatalf("tool_call metadata = %v; want its latest state, done", meta)
	}
	if out := msgs[3].AgentResponse.Metadata; out["outcome"] != "done" || out["call_id"] != call.CallID {
		t.Fatalf("tool_result metadata = %v", out)
	}
	if !strings.Contains(msgs[4].Content, `Deleted the conversation "Old plans"`) {
		t.Fatalf("reply = %q", msgs[4].Content)
	}
	ann.apiJSON("GET", fmt.Sprintf("/api/chat/exchange/%d/pending", id), nil, http.StatusOK, &pending)
	if len(pending) != 0 {
		t.Fatalf("pending after the answer = %+v", pending)
	}
	res, _ = ann.api("POST", results, map[string]any{"results": []any{map[string]any{"call_id": call.CallID, "approved": true}}})
	mustStatus(t, res, http.StatusConflict)
}

func TestToolsDenyStopAndNewMessage(t *testing.T) {
	a := newTestApp(t)
	ann := a.apiClient("ann")
	id, call := pausedChat(t, ann, "/api/chat", map[string]any{"query": `remember this: tea, no sugar`})
	var out apiChatOut
	ann.apiJSON("POST", fmt.Sprintf("/api/chat/exchange/%d/tool_results", id),
		map[string]any{"results": []any{map[string]any{"call_id": call.CallID, "approved": false}}}, http.StatusOK, &out)
	if !strings.Contains(out.Response, "did not remember") {
		t.Fatalf("after denial: %q", out.Response)
	}

	id2, call2 := pausedChat(t, ann, "/api/chat", map[string]any{"query": `remember this: coffee`, "exchange_id": id})
	var stopped struct {
		Message  string `json:"message"`
		Response string `json:"response"`
	}
	ann.apiJSON("POST", fmt.Sprintf("/api/chat/exchange/%d/stop", id2), nil, http.StatusOK, &stopped)
	if stopped.Message != "Stopped" {
		t.Fatalf("stop = %+v", stopped)
	}
	res, _ := ann.api("POST", fmt.Sprintf("/api/chat/exchange/%d/tool_results", id2),
		map[string]any{"results": []any{map[string]any{"call_id": call2.CallID, "approved": true}}})
	mustStatus(t, res, http.StatusConflict) // the approval lost the race with Stop
	res, _ = ann.api("POST", fmt.Sprintf("/api/chat/exchange/%d/stop", id2), nil)
	mustStatus(t, res, http.StatusConflict)

	_, call3 := pausedChat(t, ann, "/api/chat", map[string]any{"query": `remember this: water`, "exchange_id": id})
	ann.apiJSON("POST", "/api/chat", map[string]any{"query": "hello", "exchange_id": id}, http.StatusOK, &out)
	if !strings.HasPrefix(out.Response, "Hello!") {
		t.Fatalf("new turn = %q", out.Response)
	}
	var msgs []apiMsgOut
	ann.apiJSON("GET", fmt.Sprintf("/api/chat/exchange/%d/messages", id), nil, http.StatusOK, &msgs)
	found := false
	for _, m := range msgs {
		if m.Role == "tool_result" && m.AgentResponse.Metadata["call_id"] == call3.CallID {
			found = m.AgentResponse.Metadata["outcome"] == "cancelled" && m.AgentResponse.Metadata["error"] == "the person moved on"
		}
	}
	if !found {
		t.Fatalf("the waiting call was not cancelled as moved on: %+v", msgs)
	}
}

func TestAccountToolsAPI(t *testing.T) {
	a := newTestApp(t)
	ann := a.apiClient("ann")
	var list []struct {
		Tool, Tier, Description, DefaultPolicy, Policy string
	}
	ann.apiJSON("GET", "/api/account/tools", nil, http.StatusOK, &list)
	byName := map[string]string{}
	for _, l := range list {
		byName[l.Tool] = l.Tier + "/" + l.Policy
	}
	for tool, want := range map[string]string{"delete_conversation": "server/confirm", "rename_conversation": "server/auto",
		"remember": "server/confirm", "read_editor": "browser/auto", "search_conversations": "server/auto"} {
		if byName[tool] != want {
			t.Fatalf("%s = %q, want %q (all: %v)", tool, byName[tool], want, byName)
		}
	}
	for _, bad := range []string{`{"nope": "auto"}`, `{"remember": "sometimes"}`, `{"remember": 1}`, `[]`} {
		res, b := ann.api("PUT", "/api/account/tools", bad)
		if res.StatusCode != http.StatusBadRequest {
			t.Fatalf("PUT %s: %d %s", bad, res.StatusCode, b)
		}
	}
	ann.apiJSON("PUT", "/api/account/tools", map[string]string{"rename_conversation": "never"}, http.StatusOK, nil)
	var out apiChatOut
	ann.apiJSON("POST", "/api/chat", map[string]any{"query": `rename this chat to "Tea"`}, http.StatusOK, &out)
	if !strings.Contains(out.Response, "not renamed") {
		t.Fatalf("never: %q", out.Response)
	}
	ann.apiJSON("PUT", "/api/account/tools", map[string]string{"rename_conversation": "auto"}, http.StatusOK, nil)
	ann.apiJSON("POST", "/api/chat", map[string]any{"query": `rename this chat to "Tea"`, "exchange_id": *out.ExchangeID}, http.StatusOK, &out)
	if !strings.Contains(out.Response, `Renamed this conversation to "Tea"`) {
		t.Fatalf("auto: %q", out.Response)
	}
	var hist []apiHistoryOut
	ann.apiJSON("GET", "/api/chat/history", nil, http.StatusOK, &hist)
	if hist[0].Title != "Tea" {
		t.Fatalf("title = %q", hist[0].Title)
	}
}
