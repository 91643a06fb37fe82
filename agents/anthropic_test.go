package agents

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"palaver/models"
)

// fakeAnthropic speaks the Messages API's streaming wire format as the
// public documentation describes it ("Streaming Messages"): each answer is
// a list of (event, data) pairs, or a status with a body.
type fakeAnthropic struct {
	mu       sync.Mutex
	answers  []fakeAnswer
	requests []map[string]any
	headers  []http.Header
}

type fakeAnswer struct {
	status     int
	retryAfter string
	body       string
	events     [][2]string
}

func (f *fakeAnthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/messages" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	f.requests = append(f.requests, body)
	f.headers = append(f.headers, r.Header.Clone())
	var a fakeAnswer
	if len(f.answers) > 0 {
		a, f.answers = f.answers[0], f.answers[1:]
	} else {
		a = fakeAnswer{status: 500, body: `{"type":"error","error":{"type":"api_error","message":"no more answers"}}`}
	}
	f.mu.Unlock()
	if a.status != 0 {
		if a.retryAfter != "" {
			w.Header().Set("retry-after", a.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range a.events {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev[0], ev[1])
		w.(http.Flusher).Flush()
	}
}

// textAnswer streams a message: optional thinking, then text in two deltas,
// or tool_use blocks (name and input) ending with stop_reason tool_use.
func textAnswer(thinking, text string, tools ...[2]string) fakeAnswer {
	ev := [][2]string{
		{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test-1","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1,"cache_read_input_tokens":5}}}`},
		{"ping", `{"type": "ping"}`},
	}
	i := 0
	if thinking != "" {
		ev = append(ev,
			[2]string{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"thinking","thinking":""}}`, i)},
			[2]string{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"thinking_delta","thinking":%q}}`, i, thinking)},
			[2]string{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}`, i)},
			[2]string{"content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)})
		i++
	}
	if text != "" {
		half := len(text) / 2
		ev = append(ev,
			[2]string{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i)},
			[2]string{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%q}}`, i, text[:half])},
			[2]string{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%q}}`, i, text[half:])},
			[2]string{"content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)})
		i++
	}
	stop := "end_turn"
	for n, t := range tools {
		stop = "tool_use"
		in := t[1]
		ev = append(ev,
			[2]string{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"toolu_%d","name":%q,"input":{}}}`, i, n, t[0])},
			[2]string{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":""}}`, i)},
			[2]string{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, i, in[:len(in)/2])},
			[2]string{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, i, in[len(in)/2:])},
			[2]string{"content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)})
		i++
	}
	ev = append(ev,
		[2]string{"message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":15}}`, stop)},
		[2]string{"message_stop", `{"type":"message_stop"}`})
	return fakeAnswer{events: ev}
}

func newFakeAnthropic(t *testing.T, answers ...fakeAnswer) (*fakeAnthropic, *Anthropic) {
	t.Helper()
	f := &fakeAnthropic{answers: answers}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, &Anthropic{BaseURL: srv.URL, APIKey: "sk-ant-test", Model: "claude-test", Backoff: time.Millisecond, IdleTimeout: 5 * time.Second}
}

func TestAnthropicStreamsTextThinkingAndUsage(t *testing.T) {
	f, a := newFakeAnthropic(t, textAnswer("Let me think.", "Hello there, friend."))
	a.ThinkingBudget = 1024
	var deltas, thoughts []string
	req := Request{AgentType: AgentRouter, Query: "hi",
		History: []models.Message{
			{Role: models.RoleUser, Content: "earlier"},
			{Role: models.RoleAssistant, Content: "earlier answer",
				AgentResponse: &models.AgentResponse{Content: "earlier answer", Reasoning: "SECRET-THOUGHT"}},
		},
		OnReasoning: func(s string) { thoughts = append(thoughts, s) }}
	resp, err := a.Execute(context.Background(), req, func(s string) { deltas = append(deltas, s) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Hello there, friend." || strings.Join(deltas, "") != resp.Content || len(deltas) != 2 {
		t.Fatalf("content %q deltas %q", resp.Content, deltas)
	}
	if resp.Reasoning != "Let me think." || strings.Join(thoughts, "") != "Let me think." {
		t.Fatalf("reasoning %q, streamed %q", resp.Reasoning, thoughts)
	}
	m := resp.Metadata
	if m["model"] != "claude-test-1" || m["provider"] != "anthropic" || m["prompt_tokens"] != 25 ||
		m["completion_tokens"] != 15 || m["cached_tokens"] != 5 || m["finish_reason"] != "end_turn" {
		t.Fatalf("metadata %v", m)
	}
	h := f.headers[0]
	if h.Get("x-api-key") != "sk-ant-test" || h.Get("anthropic-version") != anthropicVersion {
		t.Fatalf("headers %v", h)
	}
	raw, _ := json.Marshal(f.requests[0])
	if strings.Contains(string(raw), "SECRET-THOUGHT") {
		t.Fatalf("reasoning sent back to the model: %s", raw)
	}
	body := f.requests[0]
	if body["stream"] != true || body["model"] != "claude-test" || body["system"] == "" {
		t.Fatalf("request %s", raw)
	}
	if th, _ := body["thinking"].(map[string]any); th["type"] != "enabled" || th["budget_tokens"] != float64(1024) {
		t.Fatalf("thinking %v", body["thinking"])
	}
	if msgs := body["messages"].([]any); len(msgs) != 3 {
		t.Fatalf("messages %s", raw)
	}
}

func TestAnthropicRetriesOverloadAndHonoursRetryAfter(t *testing.T) {
	overloadedEvent := fakeAnswer{events: [][2]string{
		{"message_start", `{"type":"message_start","message":{"model":"claude-test-1","usage":{"input_tokens":3,"output_tokens":0}}}`},
		{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
	}}
	f, a := newFakeAnthropic(t,
		fakeAnswer{status: 529, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		fakeAnswer{status: 429, retryAfter: "1", body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`},
		overloadedEvent,
		fakeAnswer{status: 503, body: `{}`},
		textAnswer("", "Finally."))
	a.MaxAttempts = 5
	start := time.Now()
	resp, err := a.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "hi"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Finally." || len(f.requests) != 5 {
		t.Fatalf("content %q after %d requests", resp.Content, len(f.requests))
	}
	if time.Since(start) < time.Second {
		t.Fatalf("retry-after: 1 was not honoured (%s)", time.Since(start))
	}

	_, a = newFakeAnthropic(t, overloadedEvent, overloadedEvent, overloadedEvent)
	a.MaxAttempts = 3
	_, err = a.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "hi"}, nil)
	var fe *FailureError
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "overloaded") || strings.Contains(fe.Reason, "127.0.0.1") {
		t.Fatalf("want an overloaded failure without the address, got %v", err)
	}
}

