package agents

import (
	"context"
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	"palaver/models"
)

// AgentSearch is the sub-agent that searches the user's conversations. It
// is not an agent type a request names: agents delegate to it.
const AgentSearch = "search"

// toolSearch is the search as a tool: the builtin router's delegation and
// a model's function call are both recorded under this name.
const toolSearch = "search_conversations"

// searchHits bounds the hits a search hands back.
const searchHits = 5

// SearchHit is one match, as an agent shows it: where it is (URL opens the
// conversation at that message), its title and the text around it.
type SearchHit struct {
	ExchangeID int64     `json:"exchange_id"`
	Seq        *int64    `json:"seq"` // nil: the title matched
	Role       string    `json:"role"`
	Title      string    `json:"title"`
	Snippet    string    `json:"snippet"` // plain text
	URL        string    `json:"url"`
	At         time.Time `json:"timestamp"`
}

// SearchOutcome is what a search sub-run found, and its record.
type SearchOutcome struct {
	SubRunID int64 // the sub-run's exchange
	Query    string
	Status   string // models.SubRunOK or models.SubRunFailed
	Result   string // the sub-run's short result: its failure's reason
	Hits     []SearchHit
}

// SearchFunc searches the user's conversations as a recorded sub-run of the
// turn that calls it: callID names the call (a model's tool-call id, or one
// the caller makes up). A failed search is an outcome (Status failed), not
// an error; the error is the turn's (its lease lost, the database).
type SearchFunc func(ctx context.Context, callID, query string) (*SearchOutcome, error)

