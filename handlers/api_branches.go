package handlers

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
)

// apiForkPayload is POST /api/chat/exchange/{id}/fork's body: the seq the
// fork starts at (it keeps the entries before it) and, for an edit, the new
// user message at that seq.
type apiForkPayload struct {
	Seq     *int64 `json:"seq"`
	Query   string `json:"query"`
	Context string `json:"context"`
}

// apiFork forks one of the user's exchanges at a seq: without a query, 201
// with the new exchange; with one (an edited message), the turn's answer as
// POST /api/chat gives it, from the new exchange.
func (h *Handlers) apiFork(c *fiber.Ctx) error {
	start := time.Now()
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var p apiForkPayload
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	if p.Seq == nil {
		return fiber.NewError(fiber.StatusBadRequest, `"seq" is required: the position the fork starts at`)
	}
	turn, ex, err := h.agents.StartFork(c.UserContext(), agents.ForkRequest{
		UserID: currentUser(c).ID, ExchangeID: id, Seq: *p.Seq, Query: p.Query, Context: p.Context,
		AgentType: c.Query("agent_type", agents.AgentAuto),
	})
	if err != nil {
		return err
	}
	if turn == nil {
		return c.Status(fiber.StatusCreated).JSON(fiber.Map{"exchange_id": ex.ID})
	}
	return h.apiTurnAnswer(c, turn, start)
}

// apiBranch is one exchange of a family.
type apiBranch struct {
	ExchangeID   int64          `json:"exchange_id"`
	ForkedFrom   *apiForkedFrom `json:"forked_from"`
	Title        string         `json:"title"`
	MessageCount int64          `json:"message_count"`
	UpdatedAt    time.Time      `json:"updated_at"`
}

// apiBranches lists the family an exchange belongs to: its root first,
// then every fork at any depth.
func (h *Handlers) apiBranches(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	family, err := h.store.Family(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	out := make([]apiBranch, len(family))
	for i, ex := range family {
		out[i] = apiBranch{ExchangeID: ex.ID, ForkedFrom: newAPIForkedFrom(&family[i]), Title: ex.Title,
			MessageCount: ex.TurnCount, UpdatedAt: ex.UpdatedAt}
	}
	return c.JSON(out)
}
