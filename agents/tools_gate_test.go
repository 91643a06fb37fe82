package agents

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"palaver/models"
)

// The search and the page proposals are carried out by their providers'
// own code, but they pass the same policy gate as every registered tool.
func TestSearchPassesThePolicyGate(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	send(t, svc, SendRequest{UserID: ann, Query: "tea with lemon"})

	if err := s.SetToolPolicies(ctx, ann, map[string]string{ToolSearchChats: models.ToolNever}); err != nil {
		t.Fatal(err)
	}
	never := send(t, svc, SendRequest{UserID: ann, Query: "search my chats for tea"})
	if never.Paused || !strings.Contains(never.Reply.Content, "couldn't search") || !strings.Contains(never.Reply.Content, "never") {
		t.Fatalf("never: %+v", never.Reply)
	}
	if runs, err := s.SubRuns(ctx, ann, never.Exchange.ID); err != nil || len(runs) != 0 {
		t.Fatalf("a refused search ran: %+v, %v", runs, err)
	}
	msgs, _ := s.Messages(ctx, ann, never.Exchange.ID, nil)
	if st := models.ToolCallState(msgs)["builtin-search"]; st != models.ToolDenied {
		t.Fatalf("the refusal is not in the log: state %q, log %q", st, logOf(t, s, ann, never.Exchange.ID))
	}

	if err := s.SetToolPolicies(ctx, ann, map[string]string{ToolSearchChats: models.ToolConfirm}); err != nil {
		t.Fatal(err)
	}
	res := pausedTurn(t, svc, SendRequest{UserID: ann, Query: "search my chats for tea"})
	if p := res.Pending[0]; p.Tool != ToolSearchChats || p.Awaiting != "approval" || p.Arguments["query"] != "tea" {
		t.Fatalf("pending %+v", p)
	}
	if runs, _ := s.SubRuns(ctx, ann, res.Exchange.ID); len(runs) != 0 {
		t.Fatal("the search ran before it was approved")
	}
	got := answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: res.Pending[0].CallID, Approved: yes()})
	if got.Paused || got.Reply == nil || !strings.Contains(got.Reply.Content, "I searched your chats for “tea”. The best") {
		t.Fatalf("after approval: %+v", got.Reply)
	}
	msgs, _ = s.Messages(ctx, ann, res.Exchange.ID, nil)
	runs, err := s.SubRuns(ctx, ann, res.Exchange.ID)
	if err != nil || len(runs) != 1 || runs[0].Status != models.SubRunOK {
		t.Fatalf("sub-runs %+v, %v", runs, err)
	}
	// The sub-run points back to the approval, the call's last state.
	var approval *models.Message
	for i := range msgs {
		if m := &msgs[i]; m.Role == models.RoleToolCall && m.Tool.State == models.ToolRunning && m.Tool.By == "person" {
			approval = m
		}
	}
	if approval == nil || runs[0].ParentSeq != *approval.Seq {
		t.Fatalf("sub-run at %d; log %q", runs[0].ParentSeq, logOf(t, s, ann, res.Exchange.ID))
	}

	denied := pausedTurn(t, svc, SendRequest{UserID: ann, ExchangeID: res.Exchange.ID, Query: "search my chats for lemon"})
	no := answer(t, svc, ann, denied.Exchange.ID, ToolResult{CallID: denied.Pending[0].CallID, Approved: no()})
	if !strings.Contains(no.Reply.Content, "couldn't search") || !strings.Contains(no.Reply.Content, "denied") {
		t.Fatalf("after denial: %q", no.Reply.Content)
	}
}

