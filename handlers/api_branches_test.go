package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// apiBranchOut is one member of a family as GET …/branches lists it.
type apiBranchOut struct {
	ExchangeID int64 `json:"exchange_id"`
	ForkedFrom *struct {
		ExchangeID int64 `json:"exchange_id"`
		Seq        int64 `json:"seq"`
	} `json:"forked_from"`
	Title        string `json:"title"`
	MessageCount int64  `json:"message_count"`
}

// contents is an exchange's log as "role:content" lines.
func contents(msgs []apiMsgOut) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + ":" + m.Content
	}
	return out
}

func TestAPIForkEditRegenerateBranches(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	root := *ann.apiChat("first question", 0).ExchangeID
	ann.apiChat("second question", root) // seqs 0..3
	parentLog := contents(ann.apiMessages(root))
	base := fmt.Sprintf("/api/chat/exchange/%d", root)

	// A fork without a query: 201, the entries before seq.
	var made struct {
		ExchangeID int64 `json:"exchange_id"`
	}
	ann.apiJSON(http.MethodPost, base+"/fork", map[string]any{"seq": 2}, http.StatusCreated, &made)
	if got := contents(ann.apiMessages(made.ExchangeID)); strings.Join(got, "|") != strings.Join(parentLog[:2], "|") {
		t.Fatalf("the fork's log %v, want %v", got, parentLog[:2])
	}

	// An edit: a fork at the edited message with the new text, answered.
	var edit apiChatOut
	ann.apiJSON(http.MethodPost, base+"/fork", map[string]any{"seq": 2, "query": "second question, edited"}, http.StatusOK, &edit)
	if edit.ExchangeID == nil || *edit.ExchangeID == root || !strings.Contains(edit.Response, "second question, edited") {
		t.Fatalf("the edit's answer: %+v", edit)
	}
	got := contents(ann.apiMessages(*edit.ExchangeID))
	if len(got) != 4 || got[2] != "user:second question, edited" || got[0] != parentLog[0] {
		t.Fatalf("the edit's log: %v", got)
	}
	if now := contents(ann.apiMessages(root)); strings.Join(now, "|") != strings.Join(parentLog, "|") {
		t.Fatalf("the original changed: %v", now)
	}

	// Regenerate the last reply: a new answer in a fork, the old one kept.
	var regen apiChatOut
	ann.apiJSON(http.MethodPost, base+"/regenerate", nil, http.StatusOK, &regen)
	if regen.ExchangeID == nil || *regen.ExchangeID == root {
		t.Fatalf("regenerate answered %+v", regen)
	}
	// The new answer says which it is (the builtin agent), so that it
	// differs from the old one.
	if got := contents(ann.apiMessages(*regen.ExchangeID)); len(got) != 4 || got[2] != parentLog[2] ||
		got[3] != parentLog[3]+"\n\nAnother answer (2) to this message." {
		t.Fatalf("the regeneration's log: %v (the parent's %v)", got, parentLog)
	}

	// The family: the root first, then the three forks, each pointing back.
	var family []apiBranchOut
	ann.apiJSON(http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/branches", *edit.ExchangeID), nil, http.StatusOK, &family)
	if len(family) != 4 || family[0].ExchangeID != root || family[0].ForkedFrom != nil {
		t.Fatalf("branches: %+v", family)
	}
	for _, b := range family[1:] {
		if b.ForkedFrom == nil || b.ForkedFrom.ExchangeID != root || b.ForkedFrom.Seq < 2 {
			t.Errorf("branch %+v does not point back at the root", b)
		}
	}
	// The history lists every fork as its own item.
	if h := ann.apiHistory(""); len(h) != 4 {
		t.Fatalf("the history lists %d exchanges, want 4", len(h))
	}

	// Refusals create nothing.
	before := a.apiRows()
	for _, tc := range []struct {
		c      *client
		path   string
		body   any
		status int
	}{
		{ann, base + "/fork", map[string]any{"seq": 99}, http.StatusBadRequest},
		{ann, base + "/fork", map[string]any{}, http.StatusBadRequest},
		{ann, base + "/fork", map[string]any{"seq": -1}, http.StatusBadRequest},
		{ann, base + "/fork", map[string]any{"seq": 2, "query": "   "}, http.StatusBadRequest},
		{ann, base + "/fork", map[string]any{"seq": 2, "query": strings.Repeat("x", 100_001)}, http.StatusBadRequest},
		{ann, base + "/regenerate", map[string]any{"seq": 0}, http.StatusBadRequest}, // a user message, not a reply
		{bob, base + "/fork", map[string]any{"seq": 1}, http.StatusNotFound},
		{bob, base + "/regenerate", nil, http.StatusNotFound},
		{bob, base + "/branches", nil, http.StatusNotFound},
	} {
		method := http.MethodPost
		if strings.HasSuffix(tc.path, "/branches") {
			method = http.MethodGet
		}
		res, body := tc.c.api(method, tc.path, tc.body)
		if res.StatusCode != tc.status {
			t.Errorf("%s %s %v: %d %s, want %d", method, tc.path, tc.body, res.StatusCode, body, tc.status)
		}
	}
	if after := a.apiRows(); after != before {
		t.Fatalf("refused requests changed the rows: %v → %v", before, after)
	}
}

// TestAPIChatAfterSeqForks: a message written against an older view of the
// log (after_seq) forks instead of landing after newer messages.
func TestAPIChatAfterSeqForks(t *testing.T) {
	a := newTestApp(t)
	ann := a.apiClient("ann")
	ex := *ann.apiChat("the question", 0).ExchangeID // seqs 0, 1
	// A second tab answers the reply first: the log moves to seq 3.
	var first apiChatOut
	ann.apiJSON(http.MethodPost, "/api/chat", map[string]any{"query": "tab one", "exchange_id": ex, "after_seq": 1}, http.StatusOK, &first)
	if first.Forked || *first.ExchangeID != ex {
		t.Fatalf("a send against the current log forked: %+v", first)
	}
	// The other tab, still at seq 1, answers too: a new branch.
	var second apiChatOut
	ann.apiJSON(http.MethodPost, "/api/chat", map[string]any{"query": "tab two", "exchange_id": ex, "after_seq": 1}, http.StatusOK, &second)
	if !second.Forked || *second.ExchangeID == ex {
		t.Fatalf("a send against an older view did not fork: %+v", second)
	}
	if got := contents(ann.apiMessages(*second.ExchangeID)); len(got) != 4 || got[2] != "user:tab two" {
		t.Fatalf("the new branch: %v", got)
	}
	if got := contents(ann.apiMessages(ex)); len(got) != 4 || got[2] != "user:tab one" {
		t.Fatalf("the original: %v", got)
	}
	// As a query parameter too (Galaxy's clients send them so).
	res, body := ann.api(http.MethodPost, fmt.Sprintf("/api/chat?query=tab+three&exchange_id=%d&after_seq=1", ex), nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"forked":true`) {
		t.Fatalf("after_seq as a query parameter: %d %s", res.StatusCode, body)
	}
}

// A fork while the parent's turn runs is allowed (issue 11, "Bad input"):
// the edit forks from what the parent holds and is answered in the fork;
// the parent's running turn goes on, and its reply lands in the parent only.
func TestAPIForkWhileTheParentsTurnRuns(t *testing.T) {
	gate := newGateProvider()
	a := newTestApp(t, withAPIProvider(gate))
	ann := a.apiClient("ann")
	root := *ann.apiChat("first question", 0).ExchangeID // seqs 0, 1
	done := make(chan apiChatOut, 1)
	go func() {
		var out apiChatOut
		res, body := ann.api(http.MethodPost, "/api/chat", map[string]any{"query": "hold the parent", "exchange_id": root})
		if res.StatusCode == http.StatusOK {
			_ = json.Unmarshal(body, &out)
		}
		done <- out
	}()
	gate.waitStarted(t, 1)

	var edit apiChatOut
	ann.apiJSON(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/fork", root), map[string]any{"seq": 2, "query": "second question, edited"},
		http.StatusOK, &edit)
	if edit.ExchangeID == nil || *edit.ExchangeID == root || edit.Response != "answered second question, edited" {
		t.Fatalf("the fork's answer while the parent runs: %+v", edit)
	}
	gate.pass <- struct{}{}
	parent := <-done
	if parent.Response != "answered hold the parent" || *parent.ExchangeID != root {
		t.Fatalf("the parent's turn: %+v", parent)
	}
	a.waitTurns()
	if got := contents(ann.apiMessages(root)); strings.Join(got, "|") != "user:first question|assistant:answered first question|user:hold the parent|assistant:answered hold the parent" {
		t.Fatalf("the parent's log: %v", got)
	}
	if got := contents(ann.apiMessages(*edit.ExchangeID)); strings.Join(got, "|") != "user:first question|assistant:answered first question|user:second question, edited|assistant:answered second question, edited" {
		t.Fatalf("the fork's log: %v", got)
	}
}
