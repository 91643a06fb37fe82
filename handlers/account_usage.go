package handlers

import (
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/views"
)

// accountUsage is the account page's usage section, from the usage rows
// the turns kept (no scan of messages).
func (h *Handlers) accountUsage(c *fiber.Ctx) (*views.AccountUsage, error) {
	ctx, u := c.UserContext(), currentUser(c)
	now := time.Now().UTC()
	by, err := h.store.MonthUsage(ctx, u.ID, now.Format("2006-01"))
	if err != nil {
		return nil, err
	}
	out := &views.AccountUsage{Month: now.Format("January 2006")}
	total := 0.0
	for _, m := range by {
		r := views.AccountUsageRow{Model: m.Model, In: m.InputTokens, Out: m.OutputTokens,
			Tokens: m.InputTokens + m.OutputTokens, Cost: fmt.Sprintf("$%.4f", m.Cost)}
		out.Max, total = max(out.Max, r.Tokens), total+m.Cost
		out.Rows = append(out.Rows, r)
	}
	out.Total = fmt.Sprintf("$%.4f", total)
	b, err := h.store.BudgetOf(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	today, month, err := h.store.TokensUsed(ctx, u.ID, now)
	if err != nil {
		return nil, err
	}
	limit := func(n int64) string {
		if n == 0 {
			return "no limit"
		}
		return fmt.Sprintf("%d tokens", n)
	}
	out.Budget = fmt.Sprintf("Today %d tokens used (budget: %s); this month %d (budget: %s).", today, limit(b.Daily), month, limit(b.Monthly))
	return out, nil
}
