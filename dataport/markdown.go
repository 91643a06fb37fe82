package dataport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"palaver/models"
)

// Markdown writes one exchange as a document a person reads: its title, a
// heading per turn, the assistant's replies as written, tool calls folded
// away, error rows marked, ratings and comments noted.
func Markdown(w io.Writer, e *models.ExportedExchange) error {
	b := bufio.NewWriter(w)
	title := e.Title
	if strings.TrimSpace(title) == "" {
		title = "Untitled conversation"
	}
	fmt.Fprintf(b, "# %s\n\n", literal(oneLine(title)))
	fmt.Fprintf(b, "_%s · started %s · last activity %s_\n", plural(int(e.TurnCount), "turn", "turns"), stamp(e.CreatedAt), stamp(e.UpdatedAt))
	if e.ForkedAtSeq != nil {
		fmt.Fprintf(b, "\n_A branch: it shares the first %s of the conversation it was forked from._\n", plural(int(*e.ForkedAtSeq), "entry", "entries"))
	}
	turn := 0
	for i := range e.Messages {
		m := &e.Messages[i]
		switch m.Role {
		case models.RoleUser:
			turn++
			fmt.Fprintf(b, "\n## Turn %d\n\n**You** · %s\n\n%s\n", turn, stamp(m.CreatedAt), literal(m.Content))
		case models.RoleAssistant:
			who := "Assistant"
			if m.AgentType != nil && *m.AgentType != "" {
				who += " (" + literal(*m.AgentType) + ")"
			}
			fmt.Fprintf(b, "\n**%s** · %s\n", who, stamp(m.CreatedAt))
			// The reasoning the model streamed, folded away above the reply.
			if r := m.AgentResponse; r != nil && strings.TrimSpace(r.Reasoning) != "" {
				fmt.Fprintf(b, "\n<details><summary>Thinking</summary>\n\n%s\n%s\n%s\n\n</details>\n", fence(r.Reasoning), r.Reasoning, fence(r.Reasoning))
			}
			fmt.Fprintf(b, "\n%s\n", reply(m.Content))
			if m.Feedback != nil {
				rating := "👍 rated helpful"
				if *m.Feedback == models.FeedbackDown {
					rating = "👎 rated unhelpful"
				}
				if m.FeedbackComment != nil && *m.FeedbackComment != "" {
					rating += ": " + literal(oneLine(*m.FeedbackComment))
				}
				fmt.Fprintf(b, "\n> %s\n", rating)
			}
		case models.RoleToolCall, models.RoleToolResult:
			label := "Tool call"
			if m.Role == models.RoleToolResult {
				label = "Tool result"
			}
			body := m.Content
			if m.Tool != nil {
				if j, err := json.MarshalIndent(m.Tool, "", "  "); err == nil {
					body = string(j)
				}
			}
			fmt.Fprintf(b, "\n<details><summary>%s</summary>\n\n%s\n%s\n%s\n\n</details>\n", label, fence(body), body, fence(body))
		case models.RoleError:
			fmt.Fprintf(b, "\n> **Error** · %s: %s\n", stamp(m.CreatedAt), literal(oneLine(m.Content)))
		}
	}
	return b.Flush()
}

// fence is a code fence longer than any run of backticks in body.
func fence(body string) string {
	longest, run := 0, 0
	for _, r := range body {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
