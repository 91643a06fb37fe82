// Package agents runs conversations: it routes a request to an agent type,
// executes it on a provider (the offline builtin one, or an OpenAI-compatible
// endpoint), and drives a turn through the store: user message first, then the
// reply or an error row.
//
// Interfaces only where a test has a fake or there are several
// implementations: Provider (builtin, OpenAI, the tests' fakes), Slots (in
// memory, in PostgreSQL), Observer (nobody, package metrics). Everything
// else is concrete: the service and its waker take *models.Store, so a new
// query is written once, and titles come from *OpenAI alone.
package agents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"palaver/models"
)

// Agent types. AgentAuto lets the router decide.
const (
	AgentAuto          = "auto"
	AgentRouter        = "router"
	AgentPageAssistant = "page_assistant" // a page's chat: answers about it and proposes edits
)

// Request is what an agent is asked.
type Request struct {
	AgentType string           // a concrete type, after routing
	Query     string           // the user's message
	Context   string           // extra context the client sent along
	History   []models.Message // earlier entries of the log, oldest first, no error rows
	// Turn is the place of the user message among the conversation's user
	// messages, from 1: History holds only the recent entries, so it cannot
	// say how long the conversation is. 0: unknown (count History).
	Turn int64
	// Answer is which answer to the user message this is, from 2 for a
	// regeneration (the old answers stay in their branches); 0 or 1: the
	// first.
	Answer int
	Page   *PageContext // the page a page chat is about, as the agent is shown it
	// OnEntry, when set, commits a finished entry of the turn (a tool call or
	// a tool result) as soon as the provider has it; it fails if the turn
	// lost its lease, and then the provider should stop.
	OnEntry func(*models.Message) error
	// SearchChats, when set (a general chat's turn), searches the user's
	// conversations as a recorded sub-run of the turn.
	SearchChats SearchFunc
	// CallTool, when set, calls a registered tool (tools.go): the call and
	// its result are committed; a call that must wait gives ErrPaused.
	CallTool ToolCaller
	// AdmitTool, when set, passes a call of a tool the provider carries
	// out itself (the registry's Inline tools: a page proposal) through
	// the same policy gate as CallTool's.
	AdmitTool ToolAdmitter
	// TurnLog holds the entries this turn wrote before it paused (or
	// failed), oldest first: a resumed turn finds its calls there.
	TurnLog []models.Message
	// Tools is the registry (what a model may be offered).
	Tools *Registry
	// Attachments are the files the user message holds, with their bytes
	// (issue 26): each provider says what of them the model is shown.
	Attachments []models.FileWithData
	// System is the instructions in force (the person's, the project's,
	// the memory entries: models.ComposeInstructions), "" when none. A
	// provider puts it in its system message, after its own prompt.
	System string
	// provider, when set, runs the request instead of the service's own
	// (the model picked from the catalog).
	provider Provider
	// OnReasoning, when set, receives the model's reasoning (thinking) as
	// it streams; the response's Reasoning holds all of it.
	OnReasoning func(string)
}

// Provider produces an agent's response. onDelta, when not nil, receives the
// reply's text as it is produced; the returned response holds all of it.
type Provider interface {
	Name() string
	Execute(ctx context.Context, req Request, onDelta func(string)) (*models.AgentResponse, error)
}

// InputError is a request the caller must fix; its message says how.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// FailureError is a turn's failure as the user reads it: Reason is a plain
// sentence for the error row; Err, with the details (an endpoint's answer,
// its address), goes to the log only.
type FailureError struct {
	Reason string
	Err    error
}

func (e *FailureError) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	return e.Reason + " (" + e.Err.Error() + ")"
}

func (e *FailureError) Unwrap() error { return e.Err }

// AgentTypes lists the agent types a request may name.
func AgentTypes() []string { return []string{AgentAuto, AgentRouter, AgentPageAssistant} }

// CheckProjectAgent refuses an agent type a project's new chats cannot
// start with: "" (the default), auto or another agent of general chats
// (the page assistant answers in a page's chat only).
func CheckProjectAgent(agentType string) error {
	switch agentType {
	case "", AgentAuto, AgentRouter:
		return nil
	}
	return &InputError{Msg: fmt.Sprintf("A project's agent_type is %q, %q or empty (the default); %q is not an agent of general chats",
		AgentAuto, AgentRouter, agentType)}
}

// resolve turns a requested agent type into the one that runs: auto is the
// page assistant in a page's chat, the router elsewhere.
func resolve(agentType string, page bool) (string, error) {
	switch {
	case (agentType == "" || agentType == AgentAuto) && page:
		return AgentPageAssistant, nil
	case agentType == "" || agentType == AgentAuto:
		return AgentRouter, nil
	case slices.Contains(AgentTypes(), agentType):
		return agentType, nil
	default:
		return "", &InputError{Msg: fmt.Sprintf("Unknown agent_type %q; valid ones are: %s",
			agentType, strings.Join(AgentTypes(), ", "))}
	}
}

// RouteAndExecute picks the agent for req and runs it on the provider.
func (s *Service) RouteAndExecute(ctx context.Context, req Request, onDelta func(string)) (*models.AgentResponse, error) {
	agentType, err := resolve(req.AgentType, req.Page != nil)
	if err != nil {
		return nil, err
	}
	req.AgentType = agentType
	p := s.provider
	if req.provider != nil {
		p = req.provider
	}
	resp, err := p.Execute(ctx, req, onDelta)
	if err == nil && resp == nil {
		err = errors.New("no response")
	}
	if err != nil {
		return nil, fmt.Errorf("%s agent (%s): %w", agentType, p.Name(), err)
	}
	if resp.AgentType == "" {
		resp.AgentType = agentType
	}
	return resp, nil
}

// thinkClock measures how long a model reasoned: from its first reasoning
// delta to its last.
type thinkClock struct{ first, last time.Time }

func (c *thinkClock) tick() {
	now := time.Now()
	if c.first.IsZero() {
		c.first = now
	}
	c.last = now
}

// note puts the duration in a reply's metadata (reasoning_ms) when the
// model reasoned.
func (c *thinkClock) note(meta map[string]any) {
	if !c.first.IsZero() {
		meta["reasoning_ms"] = max(c.last.Sub(c.first).Milliseconds(), 1)
	}
}
