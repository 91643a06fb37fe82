package agents

import (
	"context"
	"errors"
	"strings"
	"testing"

	"palaver/models"
)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// pausedTurn sends query and expects the turn to pause with one call.
func pausedTurn(t *testing.T, svc *Service, req SendRequest) *TurnResult {
	t.Helper()
	res, err := svc.Send(context.Background(), req)
	if err != nil || !res.Paused || len(res.Pending) != 1 {
		t.Fatalf("send %q = %+v, %v; want paused with one call", req.Query, res, err)
	}
	return res
}

func answer(t *testing.T, svc *Service, userID, exchangeID int64, r ToolResult) *TurnResult {
	t.Helper()
	turn, err := svc.AnswerTools(context.Background(), userID, exchangeID, []ToolResult{r})
	if err != nil {
		t.Fatalf("answer %+v: %v", r, err)
	}
	res, err := turn.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestDeleteWaitsForApprovalThenDeletes(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	doomed := send(t, svc, SendRequest{UserID: ann, Query: "Old plans"})
	res := pausedTurn(t, svc, SendRequest{UserID: ann, Query: `delete my chat "Old plans"`})
	p := res.Pending[0]
	if p.Tool != ToolDeleteConversation || p.Awaiting != "approval" || p.Tier != "server" || p.Arguments["title"] != "Old plans" {
		t.Fatalf("pending = %+v", p)
	}
	ex, _ := s.Exchange(ctx, ann, res.Exchange.ID)
	if ex.RunState() != models.TurnPaused || ex.TurnOwner != nil {
		t.Fatalf("run state %q owner %v; want paused, no lease", ex.RunState(), ex.TurnOwner)
	}
	got := answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: p.CallID, Approved: yes()})
	if got.Paused || got.Reply == nil || !strings.Contains(got.Reply.Content, `Deleted the conversation "Old plans"`) {
		t.Fatalf("after approval: %+v", got)
	}
	if _, err := s.Exchange(ctx, ann, doomed.Exchange.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("the chat is still there: %v", err)
	}
	// Answered: a second answer is refused and changes nothing.
	n := countMessages(t, s)
	if _, err := svc.AnswerTools(ctx, ann, res.Exchange.ID, []ToolResult{{CallID: p.CallID, Approved: yes()}}); !errors.Is(err, models.ErrNothingWaiting) {
		t.Fatalf("second answer: %v", err)
	}
	if countMessages(t, s) != n {
		t.Fatal("a refused answer wrote something")
	}
	log := logOf(t, s, ann, res.Exchange.ID)
	want := []string{"tool_call:" + ToolDeleteConversation, "tool_call:" + ToolDeleteConversation, "tool_result:" + ToolDeleteConversation + " ran."}
	if len(log) < 5 || strings.Join(log[1:4], "|") != strings.Join(want, "|") {
		t.Fatalf("log = %q", log)
	}
}

func TestDenyAndNeverDeleteNothing(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann, bob := newUser(t, s, "ann"), newUser(t, s, "bob")
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	keep := send(t, svc, SendRequest{UserID: ann, Query: "Keep me"})
	res := pausedTurn(t, svc, SendRequest{UserID: ann, Query: `delete my chat "Keep me"`})
	// Another user's answer: not found, nothing changes.
	if _, err := svc.AnswerTools(ctx, bob, res.Exchange.ID, []ToolResult{{CallID: res.Pending[0].CallID, Approved: yes()}}); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("bob's answer: %v", err)
	}
	got := answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: res.Pending[0].CallID, Approved: no()})
	if !strings.Contains(got.Reply.Content, "Nothing was deleted") {
		t.Fatalf("after denial: %q", got.Reply.Content)
	}
	if err := s.SetToolPolicies(ctx, ann, map[string]string{ToolDeleteConversation: models.ToolNever}); err != nil {
		t.Fatal(err)
	}
	never := send(t, svc, SendRequest{UserID: ann, Query: `delete my chat "Keep me"`})
	if never.Paused || !strings.Contains(never.Reply.Content, "Nothing was deleted") || !strings.Contains(never.Reply.Content, "never") {
		t.Fatalf("never: %+v", never)
	}
	if _, err := s.Exchange(ctx, ann, keep.Exchange.ID); err != nil {
		t.Fatal(err)
	}
}

