package screens

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// AdminExchangeGate describes someone's exchange before it is opened, in
// the frame ch (titled with the exchange): nothing of the log.
func (s *Screens) AdminExchangeGate(ctx context.Context, ch views.AdminChrome, id int64) (views.AdminExchangeGate, error) {
	ex, err := s.store.AdminExchange(ctx, id)
	if err != nil {
		return views.AdminExchangeGate{}, err
	}
	seen, err := s.store.ExchangeAdminViews(ctx, ex.UserID, ex.ID)
	if err != nil {
		return views.AdminExchangeGate{}, err
	}
	ch.Title = DisplayTitle(ex.Title)
	return views.AdminExchangeGate{AdminChrome: ch, Exchange: adminSummary(ex, seen.Count), Action: paths.AdminExchange(ex.ID)}, nil
}

// AdminExchangeLog shows an exchange an administrator opened (ex, its log
// msgs, the audit entry that recorded it, with reason), read-only, in the
// frame ch (titled with the exchange).
func (s *Screens) AdminExchangeLog(ctx context.Context, ch views.AdminChrome, ex *models.AdminExchangeRow, msgs []models.Message,
	audit *models.AdminAudit, reason string) (views.AdminExchangeView, error) {
	seen, err := s.store.ExchangeAdminViews(ctx, ex.UserID, ex.ID)
	if err != nil {
		return views.AdminExchangeView{}, err
	}
	var proposals []int64
	for _, m := range msgs {
		if m.EditMode != nil {
			proposals = append(proposals, m.ID)
		}
	}
	states, err := s.store.AdminProposalStates(ctx, proposals)
	if err != nil {
		return views.AdminExchangeView{}, err
	}
	runs, err := s.store.AdminSubRuns(ctx, ex.ID)
	if err != nil {
		return views.AdminExchangeView{}, err
	}
	subRuns := make([]views.AdminSubRun, len(runs))
	for i, r := range runs {
		subRuns[i] = views.AdminSubRun{Agent: r.Agent, Task: r.Task, Status: r.Status, Result: r.Result,
			ParentSeq: r.ParentSeq, Started: AdminTime(r.StartedAt), Entries: r.Entries}
		if r.FinishedAt != nil {
			subRuns[i].Finished = AdminTime(*r.FinishedAt)
		}
	}
	note := "Opened " + AdminTime(audit.CreatedAt) + " and recorded in the audit log"
	if reason != "" {
		note += " with the reason “" + reason + "”"
	}
	ch.Title = DisplayTitle(ex.Title)
	return views.AdminExchangeView{
		AdminChrome: ch,
		Exchange:    adminSummary(ex, seen.Count),
		Note:        note + ". Read-only.",
		Entries:     s.adminLogEntries(msgs, states),
		SubRuns:     subRuns,
	}, nil
}

// adminSummary describes an exchange above its log.
func adminSummary(ex *models.AdminExchangeRow, openings int64) views.AdminExchangeSummary {
	s := views.AdminExchangeSummary{
		ID: ex.ID, Title: DisplayTitle(ex.Title), Owner: ex.Username, ScopeLabel: adminScopeLabel(ex),
		Agent: ex.AgentType, Turns: ex.TurnCount, Messages: ex.Messages, Size: views.Bytes(ex.StoredBytes),
		Created: AdminTime(ex.CreatedAt), LastActive: AdminTime(ex.UpdatedAt),
		Up: ex.FeedbackUp, Down: ex.FeedbackDown, Errors: ex.Errors,
		AuditURL: paths.AdminAuditOf(ex.ID), Openings: openings,
	}
	if n := ex.ProposalsAccepted + ex.ProposalsRejected + ex.ProposalsOpen; n > 0 {
		s.Proposals = fmt.Sprintf("%d accepted · %d rejected · %d open", ex.ProposalsAccepted, ex.ProposalsRejected, ex.ProposalsOpen)
	}
	return s
}

// adminLogEntries maps a whole log for the read-only view: the chat's own
// rendering for user, assistant and error rows (without the rating
// controls), a plain block for tool calls and results.
func (s *Screens) adminLogEntries(msgs []models.Message, proposals map[int64]string) []views.AdminLogEntry {
	out := make([]views.AdminLogEntry, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		e := views.AdminLogEntry{
			ID: m.ID, Seq: "Error row", Role: m.Role, Who: adminWho(m.Role),
			Time: AdminTime(m.CreatedAt), TimeFull: adminTimeFull(m.CreatedAt), Facts: adminFacts(m, proposals[m.ID]),
		}
		if m.Seq != nil {
			e.Seq = "Message " + strconv.FormatInt(*m.Seq+1, 10) // counted from 1, as the chat's time travel counts
		}
		if m.AgentType != nil {
			e.Agent = *m.AgentType
		}
		isTool := m.Role == models.RoleToolCall || m.Role == models.RoleToolResult
		if chat, ok := s.Message(Viewer{}, m); ok && !isTool {
			chat.Feedback = views.FeedbackView{} // read-only: the rating is among the facts
			e.Chat = &chat
		} else {
			e.Tool = adminTool(m) // with its name, call id and payload
		}
		out = append(out, e)
	}
	return out
}

// adminWho is who wrote an entry, as the admin transcript says it.
func adminWho(role string) string {
	switch role {
	case models.RoleUser:
		return "The user"
	case models.RoleAssistant:
		return "Assistant"
	case models.RoleToolCall:
		return "Tool call"
	case models.RoleToolResult:
		return "Tool result"
	case models.RoleError:
		return "Error"
	}
	return role
}

// adminFacts lists what the admin view says about an entry beside its text.
func adminFacts(m *models.Message, proposal string) []string {
	var facts []string
	if m.Feedback != nil {
		if *m.Feedback == models.FeedbackUp {
			facts = append(facts, "rated up")
		} else {
			facts = append(facts, "rated down")
		}
	}
	if m.FeedbackComment != nil && *m.FeedbackComment != "" {
		facts = append(facts, "comment “"+*m.FeedbackComment+"”")
	}
	if m.EditMode != nil {
		facts = append(facts, "proposal ("+strings.ReplaceAll(*m.EditMode, "_", " ")+"): "+proposal)
	}
	if r := m.AgentResponse; r != nil && r.Metadata != nil {
		if model, ok := r.Metadata["model"].(string); ok && model != "" {
			facts = append(facts, "model "+model)
		}
		if tokens, ok := r.Metadata["total_tokens"].(float64); ok {
			facts = append(facts, views.Count(int64(tokens))+" tokens")
		}
	}
	return facts
}

// adminTool describes a tool call or result.
func adminTool(m *models.Message) *views.AdminToolEntry {
	t := &views.AdminToolEntry{Text: m.Content}
	if m.Tool == nil {
		return t
	}
	t.Name, t.Call = m.Tool.Name, m.Tool.CallID
	var payload any = m.Tool.Arguments
	if m.Role == models.RoleToolResult {
		payload = m.Tool.Result
	}
	if payload != nil {
		if b, err := json.MarshalIndent(payload, "", "  "); err == nil && string(b) != "null" {
			t.JSON = string(b)
		}
	}
	return t
}
