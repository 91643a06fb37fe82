package handlers

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
)

// apiTurnAnswer waits for a turn the request started and answers with it
// as POST /api/chat does.
func (h *Handlers) apiTurnAnswer(c *fiber.Ctx, turn *agents.Turn, start time.Time) error {
	res, err := h.awaitTurn(c, turn)
	if err != nil {
		return err
	}
	return c.JSON(apiChatResult(res, start))
}
