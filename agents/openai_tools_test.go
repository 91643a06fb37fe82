package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"palaver/models"
)

// The model calls search_conversations; the call runs as a recorded
// sub-run, its results go back to the model, which answers with them.
func TestOpenAISearchesConversationsThroughATool(t *testing.T) {
	f, o := newFakeLLM(t,
		sse(append([]string{textChunk("Let me look.")}, toolCallChunks(toolSearch, map[string]any{"query": "zebras"})...), true),
		sse([]string{textChunk("You asked about zebras [here](/chat/1?seq=0)."), finishChunk, usageChunk}, true),
		titleAnswer("Finding zebras"),
	)
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	old, _, err := s.StartTurn(ctx, models.TurnStart{UserID: ann, Scope: models.ScopeGeneral, AgentType: AgentRouter, Query: "where do zebras graze?", Owner: "o"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishTurn(ctx, old.ID, "o", &models.Message{Role: models.RoleAssistant, Content: "On the savanna."}); err != nil {
		t.Fatal(err)
	}
	svc := New(s, o, Options{Logger: quiet})
	var deltas strings.Builder
	sub := svc.Hub().Subscribe(ann)
	defer sub.Close()
	res, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "what did I ask about zebras?"})
	if err != nil || res.Failed {
		t.Fatalf("send = %+v, %v", res, err)
	}
	svc.background.Wait()
	for len(sub.C) > 0 {
		if e := <-sub.C; e.Kind == EventDelta && e.ExchangeID == res.Exchange.ID {
			deltas.WriteString(e.Delta)
		}
	}
	want := "Let me look.\n\nYou asked about zebras [here](/chat/1?seq=0)."
	if res.Reply.Content != want || deltas.String() != want {
		t.Fatalf("reply %q, streamed %q; want %q", res.Reply.Content, deltas.String(), want)
	}
	if m := res.Reply.AgentResponse.Metadata; m["total_tokens"] != 34 { // both rounds
		t.Fatalf("usage %v", m)
	}

	first, second := <-f.bodies, <-f.bodies
	// The search first, then the registry's tools (issue 25).
	if len(first.Tools) < 2 || first.Tools[0].Function.Name != toolSearch || !strings.Contains(first.Messages[0].Content, toolSearch) {
		t.Fatalf("first request offers %+v", first.Tools)
	}
	n := len(second.Messages)
	call, answer := second.Messages[n-2], second.Messages[n-1]
	if call.Role != "assistant" || len(call.ToolCalls) != 1 || call.ToolCalls[0].ID != "call_9" || call.ToolCalls[0].Function.Name != toolSearch ||
		answer.Role != "tool" || answer.ToolCallID != "call_9" {
		t.Fatalf("second request ends with %+v / %+v", call, answer)
	}
	var told struct {
		Query string      `json:"query"`
		Hits  []SearchHit `json:"hits"`
	}
	if err := json.Unmarshal([]byte(answer.Content), &told); err != nil {
		t.Fatalf("tool message %q: %v", answer.Content, err)
	}
	url := fmt.Sprintf("/chat/%d?seq=0", old.ID)
	if told.Query != "zebras" || len(told.Hits) == 0 || told.Hits[0].URL != url || strings.Contains(answer.Content, "<mark>") {
		t.Fatalf("the model was told %s", answer.Content)
	}

	// The parent's log: the user message, the call and its result (naming
	// the sub-run), the reply; the sub-run holds the search.
	msgs, err := s.Messages(ctx, ann, res.Exchange.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, []string{"user", "tool_call", "tool_result", "assistant"}) {
		t.Fatalf("log roles %v", roles)
	}
	runs, err := s.SubRuns(ctx, ann, res.Exchange.ID)
	if err != nil || len(runs) != 1 || runs[0].Agent != AgentSearch || runs[0].Status != models.SubRunOK || runs[0].ParentSeq != *msgs[1].Seq {
		t.Fatalf("sub-runs %+v, %v", runs, err)
	}
	if r, _ := msgs[2].Tool.Result.(map[string]any); msgs[2].Tool.CallID != "call_9" || r["sub_run_id"] != float64(runs[0].ExchangeID) {
		t.Fatalf("tool result %+v", msgs[2].Tool)
	}
	if got := logOf(t, s, ann, runs[0].ExchangeID); got[0] != "user:zebras" || len(got) < 3 {
		t.Fatalf("sub-run log %v", got)
	}
}

// Page chats keep their own tools; general chats without a search (a
// direct Execute) are offered none.
func TestOpenAIOffersSearchOnlyWithASearch(t *testing.T) {
	f, o := newFakeLLM(t, sse([]string{textChunk("ok"), finishChunk}, true))
	if _, err := o.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "q"}, nil); err != nil {
		t.Fatal(err)
	}
	if body := <-f.bodies; body.Tools != nil {
		t.Fatalf("tools offered without a search: %+v", body.Tools)
	}
	search := func(context.Context, string, string) (*SearchOutcome, error) { return nil, nil }
	if _, err := o.Execute(context.Background(), Request{AgentType: AgentPageAssistant, Query: "q", SearchChats: search,
		Page: &PageContext{ID: 1, Title: "T", Content: "# T\n"}}, nil); err != nil {
		t.Fatal(err)
	}
	if body := <-f.bodies; len(body.Tools) != 2 || body.Tools[0].Function.Name == toolSearch {
		t.Fatalf("page tools %+v", body.Tools)
	}
}
