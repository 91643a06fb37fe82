package agents

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"palaver/models"
)

func toolCallChunks(name string, args map[string]any) []string {
	b, _ := json.Marshal(args)
	a := string(b)
	half := len(a) / 2
	first, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"delta": map[string]any{"tool_calls": []any{
		map[string]any{"index": 0, "id": "call_9", "type": "function", "function": map[string]any{"name": name, "arguments": a[:half]}}}}}}})
	second, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"delta": map[string]any{"tool_calls": []any{
		map[string]any{"index": 0, "function": map[string]any{"arguments": a[half:]}}}}}}})
	return []string{string(first), string(second), `{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, usageChunk}
}

func TestOpenAIPageAssistantProposesThroughToolCalls(t *testing.T) {
	f, o := newFakeLLM(t, sse(toolCallChunks(toolSectionPatch, map[string]any{
		"reasoning": "Shorter budget.", "target_section_heading": "## Budget", "new_section_content": "## Budget\nOne euro.",
	}), true))
	s := newStore(t)
	ann := newUser(t, s, "ann")
	ctx := context.Background()
	page, err := s.CreatePage(ctx, ann, "Trip", "# Trip\n\n## Budget\nA lot.\n")
	if err != nil {
		t.Fatal(err)
	}
	svc := New(s, o, Options{Logger: quiet})
	res, err := svc.Send(ctx, SendRequest{UserID: ann, PageID: &page.ID, Query: "make the budget smaller"})
	if err != nil || res.Failed {
		t.Fatalf("send = %+v, %v", res, err)
	}
	body := <-f.bodies
	var offered []string
	for _, tool := range body.Tools {
		offered = append(offered, tool.Function.Name)
	}
	// The proposal kinds, and the registry's tools of a page chat (read_editor among them).
	if names := strings.Join(offered, ","); !strings.HasPrefix(names, toolFullReplacement+","+toolSectionPatch+",") ||
		!strings.Contains(names, ToolReadEditor) || strings.Contains(names, ToolDeleteConversation) ||
		!strings.Contains(body.Messages[0].Content, "## Budget\nA lot.") {
		t.Fatalf("request: tools %v, system %q", offered, body.Messages[0].Content)
	}
	p, ok := ProposalOf(res.Reply.AgentResponse)
	if !ok || p.Mode != models.EditSectionPatch || p.TargetHeading != "## Budget" || p.OriginalHash != DJB2(page.Content) {
		t.Fatalf("proposal %+v (%v) from %+v", p, ok, res.Reply.AgentResponse.Metadata)
	}
	if res.Reply.EditMode == nil || *res.Reply.EditMode != models.EditSectionPatch || res.Reply.Content != "Shorter budget." {
		t.Fatalf("reply %+v", res.Reply)
	}
	if m := res.Reply.AgentResponse.Metadata; m["total_tokens"] != 17 || m["model"] != "test-model-2025" {
		t.Fatalf("usage lost: %v", m)
	}
	got := logOf(t, s, ann, res.Exchange.ID)
	if len(got) != 4 || got[0] != "user:make the budget smaller" || !strings.HasPrefix(got[1], "tool_call:") ||
		!strings.HasPrefix(got[2], "tool_result:") || !strings.HasPrefix(got[3], "assistant:") {
		t.Fatalf("log %v", got)
	}
	msgs, _ := s.Messages(ctx, ann, res.Exchange.ID, nil)
	if tool := msgs[1].Tool; tool == nil || tool.Name != ToolProposeEdit || tool.CallID != "call_9" || tool.Arguments["target_section_heading"] != "## Budget" {
		t.Fatalf("tool call entry %+v", msgs[1].Tool)
	}
}

func TestOpenAIPageAssistantFallsBackToJSONInText(t *testing.T) {
	text := "Here is my proposal:\n```json\n{\"mode\": \"full_replacement\", \"reasoning\": \"tidier\", \"content\": \"# New\\n\"}\n```"
	_, o := newFakeLLM(t, sse([]string{textChunk(text), finishChunk}, true))
	resp, err := o.Execute(context.Background(), Request{AgentType: AgentPageAssistant, Query: "rewrite",
		Page: &PageContext{ID: 1, Title: "T", Content: "# Old\n"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Metadata["edit_mode"] != models.EditFullReplacement || resp.Metadata["content"] != "# New\n" || resp.Content != "tidier" {
		t.Fatalf("fallback reply %q meta %v", resp.Content, resp.Metadata)
	}
}

func TestOpenAIPageAssistantProse(t *testing.T) {
	_, o := newFakeLLM(t, sse([]string{textChunk("It has two sections."), finishChunk}, true))
	resp, err := o.Execute(context.Background(), Request{AgentType: AgentPageAssistant, Query: "what's in it?",
		Page: &PageContext{ID: 1, Title: "T", Content: "# A\n# B\n"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "It has two sections." || resp.Metadata["edit_mode"] != nil {
		t.Fatalf("prose reply %q meta %v", resp.Content, resp.Metadata)
	}
}
