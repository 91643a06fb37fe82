package handlers

import (
	"math"

	"github.com/gofiber/fiber/v2"
)

// apiMessages returns an exchange's log in order, error rows included; with
// ?at=SEQ, the log as it stood when entry SEQ was written.
func (h *Handlers) apiMessages(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	at, err := apiQueryInt(c, "at", 0, math.MaxInt64, "a seq: an integer of at least 0")
	if err != nil {
		return err
	}
	msgs, err := h.store.Messages(c.UserContext(), currentUser(c).ID, id, at)
	if err != nil {
		return err
	}
	items := make([]apiMessage, len(msgs)) // never null: [] when empty
	for i := range msgs {
		items[i] = newAPIMessage(&msgs[i])
	}
	return c.JSON(items)
}
