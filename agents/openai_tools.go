package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"palaver/models"
)

// maxToolRounds bounds the requests of one reply that offers tools: after
// this many, the model is asked without them and must answer.
const maxToolRounds = 4

// searchPrompt tells a general chat's model about its search tool.
const searchPrompt = "When the user asks about their earlier conversations, call " + toolSearch +
	" and link the hits you use with their url, in Markdown."

// searchTools declares the search of the user's conversations as a function.
func searchTools() []chatTool {
	var t chatTool
	t.Type = "function"
	t.Function.Name = toolSearch
	t.Function.Description = "Search the user's own earlier conversations (their messages, the replies and the titles). " +
		"Returns the best matches, each with its title, the text around the match and a url that opens the conversation at that message."
	t.Function.Parameters = map[string]any{
		"type": "object",
		"properties": map[string]any{"query": map[string]any{
			"type":        "string",
			"description": `words that must all appear (any form: "running" finds "run"), "a quoted phrase", or word* for a prefix`,
		}},
		"required": []string{"query"},
	}
	return []chatTool{t}
}

// toolError is a failure of the turn itself while it ran a tool (its lease
// lost, the database): not the model's.
type toolError struct{ err error }

func (e *toolError) Error() string { return e.err.Error() }
func (e *toolError) Unwrap() error { return e.err }

// converse asks the model and, while it calls the search tool, runs the
// calls (each a recorded sub-run, through req.SearchChats), gives it the
// results and asks again, up to maxToolRounds. The returned completion
// holds the text of every round, as it streamed to onDelta, the token usage
// summed, and the last round's tool calls (the page assistant's proposals;
// search calls are answered here).
func (o *OpenAI) converse(ctx context.Context, req Request, body chatRequest, onDelta func(string)) (*completion, error) {
	rt := &roundsText{onDelta: onDelta, onReasoning: req.OnReasoning}
	usage := map[string]int{}
	for round := 1; ; round++ {
		onText, onThinking := rt.round()
		comp, err := o.complete(ctx, body, onText, onThinking)
		if err != nil {
			return nil, err
		}
		for k, v := range comp.Usage {
			n, _ := v.(int)
			usage[k] += n
		}
		calls := comp.ToolCalls
		// A page's proposal ends the reply: the person reviews it.
		if req.Page != nil && proposes(calls) || body.Tools == nil || !runsHere(req, calls) {
			comp.Content, comp.Reasoning = rt.text.String(), rt.reasoning.String()
			if len(usage) > 0 {
				comp.Usage = map[string]any{}
				for k, v := range usage {
					comp.Usage[k] = v
				}
			}
			return comp, nil
		}
		said := chatMessage{Role: "assistant", Content: comp.Content}
		for i, tc := range calls {
			if tc.ID == "" {
				calls[i].ID = fmt.Sprintf("call_%d_%d", round, i)
			}
			var w wireToolCall
			w.ID, w.Type = calls[i].ID, "function"
			w.Function.Name, w.Function.Arguments = tc.Function.Name, tc.Function.Arguments
			said.ToolCalls = append(said.ToolCalls, w)
		}
		body.Messages = append(body.Messages, said)
		paused := false
		for _, tc := range calls {
			if tc.Function.Name != toolSearch && req.CallTool != nil {
				// A registered tool: it runs, or waits (the turn then
				// pauses once this round's calls are made).
				answer, err := callRegistered(ctx, req, tc)
				if errors.Is(err, ErrPaused) {
					paused = true
					continue
				}
				if err != nil {
					return nil, err
				}
				body.Messages = append(body.Messages, chatMessage{Role: "tool", ToolCallID: tc.ID, Content: answer})
				continue
			}
			answer, err := o.runTool(ctx, req, tc)
			if errors.Is(err, ErrPaused) { // the search waits for approval
				paused = true
				continue
			}
			if err != nil {
				return nil, &toolError{err}
			}
			body.Messages = append(body.Messages, chatMessage{Role: "tool", ToolCallID: tc.ID, Content: answer})
		}
		if paused {
			return nil, ErrPaused
		}
		if round == maxToolRounds-1 {
			body.Tools = nil // the last round answers with what it has
		}
	}
}

// proposes says whether a round's calls hold a page proposal.
func proposes(calls []chatToolCall) bool {
	for _, tc := range calls {
		if toolMode(tc.Function.Name) != "" {
			return true
		}
	}
	return false
}

func callsTool(calls []chatToolCall, name string) bool {
	for _, tc := range calls {
		if tc.Function.Name == name {
			return true
		}
	}
	return false
}

// runTool runs one of the model's tool calls and returns what the model is
// told (JSON). Calls of tools it was not offered, or with arguments that
// cannot be read, are answered with an error it can correct.
func (o *OpenAI) runTool(ctx context.Context, req Request, tc chatToolCall) (string, error) {
	reply := func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	}
	if tc.Function.Name != toolSearch {
		return reply(map[string]any{"error": "there is no tool named " + tc.Function.Name})
	}
	var args struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil || strings.TrimSpace(args.Query) == "" {
		return reply(map[string]any{"error": `the arguments must be {"query": "some words"}`})
	}
	out, err := req.SearchChats(ctx, tc.ID, args.Query)
	if err != nil {
		return "", err
	}
	if out.Status != models.SubRunOK {
		return reply(map[string]any{"query": out.Query, "error": out.Result})
	}
	return reply(map[string]any{"query": out.Query, "hits": out.Hits})
}

