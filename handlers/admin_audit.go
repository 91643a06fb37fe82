package handlers

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// adminAudit lists who opened whose exchange, newest first, one keyset page
// at a time (?before=ID), optionally for one exchange (?exchange=ID).
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
	entries, next, err := h.store.AdminAuditLog(c.UserContext(), q)
	if err != nil {
		return err
	}
	p := views.AdminAuditScreen{
		AdminChrome: h.adminChrome(c, "Audit log", views.AdminAuditSection),
		Exchange:    q.ExchangeID,
	}
	link := func(before int64) string {
		v := url.Values{}
		if q.ExchangeID != 0 {
			v.Set("exchange", strconv.FormatInt(q.ExchangeID, 10))
		}
		if before != 0 {
			v.Set("before", strconv.FormatInt(before, 10))
		}
		return paths.WithQuery(paths.AdminAudit, v)
	}
	if next != 0 {
		p.NextURL = link(next)
	}
	if q.BeforeID != 0 {
		p.FirstURL = link(0)
	}
	for _, e := range entries {
		it := views.AdminAuditItem{
			ID: e.ID, When: adminTime(e.CreatedAt), WhenFull: adminTimeFull(e.CreatedAt),
			Admin: e.AdminName, Owner: e.OwnerName, Reason: e.Reason,
			Exchange: "#" + strconv.FormatInt(e.ExchangeRef, 10) + " (deleted)",
		}
		if e.AdminID == nil {
			it.Admin += " (deleted)"
		}
		if e.OwnerID == nil {
			it.Owner += " (deleted)"
		}
		if e.ExchangeID != nil && e.ExchangeTitle != nil {
			it.Exchange, it.URL = screens.DisplayTitle(*e.ExchangeTitle), paths.AdminExchange(*e.ExchangeID)
		}
		p.Entries = append(p.Entries, it)
	}
	return render(c, fiber.StatusOK, views.AdminAudit(p))
}
