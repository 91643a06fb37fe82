package agents

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"palaver/models"
)

// Builtin is the offline, deterministic provider: it answers from the
// conversation itself, so the whole product works and is tested with no
// network.
type Builtin struct {
	// Delay is the pause after each streamed word (0 in tests; a visible
	// typing effect when a person watches).
	Delay time.Duration
}

// Name identifies the provider in errors and metadata.
func (b *Builtin) Name() string { return "builtin" }

// greetingOnly matches a message that is only a greeting: "hello", "Hi!",
// "hi there", "hello again", "hey there", "oh, hey everyone 👋". A greeting
// word inside anything else ("show me a python hello world code block",
// console.log('hi')) is no greeting. The gaps are spaces, punctuation and
// symbols only: a letter of any script next to the word makes it another.
var greetingOnly = regexp.MustCompile(`(?i)^[\s\p{P}\p{S}]*(?:(?:oh|well)[\s\p{P}\p{S}]+)?` +
	`(?:hello|hi|hey|hiya|howdy|greetings)` +
	`(?:[\s\p{P}\p{S}]+(?:there|again|everyone|all|you|friend|palaver))*[\s\p{P}\p{S}]*$`)

// codeBlockRequest finds a question asking for a code block (snippet,
// sample, example), the phrase as whole words.
var codeBlockRequest = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_])code[\s-]*(?:block|snippet|sample|example)s?(?:[^\p{L}\p{N}_]|$)`)

// codeSample is the fixed example the router shows for a language, when a
// message names it as a whole word.
type codeSample struct {
	name  *regexp.Regexp
	fence string
	code  string
}

func codeWord(words string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_+#])(?:` + words + `)(?:[^\p{L}\p{N}_+#]|$)`)
}

// codeSamples in the order they are looked for; without a named language,
// the first (Python).
var codeSamples = []codeSample{
	{codeWord(`python|py`), "python", "def greet(name):\n    return f\"Hello, {name}!\"\n\nprint(greet(\"world\"))"},
	{codeWord(`golang|go`), "go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"Hello, world!\")\n}"},
	{codeWord(`javascript|js|node`), "javascript", "function greet(name) {\n  return `Hello, ${name}!`;\n}\n\nconsole.log(greet(\"world\"));"},
	{codeWord(`typescript|ts`), "typescript", "function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n\nconsole.log(greet(\"world\"));"},
	{codeWord(`bash|shell|sh`), "bash", "#!/bin/sh\nname=${1:-world}\necho \"Hello, $name!\""},
	{codeWord(`sql`), "sql", "SELECT 'Hello, world!' AS greeting;"},
	{codeWord(`rust`), "rust", "fn main() {\n    println!(\"Hello, world!\");\n}"},
	{codeWord(`java`), "java", "public class Hello {\n    public static void main(String[] args) {\n        System.out.println(\"Hello, world!\");\n    }\n}"},
}

// codeBlock is the fenced example for a message asking for a code block.
func codeBlock(query string) string {
	sample := codeSamples[0]
	for _, c := range codeSamples {
		if c.name.MatchString(query) {
			sample = c
			break
		}
	}
	return "```" + sample.fence + "\n" + sample.code + "\n```"
}

// The router's search requests: "search my chats for WORDS" and "find
// WORDS in my conversations", any case, the phrases as whole words.
var (
	searchMyChats       = regexp.MustCompile(`(?is)(?:^|[^\p{L}\p{N}_])search\s+my\s+chats\s+for\s+(.+)$`)
	findInConversations = regexp.MustCompile(`(?is)(?:^|[^\p{L}\p{N}_])find\s+(.+?)\s+in\s+my\s+conversations(?:[^\p{L}\p{N}_]|$)`)
)

// searchRequest finds a search request in a message and returns what to
// search for.
func searchRequest(query string) (string, bool) {
	for _, re := range []*regexp.Regexp{searchMyChats, findInConversations} {
		if m := re.FindStringSubmatch(query); m != nil {
			words := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(m[1]), "?!.,;:"))
			if words != "" {
				return words, true
			}
		}
	}
	return "", false
}