func TestPageProposalsPassThePolicyGate(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	page, err := s.CreatePage(ctx, ann, "Trip", "# Trip\n\nA lot.\n")
	if err != nil {
		t.Fatal(err)
	}
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	ask := SendRequest{UserID: ann, PageID: &page.ID, Query: "rewrite the page as: # Trip\n\nLess."}

	auto := send(t, svc, ask)
	if _, ok := ProposalOf(auto.Reply.AgentResponse); !ok || auto.Reply.EditMode == nil {
		t.Fatalf("auto: no proposal: %+v", auto.Reply)
	}

	if err := s.SetToolPolicies(ctx, ann, map[string]string{ToolProposeEdit: models.ToolNever}); err != nil {
		t.Fatal(err)
	}
	ask.ExchangeID = auto.Exchange.ID
	never := send(t, svc, ask)
	if _, ok := ProposalOf(never.Reply.AgentResponse); ok || never.Reply.EditMode != nil ||
		!strings.Contains(never.Reply.Content, "did not propose") || !strings.Contains(never.Reply.Content, "never") {
		t.Fatalf("never: %+v", never.Reply)
	}

	if err := s.SetToolPolicies(ctx, ann, map[string]string{ToolProposeEdit: models.ToolConfirm}); err != nil {
		t.Fatal(err)
	}
	res := pausedTurn(t, svc, ask)
	if p := res.Pending[0]; p.Tool != ToolProposeEdit || p.Awaiting != "approval" || p.Arguments["edit_mode"] != models.EditFullReplacement ||
		p.Arguments["content"] != "# Trip\n\nLess." {
		t.Fatalf("pending %+v", p)
	}
	got := answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: res.Pending[0].CallID, Approved: yes()})
	p, ok := ProposalOf(got.Reply.AgentResponse)
	if !ok || p.Content != "# Trip\n\nLess." || p.OriginalHash != DJB2(page.Content) || got.Reply.EditMode == nil {
		t.Fatalf("after approval: %+v", got.Reply)
	}

	denied := pausedTurn(t, svc, ask)
	no := answer(t, svc, ann, denied.Exchange.ID, ToolResult{CallID: denied.Pending[0].CallID, Approved: no()})
	if _, ok := ProposalOf(no.Reply.AgentResponse); ok || !strings.Contains(no.Reply.Content, "did not propose") {
		t.Fatalf("after denial: %+v", no.Reply)
	}
}

// A model's proposal (OpenAI-compatible) that must ask first pauses the
// turn; approved, it is the reply, without asking the model again.
func TestOpenAIProposalWaitsForApproval(t *testing.T) {
	f, o := newFakeLLM(t, sse(toolCallChunks(toolSectionPatch, map[string]any{
		"reasoning": "Shorter budget.", "target_section_heading": "## Budget", "new_section_content": "## Budget\nOne euro.",
	}), true))
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	page, err := s.CreatePage(ctx, ann, "Trip", "# Trip\n\n## Budget\nA lot.\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetToolPolicies(ctx, ann, map[string]string{ToolProposeEdit: models.ToolConfirm}); err != nil {
		t.Fatal(err)
	}
	svc := New(s, o, Options{Logger: quiet})
	res := pausedTurn(t, svc, SendRequest{UserID: ann, PageID: &page.ID, Query: "make the budget smaller"})
	if p := res.Pending[0]; p.Tool != ToolProposeEdit || p.CallID != "call_9" || p.Arguments["edit_mode"] != models.EditSectionPatch {
		t.Fatalf("pending %+v", p)
	}
	<-f.bodies
	got := answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: "call_9", Approved: yes()})
	p, ok := ProposalOf(got.Reply.AgentResponse)
	if !ok || p.TargetHeading != "## Budget" || p.NewSectionContent != "## Budget\nOne euro." || got.Reply.Content != "Shorter budget." {
		t.Fatalf("after approval: %+v", got.Reply)
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("the model was asked %d times; want once", n)
	}
}

// The OpenAI page assistant is offered read_editor from the registry; the
// call waits for the browser, and its answer goes back to the model.
func TestOpenAIPageAssistantReadsTheEditor(t *testing.T) {
	f, o := newFakeLLM(t,
		sse(toolCallChunks(ToolReadEditor, map[string]any{}), true),
		sse([]string{textChunk("Your draft has 3 words."), finishChunk, usageChunk}, true),
	)
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	page, err := s.CreatePage(ctx, ann, "Trip", "# Trip\n")
	if err != nil {
		t.Fatal(err)
	}
	svc := New(s, o, Options{Logger: quiet})
	res := pausedTurn(t, svc, SendRequest{UserID: ann, PageID: &page.ID, Query: "review my draft"})
	if p := res.Pending[0]; p.Tool != ToolReadEditor || p.Awaiting != "client" || p.Tier != models.ToolTierBrowser {
		t.Fatalf("pending %+v", p)
	}
	first := <-f.bodies
	offered := false
	for _, tool := range first.Tools {
		offered = offered || tool.Function.Name == ToolReadEditor
	}
	if !offered {
		t.Fatalf("read_editor not offered: %+v", first.Tools)
	}
	got := answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: "call_9", Output: map[string]any{"content": "# Unsaved draft\n\nhello there"}})
	if got.Reply == nil || got.Reply.Content != "Your draft has 3 words." {
		t.Fatalf("after the browser's answer: %+v", got)
	}
	second := <-f.bodies
	n := len(second.Messages)
	if told := second.Messages[n-1]; told.Role != "tool" || told.ToolCallID != "call_9" || !strings.Contains(told.Content, "Unsaved draft") {
		t.Fatalf("the model was told %+v", told)
	}
}

