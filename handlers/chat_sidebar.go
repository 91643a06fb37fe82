package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/views"
)

// chatSidebar is the sidebar of a chat screen that shows no conversation
// (search, archived), the current one marked.
func (h *Handlers) chatSidebar(c *fiber.Ctx) (views.Sidebar, error) {
	current := h.chatCurrentID(c)
	return h.screens.Sidebar(c.UserContext(), h.viewer(c), current, nil)
}
