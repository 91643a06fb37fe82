package agents

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"palaver/models"
)

// OpenAI is a provider for any OpenAI-compatible chat-completions endpoint
// (OpenAI, Ollama, vLLM, llama.cpp server). It streams, retries 429 and 5xx
// answers with backoff, and reports token usage and the model's name.
type OpenAI struct {
	BaseURL string // up to and including /v1, e.g. http://127.0.0.1:11434/v1
	APIKey  string // sent as a bearer token when set
	Model   string
	// Client is the HTTP client; nil uses one with the timeouts below.
	Client *http.Client
	// MaxAttempts bounds the tries of one request (429, 5xx, a refused
	// connection); 0 means 4.
	MaxAttempts int
	// Backoff is the first pause between tries, doubled each time, with
	// jitter; a Retry-After header overrides it. 0 means 500ms.
	Backoff time.Duration
	// IdleTimeout bounds the wait for the next streamed chunk; 0 means 60s.
	IdleTimeout time.Duration
	// FileTextChars caps what the model is shown of each attached text
	// file, in characters; 0 means DefaultFileTextChars.
	FileTextChars int
}

// Name identifies the provider in errors.
func (o *OpenAI) Name() string { return "openai" }

// chatMessage is one message of the chat-completions request: an
// assistant's may carry the tool calls it made, and a "tool" message
// answers one of them.
type chatMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	// Images, when there are some, make the content a list of parts: the
	// text, then each image (OpenAI's vision format).
	Images []contentPart `json:"-"`
}

// MarshalJSON writes content as a string, or as parts when there are images.
func (m chatMessage) MarshalJSON() ([]byte, error) {
	type plain chatMessage
	if len(m.Images) == 0 {
		return json.Marshal(plain(m))
	}
	parts := append([]contentPart{{Type: "text", Text: m.Content}}, m.Images...)
	return json.Marshal(struct {
		plain
		Content []contentPart `json:"content"`
	}{plain(m), parts})
}

// wireToolCall is a tool call as a request repeats it to the model.
type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments,omitempty"`
	} `json:"function"`
}

// chatTool declares a function the model may call.
type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
	Tools     []chatTool `json:"tools,omitempty"`
	MaxTokens int        `json:"max_tokens,omitempty"`
}

