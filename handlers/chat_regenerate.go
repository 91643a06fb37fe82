package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// chatRegenerateConfirm asks before writing a new answer, for browsers
// without JavaScript (htmx posts at once).
func (h *Handlers) chatRegenerateConfirm(c *fiber.Ctx) error {
	m, err := h.chatBranchMessage(c, models.RoleAssistant)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.ConfirmScreen(views.ChatConfirm{
		Base: h.base(c, "A new answer", "chat"), Heading: "Write a new answer?",
		Message: "Palaver answers your message again, in a new branch of this conversation. The current answer stays where it is.",
		Action:  paths.MessageRegenerate(m.ID), Confirm: "Write a new answer", Cancel: paths.ChatAtSeq(m.ExchangeID, *m.Seq),
	}))
}

// chatRegenerate writes a new answer to the user message before a reply,
// in a fork at the reply's seq; the old answer stays. A message that is
// not a reply: 400.
func (h *Handlers) chatRegenerate(c *fiber.Ctx) error {
	m, err := h.chatBranchMessage(c, models.RoleAssistant)
	if err != nil {
		return err
	}
	turn, err := h.agents.Regenerate(c.UserContext(), agents.RegenerateRequest{
		UserID: currentUser(c).ID, ExchangeID: m.ExchangeID, Seq: m.Seq, AgentType: agents.AgentAuto,
	})
	if err != nil {
		return err
	}
	return h.chatToBranch(c, turn, views.NoticeRegenerated)
}
