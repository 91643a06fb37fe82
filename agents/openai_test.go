package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"palaver/models"
)

// fakeLLM is a local server speaking the chat-completions wire format: each
// request is answered by the next of its handlers (the last one repeats).
type fakeLLM struct {
	t        *testing.T
	handlers []http.HandlerFunc
	calls    atomic.Int32
	bodies   chan chatRequest
}

func newFakeLLM(t *testing.T, handlers ...http.HandlerFunc) (*fakeLLM, *OpenAI) {
	f := &fakeLLM{t: t, handlers: handlers, bodies: make(chan chatRequest, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("Authorization %q", got)
		}
		var body chatRequest
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("request body: %v", err)
		}
		f.bodies <- body
		n := int(f.calls.Add(1)) - 1
		f.handlers[min(n, len(f.handlers)-1)](w, r)
	}))
	t.Cleanup(srv.Close)
	return f, &OpenAI{BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "test-model", Backoff: time.Millisecond}
}

// sse writes chunks as server-sent events, then [DONE] unless cut is set.
func sse(chunks []string, done bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
			w.(http.Flusher).Flush()
		}
		if done {
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
	}
}

func textChunk(s string) string {
	b, _ := json.Marshal(map[string]any{"model": "test-model-2025", "choices": []any{map[string]any{"delta": map[string]any{"content": s}}}})
	return string(b)
}

const finishChunk = `{"model":"test-model-2025","choices":[{"delta":{},"finish_reason":"stop"}]}`
const usageChunk = `{"model":"test-model-2025","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}`

func TestOpenAIStreamsTextAndUsage(t *testing.T) {
	f, o := newFakeLLM(t, sse([]string{textChunk("Hello"), textChunk(", "), textChunk("world."), finishChunk, usageChunk}, true))
	var deltas []string
	resp, err := o.Execute(context.Background(), Request{
		AgentType: AgentRouter, Query: "greet me", Context: "on a test",
		History: []models.Message{
			{Role: models.RoleUser, Content: "earlier question"},
			{Role: models.RoleAssistant, Content: "earlier answer"},
			{Role: models.RoleToolResult, Content: "not for the model as text"},
		},
	}, func(s string) { deltas = append(deltas, s) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Hello, world." || strings.Join(deltas, "") != resp.Content || len(deltas) != 3 {
		t.Fatalf("content %q from deltas %q", resp.Content, deltas)
	}
	m := resp.Metadata
	if m["model"] != "test-model-2025" || m["total_tokens"] != 17 || m["prompt_tokens"] != 12 || m["completion_tokens"] != 5 || m["finish_reason"] != "stop" {
		t.Fatalf("metadata %v", m)
	}
	body := <-f.bodies
	if !body.Stream || body.StreamOptions == nil || !body.StreamOptions.IncludeUsage || body.Model != "test-model" {
		t.Fatalf("request %+v", body)
	}
	var roles []string
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,system,user" {
		t.Fatalf("roles sent %s", got)
	}
	if last := body.Messages[len(body.Messages)-1]; last.Content != "greet me" {
		t.Fatalf("last message %+v", last)
	}
}

func TestOpenAIToolCallDeltasAreJoined(t *testing.T) {
	chunks := []string{
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"propose_","arguments":""}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"edit","arguments":"{\"reason"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_2","function":{"name":"other","arguments":"{}"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ing\":\"x\"}"}}]}}]}`,
		`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
	}
	_, o := newFakeLLM(t, sse(chunks, true))
	payload, _ := json.Marshal(chatRequest{Model: "m", Stream: true})
	comp, err := o.stream(context.Background(), payload, func(string) {}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(comp.ToolCalls) != 2 || comp.FinishReason != "tool_calls" {
		t.Fatalf("tool calls %+v finish %q", comp.ToolCalls, comp.FinishReason)
	}
	tc := comp.ToolCalls[0]
	if tc.ID != "call_1" || tc.Function.Name != "propose_edit" || tc.Function.Arguments != `{"reasoning":"x"}` {
		t.Fatalf("first call %+v", tc)
	}
}

func TestOpenAIRetries429ThenSucceeds(t *testing.T) {
	limited := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
	}
	f, o := newFakeLLM(t, limited, limited, sse([]string{textChunk("ok"), finishChunk}, true))
	resp, err := o.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "q"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "ok" || f.calls.Load() != 3 {
		t.Fatalf("content %q after %d calls", resp.Content, f.calls.Load())
	}
}

func TestOpenAIGivesUpOn500(t *testing.T) {
	f, o := newFakeLLM(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream exploded", http.StatusInternalServerError)
	})
	o.MaxAttempts = 3
	_, err := o.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "q"}, nil)
	if err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "upstream exploded") {
		t.Fatalf("err %v", err)
	}
	if f.calls.Load() != 3 {
		t.Fatalf("%d calls, want 3 attempts", f.calls.Load())
	}
}

func TestOpenAIDoesNotRetryClientErrors(t *testing.T) {
	f, o := newFakeLLM(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"bad model"}}`, http.StatusBadRequest)
	})
	if _, err := o.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "q"}, nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("err %v", err)
	}
	if f.calls.Load() != 1 {
		t.Fatalf("a 400 was retried: %d calls", f.calls.Load())
	}
}

func TestOpenAIDroppedConnectionMidStream(t *testing.T) {
	dropped := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", textChunk("partial "))
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	f, o := newFakeLLM(t, dropped, sse([]string{textChunk("never")}, true))
	var got strings.Builder
	_, err := o.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "q"}, func(s string) { got.WriteString(s) })
	if err == nil || !strings.Contains(err.Error(), "broke off") {
		t.Fatalf("err %v", err)
	}
	// Text already reached the user, so the request is not repeated.
	if f.calls.Load() != 1 || got.String() != "partial " {
		t.Fatalf("%d calls, deltas %q", f.calls.Load(), got.String())
	}
}

func TestOpenAIStreamWithoutDoneIsAnError(t *testing.T) {
	_, o := newFakeLLM(t, sse([]string{textChunk("cut")}, false))
	if _, err := o.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "q"}, nil); err == nil {
		t.Fatal("a stream that ends without [DONE] was taken as complete")
	}
}

func TestOpenAIIdleTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	_, o := newFakeLLM(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", textChunk("hm"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	o.IdleTimeout = 50 * time.Millisecond
	start := time.Now()
	_, err := o.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "q"}, nil)
	if err == nil || !strings.Contains(err.Error(), "stopped sending") {
		t.Fatalf("err %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the idle timeout did not end the wait")
	}
}

func TestOpenAIErrorChunk(t *testing.T) {
	_, o := newFakeLLM(t, sse([]string{`{"error":{"message":"context length exceeded"}}`}, true))
	_, err := o.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "q"}, nil)
	if err == nil || !strings.Contains(err.Error(), "context length exceeded") {
		t.Fatalf("err %v", err)
	}
}
