package agents

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"palaver/models"
)

// The registered tools' names.
const (
	ToolDeleteConversation = "delete_conversation"
	ToolRenameConversation = "rename_conversation"
	ToolRemember           = "remember"
	ToolReadEditor         = "read_editor"
	ToolSearchChats        = toolSearch
	ToolProposeEdit        = "propose_edit"
)

// Tool is a registered tool: what the model is told, where it runs and
// whether it asks first.
type Tool struct {
	Name        string
	Description string
	Schema      Schema // of its arguments: told to the model, checks a call
	Tier        string // models.ToolTierServer or models.ToolTierBrowser
	Policy      string // the default: models.ToolAuto or models.ToolConfirm
	// Output, for a browser tool, is the schema of what the browser sends.
	Output Schema
	// Run runs a server tool; its output goes to the log (bounded) and the
	// model. Nil for a browser tool, and for a tool its provider runs
	// itself (Inline).
	Run func(ctx context.Context, env ToolEnv, args map[string]any) (any, error)
	// Inline tools are carried out by the provider's own code (the search
	// sub-run, a page proposal): the registry declares them; the turn's
	// tool runner does not call them.
	Inline bool
	// Scope limits the tool to one kind of chat: models.ScopePage or
	// models.ScopeGeneral ("" both).
	Scope string
}

// ToolEnv is what a running tool may use: the turn's exchange and the
// service's store.
type ToolEnv struct {
	Exchange *models.Exchange
	CallID   string
	svc      *Service
}

// Registry holds every tool any agent can call, by name.
type Registry struct {
	byName map[string]*Tool
	order  []*Tool
}

// NewRegistry makes a registry of tools; a name given twice panics (a
// programming error).
func NewRegistry(tools ...*Tool) *Registry {
	r := &Registry{byName: map[string]*Tool{}}
	for _, t := range tools {
		if r.byName[t.Name] != nil {
			panic("agents: tool registered twice: " + t.Name)
		}
		r.byName[t.Name], r.order = t, append(r.order, t)
	}
	return r
}

// Lookup finds a tool by name.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// All lists the tools in registration order.
func (r *Registry) All() []*Tool { return r.order }

// Tools is the service's registry.
func (s *Service) Tools() *Registry { return s.tools }

// titleArg is the schema of a title argument.
func titleArg(what string) map[string]any {
	return map[string]any{"type": "string", "minLength": 1, "maxLength": 200, "description": what}
}

