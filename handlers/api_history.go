package handlers

import (
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
)

// History batch sizes.
const (
	apiHistoryDefault = 50
	apiHistoryMax     = 200
)

// apiHistoryItem is an exchange in the history list: its first turn's query and
// response, the rating of its latest reply, and the cursor to page on from it.
type apiHistoryItem struct {
	ID            int64                 `json:"id"`
	Title         string                `json:"title"`
	Query         string                `json:"query"`
	Response      string                `json:"response"`
	AgentType     string                `json:"agent_type"`
	AgentResponse *models.AgentResponse `json:"agent_response"`
	Timestamp     time.Time             `json:"timestamp"`
	UpdatedAt     time.Time             `json:"updated_at"`
	Feedback      *int64                `json:"feedback"`
	MessageCount  int64                 `json:"message_count"`
	Pinned        bool                  `json:"pinned"`
	Archived      bool                  `json:"archived"`
	ForkedFrom    *apiForkedFrom        `json:"forked_from"`
	Cursor        string                `json:"cursor"`
	Status        string                `json:"status"` // running, paused, idle or failed
}

// apiForkedFrom is where a fork branched off: its parent and the seq at
// which its own entries begin.
type apiForkedFrom struct {
	ExchangeID int64 `json:"exchange_id"`
	Seq        int64 `json:"seq"`
}

func newAPIHistoryItem(s *models.ExchangeSummary) apiHistoryItem {
	it := apiHistoryItem{
		ID: s.ID, Title: s.Title, Query: s.Query, Response: s.Response,
		AgentType: s.AgentType, AgentResponse: s.AgentResponse,
		Timestamp: s.CreatedAt, UpdatedAt: s.UpdatedAt, Feedback: s.Feedback,
		MessageCount: s.TurnCount, Pinned: s.Pinned, Archived: s.Archived, Cursor: s.Cursor().String(),
		Status: s.RunState(),
	}
	it.ForkedFrom = newAPIForkedFrom(&s.Exchange)
	return it
}

// newAPIForkedFrom is where ex was forked from; nil for an exchange that is
// no fork (or whose parent is gone).
func newAPIForkedFrom(ex *models.Exchange) *apiForkedFrom {
	if ex.ForkedFromID == nil || ex.ForkedAtSeq == nil {
		return nil
	}
	return &apiForkedFrom{ExchangeID: *ex.ForkedFromID, Seq: *ex.ForkedAtSeq}
}

// apiHistory lists one batch (by keyset) of the user's general exchanges, most
// recent activity first.
func (h *Handlers) apiHistory(c *fiber.Ctx) error {
	q, err := apiHistoryQuery(c, models.ExchangeQuery{Scope: models.ScopeGeneral})
	if err != nil {
		return err
	}
	return h.apiHistoryItems(c, q)
}

// apiHistoryQuery completes q with the limit and before parameters: a bad
// limit or cursor is a 400.
func apiHistoryQuery(c *fiber.Ctx, q models.ExchangeQuery) (models.ExchangeQuery, error) {
	q.Limit = apiHistoryDefault
	limit, err := apiQueryInt(c, "limit", 1, apiHistoryMax, fmt.Sprintf("an integer from 1 to %d", apiHistoryMax))
	if err != nil {
		return q, err
	}
	if limit != nil {
		q.Limit = int(*limit)
	}
	q.Before, err = chatCursor(c.Query("before")) // ErrBadCursor: 400
	if err != nil {
		return q, err
	}
	archived, err := apiQueryBool(c, "archived")
	q.Archived = archived != nil && *archived
	return q, err
}

// apiHistoryItems answers with one batch of history items.
func (h *Handlers) apiHistoryItems(c *fiber.Ctx, q models.ExchangeQuery) error {
	sums, err := h.store.ListExchanges(c.UserContext(), currentUser(c).ID, q)
	if err != nil {
		return err
	}
	items := make([]apiHistoryItem, len(sums)) // never null: [] when empty
	for i := range sums {
		items[i] = newAPIHistoryItem(&sums[i])
	}
	return c.JSON(items)
}

// apiClearHistory deletes the user's general exchanges; page and job chats
// stay.
func (h *Handlers) apiClearHistory(c *fiber.Ctx) error {
	exchanges, messages, err := h.store.ClearExchanges(c.UserContext(), currentUser(c).ID, models.ScopeGeneral, 0)
	if err != nil {
		return err
	}
	return c.JSON(apiNotice{Message: fmt.Sprintf("Cleared %d chat exchanges with %d messages", exchanges, messages)})
}
