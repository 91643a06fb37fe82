package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"palaver/models"
)

// The page assistant proposes edits by calling one of these tools.
const (
	toolFullReplacement = "propose_full_replacement"
	toolSectionPatch    = "propose_section_patch"
)

// pageTools declares the two proposal kinds as functions.
func pageTools() []chatTool {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	mk := func(name, desc string, props map[string]any, required ...string) chatTool {
		var t chatTool
		t.Type = "function"
		t.Function.Name, t.Function.Description = name, desc
		t.Function.Parameters = map[string]any{"type": "object", "properties": props, "required": required}
		return t
	}
	return []chatTool{
		mk(toolFullReplacement, "Propose replacing the whole page with new Markdown.",
			map[string]any{"reasoning": str("why, in one or two sentences"), "content": str("the complete new document")},
			"reasoning", "content"),
		mk(toolSectionPatch, "Propose replacing one section (a heading and the text under it up to the next heading), or adding it when no section has that heading.",
			map[string]any{
				"reasoning":              str("why, in one or two sentences"),
				"target_section_heading": str("the heading of the section to replace, e.g. \"## Budget\""),
				"new_section_content":    str("the new section: its heading line, then its text"),
			}, "reasoning", "target_section_heading", "new_section_content"),
	}
}

func pageSystemPrompt(p *PageContext) string {
	return "You are the assistant of a Markdown page editor. The page is titled " + fmt.Sprintf("%q", p.Title) +
		". Answer questions about it in prose. When the user asks for a change, call " + toolSectionPatch +
		" for a change to one section or " + toolFullReplacement + " for anything larger; the user reviews the " +
		"proposal as a diff before it is applied. The page as it is now:\n\n<page>\n" + p.Content + "\n</page>"
}

// proposalArgs are a proposal tool call's arguments (or a proposal a model
// wrote out as JSON instead of calling the tool).
type proposalArgs struct {
	Mode                 string `json:"edit_mode"`
	AltMode              string `json:"mode"`
	Reasoning            string `json:"reasoning"`
	Content              string `json:"content"`
	TargetSectionHeading string `json:"target_section_heading"`
	NewSectionContent    string `json:"new_section_content"`
}

// proposal turns the arguments into a Proposal of the given mode, if whole.
func (a proposalArgs) proposal(mode string) (Proposal, bool) {
	p := Proposal{Mode: mode, Reasoning: a.Reasoning}
	switch mode {
	case models.EditFullReplacement:
		p.Content = a.Content
		return p, a.Content != ""
	case models.EditSectionPatch:
		p.TargetHeading, p.NewSectionContent = a.TargetSectionHeading, a.NewSectionContent
		return p, strings.TrimSpace(a.TargetSectionHeading) != ""
	}
	return Proposal{}, false
}

func toolMode(name string) string {
	switch name {
	case toolFullReplacement:
		return models.EditFullReplacement
	case toolSectionPatch:
		return models.EditSectionPatch
	}
	return ""
}

// pageReplyFrom reads the page assistant's completion: the first proposal
// tool call (committed as tool_call and tool_result entries through
// req.OnEntry), or else a proposal written as JSON in the text, or else prose.
// The service stamps original_content_hash afterwards.
func pageReplyFrom(ctx context.Context, req Request, comp *completion) (content string, meta map[string]any, err error) {
	for _, tc := range comp.ToolCalls {
		mode := toolMode(tc.Function.Name)
		var args proposalArgs
		if mode == "" || json.Unmarshal([]byte(tc.Function.Arguments), &args) != nil {
			continue
		}
		p, ok := args.proposal(mode)
		if !ok {
			continue
		}
		return admitProposal(ctx, req, tc.ID, comp.Content, p, true)
	}
	if p, ok := proposalInText(comp.Content); ok {
		return admitProposal(ctx, req, "text-proposal", "", p, false)
	}
	return comp.Content, nil, nil
}

