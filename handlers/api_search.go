package handlers

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
)

// Search bounds (API.md "Search").
const (
	searchMaxQuery     = 500 // characters of q
	apiSearchDefault   = 20
	apiSearchMaxResult = 100
)

// apiSearchHit is one result: a message that matches, or an exchange whose
// title does (message_id and seq null, role "title").
type apiSearchHit struct {
	ExchangeID int64     `json:"exchange_id"`
	MessageID  *int64    `json:"message_id"`
	Seq        *int64    `json:"seq"`
	Role       string    `json:"role"`
	Title      string    `json:"title"`
	Snippet    string    `json:"snippet"`
	Timestamp  time.Time `json:"timestamp"`
	Cursor     string    `json:"cursor"`
	// InReasoning: the match is in the reply's reasoning (the person opted in).
	InReasoning bool `json:"in_reasoning,omitempty"`
}

// apiSearch searches the user's own messages and titles, best match first.
func (h *Handlers) apiSearch(c *fiber.Ctx) error {
	q, err := searchQuery(c)
	if err != nil {
		return err
	}
	q.Limit = apiSearchDefault
	limit, err := apiQueryInt(c, "limit", 1, apiSearchMaxResult, fmt.Sprintf("an integer from 1 to %d", apiSearchMaxResult))
	if err != nil {
		return err
	}
	if limit != nil {
		q.Limit = int(*limit)
	}
	if q.ProjectID, err = h.projectParam(c); err != nil {
		return err
	}
	hits, err := h.store.Search(c.UserContext(), currentUser(c).ID, q)
	if err != nil {
		return err
	}
	out := make([]apiSearchHit, len(hits))
	for i, hit := range hits {
		out[i] = apiSearchHit{
			ExchangeID: hit.ExchangeID, MessageID: hit.MessageID, Seq: hit.Seq, Role: hit.Role,
			Title: hit.Title, Snippet: hit.Snippet, Timestamp: hit.At, Cursor: hit.Cursor.String(),
			InReasoning: hit.InReasoning,
		}
	}
	return c.JSON(out)
}

// searchQuery reads a search's parameters (q, before, scope, agent_type,
// archived), the same for the API and the HTML search. q is what the person
// typed: any text is a search, and only its length is refused.
func searchQuery(c *fiber.Ctx) (models.SearchQuery, error) {
	var q models.SearchQuery
	text := c.Query("q")
	if n := utf8.RuneCountInString(text); n > searchMaxQuery {
		return q, fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("The search is %d characters long; the limit is %d", n, searchMaxQuery))
	}
	if strings.TrimSpace(text) == "" {
		return q, fiber.NewError(fiber.StatusBadRequest, "Type something to search for")
	}
	q.Terms = models.ParseSearch(text)
	// Replies' reasoning is searched for those who asked (the account page).
	q.Reasoning = currentUser(c).SearchReasoning
	switch scope := c.Query("scope"); scope {
	case "", models.ScopeGeneral, models.ScopePage, models.ScopeJob:
		q.Scope = scope
	default:
		return q, fiber.NewError(fiber.StatusBadRequest, "scope must be general, page or job")
	}
	q.AgentType = c.Query("agent_type")
	archived, err := apiQueryBool(c, "archived")
	if err != nil {
		return q, err
	}
	q.Archived = archived != nil && *archived
	if before := c.Query("before"); before != "" {
		cur, err := models.ParseSearchCursor(before)
		if err != nil {
			return q, err // ErrBadCursor: 400
		}
		q.Before = &cur
	}
	return q, nil
}
