package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/views"
)

// chatSubRun shows the log of a sub-run a conversation's agent delegated to
// (its search of the person's chats). Another conversation's sub-run, or
// another user's, is not found.
func (h *Handlers) chatSubRun(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	sub, err := pathID(c, "sub")
	if err != nil {
		return err
	}
	s, err := h.screens.SubRun(c.UserContext(), h.viewer(c), id, sub)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.SubRun(s))
}