func TestAnthropicBrokenStreamIsAFailure(t *testing.T) {
	broken := textAnswer("", "Half an answer")
	broken.events = broken.events[:len(broken.events)-3] // no message_delta, no message_stop
	_, a := newFakeAnthropic(t, broken)
	var got strings.Builder
	_, err := a.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "hi"}, func(s string) { got.WriteString(s) })
	var fe *FailureError
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "broke off") || got.String() != "Half an answer" {
		t.Fatalf("err %v, streamed %q", err, got.String())
	}
}

// toolCalls records a turn's calls and answers them: done, or paused for
// the names in wait.
type toolCalls struct {
	calls []string
	wait  map[string]bool
}

func (c *toolCalls) call(_ context.Context, id, name string, args map[string]any) (ToolOutcome, error) {
	c.calls = append(c.calls, fmt.Sprintf("%s %s %v", id, name, args))
	if c.wait[name] {
		return ToolOutcome{}, ErrPaused
	}
	return ToolOutcome{CallID: id, Tool: name, Outcome: models.ToolDone, Output: map[string]any{"ok": true}}, nil
}

func TestAnthropicToolUseRunsThroughTheRegistry(t *testing.T) {
	f, a := newFakeAnthropic(t,
		textAnswer("", "Renaming.", [2]string{ToolRenameConversation, `{"title": "Trip plans"}`}),
		textAnswer("", "Done, renamed."))
	tc := &toolCalls{}
	req := Request{AgentType: AgentRouter, Query: "rename it", Tools: builtinTools(), CallTool: tc.call}
	resp, err := a.Execute(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Renaming.\n\nDone, renamed." {
		t.Fatalf("content %q", resp.Content)
	}
	if len(tc.calls) != 1 || tc.calls[0] != "toolu_0 rename_conversation map[title:Trip plans]" {
		t.Fatalf("calls %q", tc.calls)
	}
	tools, _ := f.requests[0]["tools"].([]any)
	names := []string{}
	for _, x := range tools {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	if !strings.Contains(strings.Join(names, ","), ToolDeleteConversation) || strings.Contains(strings.Join(names, ","), ToolProposeEdit) {
		t.Fatalf("offered %v", names)
	}
	raw, _ := json.Marshal(f.requests[1]["messages"])
	if !strings.Contains(string(raw), `{"content":"{\"ok\":true}","tool_use_id":"toolu_0","type":"tool_result"}`) ||
		!strings.Contains(string(raw), `{"id":"toolu_0","input":{"title":"Trip plans"},"name":"rename_conversation","type":"tool_use"}`) {
		t.Fatalf("second request %s", raw)
	}
}

func TestAnthropicConfirmPausesAndResumes(t *testing.T) {
	f, a := newFakeAnthropic(t,
		textAnswer("", "I will delete it.", [2]string{ToolDeleteConversation, `{"title":"Old"}`}),
		textAnswer("", "Deleted."))
	tc := &toolCalls{wait: map[string]bool{ToolDeleteConversation: true}}
	req := Request{AgentType: AgentRouter, Query: "delete Old", Tools: builtinTools(), CallTool: tc.call}
	_, err := a.Execute(context.Background(), req, nil)
	if !errors.Is(err, ErrPaused) {
		t.Fatalf("want ErrPaused, got %v", err)
	}
	// Approved: the turn runs again with its log; the call now answers.
	tc.wait = nil
	req.TurnLog = []models.Message{{Role: models.RoleToolCall, Tool: &models.ToolFields{
		CallID: "toolu_0", Name: ToolDeleteConversation, Arguments: map[string]any{"title": "Old"}, State: models.ToolAwaitingApproval}}}
	resp, err := a.Execute(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Deleted." || len(f.requests) != 2 {
		t.Fatalf("content %q, %d requests", resp.Content, len(f.requests))
	}
	raw, _ := json.Marshal(f.requests[1]["messages"])
	if !strings.Contains(string(raw), `"tool_use_id":"toolu_0"`) {
		t.Fatalf("resumed request lacks the result: %s", raw)
	}
}

// TestAnthropicImageBlocks: attached images go to Anthropic as base64
// image blocks before the query's text block, which carries the text file
// (fenced, cut at FileTextChars) and names the others.
func TestAnthropicImageBlocks(t *testing.T) {
	f, a := newFakeAnthropic(t, textAnswer("", "A dot."))
	a.FileTextChars = 10
	if _, err := a.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "look", Attachments: attachmentsFixture()}, nil); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(f.requests[0]["messages"])
	var msgs []struct {
		Role    string `json:"role"`
		Content []struct {
			Type   string `json:"type"`
			Text   string `json:"text"`
			Source struct {
				Type      string `json:"type"`
				MediaType string `json:"media_type"`
				Data      string `json:"data"`
			} `json:"source"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if last.Role != "user" || len(last.Content) != 2 {
		t.Fatalf("the user message %s", raw)
	}
	img, text := last.Content[0], last.Content[1]
	if img.Type != "image" || img.Source.Type != "base64" || img.Source.MediaType != "image/png" ||
		img.Source.Data != base64.StdEncoding.EncodeToString([]byte("\x89PNG!")) {
		t.Fatalf("image block %+v", img)
	}
	for _, want := range []string{"look", "(Attached image: dot.png)", "notes.md:\n```\n# Title\nse\n```", "notes.md was truncated", "a.zip"} {
		if text.Type != "text" || !strings.Contains(text.Text, want) {
			t.Errorf("text block %q lacks %q", text.Text, want)
		}
	}
}

