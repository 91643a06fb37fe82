package agents

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"palaver/models"
)

func TestRouterGreets(t *testing.T) {
	b := &Builtin{}
	for _, q := range []string{"hello", "Hi there", "HEY!", "well, hello.", "hi", "Oh hey, you", "(hi)", "say\nhello"} {
		resp, err := b.Execute(context.Background(), Request{AgentType: AgentRouter, Query: q}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(resp.Content, "Hello!") {
			t.Errorf("%q is a greeting, but the reply is %q", q, resp.Content)
		}
		if resp.AgentType != AgentRouter || resp.Metadata["provider"] != "builtin" || resp.Suggestions == nil {
			t.Errorf("%q: response = %+v", q, resp)
		}
	}
}

func TestRouterAnswersOfflineQuotingTheQuestion(t *testing.T) {
	b := &Builtin{}
	for _, q := range []string{
		"this", "high", "they went home", "shell script", "chi-square test", "hithere",
		"Ωhi", "éhey", "hi5", "hello_world", "What is 2+2?",
		"a question\nover two lines, with \"quotes\"",
	} {
		resp, err := b.Execute(context.Background(), Request{AgentType: AgentRouter, Query: q}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(resp.Content, "Hello!") {
			t.Errorf("%q is not a greeting, but got %q", q, resp.Content)
		}
		if !strings.Contains(resp.Content, "offline agent") {
			t.Errorf("%q: the reply does not say it is the offline agent: %q", q, resp.Content)
		}
		if !strings.Contains(resp.Content, `"`+q+`"`) {
			t.Errorf("%q: the reply does not quote the whole question: %q", q, resp.Content)
		}
	}
}

func TestRouterCountsTheConversation(t *testing.T) {
	b := &Builtin{}
	history := []models.Message{{Role: models.RoleUser, Content: "a"}, {Role: models.RoleAssistant, Content: "b"}}
	resp, err := b.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "more", History: history}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Content, "message 2 of this conversation") {
		t.Errorf("reply with one earlier turn = %q", resp.Content)
	}
}

func TestBuiltinStreamsWords(t *testing.T) {
	b := &Builtin{}
	for _, q := range []string{"hello", "tell me about\nthe  sea", "naïve café ☕ question"} {
		var deltas []string
		resp, err := b.Execute(context.Background(), Request{AgentType: AgentRouter, Query: q}, func(d string) {
			deltas = append(deltas, d)
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(deltas, ""); got != resp.Content {
			t.Errorf("%q: deltas concatenate to %q, not the content %q", q, got, resp.Content)
		}
		if words := len(strings.Fields(resp.Content)); len(deltas) < words {
			t.Errorf("%q: %d deltas for %d words", q, len(deltas), words)
		}
		for _, d := range deltas {
			if d == "" || strings.ContainsAny(strings.TrimLeft(d, " \n"), " \n") {
				t.Errorf("%q: delta %q is not one word", q, d)
			}
		}
	}
}

func TestBuiltinStreamStopsWhenCancelled(t *testing.T) {
	b := &Builtin{Delay: 5 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := b.Execute(ctx, Request{AgentType: AgentRouter, Query: "a long enough question"}, func(string) {
		if n++; n == 3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n > 4 {
		t.Errorf("%d deltas sent after the cancel", n-3)
	}
}

func TestBuiltinUnknownAgent(t *testing.T) {
	_, err := (&Builtin{}).Execute(context.Background(), Request{AgentType: "wizard", Query: "q"}, nil)
	if err == nil || !strings.Contains(err.Error(), "wizard") {
		t.Fatalf("err = %v, want one naming the agent", err)
	}
}
