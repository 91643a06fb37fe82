package agents

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"palaver/agents/sections"
	"palaver/models"
)

// PageContext is the page a page_assistant request is about, as the agent
// was shown it.
type PageContext struct {
	ID      int64
	Title   string
	Content string
}

// Proposal is a page edit an assistant proposed, as its reply's metadata
// carries it (API.md): edit_mode, reasoning, content (a full replacement)
// or target_section_heading + new_section_content (a section patch), and
// original_content_hash, the DJB2 of the page the agent was shown.
type Proposal struct {
	Mode              string // models.EditFullReplacement or models.EditSectionPatch
	Reasoning         string
	Content           string
	TargetHeading     string
	NewSectionContent string
	OriginalHash      string
}

// ProposalOf reads the proposal in an agent response's metadata, and says
// whether there is a well-formed one.
func ProposalOf(ar *models.AgentResponse) (Proposal, bool) {
	if ar == nil || ar.Metadata == nil {
		return Proposal{}, false
	}
	str := func(key string) (string, bool) {
		v, ok := ar.Metadata[key].(string)
		return v, ok
	}
	var p Proposal
	var ok bool
	if p.Mode, ok = str("edit_mode"); !ok {
		return Proposal{}, false
	}
	p.Reasoning, _ = str("reasoning")
	if p.OriginalHash, ok = str("original_content_hash"); !ok {
		return Proposal{}, false
	}
	switch p.Mode {
	case models.EditFullReplacement:
		p.Content, ok = str("content")
	case models.EditSectionPatch:
		var ok2 bool
		p.TargetHeading, ok = str("target_section_heading")
		p.NewSectionContent, ok2 = str("new_section_content")
		ok = ok && ok2
	default:
		ok = false
	}
	return p, ok
}

// Metadata is the proposal as agent_response.metadata holds it.
func (p Proposal) Metadata() map[string]any {
	m := map[string]any{
		"edit_mode":             p.Mode,
		"reasoning":             p.Reasoning,
		"original_content_hash": p.OriginalHash,
	}
	if p.Mode == models.EditFullReplacement {
		m["content"] = p.Content
	} else {
		m["target_section_heading"] = p.TargetHeading
		m["new_section_content"] = p.NewSectionContent
	}
	return m
}

// Stale says whether the page has changed since the proposal was made.
func (p Proposal) Stale(content string) bool { return DJB2(content) != p.OriginalHash }

// Result is the page the proposal would make of content, whole.
func (p Proposal) Result(content string) string {
	if p.Mode == models.EditFullReplacement {
		return p.Content
	}
	return sections.Patch(content, p.TargetHeading, p.NewSectionContent)
}

// Changes lists, for a section patch, the sections it would change in
// content (changed, new or removed).
func (p Proposal) Changes(content string) []sections.Change {
	return sections.Compare(content, p.Result(content))
}

// ApplyProposal is the content that accepting the proposal m makes of the
// page's content: the whole proposal, or for a section patch the chosen
// sections only (chosen nil: all of them). It fails with models.ErrStale
// when the page is no longer what the proposal was made for, and with an
// *InputError when the choice does not fit the proposal.
func ApplyProposal(content string, m *models.Message, chosen []string) (string, error) {
	p, ok := ProposalOf(m.AgentResponse)
	if !ok {
		return "", fmt.Errorf("apply proposal: message %d: %w", m.ID, models.ErrNotFound)
	}
	if p.Stale(content) {
		return "", models.ErrStale
	}
	if chosen == nil {
		return p.Result(content), nil
	}
	if p.Mode != models.EditSectionPatch {
		return "", &InputError{Msg: "sections can only be chosen for a section_patch proposal"}
	}
	if len(chosen) == 0 {
		return "", &InputError{Msg: "Choose at least one section to apply"}
	}
	changes := p.Changes(content)
	picked, unknown := sections.Select(changes, chosen)
	if len(unknown) > 0 {
		return "", &InputError{Msg: fmt.Sprintf("This proposal changes no section %q", unknown[0])}
	}
	if len(picked) == len(changes) {
		return p.Result(content), nil // all of it: exactly as proposed
	}
	return sections.Merge(content, p.Result(content), picked), nil
}

// The instructions the builtin page assistant understands (API.md), case
// insensitive, with straight or curly double quotes.
var (
	instrSection = regexp.MustCompile(`(?is)^\s*replace\s+(?:the\s+)?section\s+["“](.+?)["”]\s+with\s*:(.*)$`)
	instrAdd     = regexp.MustCompile(`(?is)^\s*add\s+(?:a\s+)?(?:new\s+)?section\s+["“](.+?)["”]\s*:(.*)$`)
	instrReplace = regexp.MustCompile(`(?is)^\s*replace\s+["“](.+?)["”]\s+with\s+["“](.*)["”]\s*\.?\s*$`)
	instrRewrite = regexp.MustCompile(`(?is)^\s*rewrite\s+the\s+(?:whole\s+)?page\s+as\s*:(.*)$`)
)

// pageReply is the builtin page assistant's answer: a proposal when the
// query is one of its instructions, prose about the page otherwise.
type pageReply struct {
	content    string
	confidence string
	proposal   *Proposal
}