// TestAnthropicSendsInstructions: the instructions in force (the person's,
// the project's, the memory) go in the system text, as for OpenAI.
func TestAnthropicSendsInstructions(t *testing.T) {
	f, a := newFakeAnthropic(t, textAnswer("", "Brief."))
	if _, err := a.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "hi", System: "Answer in one word."}, nil); err != nil {
		t.Fatal(err)
	}
	if sys, _ := f.requests[0]["system"].(string); !strings.Contains(sys, "Answer in one word.") {
		t.Fatalf("system %q", sys)
	}
}

// The Anthropic page assistant is offered the page chat's registry tools
// beside its proposals: it reads the editor's unsaved draft through the
// browser, and answers from it.
func TestAnthropicPageAssistantReadsTheEditor(t *testing.T) {
	f, a := newFakeAnthropic(t,
		textAnswer("", "", [2]string{ToolReadEditor, `{}`}),
		textAnswer("", "Your draft has 3 words."))
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	page, err := s.CreatePage(ctx, ann, "Trip", "# Trip\n")
	if err != nil {
		t.Fatal(err)
	}
	svc := New(s, a, Options{Logger: quiet})
	res := pausedTurn(t, svc, SendRequest{UserID: ann, PageID: &page.ID, Query: "review my draft"})
	if p := res.Pending[0]; p.Tool != ToolReadEditor || p.Awaiting != "client" {
		t.Fatalf("pending %+v", p)
	}
	offered, _ := json.Marshal(f.requests[0]["tools"])
	for _, name := range []string{ToolReadEditor, toolSectionPatch, toolFullReplacement} {
		if !strings.Contains(string(offered), `"name":"`+name+`"`) {
			t.Fatalf("%s not offered: %s", name, offered)
		}
	}
	got := answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: "toolu_0", Output: map[string]any{"content": "# Unsaved draft\n\nhello there"}})
	if got.Reply == nil || got.Reply.Content != "Your draft has 3 words." {
		t.Fatalf("after the browser's answer: %+v", got)
	}
	if len(f.requests) != 2 {
		t.Fatalf("%d requests", len(f.requests))
	}
	told, _ := json.Marshal(f.requests[1]["messages"])
	if !strings.Contains(string(told), `"tool_use_id":"toolu_0"`) || !strings.Contains(string(told), "Unsaved draft") {
		t.Fatalf("the model was told %s", told)
	}
}
