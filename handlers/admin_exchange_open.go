package handlers

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// adminExchangeGate describes someone's exchange and asks for a reason
// before it is opened: nothing of the log is shown, nothing is recorded.
func (h *Handlers) adminExchangeGate(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	ex, err := h.store.AdminExchange(c.UserContext(), id)
	if err != nil {
		return err
	}
	seen, err := h.store.ExchangeAdminViews(c.UserContext(), ex.UserID, ex.ID)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.AdminExchangeGateView(views.AdminExchangeGate{
		AdminChrome: h.adminChrome(c, screens.DisplayTitle(ex.Title), views.AdminExchangesSection),
		Exchange:    adminSummary(ex, seen.Count),
		Action:      paths.AdminExchange(ex.ID),
	}))
}

// adminExchangeOpen records the opening (with its reason) in the audit log
// and shows the exchange's whole log, read-only. Each POST is one opening:
// reloading the page asks the browser to send it again, and records again.
func (h *Handlers) adminExchangeOpen(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	reason := strings.TrimSpace(c.FormValue("reason"))
	if utf8.RuneCountInString(reason) > models.MaxAuditReason {
		return fiber.NewError(fiber.StatusUnprocessableEntity,
			fmt.Sprintf("A reason can be at most %d characters.", models.MaxAuditReason))
	}
	ex, msgs, audit, err := h.store.AdminOpenExchange(c.UserContext(), currentUser(c).ID, id, reason)
	if err != nil {
		return err
	}
	seen, err := h.store.ExchangeAdminViews(c.UserContext(), ex.UserID, ex.ID)
	if err != nil {
		return err
	}
	var proposals []int64
	for _, m := range msgs {
		if m.EditMode != nil {
			proposals = append(proposals, m.ID)
		}
	}
	states, err := h.store.AdminProposalStates(c.UserContext(), proposals)
	if err != nil {
		return err
	}
	note := "Opened " + adminTime(audit.CreatedAt) + " and recorded in the audit log"
	if reason != "" {
		note += " with the reason “" + reason + "”"
	}
	return render(c, fiber.StatusOK, views.AdminExchangeLog(views.AdminExchangeView{
		AdminChrome: h.adminChrome(c, screens.DisplayTitle(ex.Title), views.AdminExchangesSection),
		Exchange:    adminSummary(ex, seen.Count),
		Note:        note + ". Read-only.",
		Entries:     h.adminLogEntries(msgs, states),
	}))
}

// adminSummary describes an exchange above its log.
func adminSummary(ex *models.AdminExchangeRow, openings int64) views.AdminExchangeSummary {
	s := views.AdminExchangeSummary{
		ID: ex.ID, Title: screens.DisplayTitle(ex.Title), Owner: ex.Username, ScopeLabel: adminScopeLabel(ex),
		Agent: ex.AgentType, Turns: ex.TurnCount, Messages: ex.Messages, Size: views.Bytes(ex.StoredBytes),
		Created: adminTime(ex.CreatedAt), LastActive: adminTime(ex.UpdatedAt),
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
func (h *Handlers) adminLogEntries(msgs []models.Message, proposals map[int64]string) []views.AdminLogEntry {
	out := make([]views.AdminLogEntry, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		e := views.AdminLogEntry{
			ID: m.ID, Seq: "–", Role: m.Role,
			Time: adminTime(m.CreatedAt), TimeFull: adminTimeFull(m.CreatedAt), Facts: adminFacts(m, proposals[m.ID]),
		}
		if m.Seq != nil {
			e.Seq = "#" + strconv.FormatInt(*m.Seq, 10)
		}
		if m.AgentType != nil {
			e.Agent = *m.AgentType
		}
		isTool := m.Role == models.RoleToolCall || m.Role == models.RoleToolResult
		if chat, ok := h.screens.Message(screens.Viewer{}, m); ok && !isTool {
			chat.Feedback = views.FeedbackView{} // read-only: the rating is among the facts
			e.Chat = &chat
		} else {
			e.Tool = adminTool(m) // with its name, call id and payload
		}
		out = append(out, e)
	}
	return out
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
