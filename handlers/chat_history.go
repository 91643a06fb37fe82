package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/views"
)

// chatHistory answers the sidebar's infinite scroll: the batch of history
// after ?before= as list items for htmx. Without JavaScript it is the chat
// screen with its sidebar starting there.
func (h *Handlers) chatHistory(c *fiber.Ctx) error {
	return fragmentOrFull(c, func() error {
		cursor, err := chatCursor(c.Query("before"))
		if err != nil {
			return err
		}
		current := h.sessions.GetInt64(c.UserContext(), sessExchange)
		list, err := h.screens.HistoryList(c.UserContext(), h.viewer(c), current, cursor, false)
		if err != nil {
			return err
		}
		return render(c, fiber.StatusOK, views.HistoryItems(list))
	}, func() error { return h.chatCurrent(c) })
}
