package agents

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func reasoningChunk(field, s string) string {
	b, _ := json.Marshal(map[string]any{"model": "test-model-2025", "choices": []any{map[string]any{"delta": map[string]any{field: s}}}})
	return string(b)
}

// TestReasoningIsKeptAndNeverSentBack runs two turns through the service:
// the first streams reasoning (under each name servers use), which is kept
// with the reply; the second turn's request to the model lacks it.
func TestReasoningIsKeptAndNeverSentBack(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning", "thinking"} {
		t.Run(field, func(t *testing.T) {
			f, o := newFakeLLM(t,
				sse([]string{reasoningChunk(field, "PRIVATE-"), reasoningChunk(field, "THOUGHT"), textChunk("The answer."), finishChunk, usageChunk}, true),
				sse([]string{textChunk("Second."), finishChunk}, true))
			s := newStore(t)
			ann := newUser(t, s, "ann")
			svc := New(s, o, Options{Logger: quiet})
			res, err := svc.Send(context.Background(), SendRequest{UserID: ann, AgentType: AgentRouter, Query: "why?"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed || res.Reply.AgentResponse == nil || res.Reply.AgentResponse.Reasoning != "PRIVATE-THOUGHT" ||
				res.Reply.Content != "The answer." {
				t.Fatalf("reply %+v", res.Reply)
			}
			msgs, err := s.Messages(context.Background(), ann, res.Exchange.ID, nil)
			if err != nil || msgs[1].AgentResponse == nil || msgs[1].AgentResponse.Reasoning != "PRIVATE-THOUGHT" {
				t.Fatalf("stored reply %+v, %v", msgs, err)
			}
			<-f.bodies
			if _, err := svc.Send(context.Background(), SendRequest{UserID: ann, ExchangeID: res.Exchange.ID, AgentType: AgentRouter, Query: "and?"}); err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(<-f.bodies)
			if strings.Contains(string(body), "PRIVATE") || !strings.Contains(string(body), "The answer.") {
				t.Fatalf("next turn's request: %s", body)
			}
		})
	}
}