// pageAssistantReply answers req about req.Page.
func pageAssistantReply(req Request) (pageReply, error) {
	if req.Page == nil {
		return pageReply{}, fmt.Errorf("the page assistant needs a page")
	}
	page := req.Page
	hash := DJB2(page.Content)
	eol := sections.LineEnding(page.Content)
	secs := sections.Parse(page.Content)
	text := func(s string) string { return strings.TrimSpace(s) }

	if m := instrSection.FindStringSubmatch(req.Query); m != nil {
		target, body := text(m[1]), text(m[2])
		if body == "" {
			return prose(fmt.Sprintf("What should the section “%s” say? Put the new text after the colon: `replace section \"%s\" with: …`", target, target)), nil
		}
		head := sections.DefaultHeading(target)
		reasoning := fmt.Sprintf("There is no section “%s” yet, so it is added at the end of the page.", target)
		reply := fmt.Sprintf("The page has no section “%s”, so I propose adding it at the end. Review it below, then accept or reject it.", target)
		if i := sections.Find(secs, target); i >= 0 {
			head = secs[i].Heading
			reasoning = fmt.Sprintf("Replaces the text of the section “%s” with the text you gave.", secs[i].Name())
			reply = fmt.Sprintf("Here is the section “%s” rewritten as you asked. Review the change below, then accept or reject it.", secs[i].Name())
		}
		return sectionProposal(reply, reasoning, target, strings.TrimSpace(head)+"\n"+body, hash), nil
	}
	if m := instrAdd.FindStringSubmatch(req.Query); m != nil {
		target, body := text(m[1]), text(m[2])
		if i := sections.Find(secs, target); i >= 0 {
			return prose(fmt.Sprintf("The page already has a section “%s”. To change it, ask: `replace section \"%s\" with: …`", secs[i].Name(), target)), nil
		}
		head := sections.DefaultHeading(target)
		content := head
		if body != "" {
			content += "\n" + body
		}
		return sectionProposal(
			fmt.Sprintf("Here is the new section “%s”, added at the end of the page. Review it below, then accept or reject it.", head),
			fmt.Sprintf("Adds a section “%s” at the end of the page.", head), target, content, hash), nil
	}
	if m := instrReplace.FindStringSubmatch(req.Query); m != nil {
		old, repl := sections.WithLineEnding(m[1], eol), sections.WithLineEnding(m[2], eol)
		n := strings.Count(page.Content, old)
		switch {
		case n == 0:
			return prose(fmt.Sprintf("I couldn't find “%s” in the page, so there is nothing to replace. (The match is exact, capitals included.)", m[1])), nil
		case old == repl:
			return prose("That replacement would change nothing."), nil
		}
		reasoning := fmt.Sprintf("Replaces %s of “%s” with “%s”.", plural(n, "occurrence", "occurrences"), m[1], m[2])
		return fullProposal("Here is the page with every “"+m[1]+"” replaced. Review the diff below, then accept or reject it.",
			reasoning, strings.ReplaceAll(page.Content, old, repl), hash), nil
	}
	if m := instrRewrite.FindStringSubmatch(req.Query); m != nil {
		body := strings.TrimSpace(m[1])
		if body == "" {
			return prose("What should the page say? Put the new text after the colon: `rewrite the page as: …`"), nil
		}
		return fullProposal("Here is the page rewritten as you asked. Review the diff below, then accept or reject it.",
			"Replaces the whole page with the text you gave.", sections.WithLineEnding(body, eol), hash), nil
	}
	return prose(describePage(page, secs)), nil
}

func prose(content string) pageReply { return pageReply{content: content, confidence: "medium"} }

func sectionProposal(reply, reasoning, target, content, hash string) pageReply {
	return pageReply{content: reply, confidence: "high", proposal: &Proposal{
		Mode: models.EditSectionPatch, Reasoning: reasoning,
		TargetHeading: target, NewSectionContent: content, OriginalHash: hash,
	}}
}

func fullProposal(reply, reasoning, content, hash string) pageReply {
	return pageReply{content: reply, confidence: "high", proposal: &Proposal{
		Mode: models.EditFullReplacement, Reasoning: reasoning, Content: content, OriginalHash: hash,
	}}
}

// describePage says what the page holds: its title, its sections and its
// length, and what the assistant can do with it.
func describePage(page *PageContext, secs []sections.Section) string {
	var b strings.Builder
	words := wordCount(page.Content)
	if strings.TrimSpace(page.Content) == "" {
		fmt.Fprintf(&b, "“%s” is empty so far.", page.Title)
	} else {
		var heads []string
		preamble := false
		for _, s := range secs {
			if s.IsPreamble() {
				preamble = true
				continue
			}
			heads = append(heads, "“"+s.Name()+"”")
		}
		fmt.Fprintf(&b, "“%s” has %s", page.Title, plural(len(heads), "section", "sections"))
		if len(heads) > 0 {
			b.WriteString(": " + strings.Join(heads, ", "))
		}
		if preamble {
			b.WriteString(", with some text before the first heading")
		}
		fmt.Fprintf(&b, ". It is %s over %s (%s).", plural(words, "word", "words"),
			plural(lineCount(page.Content), "line", "lines"), plural(utf8.RuneCountInString(page.Content), "character", "characters"))
	}
	example := "Introduction"
	for _, s := range secs {
		if !s.IsPreamble() && s.Title != "" {
			example = s.Title
			break
		}
	}
	b.WriteString("\n\nI'm the offline page assistant: no language model is connected, but I can propose edits for you to accept or reject. Ask me, for example:\n\n")
	fmt.Fprintf(&b, "- `replace section \"%s\" with: the new text`\n", example)
	b.WriteString("- `add section \"Next steps\": what comes next`\n")
	b.WriteString("- `replace \"old words\" with \"new words\"`\n")
	b.WriteString("- `rewrite the page as: the whole new text`")
	return b.String()
}

// wordCount counts the words of s: runs of non-space characters holding a
// letter or digit (a heading's "##" or a list's "-" is no word).
func wordCount(s string) int {
	n := 0
	for _, f := range strings.Fields(s) {
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			n++
		}
	}
	return n
}

// lineCount counts lines as an editor numbers them.
func lineCount(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
