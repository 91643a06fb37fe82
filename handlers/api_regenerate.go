package handlers

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
)

// apiRegeneratePayload is POST /api/chat/exchange/{id}/regenerate's body:
// the seq of the reply to answer again (absent: the last one).
type apiRegeneratePayload struct {
	Seq     *int64 `json:"seq"`
	Context string `json:"context"`
	Model   int64  `json:"model"` // an id of GET /api/models (0: the default)
}

// apiRegenerate answers again the user message before a reply, in a fork
// at that reply's seq; the old answer stays where it was.
func (h *Handlers) apiRegenerate(c *fiber.Ctx) error {
	start := time.Now()
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var p apiRegeneratePayload
	if len(c.Body()) > 0 {
		if err := apiDecode(c, &p); err != nil {
			return err
		}
	}
	turn, err := h.agents.Regenerate(c.UserContext(), agents.RegenerateRequest{
		UserID: currentUser(c).ID, ExchangeID: id, Seq: p.Seq, Context: p.Context,
		AgentType: c.Query("agent_type", agents.AgentAuto), Model: p.Model,
	})
	if err != nil {
		return err
	}
	return h.apiTurnAnswer(c, turn, start)
}
