package handlers

import (
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/views"
)

// chatMessages maps a log to transcript entries: user messages, assistant
// replies (Markdown rendered and sanitised here) and error rows. Tool calls
// and results are the agent's working, not part of the conversation shown.
func (h *Handlers) chatMessages(c *fiber.Ctx, msgs []models.Message) []views.ChatMessage {
	csrf := h.csrfToken(c)
	out := make([]views.ChatMessage, 0, len(msgs))
	for i := range msgs {
		if m, ok := h.chatMessage(&msgs[i], csrf); ok {
			out = append(out, m)
		}
	}
	return out
}

// chatMessage maps one log entry, and says whether the transcript shows it.
func (h *Handlers) chatMessage(m *models.Message, csrf string) (views.ChatMessage, bool) {
	at := m.CreatedAt.Local()
	v := views.ChatMessage{ID: m.ID, Role: m.Role, Time: at.Format("15:04"), TimeFull: at.Format(time.RFC3339)}
	if m.Seq != nil {
		v.Seq, v.HasSeq = *m.Seq, true
	}
	switch m.Role {
	case models.RoleUser, models.RoleError:
		v.Text = m.Content
	case models.RoleToolCall, models.RoleToolResult:
		v.Text = m.Content
		if m.Tool != nil {
			detail := any(m.Tool.Arguments)
			if m.Role == models.RoleToolResult {
				detail = m.Tool.Result
			}
			if b, err := json.MarshalIndent(detail, "", "  "); err == nil && detail != nil {
				v.Detail = string(b)
			}
		}
	case models.RoleAssistant:
		v.HTML = h.markdown.HTML(m.Content)
		v.Feedback = chatFeedbackView(m, csrf)
	default:
		return v, false
	}
	return v, true
}

// chatFeedbackView maps an assistant message's rating to its control.
func chatFeedbackView(m *models.Message, csrf string) views.FeedbackView {
	f := views.FeedbackView{MessageID: m.ID, CSRF: csrf}
	if m.Feedback != nil {
		switch *m.Feedback {
		case models.FeedbackUp:
			f.Value = views.FeedbackUp
		case models.FeedbackDown:
			f.Value = views.FeedbackDown
		}
	}
	if m.FeedbackComment != nil {
		f.Comment = *m.FeedbackComment
	}
	return f
}