// chatChunk is one server-sent event of a streamed completion.
type chatChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content   string         `json:"content"`
			ToolCalls []chatToolCall `json:"tool_calls"`
			// Reasoning comes under one of these names: reasoning_content
			// (DeepSeek, vLLM), reasoning (OpenRouter, Ollama's /v1) or
			// thinking (Ollama's own field).
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
			Thinking         string `json:"thinking"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// completion is a whole streamed answer.
type completion struct {
	Content      string
	Reasoning    string
	ToolCalls    []chatToolCall
	Model        string
	FinishReason string
	Usage        map[string]any
}

// Execute asks the endpoint to answer req as its agent type.
func (o *OpenAI) Execute(ctx context.Context, req Request, onDelta func(string)) (*models.AgentResponse, error) {
	body := chatRequest{Model: o.Model, Messages: o.messages(req), Stream: true}
	body.StreamOptions = &struct {
		IncludeUsage bool `json:"include_usage"`
	}{IncludeUsage: true}
	page := req.AgentType == AgentPageAssistant && req.Page != nil
	switch {
	case page:
		body.Tools = pageTools()
	case req.SearchChats != nil:
		body.Tools = searchTools()
		body.Messages[0].Content += " " + searchPrompt
	}
	var clock thinkClock
	outer := req.OnReasoning
	req.OnReasoning = func(d string) {
		clock.tick()
		if outer != nil {
			outer(d)
		}
	}
	body.Tools = append(body.Tools, registryTools(req)...) // openai_tools.go
	var comp *completion
	var err error
	if approved, ok := approvedProposal(req); page && ok {
		comp = approved // the person approved it: it is the reply
	} else {
		var resumed []chatMessage
		if resumed, err = o.resumeMessages(ctx, req); err != nil {
			return nil, err
		}
		body.Messages = append(body.Messages, resumed...)
		comp, err = o.converse(ctx, req, body, onDelta)
	}
	if errors.Is(err, ErrPaused) {
		return nil, err // calls wait: the turn pauses
	}
	if te := (*toolError)(nil); errors.As(err, &te) {
		return nil, te.err // the turn's own failure (its lease, the database), not the model's
	}
	if err != nil {
		return nil, o.failure(err)
	}
	content, meta := comp.Content, map[string]any{}
	if page {
		if content, meta, err = pageReplyFrom(ctx, req, comp); err != nil {
			return nil, err
		}
		if meta == nil {
			meta = map[string]any{}
		}
	}
	meta["provider"], meta["model"], meta["finish_reason"] = o.Name(), comp.Model, comp.FinishReason
	clock.note(meta)
	for k, v := range comp.Usage {
		meta[k] = v
	}
	return &models.AgentResponse{
		Content: content, AgentType: req.AgentType, Confidence: "medium",
		Suggestions: []models.Suggestion{}, Metadata: meta, Reasoning: comp.Reasoning,
	}, nil
}

// systemPrompts tell each agent type what it is.
var systemPrompts = map[string]string{
	AgentRouter: "You are Palaver's assistant. Answer the user's questions helpfully and concisely, in Markdown.",
}

// messages builds the conversation the model sees: the system prompt, the
// bounded history (user and assistant entries), any client context, and the
// query.
func (o *OpenAI) messages(req Request) []chatMessage {
	sys := systemPrompts[req.AgentType]
	if req.AgentType == AgentPageAssistant && req.Page != nil {
		sys = pageSystemPrompt(req.Page)
	}
	if sys == "" {
		sys = systemPrompts[AgentRouter]
	}
	if req.System != "" {
		sys += "\n\n" + req.System
	}
	msgs := []chatMessage{{Role: "system", Content: sys}}
	for _, m := range req.History {
		switch m.Role {
		case models.RoleUser, models.RoleAssistant:
			msgs = append(msgs, chatMessage{Role: m.Role, Content: m.Content})
		}
	}
	if strings.TrimSpace(req.Context) != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: "Context from the client:\n" + req.Context})
	}
	text, images := filesForModel(req.Attachments, o.FileTextChars)
	return append(msgs, chatMessage{Role: "user", Content: req.Query + text, Images: openAIImages(images)})
}

// failure says in plain words what went wrong with the endpoint, for the
// user; the details (its answer's body, its address), which can name
// internal hosts, stay in the wrapped error, for the log.
func (o *OpenAI) failure(err error) error {
	if errors.Is(err, context.Canceled) {
		return err // the turn was stopped or ended: its cause says why
	}
	var se *httpStatusError
	var ne net.Error
	var oe *net.OpError
	reason := "the model's server failed"
	switch {
	case errors.As(err, &se):
		reason = fmt.Sprintf("the model's server answered %d", se.Status)
	case errors.Is(err, errIdle):
		reason = "the model's server stopped sending its answer"
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		reason = "the model's server did not answer in time"
	case errors.As(err, &oe) && oe.Op == "dial":
		reason = "the model's server could not be reached"
	case errors.Is(err, errBrokeOff):
		reason = "the model's answer broke off"
	case errors.Is(err, errBadChunk):
		reason = "the model's server sent an answer that could not be read"
	case errors.Is(err, errReported):
		reason = "the model's server reported an error"
	}
	return &FailureError{
		Reason: "The assistant could not answer: " + reason + ".",
		Err:    fmt.Errorf("%s: %w", o.BaseURL, err),
	}
}

// Failures of a streamed answer, told apart for the user's message.
var (
	errBrokeOff = errors.New("the model's answer broke off")
	errBadChunk = errors.New("the model endpoint sent a chunk that is not JSON")
	errReported = errors.New("the model endpoint reported")
)

// httpStatusError is an answer other than 200 from the endpoint.
type httpStatusError struct {
	Status     int
	Body       string
	RetryAfter time.Duration
}

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("the model endpoint answered %d: %s", e.Status, e.Body)
}

func (e *httpStatusError) retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// complete sends the request, retrying what can be retried before anything
// has streamed, and returns the whole completion.
func (o *OpenAI) complete(ctx context.Context, body chatRequest, onDelta, onReasoning func(string)) (*completion, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return withRetries(ctx, o.MaxAttempts, o.Backoff, retryable, func(streamed func()) (*completion, error) {
		return o.stream(ctx, payload, func(s string) {
			streamed()
			if onDelta != nil {
				onDelta(s)
			}
		}, func(s string) {
			streamed()
			if onReasoning != nil {
				onReasoning(s)
			}
		})
	})
}

func retryable(err error) bool {
	var se *httpStatusError
	if errors.As(err, &se) {
		return se.retryable()
	}
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial" || errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, errIdle)
}

// errIdle means the stream went quiet for longer than IdleTimeout.
var errIdle = errors.New("the model endpoint stopped sending")

func (o *OpenAI) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 2 * time.Minute, // a cold local model can take a while to load
		MaxIdleConnsPerHost:   4,
	}}
}

// stream makes one request and reads its server-sent events to [DONE].
func (o *OpenAI) stream(ctx context.Context, payload []byte, onDelta, onReasoning func(string)) (*completion, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost,
		strings.TrimRight(o.BaseURL, "/")+"/chat/completions", bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if o.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	res, err := o.client().Do(hreq)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 2048))
		return nil, &httpStatusError{Status: res.StatusCode, Body: strings.TrimSpace(string(b)), RetryAfter: retryAfter(res.Header)}
	}

	idle := o.IdleTimeout
	if idle <= 0 {
		idle = 60 * time.Second
	}
	watchdog := time.AfterFunc(idle, func() { cancel(errIdle) })
	defer watchdog.Stop()

	comp := &completion{}
	var text, reasoning strings.Builder
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	done := false
	for !done && sc.Scan() {
		watchdog.Reset(idle)
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // comments, event names, blank separators
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			done = true
			break
		}
		var ch chatChunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return nil, fmt.Errorf("%w: %.200s", errBadChunk, data)
		}
		if ch.Error != nil {
			return nil, fmt.Errorf("%w: %s", errReported, ch.Error.Message)
		}
		comp.add(&ch, &text, onDelta)
		for _, c := range ch.Choices {
			if r := c.Delta.ReasoningContent + c.Delta.Reasoning + c.Delta.Thinking; r != "" {
				reasoning.WriteString(r)
				if onReasoning != nil {
					onReasoning(r)
				}
			}
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
	comp.Content, comp.Reasoning = text.String(), reasoning.String()
	return comp, nil
}

// add folds one chunk into the completion: text deltas, tool-call fragments
// (joined by index), the finish reason, the model's name and the usage.
func (c *completion) add(ch *chatChunk, text *strings.Builder, onDelta func(string)) {
	if ch.Model != "" {
		c.Model = ch.Model
	}
	if u := ch.Usage; u != nil {
		c.Usage = map[string]any{
			"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens,
		}
	}
	for _, choice := range ch.Choices {
		if d := choice.Delta.Content; d != "" {
			text.WriteString(d)
			onDelta(d)
		}
		for _, tc := range choice.Delta.ToolCalls {
			c.mergeToolCall(tc)
		}
		if choice.FinishReason != nil {
			c.FinishReason = *choice.FinishReason
		}
	}
}

func (c *completion) mergeToolCall(tc chatToolCall) {
	for i := range c.ToolCalls {
		if c.ToolCalls[i].Index == tc.Index {
			t := &c.ToolCalls[i]
			if tc.ID != "" {
				t.ID = tc.ID
			}
			t.Function.Name += tc.Function.Name
			t.Function.Arguments += tc.Function.Arguments
			return
		}
	}
	if tc.Type == "" {
		tc.Type = "function"
	}
	c.ToolCalls = append(c.ToolCalls, tc)
}

// retryAfter reads a Retry-After header in seconds (dates are rare from these
// endpoints and fall back to the backoff).
func retryAfter(h http.Header) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && s >= 0 && s <= 60 {
		return time.Duration(s) * time.Second
	}
	return 0
}
