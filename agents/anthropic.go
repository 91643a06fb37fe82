package agents

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"palaver/models"
)

// Anthropic is a provider for Anthropic's native Messages API, streamed.
//
// It is our own client on net/http rather than the official SDK: the wire
// format it needs (one POST, a dozen SSE event shapes) is small and
// documented, the OpenAI provider beside it already has the retry, idle and
// failure wording this reuses, and the SDK would add a large dependency tree
// for a fraction of its surface. The tests drive it against a fake written
// from the public documentation (anthropic_test.go).
type Anthropic struct {
	BaseURL string // e.g. https://api.anthropic.com (a trailing /v1 is accepted)
	APIKey  string // sent as x-api-key
	Model   string
	// MaxTokens bounds a reply; 0 means 4096.
	MaxTokens int
	// ThinkingBudget, when > 0, asks for extended thinking with that many
	// tokens; the thinking is kept as the reply's reasoning.
	ThinkingBudget int
	// FileTextChars caps what the model is shown of each attached text
	// file, in characters; 0 means DefaultFileTextChars.
	FileTextChars int
	Client        *http.Client
	// MaxAttempts bounds the tries of one request (429, 529, 5xx, an
	// overloaded_error event before any text); 0 means 4.
	MaxAttempts int
	// Backoff is the first pause between tries, doubled each time, with
	// jitter; a retry-after header overrides it. 0 means 500ms.
	Backoff time.Duration
	// IdleTimeout bounds the wait for the next event; 0 means 60s.
	IdleTimeout time.Duration
}

// anthropicVersion is the API version the wire format below follows.
const anthropicVersion = "2023-06-01"

// Name identifies the provider in errors.
func (a *Anthropic) Name() string { return "anthropic" }

// aBlock is a content block, in a request or as a response built it.
type aBlock struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// tool_use
	ID    string         `json:"id,omitempty"`
	Name  string         `json:"name,omitempty"`
	Input map[string]any `json:"input,omitempty"`
	// tool_result
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	// thinking
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	// image
	Source *aSource `json:"source,omitempty"`
}