func TestStopAndNewMessageCancelWaitingCalls(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	res := pausedTurn(t, svc, SendRequest{UserID: ann, Query: `remember this: I like tea`})
	stopped, err := svc.Stop(ctx, ann, res.Exchange.ID)
	if err != nil || !stopped.Stopped {
		t.Fatalf("stop = %+v, %v", stopped, err)
	}
	if _, err := svc.Stop(ctx, ann, res.Exchange.ID); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("second stop: %v", err)
	}
	if _, err := svc.AnswerTools(ctx, ann, res.Exchange.ID, []ToolResult{{CallID: res.Pending[0].CallID, Approved: yes()}}); !errors.Is(err, models.ErrNothingWaiting) {
		t.Fatalf("answer after stop: %v", err)
	}
	again := pausedTurn(t, svc, SendRequest{UserID: ann, ExchangeID: res.Exchange.ID, Query: `remember this: I like coffee`})
	next := send(t, svc, SendRequest{UserID: ann, ExchangeID: again.Exchange.ID, Query: "hello"})
	if next.Paused {
		t.Fatal("the new turn paused")
	}
	msgs, _ := s.Messages(ctx, ann, res.Exchange.ID, nil)
	state := models.ToolCallState(msgs)
	if state[again.Pending[0].CallID] != models.ToolCancelled {
		t.Fatalf("states = %v", state)
	}
	found := false
	for _, m := range msgs {
		if m.Role == models.RoleToolResult && m.Tool.Error == models.MovedOn {
			found = true
		}
	}
	if !found {
		t.Fatalf("no cancellation saying the person moved on: %q", logOf(t, s, ann, res.Exchange.ID))
	}
}

func TestReadEditorWaitsForTheBrowser(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	page, err := s.CreatePage(ctx, ann, "Draft", "# Saved\n\nold words")
	if err != nil {
		t.Fatal(err)
	}
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	res := pausedTurn(t, svc, SendRequest{UserID: ann, PageID: &page.ID, Query: "review my draft"})
	p := res.Pending[0]
	if p.Tool != ToolReadEditor || p.Awaiting != "client" || p.Tier != "browser" {
		t.Fatalf("pending = %+v", p)
	}
	// An output that does not fit the schema: refused, nothing changes.
	if _, err := svc.AnswerTools(ctx, ann, res.Exchange.ID, []ToolResult{{CallID: p.CallID, Output: map[string]any{"content": 3}}}); err == nil {
		t.Fatal("a wrongly typed output was taken")
	}
	got := answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: p.CallID,
		Output: map[string]any{"content": "# Unsaved title\n\none two three", "selection_start": 0.0, "selection_end": 3.0}})
	if got.Reply == nil || !strings.Contains(got.Reply.Content, "5 words") || !strings.Contains(got.Reply.Content, `"Unsaved title"`) {
		t.Fatalf("review = %+v", got.Reply)
	}
	if got.Reply.EditMode != nil {
		t.Fatal("the review proposed an edit")
	}
}

