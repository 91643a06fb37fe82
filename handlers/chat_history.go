package handlers

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/views"
)

// chatHistoryPageSize is how many exchanges one page of the sidebar holds.
const chatHistoryPageSize = 20

// chatHistory answers the sidebar's infinite scroll: the page of history
// after ?before= as list items for htmx. Without JavaScript it is the chat
// page with its sidebar starting there.
func (h *Handlers) chatHistory(c *fiber.Ctx) error {
	return fragmentOrFull(c, func() error {
		cursor, err := chatCursor(c.Query("before"))
		if err != nil {
			return err
		}
		current := h.sessions.GetInt64(c.UserContext(), sessExchange)
		list, err := h.chatHistoryList(c, current, cursor, false)
		if err != nil {
			return err
		}
		return render(c, fiber.StatusOK, views.HistoryPage(list))
	}, func() error { return h.chatCurrent(c) })
}

// chatHistoryList loads one keyset page of the user's general exchanges after
// cursor (nil: the first page). partial says the list is shown from there on
// a page of its own, so its first group needs its header; otherwise a page
// after cursor continues the group the cursor's exchange was in.
func (h *Handlers) chatHistoryList(c *fiber.Ctx, current int64, cursor *models.Cursor, partial bool) (views.HistoryList, error) {
	sums, err := h.store.ListExchanges(c.UserContext(), currentUser(c).ID, models.ExchangeQuery{
		Scope: models.ScopeGeneral, Before: cursor, Limit: chatHistoryPageSize + 1,
	})
	if err != nil {
		return views.HistoryList{}, err
	}
	list := views.HistoryList{Partial: partial}
	if len(sums) > chatHistoryPageSize {
		sums = sums[:chatHistoryPageSize]
		list.Next = sums[len(sums)-1].Cursor().String()
	}
	now := time.Now()
	group := views.GroupToday // the first page's list always starts with its header
	switch {
	case partial:
		group = ""
	case cursor != nil:
		group = views.HistoryGroup(cursor.At, now)
	}
	csrf := h.csrfToken(c)
	for i := range sums {
		it := chatHistoryItem(&sums[i].Exchange, current, now, csrf)
		if it.Group == group {
			it.Group = "" // the group continues: no second header
		} else {
			group = it.Group
		}
		list.Items = append(list.Items, it)
	}
	return list, nil
}

// chatHistoryItem maps an exchange to its sidebar item, with its group header.
func chatHistoryItem(ex *models.Exchange, current int64, now time.Time, csrf string) views.HistoryItem {
	return views.HistoryItem{
		ID:         ex.ID,
		Title:      chatTitle(ex),
		AgentType:  ex.AgentType,
		When:       views.RelativeTime(ex.UpdatedAt, now),
		WhenFull:   ex.UpdatedAt.In(now.Location()).Format(time.RFC3339),
		Turns:      ex.TurnCount,
		Current:    ex.ID == current,
		Group:      views.HistoryGroup(ex.UpdatedAt, now),
		CSRF:       csrf,
		TurnStatus: ex.TurnStatus,
	}
}

// chatTitle is the exchange's title, or "Untitled".
func chatTitle(ex *models.Exchange) string { return displayTitle(ex.Title) }