// admitProposal passes a proposal through the policy gate as a call of
// the registry's propose_edit: let through, it is the reply (its call and
// result recorded); refused, the reply says so and proposes nothing;
// waiting for the person's approval, ErrPaused.
// record: the call and result are logged (a tool call's; a proposal
// written in the text leaves no entries unless the gate records some).
func admitProposal(ctx context.Context, req Request, callID, said string, p Proposal, record bool) (string, map[string]any, error) {
	a := Admission{Go: true}
	if req.AdmitTool != nil {
		var err error
		if a, err = req.AdmitTool(ctx, callID, ToolProposeEdit, proposalToolArgs(p)); err != nil {
			return "", nil, err
		}
	}
	if !a.Go {
		return "I did not propose the edit (" + a.Outcome.Text() + ").", nil, nil
	}
	if record || a.Approved != nil {
		if err := recordProposal(req, callID, p, a.Approved == nil); err != nil {
			return "", nil, err
		}
	}
	return proposalText(said, p), p.Metadata(), nil
}

// proposalToolArgs are a proposal as propose_edit's arguments.
func proposalToolArgs(p Proposal) map[string]any {
	args := map[string]any{"edit_mode": p.Mode}
	if p.Reasoning != "" {
		args["reasoning"] = p.Reasoning
	}
	if p.Mode == models.EditFullReplacement {
		args["content"] = p.Content
	} else {
		args["target_section_heading"], args["new_section_content"] = p.TargetHeading, p.NewSectionContent
	}
	return args
}

// approvedProposal is the proposal the person approved while the turn
// waited, as the model's call: a proposal ends the reply, so the resumed
// turn makes it the reply without asking the model again.
func approvedProposal(req Request) (*completion, bool) {
	state := models.ToolCallState(req.TurnLog)
	for _, m := range req.TurnLog {
		f := m.Tool
		if m.Role != models.RoleToolCall || f == nil || f.Name != ToolProposeEdit || state[f.CallID] != models.ToolRunning {
			continue
		}
		b, _ := json.Marshal(f.Arguments)
		var tc chatToolCall
		tc.ID, tc.Type = f.CallID, "function"
		tc.Function.Name, tc.Function.Arguments = toolFullReplacement, string(b)
		if mode, _ := f.Arguments["edit_mode"].(string); mode == models.EditSectionPatch {
			tc.Function.Name = toolSectionPatch
		}
		return &completion{ToolCalls: []chatToolCall{tc}}, true
	}
	return nil, false
}

// recordProposal commits the proposal's call (unless the person's approval
// stands for it) and its result as log entries.
func recordProposal(req Request, callID string, p Proposal, withCall bool) error {
	if req.OnEntry == nil {
		return nil
	}
	if withCall {
		call := &models.Message{Role: models.RoleToolCall, Content: ToolProposeEdit,
			Tool: &models.ToolFields{CallID: callID, Name: ToolProposeEdit, Arguments: proposalToolArgs(p)}}
		if err := req.OnEntry(call); err != nil {
			return err
		}
	}
	result := &models.Message{Role: models.RoleToolResult, Content: "The proposal is shown to the person for review.",
		Tool: &models.ToolFields{CallID: callID, Name: ToolProposeEdit, Result: "shown for review"}}
	return req.OnEntry(result)
}

// proposalText is the reply's prose: what the model said, else its reasoning.
func proposalText(said string, p Proposal) string {
	if strings.TrimSpace(said) != "" {
		return said
	}
	if p.Reasoning != "" {
		return p.Reasoning
	}
	if p.Mode == models.EditSectionPatch {
		return "I propose a change to the section " + fmt.Sprintf("%q", p.TargetHeading) + "."
	}
	return "I propose a new version of the page."
}

var jsonObject = regexp.MustCompile("(?s)```(?:json)?\\s*(\\{.*?\\})\\s*```|(\\{.*\\})")

// proposalInText finds a proposal a model wrote as a JSON object (fenced or
// bare) instead of calling a tool: the tolerant fallback.
func proposalInText(text string) (Proposal, bool) {
	for _, m := range jsonObject.FindAllStringSubmatch(text, -1) {
		raw := m[1]
		if raw == "" {
			raw = m[2]
		}
		var a proposalArgs
		if json.Unmarshal([]byte(raw), &a) != nil {
			continue
		}
		mode := a.Mode
		if mode == "" {
			mode = a.AltMode
		}
		if p, ok := a.proposal(mode); ok {
			return p, true
		}
	}
	return Proposal{}, false
}