// Execute answers req as its agent type does.
func (b *Builtin) Execute(ctx context.Context, req Request, onDelta func(string)) (*models.AgentResponse, error) {
	var content, confidence, reasoning string
	meta := map[string]any{}
	switch req.AgentType {
	case AgentRouter:
		if words, ok := searchRequest(req.Query); ok && req.SearchChats != nil {
			out, err := req.SearchChats(ctx, "builtin-search", words)
			if err != nil {
				return nil, err
			}
			content, confidence = searchReply(out), "high"
			break
		}
		if tool, ok := routerToolRequest(req.Query); ok && req.CallTool != nil {
			text, err := b.callTool(ctx, req, tool)
			if err != nil {
				return nil, err
			}
			content, confidence = text, "high"
			break
		}
		content, confidence = routerReply(req)
	case AgentPageAssistant:
		if reviewRequest.MatchString(req.Query) && req.CallTool != nil {
			text, err := b.callTool(ctx, req, toolRequest{name: ToolReadEditor, args: map[string]any{}})
			if err != nil {
				return nil, err
			}
			content, confidence = text, "high"
			break
		}
		r, err := pageAssistantReply(req)
		if err != nil {
			return nil, err
		}
		content, confidence = r.content, r.confidence
		if r.proposal != nil {
			// The proposal passes the registry's gate as propose_edit.
			id := fmt.Sprintf("builtin-%s-%d", ToolProposeEdit, req.Turn)
			text, m, err := admitProposal(ctx, req, id, r.content, *r.proposal, false)
			if err != nil {
				return nil, err
			}
			content = text
			if m != nil {
				meta, reasoning = m, r.proposal.Reasoning
			}
		}
	default:
		return nil, fmt.Errorf("builtin provider has no %q agent", req.AgentType)
	}
	if said := attachedLines(req.Attachments); said != "" {
		content = said + "\n\n" + content
	}
	if err := b.stream(ctx, content, onDelta); err != nil {
		return nil, err
	}
	meta["provider"], meta["model"] = b.Name(), "builtin"
	// Tokens are counted as words, so that usage and budgets can be
	// tested offline.
	meta["prompt_tokens"], meta["completion_tokens"] = len(strings.Fields(req.Query)), len(strings.Fields(content))
	return &models.AgentResponse{
		Content:     content,
		AgentType:   req.AgentType,
		Confidence:  confidence,
		Suggestions: []models.Suggestion{},
		Metadata:    meta,
		Reasoning:   reasoning,
	}, nil
}

// routerReply greets a greeting and otherwise says honestly what it is,
// quoting the whole question back (with a fixed example when it asks for a
// code block). It counts the conversation from the turn's place, and a
// regenerated answer says which answer it is, so that it differs from the
// one before it.
func routerReply(req Request) (content, confidence string) {
	turns := req.Turn
	if turns <= 0 {
		turns = 1
		for _, m := range req.History {
			if m.Role == models.RoleUser {
				turns++
			}
		}
	}
	var reply string
	switch {
	case greetingOnly.MatchString(req.Query):
		reply = "Hello! I'm Palaver's offline assistant. No language model is connected, " +
			"so I can't reason about your questions, but every message you send here is kept: " +
			"you can come back to this conversation, rename it, rate replies and find it in the history."
		if turns > 1 {
			reply += fmt.Sprintf("\n\nWe're %d messages into this conversation.", turns)
		}
		confidence = "high"
	case codeBlockRequest.MatchString(req.Query):
		reply = "I'm the offline agent: no language model is connected, so here is a fixed example " +
			"rather than a real answer. You asked: \"" + req.Query + "\"\n\n" + codeBlock(req.Query)
		confidence = "low"
	default:
		reply = "I'm the offline agent: no language model is connected, so I can't give you a real answer. " +
			"You asked: \"" + req.Query + "\""
		confidence = "low"
	}
	if !greetingOnly.MatchString(req.Query) && turns > 1 {
		reply += fmt.Sprintf("\n\nThis is message %d of this conversation; the earlier ones are kept above.", turns)
	}
	if req.Answer > 1 {
		reply += fmt.Sprintf("\n\nAnother answer (%d) to this message.", req.Answer)
	}
	reply += toldNote(req.System)
	return reply, confidence
}

// toldNoteMax bounds how much of the instructions the offline agent quotes.
const toldNoteMax = 600

// toldNote is how the offline agent shows the instructions in force (the
// person's, the project's, the memory entries), which a model would follow:
// quoted, up to toldNoteMax characters; "" when there are none.
func toldNote(system string) string {
	system = strings.TrimSpace(system)
	if system == "" {
		return ""
	}
	if r := []rune(system); len(r) > toldNoteMax {
		system = string(r[:toldNoteMax]) + "…"
	}
	lines := strings.Split(system, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return "\n\nA model would answer with the instructions in force for this chat in mind:\n\n" + strings.Join(lines, "\n")
}

// stream sends content to onDelta a word at a time, pausing Delay after each.
func (b *Builtin) stream(ctx context.Context, content string, onDelta func(string)) error {
	if onDelta == nil {
		return nil
	}
	rest := content
	for rest != "" {
		i := strings.IndexAny(rest[1:], " \n")
		word := rest
		if i >= 0 {
			word = rest[:i+1]
		}
		rest = rest[len(word):]
		onDelta(word)
		if b.Delay > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(b.Delay):
			}
		}
	}
	return ctx.Err()
}