// The turn timeout counts the whole turn's running time, not the waits for
// the person: a resumed stretch gets what is left of it.
func TestTurnTimeoutCountsRunningTimeAcrossAPause(t *testing.T) {
	const timeout = 600 * time.Millisecond
	checkpoint := &Tool{Name: "checkpoint", Tier: models.ToolTierServer, Policy: models.ToolConfirm,
		Description: "a test tool", Schema: Schema{"type": "object"},
		Run: func(context.Context, ToolEnv, map[string]any) (any, error) { return "ok", nil }}
	// work runs for stretch before the call and again after it.
	provider := func(stretch time.Duration) *fakeProvider {
		nap := func(ctx context.Context) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(stretch):
				return nil
			}
		}
		return &fakeProvider{exec: func(ctx context.Context, req Request) (*models.AgentResponse, error) {
			if len(req.TurnLog) == 0 { // the first stretch (a resumed turn goes on from its call)
				if err := nap(ctx); err != nil {
					return nil, err
				}
			}
			out, err := req.CallTool(ctx, "c1", "checkpoint", nil)
			if err != nil {
				return nil, err
			}
			if err := nap(ctx); err != nil {
				return nil, err
			}
			return &models.AgentResponse{Content: "done: " + out.Outcome}, nil
		}}
	}
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")

	// Two stretches of 400ms: each fits the timeout, together they do not.
	slow := New(s, provider(400*time.Millisecond), Options{Logger: quiet, TurnTimeout: timeout, Tools: []*Tool{checkpoint}})
	res := pausedTurn(t, slow, SendRequest{UserID: ann, Query: "work"})
	ex, _ := s.Exchange(ctx, ann, res.Exchange.ID)
	if ex.TurnActiveMS < 400 {
		t.Fatalf("the paused turn ran %dms; want >= 400", ex.TurnActiveMS)
	}
	got := answer(t, slow, ann, res.Exchange.ID, ToolResult{CallID: "c1", Approved: yes()})
	if !got.Failed || !strings.Contains(got.Reply.Content, "took longer than 600ms") {
		t.Fatalf("resumed past the whole turn's timeout: %+v", got.Reply)
	}

	// A wait longer than the timeout does not count.
	quick := New(s, provider(10*time.Millisecond), Options{Logger: quiet, TurnTimeout: timeout, Tools: []*Tool{checkpoint}})
	res = pausedTurn(t, quick, SendRequest{UserID: ann, Query: "work"})
	time.Sleep(timeout + 200*time.Millisecond)
	got = answer(t, quick, ann, res.Exchange.ID, ToolResult{CallID: "c1", Approved: yes()})
	if got.Failed || got.Reply.Content != "done: done" {
		t.Fatalf("the wait was counted: %+v", got.Reply)
	}
}

// A browser tool set to "confirm": approved, the call waits for the
// browser (the turn stays paused, not resumed with nothing to read); the
// browser's answer resumes it.
func TestBrowserToolAskedFirstThenAnsweredByTheBrowser(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	page, err := s.CreatePage(ctx, ann, "Draft", "# Saved\n\nold words")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetToolPolicies(ctx, ann, map[string]string{ToolReadEditor: models.ToolConfirm}); err != nil {
		t.Fatal(err)
	}
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	res := pausedTurn(t, svc, SendRequest{UserID: ann, PageID: &page.ID, Query: "review my draft"})
	p := res.Pending[0]
	if p.Tool != ToolReadEditor || p.Awaiting != "approval" {
		t.Fatalf("pending %+v", p)
	}
	approved := answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: p.CallID, Approved: yes()})
	if !approved.Paused || approved.Reply != nil || len(approved.Pending) != 1 || approved.Pending[0].Awaiting != "client" {
		t.Fatalf("after approval: %+v; want still paused, waiting for the browser", approved)
	}
	ex, _ := s.Exchange(ctx, ann, res.Exchange.ID)
	if ex.RunState() != models.TurnPaused {
		t.Fatalf("run state %q after approval", ex.RunState())
	}
	got := answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: p.CallID, Output: map[string]any{"content": "# Unsaved\n\none two"}})
	if got.Failed || got.Reply == nil || !strings.Contains(got.Reply.Content, "3 words") {
		t.Fatalf("after the browser's answer: %+v", got.Reply)
	}
}

