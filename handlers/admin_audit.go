package handlers

import (
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/views"
)

// adminAudit lists who opened whose exchange, newest first, one batch at a
// time by keyset (?before=ID), optionally for one exchange (?exchange=ID).
func (h *Handlers) adminAudit(c *fiber.Ctx) error {
	q := models.AuditQuery{Limit: adminListSize}
	for name, dst := range map[string]*int64{"before": &q.BeforeID, "exchange": &q.ExchangeID} {
		if v := c.Query(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("?%s= takes a positive number.", name))
			}
			*dst = n
		}
	}
	s, err := h.screens.AdminAudit(c.UserContext(), h.adminChrome(c, "Audit log", views.AdminAuditSection), q)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.AdminAudit(s))
}