// searchTool is the SearchFunc of a turn on ex: the delegation shows in the
// turn's log as one tool_call / tool_result pair (committed with onEntry)
// around the sub-run, the call at the seq the sub-run points back to, the
// result naming the sub-run, its agent, status and hit count.
//
// The call passes the policy gate first (admit): refused, the outcome says
// why (Status failed); waiting for approval, ErrPaused.
func (s *Service) searchTool(ex *models.Exchange, onEntry func(*models.Message) error, admit ToolAdmitter) SearchFunc {
	return func(ctx context.Context, callID, query string) (*SearchOutcome, error) {
		query = strings.TrimSpace(query)
		args := map[string]any{"query": query}
		a, err := admit(ctx, callID, toolSearch, args)
		if err != nil {
			return nil, err
		}
		if !a.Go {
			return &SearchOutcome{Query: query, Status: models.SubRunFailed, Hits: []SearchHit{}, Result: a.Outcome.Text()}, nil
		}
		call := a.Approved // approved: the sub-run points back to the approval
		if call == nil {
			call = &models.Message{Role: models.RoleToolCall, Content: toolSearch,
				Tool: &models.ToolFields{CallID: callID, Name: toolSearch, Arguments: args}}
			if err := onEntry(call); err != nil {
				return nil, err
			}
		}
		out := &SearchOutcome{Query: query, Hits: []SearchHit{}}
		run, err := s.RunSub(ctx, ex, *call.Seq, AgentSearch, query, func(ctx context.Context, sub *SubRun) (string, error) {
			return s.search(ctx, sub, ex, out)
		})
		if err != nil {
			return nil, err
		}
		out.SubRunID, out.Status, out.Result = run.ExchangeID, run.Status, run.Result
		if run.Status != models.SubRunOK {
			out.Hits = []SearchHit{}
		}
		summary := fmt.Sprintf("Searched the conversations for %q: %s.", query, countHits(len(out.Hits)))
		if run.Status != models.SubRunOK {
			summary = fmt.Sprintf("The search for %q failed: %s", query, run.Result)
		}
		result := &models.Message{Role: models.RoleToolResult, Content: summary,
			Tool: &models.ToolFields{CallID: callID, Name: toolSearch, Result: map[string]any{
				"sub_run_id": run.ExchangeID, "agent": AgentSearch, "status": run.Status,
				"hit_count": len(out.Hits), "result": run.Result,
			}}}
		if err := onEntry(result); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// search is the search sub-agent: it runs the user's search (the
// conversation it is asked from left out: it would find its own question)
// and logs each hit, then what it found.
func (s *Service) search(ctx context.Context, sub *SubRun, from *models.Exchange, out *SearchOutcome) (string, error) {
	found, err := s.store.Search(ctx, from.UserID, models.SearchQuery{
		Terms: models.ParseSearch(out.Query), Limit: 2 * searchHits, Exclude: from.ID,
	})
	if err != nil {
		return "", err
	}
	hits := topHits(found)
	for _, h := range hits {
		hit := SearchHit{ExchangeID: h.ExchangeID, Seq: h.Seq, Role: h.Role, Title: h.Title,
			Snippet: plainSnippet(h.Snippet), URL: h.Link(), At: h.At}
		out.Hits = append(out.Hits, hit)
		entry := &models.Message{Role: models.RoleToolResult, Content: hit.Title + " — " + hit.Snippet,
			Tool: &models.ToolFields{CallID: "hit", Name: AgentSearch, Result: hit}}
		if err := sub.Log(ctx, entry); err != nil {
			return "", err
		}
	}
	said := "Nothing matched."
	if len(hits) > 0 {
		said = "Found " + countHits(len(hits)) + "."
	}
	agent := AgentSearch
	if err := sub.Log(ctx, &models.Message{Role: models.RoleAssistant, Content: said, AgentType: &agent}); err != nil {
		return "", err
	}
	return countHits(len(hits)), nil
}

// topHits keeps the best searchHits hits, leaving out a title's hit when
// a message of the same conversation is among them (the message says more,
// and the link lands on it) and hits in a chat no screen shows (a job's):
// a link to it would answer 404.
func topHits(found []models.SearchHit) []models.SearchHit {
	withMessage := map[int64]bool{}
	for _, h := range found {
		if h.MessageID != nil {
			withMessage[h.ExchangeID] = true
		}
	}
	var out []models.SearchHit
	for _, h := range found {
		if len(out) == searchHits {
			break
		}
		if h.MessageID == nil && withMessage[h.ExchangeID] || h.Link() == "" {
			continue
		}
		out = append(out, h)
	}
	return out
}

func countHits(n int) string {
	switch n {
	case 0:
		return "no matches"
	case 1:
		return "1 match"
	}
	return strconv.Itoa(n) + " matches"
}

// plainSnippet turns a search snippet (escaped HTML with <mark>s) back
// into plain text on one line.
func plainSnippet(snippet string) string {
	s := strings.NewReplacer("<mark>", "", "</mark>", "").Replace(snippet)
	return strings.Join(strings.Fields(html.UnescapeString(s)), " ")
}

// markdownText escapes what Markdown would read as markup in text shown
// inline (a title, a snippet): the reply shows it as it is.
func markdownText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|~#!", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// searchReply is the builtin router's answer to a search: the hits as
// links with their snippets, or plainly that nothing matched.
func searchReply(out *SearchOutcome) string {
	if out.Status != models.SubRunOK {
		return "I couldn't search your chats: " + out.Result
	}
	if len(out.Hits) == 0 {
		return fmt.Sprintf("I searched your chats for “%s” and nothing matched.", markdownText(out.Query))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "I searched your chats for “%s”. ", markdownText(out.Query))
	if len(out.Hits) == 1 {
		b.WriteString("The match:\n")
	} else {
		fmt.Fprintf(&b, "The best %d matches:\n", len(out.Hits))
	}
	for i, h := range out.Hits {
		title := h.Title
		if strings.TrimSpace(title) == "" {
			title = "Untitled chat"
		}
		fmt.Fprintf(&b, "\n%d. [%s](%s)", i+1, markdownText(title), h.URL)
		if h.Seq != nil && h.Snippet != "" {
			fmt.Fprintf(&b, " — %s", markdownText(h.Snippet))
		}
	}
	return b.String()
}
