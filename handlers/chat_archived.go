package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/views"
)

// chatArchived lists the user's archived conversations, a batch at a time
// from ?before=, beside the sidebar.
func (h *Handlers) chatArchived(c *fiber.Ctx) error {
	cursor, err := chatCursor(c.Query("before"))
	if err != nil {
		return err
	}
	list, err := h.screens.ArchivedList(c.UserContext(), h.viewer(c), cursor)
	if err != nil {
		return err
	}
	side, err := h.screens.Sidebar(c.UserContext(), h.viewer(c), 0, nil) // no conversation on screen here
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.Archived(views.ArchivedScreen{
		Base: h.base(c, "Archived conversations", "chat"), Sidebar: side, Archived: list,
	}))
}
