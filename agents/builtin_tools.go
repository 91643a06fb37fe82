package agents

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"palaver/models"
)

// The builtin agents' tool requests, any case.
var (
	deleteMyChat  = regexp.MustCompile(`(?is)(?:^|[^\p{L}\p{N}_])delete\s+my\s+chat\s+"([^"]+)"`)
	renameThis    = regexp.MustCompile(`(?is)(?:^|[^\p{L}\p{N}_])rename\s+this\s+chat\s+to\s+"([^"]+)"`)
	rememberThis  = regexp.MustCompile(`(?is)(?:^|[^\p{L}\p{N}_])remember\s+this:\s*(.+)$`)
	reviewRequest = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_])(?:review\s+my\s+draft|look\s+at\s+my\s+unsaved\s+changes)(?:[^\p{L}\p{N}_]|$)`)
	firstHeading  = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t#]*$`)
)

// toolRequest is a tool the builtin agent calls, with its arguments.
type toolRequest struct {
	name string
	args map[string]any
}

// routerToolRequest finds a request for one of the router's tools.
func routerToolRequest(query string) (toolRequest, bool) {
	if m := deleteMyChat.FindStringSubmatch(query); m != nil {
		return toolRequest{ToolDeleteConversation, map[string]any{"title": strings.TrimSpace(m[1])}}, true
	}
	if m := renameThis.FindStringSubmatch(query); m != nil {
		return toolRequest{ToolRenameConversation, map[string]any{"title": strings.TrimSpace(m[1])}}, true
	}
	if m := rememberThis.FindStringSubmatch(query); m != nil {
		if text := strings.TrimSpace(m[1]); text != "" {
			return toolRequest{ToolRemember, map[string]any{"text": text}}, true
		}
	}
	return toolRequest{}, false
}

// callTool calls the tool (the same call id each time the turn runs, so a
// resumed turn finds it) and words its outcome.
func (b *Builtin) callTool(ctx context.Context, req Request, tr toolRequest) (string, error) {
	id := fmt.Sprintf("builtin-%s-%d", tr.name, req.Turn)
	out, err := req.CallTool(ctx, id, tr.name, tr.args)
	if err != nil {
		return "", err
	}
	return toolReply(tr, out), nil
}

// toolReply says what came of a builtin agent's tool call.
func toolReply(tr toolRequest, out ToolOutcome) string {
	title, _ := tr.args["title"].(string)
	if out.Outcome != models.ToolDone {
		why := out.Outcome
		if out.Error != "" {
			why += ": " + out.Error
		}
		switch tr.name {
		case ToolDeleteConversation:
			return fmt.Sprintf("Nothing was deleted (%s).", why)
		case ToolRenameConversation:
			return fmt.Sprintf("The conversation was not renamed (%s).", why)
		case ToolRemember:
			return fmt.Sprintf("I did not remember it (%s).", why)
		}
		return fmt.Sprintf("I could not read the editor (%s).", why)
	}
	switch tr.name {
	case ToolDeleteConversation:
		return fmt.Sprintf("Deleted the conversation %q.", title)
	case ToolRenameConversation:
		return fmt.Sprintf("Renamed this conversation to %q.", title)
	case ToolRemember:
		text, _ := tr.args["text"].(string)
		return fmt.Sprintf("Noted: %q. (Memory is not kept across conversations yet; the note is recorded here.)", text)
	}
	return draftReview(out.Output)
}

// draftReview states the draft's word count and its first heading.
func draftReview(output any) string {
	o, _ := output.(map[string]any)
	content, _ := o["content"].(string)
	words := 0 // a word has a letter or a digit: Markdown's "#" and "-" are not words
	for _, w := range strings.Fields(content) {
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			words++
		}
	}
	heading := "it has no heading"
	if m := firstHeading.FindStringSubmatch(content); m != nil {
		heading = fmt.Sprintf("its first heading is %q", strings.TrimSpace(m[1]))
	}
	unit := "words"
	if words == 1 {
		unit = "word"
	}
	return fmt.Sprintf("Your draft has %d %s; %s.", words, unit, heading)
}
