package handlers

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/views"
)

// adminExchangeGate describes someone's exchange and asks for a reason
// before it is opened: nothing of the log is shown, nothing is recorded.
func (h *Handlers) adminExchangeGate(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	s, err := h.screens.AdminExchangeGate(c.UserContext(), h.adminChrome(c, "", views.AdminExchangesSection), id)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.AdminExchangeGateView(s))
}

// adminExchangeOpen records the opening (with its reason) in the audit log
// and shows the exchange's whole log, read-only. Each POST is one opening:
// reloading the page asks the browser to send it again, and records again.
func (h *Handlers) adminExchangeOpen(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	reason := strings.TrimSpace(c.FormValue("reason"))
	if utf8.RuneCountInString(reason) > models.MaxAuditReason {
		return fiber.NewError(fiber.StatusUnprocessableEntity,
			fmt.Sprintf("A reason can be at most %d characters.", models.MaxAuditReason))
	}
	ex, msgs, audit, err := h.store.AdminOpenExchange(c.UserContext(), currentUser(c).ID, id, reason)
	if err != nil {
		return err
	}
	s, err := h.screens.AdminExchangeLog(c.UserContext(), h.adminChrome(c, "", views.AdminExchangesSection), ex, msgs, audit, reason)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.AdminExchangeLog(s))
}
