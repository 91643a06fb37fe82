package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"palaver/internal/htmltest"
	"palaver/paths"
)

// TestWhatTheAgentWasTold: a reply whose turn had instructions links to
// "What the agent was told", which shows the person's instructions, the
// project's and the memory entries, with the recorded hash; to its owner
// only (another user: 404). A reply given nothing has no link.
func TestWhatTheAgentWasTold(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.register("ann"), a.register("bob")
	annAPI, bobAPI := a.apiClient("ann"), a.apiClient("bob")
	annAPI.apiJSON(http.MethodPut, "/api/account/instructions", map[string]any{"about": "I keep bees.", "style": "Briefly."}, http.StatusOK, nil)
	annAPI.apiJSON(http.MethodPost, "/api/memories", map[string]any{"content": "Has two hives"}, http.StatusCreated, nil)
	var garden apiProjectOut
	annAPI.apiJSON(http.MethodPost, "/api/projects", map[string]any{"name": "Garden", "instructions": "Talk about roses."}, http.StatusCreated, &garden)
	var reply apiChatOut
	annAPI.apiJSON(http.MethodPost, "/api/chat", map[string]any{"query": "when to prune", "project_id": garden.ID}, http.StatusOK, &reply)

	doc := htmltest.Parse(t, bodyOf(ann.get(paths.Chat(*reply.ExchangeID))))
	links := htmltest.ByTestID(doc, "agent-told")
	if len(links) != 1 {
		t.Fatalf("%d agent-told links on the chat", len(links))
	}
	href, _ := htmltest.Attr(links[0], "href")
	res := ann.get(href)
	mustStatus(t, res, http.StatusOK)
	told := htmltest.Parse(t, bodyOf(res))
	text := htmltest.Text(htmltest.One(t, told, "agent-told-text"))
	for _, want := range []string{"I keep bees.", "Briefly.", "Talk about roses.", "Has two hives"} {
		if !strings.Contains(text, want) {
			t.Errorf("what the agent was told lacks %q: %s", want, text)
		}
	}
	hash := reply.AgentResponse.Metadata["instructions"].(map[string]any)["hash"]
	if got := htmltest.Text(htmltest.One(t, told, "agent-told-hash")); got != hash {
		t.Errorf("hash %q, the reply records %v", got, hash)
	}
	if res := bob.get(href); res.StatusCode != http.StatusNotFound {
		t.Fatalf("bob reads ann's: %d", res.StatusCode)
	}

	// Bob has no instructions, project or memory: nothing to link to.
	theirs := bobAPI.apiChat("hello", 0)
	if doc := htmltest.Parse(t, bodyOf(bob.get(paths.Chat(*theirs.ExchangeID)))); len(htmltest.ByTestID(doc, "agent-told")) != 0 {
		t.Fatal("a reply given nothing links to what it was told")
	}
}

// TestProjectDefaultAgent: a project's agent_type is one a general chat
// can start with (another: 400, nothing changes), and a new chat in the
// project starts with it.
func TestProjectDefaultAgent(t *testing.T) {
	a := newTestApp(t)
	ann := a.apiClient("ann")
	for _, bad := range []string{"page_assistant", "bogus"} {
		res, b := ann.api(http.MethodPost, "/api/projects", map[string]any{"name": "X " + bad, "agent_type": bad})
		apiErr(t, res, b, http.StatusBadRequest)
	}
	var ps []apiProjectOut
	ann.apiJSON(http.MethodGet, "/api/projects", nil, http.StatusOK, &ps)
	if len(ps) != 0 {
		t.Fatalf("a refused project was made: %+v", ps)
	}
	var p apiProjectOut
	ann.apiJSON(http.MethodPost, "/api/projects", map[string]any{"name": "Work", "agent_type": "router"}, http.StatusCreated, &p)
	res, b := ann.api(http.MethodPatch, fmt.Sprintf("/api/projects/%d", p.ID), map[string]any{"agent_type": "page_assistant"})
	apiErr(t, res, b, http.StatusBadRequest)
	var reply apiChatOut
	ann.apiJSON(http.MethodPost, "/api/chat", map[string]any{"query": "hello", "project_id": p.ID}, http.StatusOK, &reply)
	var hist []struct {
		ID        int64  `json:"id"`
		AgentType string `json:"agent_type"`
	}
	ann.apiJSON(http.MethodGet, fmt.Sprintf("/api/chat/history?project_id=%d", p.ID), nil, http.StatusOK, &hist)
	if len(hist) != 1 || hist[0].AgentType != "router" {
		t.Fatalf("the project's chat: %+v", hist)
	}
}