// A crash between the approval and the tool's result: the process that
// resumed the turn dies while the approved tool runs. Recovery keeps the
// approval, fails the turn with an error row saying to retry, and the
// automatic retry runs the approved call (no second approval) and
// answers; the dead process's late result is refused. One result, one
// reply.
func TestCrashBetweenApprovalAndResult(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	started, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	slow := &Tool{Name: "slow", Tier: models.ToolTierServer, Policy: models.ToolConfirm, Description: "a test tool", Schema: Schema{"type": "object"},
		Run: func(ctx context.Context, _ ToolEnv, _ map[string]any) (any, error) {
			if runs.Add(1) == 1 { // the first run hangs: its process "dies" meanwhile
				close(started)
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return "ran", nil
		}}
	provider := func() *fakeProvider {
		return &fakeProvider{exec: func(ctx context.Context, req Request) (*models.AgentResponse, error) {
			out, err := req.CallTool(ctx, "c1", "slow", nil)
			if err != nil {
				return nil, err
			}
			return &models.AgentResponse{Content: "done: " + out.Outcome}, nil
		}}
	}
	// A renews no lease while the tool hangs (its heartbeat is an hour):
	// to B it looks like a dead process.
	a := New(s, provider(), Options{Logger: quiet, Tools: []*Tool{slow}, Heartbeat: time.Hour})
	b := New(s, provider(), Options{Logger: quiet, Tools: []*Tool{slow}, Heartbeat: 10 * time.Millisecond, StaleAfter: 50 * time.Millisecond, AutoRetries: 1})
	res := pausedTurn(t, a, SendRequest{UserID: ann, Query: "do the slow thing"})
	if _, err := a.AnswerTools(ctx, ann, res.Exchange.ID, []ToolResult{{CallID: "c1", Approved: yes()}}); err != nil {
		t.Fatal(err)
	}
	<-started
	time.Sleep(100 * time.Millisecond)
	if n, err := b.RecoverStaleTurns(ctx); err != nil || n != 1 {
		t.Fatalf("recovery = %d, %v; want 1", n, err)
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.Idle(wait); err != nil {
		t.Fatal(err)
	}
	close(release) // the "dead" process's tool returns: its result must not land
	if err := a.Idle(wait); err != nil {
		t.Fatal(err)
	}

	msgs, err := s.Messages(ctx, ann, res.Exchange.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var approvals, results, errorRows int
	var reply string
	for _, m := range msgs {
		switch {
		case m.Role == models.RoleToolCall && m.Tool.State == models.ToolRunning && m.Tool.By == "person":
			approvals++
		case m.Role == models.RoleToolResult:
			results++
			if m.Tool.Outcome != models.ToolDone {
				t.Errorf("the result is %q", m.Tool.Outcome)
			}
		case m.Role == models.RoleError:
			errorRows++
			if !strings.Contains(m.Content, "retry") {
				t.Errorf("the error row says %q", m.Content)
			}
		case m.Role == models.RoleAssistant:
			reply = m.Content
		}
	}
	if approvals != 1 || results != 1 || errorRows != 1 || reply != "done: done" {
		t.Fatalf("log %q: %d approvals, %d results, %d error rows, reply %q; want 1, 1, 1, the reply",
			logOf(t, s, ann, res.Exchange.ID), approvals, results, errorRows, reply)
	}
	ex, _ := s.Exchange(ctx, ann, res.Exchange.ID)
	if ex.RunState() != models.TurnIdle || ex.TurnOwner != nil {
		t.Fatalf("run state %q, owner %v", ex.RunState(), ex.TurnOwner)
	}
	if n := runs.Load(); n != 2 {
		t.Fatalf("the tool ran %d times; want the hung run and the retry's", n)
	}
}

// A model's search (OpenAI-compatible) that must ask first pauses the
// turn; approved, the resumed turn runs it (its sub-run) and tells the
// model the hits, without the model asking again.
func TestOpenAISearchWaitsForApproval(t *testing.T) {
	f, o := newFakeLLM(t,
		sse(toolCallChunks(toolSearch, map[string]any{"query": "zebras"}), true),
		sse([]string{textChunk("Found them."), finishChunk, usageChunk}, true),
		titleAnswer("Zebras"),
	)
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	if err := s.SetToolPolicies(ctx, ann, map[string]string{ToolSearchChats: models.ToolConfirm}); err != nil {
		t.Fatal(err)
	}
	svc := New(s, o, Options{Logger: quiet})
	res := pausedTurn(t, svc, SendRequest{UserID: ann, Query: "what did I say about zebras?"})
	if p := res.Pending[0]; p.Tool != ToolSearchChats || p.CallID != "call_9" || p.Awaiting != "approval" {
		t.Fatalf("pending %+v", p)
	}
	<-f.bodies
	got := answer(t, svc, ann, res.Exchange.ID, ToolResult{CallID: "call_9", Approved: yes()})
	if got.Reply == nil || got.Reply.Content != "Found them." {
		t.Fatalf("after approval: %+v", got)
	}
	second := <-f.bodies
	n := len(second.Messages)
	if told := second.Messages[n-1]; told.Role != "tool" || told.ToolCallID != "call_9" || !strings.Contains(told.Content, `"hits"`) {
		t.Fatalf("the model was told %+v", told)
	}
	if runs, err := s.SubRuns(ctx, ann, res.Exchange.ID); err != nil || len(runs) != 1 {
		t.Fatalf("sub-runs %+v, %v", runs, err)
	}
}
