package handlers

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// usageConversations is how many of this month's conversations the
// account page lists with their cost.
const usageConversations = 5

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
	if out.Models, err = h.defaultModelChoices(c); err != nil {
		return nil, err
	}
	out.CSRF, out.SearchReasoning = h.viewer(c).CSRF, u.SearchReasoning
	if out.Chart, err = h.usageChart(c, now); err != nil {
		return nil, err
	}
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	convs, err := h.store.RecentConversationCosts(ctx, u.ID, first, usageConversations)
	if err != nil {
		return nil, err
	}
	for _, cv := range convs {
		url := paths.Chat(cv.ID)
		if cv.Scope == models.ScopePage && cv.PageID != nil {
			url = paths.PageChatOpen(*cv.PageID, cv.ID)
		}
		out.Conversations = append(out.Conversations, views.AccountConversationCost{
			Title: screens.DisplayTitle(cv.Title), URL: url, Cost: fmt.Sprintf("$%.4f", cv.Cost)})
	}
	out.Budget = fmt.Sprintf("Today %d tokens used (budget: %s); this month %d (budget: %s).", today, limit(b.Daily), month, limit(b.Monthly))
	return out, nil
}

// defaultModelChoices are the models the person may pick, their own
// default marked (none when they have not chosen one).
func (h *Handlers) defaultModelChoices(c *fiber.Ctx) ([]views.ModelChoice, error) {
	cat := h.agents.Catalog()
	if cat == nil {
		return nil, nil
	}
	choices, err := cat.Choices(c.UserContext())
	if err != nil {
		return nil, err
	}
	prefs, err := h.store.ModelPreferencesOf(c.UserContext(), currentUser(c).ID, 0, nil)
	if err != nil {
		return nil, err
	}
	favs, err := h.store.FavouriteModels(c.UserContext(), currentUser(c).ID)
	if err != nil {
		return nil, err
	}
	out := make([]views.ModelChoice, len(choices))
	for i, m := range choices {
		out[i] = views.ModelChoice{ID: m.ID, Name: m.Name, Connection: m.Connection, Default: m.ID == prefs.Person,
			Favourite: slices.Contains(favs, m.ID)}
	}
	return out, nil
}

// accountModel sets the person's default model (0: the server's).
func (h *Handlers) accountModel(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.FormValue("model"), 10, 64)
	if err != nil || id < 0 {
		return refuse(fiber.StatusUnprocessableEntity, "Choose one of the models offered.")
	}
	if err := h.checkModel(c, &id); err != nil {
		return err
	}
	if err := h.store.SetDefaultModel(c.UserContext(), currentUser(c).ID, id); err != nil {
		return err
	}
	return h.accountDone(c, "Default model saved.")
}

// usageChart is the month's tokens per day, from the usage rows (nil: no
// replies this month).
func (h *Handlers) usageChart(c *fiber.Ctx, now time.Time) (*views.DayChart, error) {
	by, err := h.store.MonthUsageByDay(c.UserContext(), currentUser(c).ID, now.Format("2006-01"))
	if err != nil || len(by) == 0 {
		return nil, err
	}
	tokens := map[string]float64{}
	total := 0.0
	for _, d := range by {
		tokens[d.Day] = float64(d.Tokens)
		total += float64(d.Tokens)
	}
	ch := &views.DayChart{ID: "chart-usage", Title: "Tokens per day this month",
		Desc:   fmt.Sprintf("Tokens (in and out, every model) per UTC day of %s: %s in all.", now.Format("January 2006"), views.Count(int64(total))),
		Series: []views.DaySeries{{Name: "Tokens", Class: "fill-indigo-500"}}}
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	for d := first; !d.After(now); d = d.AddDate(0, 0, 1) {
		day := d.Format(time.DateOnly)
		ch.Days = append(ch.Days, day)
		ch.Series[0].Values = append(ch.Series[0].Values, tokens[day])
	}
	return ch, nil
}