// builtinTools is the registry every service starts with.
func builtinTools() *Registry {
	return NewRegistry(
		&Tool{
			Name: ToolSearchChats, Tier: models.ToolTierServer, Policy: models.ToolAuto, Inline: true, Scope: models.ScopeGeneral,
			Description: "Search the user's own earlier conversations (their messages, the replies and the titles), as a recorded sub-run.",
			Schema: Schema{"type": "object", "additionalProperties": false, "required": []any{"query"},
				"properties": map[string]any{"query": map[string]any{"type": "string", "minLength": 1, "maxLength": 500}}},
		},
		&Tool{
			Name: ToolProposeEdit, Tier: models.ToolTierServer, Policy: models.ToolAuto, Inline: true, Scope: models.ScopePage,
			Description: "Propose an edit of the page (a full replacement or one section); the person accepts or rejects it.",
			Schema: Schema{"type": "object", "required": []any{"edit_mode"}, "properties": map[string]any{
				"edit_mode":              map[string]any{"type": "string", "enum": []any{"full_replacement", "section_patch"}},
				"content":                map[string]any{"type": "string"},
				"target_section_heading": map[string]any{"type": "string"},
				"new_section_content":    map[string]any{"type": "string"},
				"reasoning":              map[string]any{"type": "string"},
			}},
		},
		&Tool{
			Name: ToolDeleteConversation, Tier: models.ToolTierServer, Policy: models.ToolConfirm, Scope: models.ScopeGeneral,
			Description: "Delete one of the user's conversations, found by its title.",
			Schema: Schema{"type": "object", "additionalProperties": false, "required": []any{"title"},
				"properties": map[string]any{"title": titleArg("the title of the conversation to delete")}},
			Run: runDeleteConversation,
		},
		&Tool{
			Name: ToolRenameConversation, Tier: models.ToolTierServer, Policy: models.ToolAuto,
			Description: "Rename the current conversation.",
			Schema: Schema{"type": "object", "additionalProperties": false, "required": []any{"title"},
				"properties": map[string]any{"title": titleArg("the new title")}},
			Run: runRenameConversation,
		},
		&Tool{
			Name: ToolRemember, Tier: models.ToolTierServer, Policy: models.ToolConfirm,
			Description: "Remember a fact about the user for later conversations.",
			Schema: Schema{"type": "object", "additionalProperties": false, "required": []any{"text"},
				"properties": map[string]any{"text": map[string]any{"type": "string", "minLength": 1, "maxLength": 2000}}},
			Run: runRemember,
		},
		&Tool{
			Name: ToolReadEditor, Tier: models.ToolTierBrowser, Policy: models.ToolAuto, Scope: models.ScopePage,
			Description: "Read the page editor's current text as the browser holds it (unsaved edits included) and the selection.",
			Schema:      Schema{"type": "object", "additionalProperties": false, "properties": map[string]any{}},
			Output: Schema{"type": "object", "additionalProperties": false, "required": []any{"content"}, "properties": map[string]any{
				"content":         map[string]any{"type": "string"},
				"selection_start": map[string]any{"type": "integer", "minimum": 0},
				"selection_end":   map[string]any{"type": "integer", "minimum": 0},
			}},
		},
	)
}

// runRemember saves the approved entry in the person's memory, its
// source the conversation; a temporary chat never writes memory (the store
// refuses).
func runRemember(ctx context.Context, env ToolEnv, args map[string]any) (any, error) {
	text, _ := args["text"].(string)
	m, err := env.svc.store.AddMemory(ctx, env.Exchange.UserID, text, &env.Exchange.ID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"remembered": true, "id": m.ID}, nil
}

func runDeleteConversation(ctx context.Context, env ToolEnv, args map[string]any) (any, error) {
	title, _ := args["title"].(string)
	ex, err := env.svc.store.ExchangeByTitle(ctx, env.Exchange.UserID, strings.TrimSpace(title))
	if errors.Is(err, models.ErrNotFound) {
		return nil, fmt.Errorf("no conversation is titled %q", title)
	}
	if err != nil {
		return nil, err
	}
	if ex.ID == env.Exchange.ID {
		return nil, errors.New("that is this conversation: delete it from the history instead")
	}
	if _, err := env.svc.store.DeleteExchange(ctx, env.Exchange.UserID, ex.ID); err != nil {
		return nil, err
	}
	return map[string]any{"deleted": ex.Title, "exchange_id": ex.ID}, nil
}

func runRenameConversation(ctx context.Context, env ToolEnv, args map[string]any) (any, error) {
	title, _ := args["title"].(string)
	title = strings.Join(strings.Fields(title), " ")
	if title == "" {
		return nil, errors.New("the title is empty")
	}
	ex, err := env.svc.store.RenameExchange(ctx, env.Exchange.UserID, env.Exchange.ID, title)
	if err != nil {
		return nil, err
	}
	env.svc.publishTurn(ex)
	return map[string]any{"title": ex.Title}, nil
}

// ErrPaused is how a provider's tool call says the turn must wait: the call
// waits for the person or the browser. The provider returns it (wrapped or
// not) once the calls of its round are made; the turn then pauses.
var ErrPaused = errors.New("the turn waits for tool answers")

// ToolOutcome is how a call ended, as the model is told.
type ToolOutcome struct {
	CallID  string
	Tool    string
	Outcome string // models.ToolDone, ToolDenied, ToolCancelled or ToolFailed
	Output  any
	Error   string
}

