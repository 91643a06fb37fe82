package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/views"
)

// adminOverview shows the service's health: activity, errors, feedback,
// proposals and tokens over the last days, as charts with their tables.
func (h *Handlers) adminOverview(c *fiber.Ctx) error {
	s, err := h.screens.AdminOverview(c.UserContext(), h.adminChrome(c, "Admin", views.AdminOverviewSection))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.AdminOverview(s))
}