// aSource is an image block's bytes.
type aSource struct {
	Type      string `json:"type"` // base64
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// MarshalJSON writes a tool_use block's input even when empty (the API
// requires the field).
func (b aBlock) MarshalJSON() ([]byte, error) {
	type plain aBlock
	if b.Type == "tool_use" {
		in := b.Input
		if in == nil {
			in = map[string]any{}
		}
		return json.Marshal(struct {
			plain
			Input map[string]any `json:"input"`
		}{plain(b), in})
	}
	return json.Marshal(plain(b))
}

type aMessage struct {
	Role    string   `json:"role"`
	Content []aBlock `json:"content"`
}

type aTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

type aRequest struct {
	Model     string     `json:"model"`
	MaxTokens int        `json:"max_tokens"`
	System    string     `json:"system,omitempty"`
	Messages  []aMessage `json:"messages"`
	Tools     []aTool    `json:"tools,omitempty"`
	Stream    bool       `json:"stream"`
	Thinking  *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking,omitempty"`
}

// aEvent is one server-sent event's data (every type's fields in one).
type aEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Model string `json:"model"`
		Usage aUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *aBlock `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *aUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type aUsage struct {
	InputTokens          int `json:"input_tokens"`
	OutputTokens         int `json:"output_tokens"`
	CacheReadInputTokens int `json:"cache_read_input_tokens"`
}

// aReply is one streamed message, whole.
type aReply struct {
	Model      string
	Blocks     []aBlock
	partial    map[int]*strings.Builder // tool_use input JSON by block index
	StopReason string
	Usage      aUsage
	Text       string
	Reasoning  string
}

// errOverloaded is an overloaded_error event: retried like a 529.
var errOverloaded = errors.New("the model's server is overloaded")

// Execute asks the Messages API to answer req as its agent type: the model
// may call the registry's tools (a call that must wait pauses the turn) and
// the page assistant's proposal tools.
func (a *Anthropic) Execute(ctx context.Context, req Request, onDelta func(string)) (*models.AgentResponse, error) {
	page := req.AgentType == AgentPageAssistant && req.Page != nil
	body := aRequest{Model: a.Model, MaxTokens: a.MaxTokens, Stream: true, Tools: a.tools(req, page)}
	if body.MaxTokens <= 0 {
		body.MaxTokens = 4096
	}
	if a.ThinkingBudget > 0 {
		body.Thinking = &struct {
			Type         string `json:"type"`
			BudgetTokens int    `json:"budget_tokens"`
		}{"enabled", a.ThinkingBudget}
		if body.MaxTokens <= a.ThinkingBudget {
			body.MaxTokens = a.ThinkingBudget + 4096
		}
	}
	body.System, body.Messages = a.messages(req, page)

	var usage aUsage
	var clock thinkClock
	outer := req.OnReasoning
	req.OnReasoning = func(d string) {
		clock.tick()
		if outer != nil {
			outer(d)
		}
	}
	rt := &roundsText{onDelta: onDelta, onReasoning: req.OnReasoning}
	var last *aReply
	if approved, ok := approvedProposal(req); page && ok { // the person approved it: it is the reply
		content, meta, err := pageReplyFrom(ctx, req, approved)
		if err != nil {
			return nil, err
		}
		if meta == nil {
			meta = map[string]any{}
		}
		meta["provider"], meta["model"] = a.Name(), a.Model
		return &models.AgentResponse{Content: content, AgentType: req.AgentType, Confidence: "medium",
			Suggestions: []models.Suggestion{}, Metadata: meta}, nil
	}
	// A resumed turn first answers the calls it made before it paused.
	if msgs, err := a.resumeCalls(ctx, req); err != nil {
		return nil, err
	} else {
		body.Messages = append(body.Messages, msgs...)
	}
	var proposal []chatToolCall
	for round := 1; ; round++ {
		onText, onThinking := rt.round()
		reply, err := a.complete(ctx, body, onText, onThinking)
		if err != nil {
			return nil, a.failure(err)
		}
		last = reply
		usage.InputTokens += reply.Usage.InputTokens
		usage.OutputTokens += reply.Usage.OutputTokens
		usage.CacheReadInputTokens += reply.Usage.CacheReadInputTokens
		var uses []aBlock
		for _, b := range reply.Blocks {
			if b.Type == "tool_use" {
				uses = append(uses, b)
			}
		}
		if reply.StopReason != "tool_use" || len(uses) == 0 || round >= maxToolRounds {
			break
		}
		if page && anthropicProposes(uses) { // a proposal ends the reply: the person reviews it
			for _, u := range uses {
				args, _ := json.Marshal(u.Input)
				var tc chatToolCall
				tc.ID, tc.Type = u.ID, "function"
				tc.Function.Name, tc.Function.Arguments = u.Name, string(args)
				proposal = append(proposal, tc)
			}
			break
		}
		// Thinking blocks go back within the turn (the API wants them with
		// their signatures before tool results), never in later turns.
		body.Messages = append(body.Messages, aMessage{Role: "assistant", Content: reply.Blocks})
		results, err := a.runCalls(ctx, req, uses)
		if err != nil {
			return nil, err
		}
		body.Messages = append(body.Messages, aMessage{Role: "user", Content: results})
		if round == maxToolRounds-1 {
			body.Tools = nil
		}
	}
	content, meta := rt.text.String(), map[string]any{}
	if page {
		comp := &completion{Content: content, ToolCalls: proposal}
		var err error
		if content, meta, err = pageReplyFrom(ctx, req, comp); err != nil {
			return nil, err
		}
		if meta == nil {
			meta = map[string]any{}
		}
	}
	meta["provider"], meta["model"], meta["finish_reason"] = a.Name(), last.Model, last.StopReason
	clock.note(meta)
	meta["prompt_tokens"], meta["completion_tokens"] = usage.InputTokens, usage.OutputTokens
	meta["total_tokens"] = usage.InputTokens + usage.OutputTokens
	if usage.CacheReadInputTokens > 0 {
		meta["cached_tokens"] = usage.CacheReadInputTokens
	}
	return &models.AgentResponse{
		Content: content, AgentType: req.AgentType, Confidence: "medium",
		Suggestions: []models.Suggestion{}, Metadata: meta, Reasoning: rt.reasoning.String(),
	}, nil
}

// tools are what the model is offered: the page's proposal kinds in a page
// chat, the search in a general chat that can search, and the registry's
// tools of the chat's scope (read_editor in a page chat).
func (a *Anthropic) tools(req Request, page bool) []aTool {
	var out []aTool
	if page {
		for _, t := range pageTools() {
			out = append(out, aTool{t.Function.Name, t.Function.Description, t.Function.Parameters})
		}
	} else if req.SearchChats != nil {
		t := searchTools()[0]
		out = append(out, aTool{t.Function.Name, t.Function.Description, t.Function.Parameters})
	}
	for _, t := range registryTools(req) {
		out = append(out, aTool{t.Function.Name, t.Function.Description, t.Function.Parameters})
	}
	return out
}

// messages builds the system text and the conversation: user and assistant
// entries of the history (their content only: reasoning is never sent back),
// then the query.
func (a *Anthropic) messages(req Request, page bool) (string, []aMessage) {
	sys := systemPrompts[AgentRouter]
	if s := systemPrompts[req.AgentType]; s != "" {
		sys = s
	}
	if page {
		sys = pageSystemPrompt(req.Page)
	}
	if req.SearchChats != nil && !page {
		sys += " " + searchPrompt
	}
	if req.System != "" { // the person's and the project's instructions, the memory
		sys += "\n\n" + req.System
	}
	if strings.TrimSpace(req.Context) != "" {
		sys += "\n\nContext from the client:\n" + req.Context
	}
	var msgs []aMessage
	add := func(role, text string) {
		if strings.TrimSpace(text) == "" {
			return
		}
		// The API wants turns to alternate: fold a repeated role into one.
		if n := len(msgs); n > 0 && msgs[n-1].Role == role {
			msgs[n-1].Content = append(msgs[n-1].Content, aBlock{Type: "text", Text: text})
			return
		}
		msgs = append(msgs, aMessage{Role: role, Content: []aBlock{{Type: "text", Text: text}}})
	}
	for _, m := range req.History {
		switch m.Role {
		case models.RoleUser, models.RoleAssistant:
			add(m.Role, m.Content)
		}
	}
	// The attachments: text files and names with the query, the images
	// as image blocks before it (as the API's documentation advises).
	text, images := filesForModel(req.Attachments, a.FileTextChars)
	add("user", req.Query+text)
	if blocks := anthropicImages(images); len(blocks) > 0 {
		last := &msgs[len(msgs)-1]
		at := len(last.Content) - 1 // the query's block
		last.Content = append(last.Content[:at], append(blocks, last.Content[at])...)
	}
	if len(msgs) == 0 || msgs[0].Role != "user" {
		msgs = append([]aMessage{{Role: "user", Content: []aBlock{{Type: "text", Text: "(start)"}}}}, msgs...)
	}
	return sys, msgs
}

// resumeCalls rebuilds the calls a paused turn made (from its log) as one
// assistant message of tool_use blocks and answers them: their results, or
// ErrPaused while one still waits.
func (a *Anthropic) resumeCalls(ctx context.Context, req Request) ([]aMessage, error) {
	var uses []aBlock
	seen := map[string]bool{}
	for _, m := range req.TurnLog {
		if m.Role != models.RoleToolCall || m.Tool == nil || seen[m.Tool.CallID] {
			continue
		}
		seen[m.Tool.CallID] = true
		uses = append(uses, aBlock{Type: "tool_use", ID: m.Tool.CallID, Name: m.Tool.Name, Input: m.Tool.Arguments})
	}
	if len(uses) == 0 {
		return nil, nil
	}
	results, err := a.runCalls(ctx, req, uses)
	if err != nil {
		return nil, err
	}
	return []aMessage{{Role: "assistant", Content: uses}, {Role: "user", Content: results}}, nil
}

// anthropicProposes says whether a round's tool uses hold a page proposal.
func anthropicProposes(uses []aBlock) bool {
	for _, u := range uses {
		if toolMode(u.Name) != "" {
			return true
		}
	}
	return false
}

// runCalls makes the round's calls through the turn's tool caller (the
// search through its sub-run) and returns their tool_result blocks; when a
// call must wait, the others are still made, then ErrPaused ends the turn.
func (a *Anthropic) runCalls(ctx context.Context, req Request, uses []aBlock) ([]aBlock, error) {
	var out []aBlock
	paused := false
	for _, u := range uses {
		if u.Name == toolSearch && req.SearchChats != nil {
			args, _ := json.Marshal(u.Input)
			var tc chatToolCall
			tc.ID = u.ID
			tc.Function.Name, tc.Function.Arguments = u.Name, string(args)
			answer, err := (&OpenAI{}).runTool(ctx, req, tc)
			if errors.Is(err, ErrPaused) { // the search waits for approval
				paused = true
				continue
			}
			if err != nil {
				return nil, &toolError{err}
			}
			out = append(out, aBlock{Type: "tool_result", ToolUseID: u.ID, Content: answer})
			continue
		}
		if req.CallTool == nil {
			out = append(out, aBlock{Type: "tool_result", ToolUseID: u.ID, Content: "there is no tool named " + u.Name, IsError: true})
			continue
		}
		res, err := req.CallTool(ctx, u.ID, u.Name, u.Input)
		if errors.Is(err, ErrPaused) {
			paused = true
			continue
		}
		if err != nil {
			return nil, err
		}
		b := aBlock{Type: "tool_result", ToolUseID: u.ID, IsError: res.Outcome != models.ToolDone}
		if res.Outcome == models.ToolDone {
			j, _ := json.Marshal(res.Output)
			b.Content = string(j)
		} else {
			b.Content = res.Text()
		}
		out = append(out, b)
	}
	if paused {
		return nil, ErrPaused
	}
	return out, nil
}

// complete sends the request, retrying 429, 529, 5xx and an overloaded
// stream before anything reached the user, and returns the whole message.
func (a *Anthropic) complete(ctx context.Context, body aRequest, onText, onThinking func(string)) (*aReply, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	again := func(err error) bool { return retryable(err) || errors.Is(err, errOverloaded) }
	return withRetries(ctx, a.MaxAttempts, a.Backoff, again, func(streamed func()) (*aReply, error) {
		return a.stream(ctx, payload, func(s string) { streamed(); onText(s) }, func(s string) { streamed(); onThinking(s) })
	})
}

func (a *Anthropic) endpoint() string {
	base := strings.TrimRight(a.BaseURL, "/")
	if base == "" {
		base = "https://api.anthropic.com"
	}
	if !strings.HasSuffix(base, "/v1") {
		base += "/v1"
	}
	return base + "/messages"
}

// stream makes one request and reads its events to message_stop.
func (a *Anthropic) stream(ctx context.Context, payload []byte, onText, onThinking func(string)) (*aReply, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, a.endpoint(), bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("anthropic-version", anthropicVersion)
	if a.APIKey != "" {
		hreq.Header.Set("x-api-key", a.APIKey)
	}
	res, err := (&OpenAI{Client: a.Client}).client().Do(hreq)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 2048))
		return nil, &httpStatusError{Status: res.StatusCode, Body: strings.TrimSpace(string(b)), RetryAfter: retryAfter(res.Header)}
	}
	idle := a.IdleTimeout
	if idle <= 0 {
		idle = 60 * time.Second
	}
	watchdog := time.AfterFunc(idle, func() { cancel(errIdle) })
	defer watchdog.Stop()

	reply := &aReply{partial: map[int]*strings.Builder{}}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	done := false
	for !done && sc.Scan() {
		watchdog.Reset(idle)
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue // event names (the data repeats them), blank separators
		}
		var ev aEvent
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &ev); err != nil {
			return nil, fmt.Errorf("%w: %.200s", errBadChunk, data)
		}
		if done, err = reply.add(&ev, onText, onThinking); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil || !done {
		if cause := context.Cause(ctx); errors.Is(cause, errIdle) {
			return nil, fmt.Errorf("%w for %s", errIdle, idle)
		}
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: %w", errBrokeOff, err)
	}
	for i, b := range reply.Blocks {
		if b.Type == "tool_use" && reply.partial[i] != nil && reply.partial[i].Len() > 0 {
			var in map[string]any
			if err := json.Unmarshal([]byte(reply.partial[i].String()), &in); err != nil {
				return nil, fmt.Errorf("%w: tool input %.200s", errBadChunk, reply.partial[i].String())
			}
			reply.Blocks[i].Input = in
		}
	}
	return reply, nil
}

// add folds one event into the reply and says whether it ended it.
func (r *aReply) add(ev *aEvent, onText, onThinking func(string)) (bool, error) {
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			r.Model, r.Usage = ev.Message.Model, ev.Message.Usage
		}
	case "content_block_start":
		if ev.ContentBlock == nil || ev.Index != len(r.Blocks) {
			return false, fmt.Errorf("%w: block %d out of order", errBadChunk, ev.Index)
		}
		b := *ev.ContentBlock
		r.Blocks = append(r.Blocks, b)
		if b.Text != "" {
			r.Text += b.Text
			onText(b.Text)
		}
	case "content_block_delta":
		if ev.Delta == nil || ev.Index < 0 || ev.Index >= len(r.Blocks) {
			return false, fmt.Errorf("%w: delta of unknown block %d", errBadChunk, ev.Index)
		}
		b := &r.Blocks[ev.Index]
		switch ev.Delta.Type {
		case "text_delta":
			b.Text += ev.Delta.Text
			r.Text += ev.Delta.Text
			onText(ev.Delta.Text)
		case "thinking_delta":
			b.Thinking += ev.Delta.Thinking
			r.Reasoning += ev.Delta.Thinking
			onThinking(ev.Delta.Thinking)
		case "signature_delta":
			b.Signature += ev.Delta.Signature
		case "input_json_delta":
			if r.partial[ev.Index] == nil {
				r.partial[ev.Index] = &strings.Builder{}
			}
			r.partial[ev.Index].WriteString(ev.Delta.PartialJSON)
		}
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			r.StopReason = ev.Delta.StopReason
		}
		if ev.Usage != nil { // cumulative output tokens
			r.Usage.OutputTokens = ev.Usage.OutputTokens
			if ev.Usage.InputTokens > 0 {
				r.Usage.InputTokens = ev.Usage.InputTokens
			}
		}
	case "message_stop":
		return true, nil
	case "error":
		if ev.Error != nil && ev.Error.Type == "overloaded_error" {
			return false, fmt.Errorf("%w: %s", errOverloaded, ev.Error.Message)
		}
		msg := "unknown"
		if ev.Error != nil {
			msg = ev.Error.Type + ": " + ev.Error.Message
		}
		return false, fmt.Errorf("%w: %s", errReported, msg)
	}
	return false, nil // ping, content_block_stop, events added later
}

// failure words err for the user, naming the connection kind; details go
// to the log through the wrapped error.
func (a *Anthropic) failure(err error) error {
	var te *toolError
	if errors.As(err, &te) {
		return te.err
	}
	if errors.Is(err, ErrPaused) || errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, errOverloaded) {
		return &FailureError{Reason: "The assistant could not answer: Anthropic's server is overloaded; try again shortly.",
			Err: fmt.Errorf("%s: %w", a.endpoint(), err)}
	}
	var se *httpStatusError
	if errors.As(err, &se) && se.Status == 529 {
		return &FailureError{Reason: "The assistant could not answer: Anthropic's server is overloaded (529); try again shortly.",
			Err: fmt.Errorf("%s: %w", a.endpoint(), err)}
	}
	return (&OpenAI{BaseURL: a.endpoint()}).failure(err)
}