// Text is the outcome as one line for a model or a builtin reply.
func (o ToolOutcome) Text() string {
	if o.Outcome == models.ToolDone {
		return fmt.Sprintf("%v", o.Output)
	}
	return o.Outcome + ": " + o.Error
}

// ToolCaller calls a registered tool for a provider: callID names the call
// (a model's id, or one the provider makes the same way each time it runs
// the turn, so that a resumed turn finds its earlier calls).
type ToolCaller func(ctx context.Context, callID, tool string, args map[string]any) (ToolOutcome, error)

// PendingCall is a call waiting for an answer, as clients see it.
type PendingCall struct {
	CallID    string         `json:"call_id"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Tier      string         `json:"tier"`
	Awaiting  string         `json:"awaiting"` // "approval" or "client"
}

// Pending lists calls (tool_call entries) as clients see them.
func Pending(calls []models.Message) []PendingCall {
	out := make([]PendingCall, 0, len(calls))
	for _, c := range calls {
		p := PendingCall{CallID: c.Tool.CallID, Tool: c.Tool.Name, Arguments: c.Tool.Arguments, Tier: c.Tool.Tier, Awaiting: "client"}
		if p.Arguments == nil {
			p.Arguments = map[string]any{}
		}
		if c.Tool.State == models.ToolAwaitingApproval {
			p.Awaiting = "approval"
		}
		out = append(out, p)
	}
	return out
}

// Bounds on what a tool leaves in the log.
const (
	maxToolText  = 32_000 // characters of one string of a tool's output
	maxToolError = 1_000  // characters of a failure's reason
)

// boundOutput cuts every long string of a tool's output to maxToolText
// characters and says whether it cut any.
func boundOutput(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		if utf8.RuneCountInString(x) > maxToolText {
			return string([]rune(x)[:maxToolText]), true
		}
		return x, false
	case map[string]any:
		out, cut := make(map[string]any, len(x)), false
		for k, e := range x {
			var c bool
			out[k], c = boundOutput(e)
			cut = cut || c
		}
		return out, cut
	case []any:
		out, cut := make([]any, len(x)), false
		for i, e := range x {
			var c bool
			out[i], c = boundOutput(e)
			cut = cut || c
		}
		return out, cut
	}
	return v, false
}

// resultEntry is the tool_result of a call.
func resultEntry(call *models.ToolFields, outcome string, output any, reason, by string) *models.Message {
	f := &models.ToolFields{CallID: call.CallID, Name: call.Name, Tier: call.Tier, Outcome: outcome, By: by}
	content := ""
	switch outcome {
	case models.ToolDone:
		out, cut := boundOutput(output)
		f.Output = out
		content = call.Name + " ran."
		if cut {
			content += fmt.Sprintf(" Its output was cut to %d characters per text.", maxToolText)
			if m, ok := out.(map[string]any); ok {
				m["truncated"] = true
			}
		}
	default:
		f.Error = clip(reason, maxToolError)
		content = fmt.Sprintf("%s was %s: %s", call.Name, outcome, f.Error)
		if outcome == models.ToolFailed {
			content = fmt.Sprintf("%s failed: %s", call.Name, f.Error)
		}
	}
	return &models.Message{Role: models.RoleToolResult, Content: content, Tool: f}
}

// callEntry is a tool_call entry in a state.
func callEntry(callID string, t *Tool, name string, args map[string]any, state, by string) *models.Message {
	tier := ""
	if t != nil {
		tier = t.Tier
	}
	return &models.Message{Role: models.RoleToolCall, Content: name,
		Tool: &models.ToolFields{CallID: callID, Name: name, Arguments: args, Tier: tier, State: state, By: by}}
}

// toolRunner carries out a turn's tool calls: it records each call's states
// as entries, runs what may run, and collects the calls that must wait.
type toolRunner struct {
	svc      *Service
	ex       *models.Exchange
	onEntry  func(*models.Message) error
	log      []models.Message // the turn's entries so far, as it resumes
	policies map[string]string
	waiting  []*models.Message
}

func (s *Service) newToolRunner(ex *models.Exchange, onEntry func(*models.Message) error, turnLog []models.Message) *toolRunner {
	return &toolRunner{svc: s, ex: ex, onEntry: onEntry, log: turnLog}
}

// policy is the user's choice for t, or its default.
func (r *toolRunner) policy(ctx context.Context, t *Tool) (string, error) {
	if r.policies == nil {
		p, err := r.svc.store.ToolPolicies(ctx, r.ex.UserID)
		if err != nil {
			return "", err
		}
		r.policies = p
	}
	if p, ok := r.policies[t.Name]; ok {
		return p, nil
	}
	return t.Policy, nil
}

func (r *toolRunner) append(m *models.Message) error {
	if err := r.onEntry(m); err != nil {
		return &toolError{err}
	}
	r.log = append(r.log, *m)
	return nil
}

// finish records a call and its result at once and returns the outcome.
func (r *toolRunner) finish(callID string, t *Tool, name string, args map[string]any, state, by, outcome, reason string) (ToolOutcome, error) {
	call := callEntry(callID, t, name, args, state, by)
	if err := r.append(call); err != nil {
		return ToolOutcome{}, err
	}
	res := resultEntry(call.Tool, outcome, nil, reason, by)
	if err := r.append(res); err != nil {
		return ToolOutcome{}, err
	}
	return ToolOutcome{CallID: callID, Tool: name, Outcome: outcome, Error: res.Tool.Error}, nil
}

// Call is the turn's ToolCaller.
func (r *toolRunner) Call(ctx context.Context, callID, name string, args map[string]any) (ToolOutcome, error) {
	if args == nil {
		args = map[string]any{}
	}
	if prior, ok := r.prior(callID); ok { // a resumed turn meets its earlier call
		return r.resume(ctx, prior)
	}
	t, ok := r.svc.tools.Lookup(name)
	if !ok || t.Inline {
		return r.finish(callID, nil, name, args, models.ToolFailed, "system", models.ToolFailed, "there is no tool named "+clip(name, 80))
	}
	if out, pass, err := r.gate(ctx, callID, t, args); !pass {
		return out, err
	}
	call := callEntry(callID, t, name, args, models.ToolRunning, "policy")
	if err := r.append(call); err != nil {
		return ToolOutcome{}, err
	}
	return r.run(ctx, t, call.Tool)
}

// gate is the one policy gate every registered tool passes, whoever runs
// it: a tool of another kind of chat, arguments that fail its schema and a
// "never" policy are refused (a call and its result recorded, the outcome
// returned); a call that must ask first, or that the browser answers,
// waits (ErrPaused). pass: the call may go ahead now.
func (r *toolRunner) gate(ctx context.Context, callID string, t *Tool, args map[string]any) (out ToolOutcome, pass bool, err error) {
	name := t.Name
	if t.Scope != "" && t.Scope != r.ex.Scope {
		out, err = r.finish(callID, t, name, args, models.ToolFailed, "system", models.ToolFailed, name+" is not available in this chat")
		return out, false, err
	}
	if err := ValidateArgs(t.Schema, map[string]any(args)); err != nil {
		out, err = r.finish(callID, t, name, args, models.ToolFailed, "system", models.ToolFailed, err.Error())
		return out, false, err
	}
	policy, err := r.policy(ctx, t)
	if err != nil {
		return ToolOutcome{}, false, &toolError{err}
	}
	switch {
	case policy == models.ToolNever:
		out, err = r.finish(callID, t, name, args, models.ToolDenied, "policy", models.ToolDenied, "the person's settings never allow this tool")
		return out, false, err
	case policy == models.ToolConfirm:
		r.wait(callEntry(callID, t, name, args, models.ToolAwaitingApproval, ""))
		return ToolOutcome{}, false, ErrPaused
	case t.Tier == models.ToolTierBrowser:
		r.wait(callEntry(callID, t, name, args, models.ToolAwaitingClient, ""))
		return ToolOutcome{}, false, ErrPaused
	}
	return ToolOutcome{}, true, nil
}

// Admission is the gate's answer to an inline tool (one its provider's own
// code carries out: the search, a page proposal).
type Admission struct {
	// Go: the provider carries the call out now, recording it as it
	// always does, except that when Approved is set (the person approved
	// it) that entry already stands for the call.
	Go       bool
	Approved *models.Message
	// Outcome, when not Go, is why not (denied, failed), as the model is
	// told; the call and its result are recorded.
	Outcome ToolOutcome
}

// ToolAdmitter passes an inline tool's call through the policy gate; a
// call that must wait gives ErrPaused.
type ToolAdmitter func(ctx context.Context, callID, tool string, args map[string]any) (Admission, error)

// Admit is the turn's ToolAdmitter: the same gate as Call's, for the tools
// the registry declares Inline.
func (r *toolRunner) Admit(ctx context.Context, callID, name string, args map[string]any) (Admission, error) {
	if args == nil {
		args = map[string]any{}
	}
	if prior, ok := r.prior(callID); ok { // a resumed turn meets its earlier call
		f := prior.Tool
		switch {
		case prior.Role == models.RoleToolResult && f.Outcome != models.ToolDone:
			return Admission{Outcome: ToolOutcome{CallID: f.CallID, Tool: f.Name, Outcome: f.Outcome, Error: f.Error}}, nil
		case prior.Role == models.RoleToolCall && (f.State == models.ToolAwaitingApproval || f.State == models.ToolAwaitingClient):
			return Admission{}, ErrPaused
		case prior.Role == models.RoleToolCall && f.State == models.ToolRunning && f.By == "person":
			return Admission{Go: true, Approved: prior}, nil
		}
		// Carried out before (a retried turn): the provider does it again.
		return Admission{Go: true}, nil
	}
	t, ok := r.svc.tools.Lookup(name)
	if !ok || !t.Inline {
		out, err := r.finish(callID, nil, name, args, models.ToolFailed, "system", models.ToolFailed, "there is no tool named "+clip(name, 80))
		return Admission{Outcome: out}, err
	}
	out, pass, err := r.gate(ctx, callID, t, args)
	return Admission{Go: pass, Outcome: out}, err
}

func (r *toolRunner) wait(m *models.Message) {
	r.waiting = append(r.waiting, m)
	r.log = append(r.log, *m)
}

// prior finds the latest entry about callID in the turn so far.
func (r *toolRunner) prior(callID string) (*models.Message, bool) {
	for i := len(r.log) - 1; i >= 0; i-- {
		if m := &r.log[i]; m.Tool != nil && m.Tool.CallID == callID && (m.Role == models.RoleToolCall || m.Role == models.RoleToolResult) {
			return m, true
		}
	}
	return nil, false
}

// resume picks up a call the turn made before it paused: its result, or,
// approved, its run.
func (r *toolRunner) resume(ctx context.Context, m *models.Message) (ToolOutcome, error) {
	f := m.Tool
	if m.Role == models.RoleToolResult {
		return ToolOutcome{CallID: f.CallID, Tool: f.Name, Outcome: f.Outcome, Output: f.Output, Error: f.Error}, nil
	}
	switch f.State {
	case models.ToolRunning: // approved: run it now
		t, ok := r.svc.tools.Lookup(f.Name)
		if !ok || t.Run == nil {
			res := resultEntry(f, models.ToolFailed, nil, "there is no tool named "+f.Name, "system")
			if err := r.append(res); err != nil {
				return ToolOutcome{}, err
			}
			return ToolOutcome{CallID: f.CallID, Tool: f.Name, Outcome: models.ToolFailed, Error: res.Tool.Error}, nil
		}
		return r.run(ctx, t, f)
	case models.ToolAwaitingApproval, models.ToolAwaitingClient:
		return ToolOutcome{}, ErrPaused // still waiting (not resumed by an answer)
	}
	return ToolOutcome{CallID: f.CallID, Tool: f.Name, Outcome: f.State}, nil
}

// run runs a server tool (a panic or an error is its failure, told to the
// model) and records the result.
func (r *toolRunner) run(ctx context.Context, t *Tool, call *models.ToolFields) (ToolOutcome, error) {
	out, err := r.guarded(ctx, t, call)
	outcome, reason := models.ToolDone, ""
	if err != nil {
		if ctx.Err() != nil {
			return ToolOutcome{}, ctx.Err()
		}
		outcome, reason = models.ToolFailed, err.Error()
	}
	res := resultEntry(call, outcome, out, reason, "")
	if err := r.append(res); err != nil {
		return ToolOutcome{}, err
	}
	return ToolOutcome{CallID: call.CallID, Tool: call.Name, Outcome: outcome, Output: res.Tool.Output, Error: res.Tool.Error}, nil
}

func (r *toolRunner) guarded(ctx context.Context, t *Tool, call *models.ToolFields) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.svc.opts.Logger.Error("tool panicked", "tool", t.Name, "exchange", r.ex.ID, "panic", p, "stack", string(debug.Stack()))
			out, err = nil, fmt.Errorf("the tool failed unexpectedly")
		}
	}()
	if t.Run == nil {
		return nil, fmt.Errorf("%s runs in the browser", t.Name)
	}
	return t.Run(ctx, ToolEnv{Exchange: r.ex, CallID: call.CallID, svc: r.svc}, call.Arguments)
}

// ToolResult is one answer to a waiting call (POST …/tool_results).
type ToolResult struct {
	CallID   string
	Approved *bool
	Output   any // a browser call's output: a string or an object
	Error    *string
}

// PausedOutcome is a paused turn's result: what the exchange now is and the
// calls that wait.
func pausedResult(ex *models.Exchange, waiting []models.Message) *TurnResult {
	return &TurnResult{Exchange: ex, Paused: true, Pending: Pending(waiting)}
}

// PendingCalls lists the calls waiting in the user's exchange.
func (s *Service) PendingCalls(ctx context.Context, userID, exchangeID int64) ([]PendingCall, error) {
	ex, err := s.store.Exchange(ctx, userID, exchangeID)
	if err != nil {
		return nil, err
	}
	if !ex.TurnWaiting {
		return []PendingCall{}, nil
	}
	turn, err := s.store.TurnEntries(ctx, userID, exchangeID)
	if err != nil {
		return nil, err
	}
	return Pending(models.WaitingCalls(turn)), nil
}

// AnswerTools answers waiting calls of the user's paused exchange. When
// none waits any more the turn resumes here, in this process, whichever
// process paused it: the returned Turn runs it. Otherwise the turn stays
// paused and the Turn is already over, with the calls that still wait.
func (s *Service) AnswerTools(ctx context.Context, userID, exchangeID int64, results []ToolResult) (*Turn, error) {
	byID := map[string]ToolResult{}
	ids := make([]string, 0, len(results))
	for _, r := range results {
		if _, dup := byID[r.CallID]; dup {
			return nil, fmt.Errorf("call %q answered twice: %w", clip(r.CallID, 80), models.ErrNothingWaiting)
		}
		byID[r.CallID] = r
		ids = append(ids, r.CallID)
	}
	release, err := s.opts.Slots.Acquire(ctx, SlotTurn, userID)
	if err != nil {
		return nil, err
	}
	var turnLog []models.Message
	ex, query, written, err := s.store.AnswerTools(ctx, models.ToolAnswers{
		UserID: userID, ExchangeID: exchangeID, Owner: s.owner, CallIDs: ids, Turn: &turnLog,
		Entries: func(call *models.Message) ([]*models.Message, error) {
			return s.answerEntries(call, byID[call.Tool.CallID])
		},
	})
	if err != nil {
		release()
		return nil, err
	}
	for _, m := range written {
		s.publishEntry(ex, m)
	}
	if query == nil {
		release()
		turn, err := s.store.TurnEntries(ctx, userID, exchangeID)
		if err != nil {
			return nil, err
		}
		s.publishTurn(ex)
		return finished(pausedResult(ex, models.WaitingCalls(turn))), nil
	}
	return s.launch(ex, query, turnInput{retry: true, resumed: true, turnLog: turnLog, log: s.turnLogger(ctx)}, release), nil
}

// answerEntries makes the entries that answer a waiting call, or refuses an
// answer that does not fit the call (an *InputError: 400, nothing changes).
func (s *Service) answerEntries(call *models.Message, a ToolResult) ([]*models.Message, error) {
	f := call.Tool
	if a.Approved != nil && !*a.Approved {
		return []*models.Message{resultEntry(f, models.ToolDenied, nil, "the person denied it", "person")}, nil
	}
	if f.State == models.ToolAwaitingApproval {
		if a.Approved == nil {
			return nil, &InputError{Msg: fmt.Sprintf("call %s waits for approval: answer it with approved true or false", f.CallID)}
		}
		next := models.ToolRunning
		if f.Tier == models.ToolTierBrowser {
			next = models.ToolAwaitingClient
		}
		return []*models.Message{{Role: models.RoleToolCall, Content: f.Name,
			Tool: &models.ToolFields{CallID: f.CallID, Name: f.Name, Arguments: f.Arguments, Tier: f.Tier, State: next, By: "person"}}}, nil
	}
	// awaiting the client: its output or its error
	if a.Error != nil {
		return []*models.Message{resultEntry(f, models.ToolFailed, nil, *a.Error, "client")}, nil
	}
	if a.Output == nil {
		return nil, &InputError{Msg: fmt.Sprintf("call %s waits for the browser: answer it with output or error", f.CallID)}
	}
	if t, ok := s.tools.Lookup(f.Name); ok && t.Output != nil {
		if err := ValidateArgs(t.Output, a.Output); err != nil {
			return nil, &InputError{Msg: "output of " + f.Name + strings.TrimPrefix(err.Error(), "arguments")}
		}
	}
	return []*models.Message{resultEntry(f, models.ToolDone, a.Output, "", "client")}, nil
}

// stopPaused ends the user's paused turn: its waiting calls are cancelled
// and a short reply says so, marked stopped.
func (s *Service) stopPaused(ctx context.Context, userID, exchangeID int64) (*TurnResult, error) {
	agent := ""
	if ex, err := s.store.Exchange(ctx, userID, exchangeID); err == nil {
		agent = ex.AgentType
	}
	reply := &models.Message{Role: models.RoleAssistant, Content: "Stopped: the waiting tool calls were cancelled.", AgentType: &agent,
		AgentResponse: &models.AgentResponse{Content: "Stopped: the waiting tool calls were cancelled.", AgentType: agent,
			Suggestions: []models.Suggestion{}, Metadata: map[string]any{"stopped": true}}}
	ex, written, err := s.store.CancelWaiting(ctx, userID, exchangeID, "stopped by the person", reply)
	if err != nil {
		return nil, err
	}
	for _, m := range written {
		s.publishEntry(ex, m)
	}
	s.publishTurn(ex)
	return &TurnResult{Exchange: ex, Reply: reply, Stopped: true}, nil
}

// pause commits the turn's waiting calls and releases its lease: the turn
// waits, paused, for their answers.
func (s *Service) pause(db context.Context, t *Turn, res *TurnResult, waiting []*models.Message, text string) (*TurnResult, error) {
	header, err := s.store.PauseTurn(db, t.Exchange.ID, s.owner, t.spent+time.Since(t.began), waiting...)
	if err != nil {
		if models.Unavailable(err) {
			return s.fail(db, res, err)
		}
		return nil, err
	}
	calls := make([]models.Message, len(waiting))
	for i, m := range waiting {
		s.publishEntry(header, m)
		calls[i] = *m
	}
	t.header = header
	res.Exchange, res.Paused, res.Pending, res.Text = header, true, Pending(calls), text
	return res, nil
}
