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

// greetingWord finds hello, hi or hey as a whole word. Go's \b only knows
// ASCII word characters, so the edges are spelled out: a letter of any script
// (the "hi" in "Ωhi") or a digit next to it makes it part of another word.
var greetingWord = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_])(?:hello|hi|hey)(?:[^\p{L}\p{N}_]|$)`)

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
		content, confidence = routerReply(req)
	case AgentPageAssistant:
		r, err := pageAssistantReply(req)
		if err != nil {
			return nil, err
		}
		content, confidence = r.content, r.confidence
		if r.proposal != nil {
			meta, reasoning = r.proposal.Metadata(), r.proposal.Reasoning
		}
	default:
		return nil, fmt.Errorf("builtin provider has no %q agent", req.AgentType)
	}
	if err := b.stream(ctx, content, onDelta); err != nil {
		return nil, err
	}
	meta["provider"], meta["model"] = b.Name(), "builtin"
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
// quoting the whole question back.
func routerReply(req Request) (content, confidence string) {
	turns := 1
	for _, m := range req.History {
		if m.Role == models.RoleUser {
			turns++
		}
	}
	if greetingWord.MatchString(req.Query) {
		reply := "Hello! I'm Palaver's offline assistant. No language model is connected, " +
			"so I can't reason about your questions, but every message you send here is kept: " +
			"you can come back to this conversation, rename it, rate replies and find it in the history."
		if turns > 1 {
			reply += fmt.Sprintf("\n\nWe're %d messages into this conversation.", turns)
		}
		return reply, "high"
	}
	reply := "I'm the offline agent: no language model is connected, so I can't give you a real answer. " +
		"You asked: \"" + req.Query + "\""
	if turns > 1 {
		reply += fmt.Sprintf("\n\nThis is message %d of this conversation; the earlier ones are kept above.", turns)
	}
	return reply, "low"
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