// runsHere says whether a round's calls are run by the turn (a search, a
// registered tool) rather than being the reply (a page's proposal).
func runsHere(req Request, calls []chatToolCall) bool {
	for _, tc := range calls {
		if tc.Function.Name == toolSearch && req.SearchChats != nil {
			return true
		}
		if req.CallTool != nil && req.Tools != nil {
			if t, ok := req.Tools.Lookup(tc.Function.Name); !ok || !t.Inline {
				return true // a registered tool, or an unknown one (its failure is recorded and told)
			}
		}
	}
	return false
}

// registryTools declares the registry's tools a model may call in req's
// chat (the inline ones are declared by their own providers' code).
func registryTools(req Request) []chatTool {
	if req.Tools == nil || req.CallTool == nil {
		return nil
	}
	scope := models.ScopeGeneral
	if req.Page != nil {
		scope = models.ScopePage
	}
	var out []chatTool
	for _, t := range req.Tools.All() {
		if t.Inline || t.Scope != "" && t.Scope != scope {
			continue
		}
		var c chatTool
		c.Type = "function"
		c.Function.Name, c.Function.Description, c.Function.Parameters = t.Name, t.Description, t.Schema
		out = append(out, c)
	}
	return out
}

// callRegistered calls a registered tool for the model and returns what it
// is told (JSON): the output, or why there is none.
func callRegistered(ctx context.Context, req Request, tc chatToolCall) (string, error) {
	var args map[string]any
	if raw := strings.TrimSpace(tc.Function.Arguments); raw != "" {
		if err := json.Unmarshal([]byte(raw), &args); err != nil || args == nil {
			args = map[string]any{"_arguments_not_a_json_object": clip(raw, 200)}
		}
	}
	out, err := req.CallTool(ctx, tc.ID, tc.Function.Name, args)
	if err != nil {
		return "", err
	}
	return toolAnswer(out)
}

// toolAnswer is an outcome as the model is told it.
func toolAnswer(out ToolOutcome) (string, error) {
	v := map[string]any{"outcome": out.Outcome}
	if out.Output != nil {
		v["output"] = out.Output
	}
	if out.Error != "" {
		v["error"] = out.Error
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// resumeMessages are the calls this turn made before it paused (or before
// its process died), as the model made them, each with its outcome: a
// resumed turn goes on from there instead of asking the model again from
// the start. An approved call runs now.
func (o *OpenAI) resumeMessages(ctx context.Context, req Request) ([]chatMessage, error) {
	if req.CallTool == nil {
		return nil, nil
	}
	said := chatMessage{Role: "assistant"}
	var answers []chatMessage
	seen := map[string]bool{}
	state := models.ToolCallState(req.TurnLog)
	for _, m := range req.TurnLog {
		if m.Role != models.RoleToolCall || m.Tool == nil || seen[m.Tool.CallID] {
			continue
		}
		// A search that ran is not asked again; one that waited for the
		// person (approved now, or refused) goes through its gate again.
		if m.Tool.Name == toolSearch && state[m.Tool.CallID] == models.ToolDone {
			continue
		}
		seen[m.Tool.CallID] = true
		var w wireToolCall
		args, _ := json.Marshal(m.Tool.Arguments)
		w.ID, w.Type = m.Tool.CallID, "function"
		w.Function.Name, w.Function.Arguments = m.Tool.Name, string(args)
		said.ToolCalls = append(said.ToolCalls, w)
		var answer string
		var err error
		if m.Tool.Name == toolSearch && req.SearchChats != nil {
			var tc chatToolCall
			tc.ID, tc.Function.Name, tc.Function.Arguments = w.ID, w.Function.Name, w.Function.Arguments
			if answer, err = o.runTool(ctx, req, tc); err != nil {
				return nil, err
			}
		} else {
			out, err := req.CallTool(ctx, m.Tool.CallID, m.Tool.Name, m.Tool.Arguments)
			if err != nil {
				return nil, err
			}
			if answer, err = toolAnswer(out); err != nil {
				return nil, err
			}
		}
		answers = append(answers, chatMessage{Role: "tool", ToolCallID: m.Tool.CallID, Content: answer})
	}
	if len(said.ToolCalls) == 0 {
		return nil, nil
	}
	return append([]chatMessage{said}, answers...), nil
}

// roundsText gathers a reply's text and reasoning over the rounds of a
// tool loop, passing each delta on as it streams: each round's text after
// the first is a new paragraph of the one reply.
type roundsText struct {
	text, reasoning strings.Builder
	onDelta         func(string)
	onReasoning     func(string)
}

// round gives the text and reasoning sinks of the next round.
func (r *roundsText) round() (onText, onThinking func(string)) {
	gap := r.text.Len() > 0
	return func(d string) {
			if gap {
				d, gap = "\n\n"+d, false
			}
			r.text.WriteString(d)
			if r.onDelta != nil {
				r.onDelta(d)
			}
		}, func(d string) {
			r.reasoning.WriteString(d)
			if r.onReasoning != nil {
				r.onReasoning(d)
			}
		}
}