func TestToolPanicsAndUnknownToolsFailTheCallNotTheTurn(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	boom := &Tool{Name: "boom", Tier: models.ToolTierServer, Policy: models.ToolAuto, Schema: Schema{"type": "object"},
		Run: func(context.Context, ToolEnv, map[string]any) (any, error) { panic("kaboom") }}
	big := &Tool{Name: "big", Tier: models.ToolTierServer, Policy: models.ToolAuto, Schema: Schema{"type": "object"},
		Run: func(context.Context, ToolEnv, map[string]any) (any, error) {
			return map[string]any{"text": strings.Repeat("x", maxToolText+10)}, nil
		}}
	var outs []ToolOutcome
	p := &fakeProvider{exec: func(ctx context.Context, req Request) (*models.AgentResponse, error) {
		for i, name := range []string{"boom", "nope", "big", ToolRenameConversation} {
			args := map[string]any{}
			if name == ToolRenameConversation {
				args["title"] = 7 // wrong type
			}
			o, err := req.CallTool(ctx, "c"+string(rune('0'+i)), name, args)
			if err != nil {
				return nil, err
			}
			outs = append(outs, o)
		}
		return &models.AgentResponse{Content: "done"}, nil
	}}
	svc := New(s, p, Options{Logger: quiet, Tools: []*Tool{boom, big}})
	res := send(t, svc, SendRequest{UserID: ann, Query: "go"})
	if res.Reply.Content != "done" {
		t.Fatalf("reply %q", res.Reply.Content)
	}
	if outs[0].Outcome != models.ToolFailed || outs[1].Outcome != models.ToolFailed || outs[3].Outcome != models.ToolFailed {
		t.Fatalf("outcomes = %+v", outs)
	}
	if !strings.Contains(outs[3].Error, "must be a string") {
		t.Fatalf("validation error = %q", outs[3].Error)
	}
	o, _ := outs[2].Output.(map[string]any)
	if outs[2].Outcome != models.ToolDone || len(o["text"].(string)) != maxToolText || o["truncated"] != true {
		t.Fatalf("big output not capped: %d %v", len(o["text"].(string)), o["truncated"])
	}
}

func FuzzValidateArgs(f *testing.F) {
	for _, s := range []string{`{}`, `{"title":"x"}`, `{"title":7}`, `[]`, `{"title":""}`, `{"a":{"b":[1,2]}}`, `null`, `"s"`} {
		f.Add(s)
	}
	reg := builtinTools()
	f.Fuzz(func(t *testing.T, raw string) {
		for _, tool := range reg.All() {
			args, err := DecodeArgs(tool.Schema, raw)
			if err == nil && args == nil {
				t.Fatalf("%s: no error and no arguments for %q", tool.Name, raw)
			}
			if err == nil {
				// What passes validates again (the check is a function of the value).
				if err := ValidateArgs(tool.Schema, args); err != nil {
					t.Fatalf("%s: %q passed once, then %v", tool.Name, raw, err)
				}
			}
			if tool.Output != nil {
				_, _ = DecodeArgs(tool.Output, raw)
			}
		}
	})
}

// TestOpenAIConfirmCallPausesAndResumes: a model's call of a confirm tool
// pauses the turn; approved, the turn resumes and the model is asked again
// with the call and its outcome, not from the start.
func TestOpenAIConfirmCallPausesAndResumes(t *testing.T) {
	f, o := newFakeLLM(t,
		sse(toolCallChunks(ToolRemember, map[string]any{"text": "tea, no sugar"}), true),
		sse([]string{textChunk("I noted it."), finishChunk, usageChunk}, true))
	s := newStore(t)
	ann := newUser(t, s, "ann")
	svc := New(s, o, Options{Logger: quiet})
	res := pausedTurn(t, svc, SendRequest{UserID: ann, Query: "remember that I take tea without sugar"})
	first := <-f.bodies
	offered := map[string]bool{}
	for _, tl := range first.Tools {
		offered[tl.Function.Name] = true
	}
	if !offered[ToolRemember] || !offered[ToolDeleteConversation] || offered[ToolReadEditor] {
		t.Fatalf("offered tools %v", offered)
	}
	if p := res.Pending[0]; p.CallID != "call_9" || p.Tool != ToolRemember || p.Awaiting != "approval" {
		t.Fatalf("pending %+v", p)
	}
	got := answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: "call_9", Approved: yes()})
	if got.Reply == nil || got.Reply.Content != "I noted it." {
		t.Fatalf("resumed reply %+v", got.Reply)
	}
	second := <-f.bodies
	n := len(second.Messages)
	if n < 3 || second.Messages[n-2].Role != "assistant" || len(second.Messages[n-2].ToolCalls) != 1 ||
		second.Messages[n-1].Role != "tool" || !strings.Contains(second.Messages[n-1].Content, `"outcome":"done"`) {
		t.Fatalf("the resumed request's last messages: %+v", second.Messages[max(n-3, 0):])
	}
}
