package handlers

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/paths"
)

// chatStop stops the reply being written in one of the user's exchanges; what
// was written so far is kept, marked as stopped. Open tabs see it through
// /live; without JavaScript the browser goes back to the conversation.
func (h *Handlers) chatStop(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.agents.Stop(c.UserContext(), currentUser(c).ID, id); err != nil {
		return err
	}
	return h.turnControlDone(c, id)
}

// chatRetry answers a failed exchange's last user message again. Without
// JavaScript it waits for the reply, so the page it returns to shows it.
func (h *Handlers) chatRetry(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	turn, err := h.agents.Retry(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	if _, err := h.awaitTurn(c, turn); err != nil {
		return err
	}
	return h.turnControlDone(c, id)
}

// turnControlDone ends a stop or retry: htmx tabs follow the turn live, so
// nothing is swapped; a plain form returns to the page it came from.
func (h *Handlers) turnControlDone(c *fiber.Ctx, exchangeID int64) error {
	return done(c, chatBackTo(c, paths.Chat(exchangeID)), unchanged(c))
}

// apiStopResponse is the answer to a stop: what the reply held when it stopped.
type apiStopResponse struct {
	Message    string `json:"message"`
	ExchangeID int64  `json:"exchange_id"`
	Response   string `json:"response"`
}

// apiStop stops the reply being written in one of the user's exchanges.
func (h *Handlers) apiStop(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	res, err := h.agents.Stop(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(apiStopResponse{Message: "Stopped", ExchangeID: id, Response: res.Reply.Content})
}

// apiRetry answers a failed exchange's last user message again and returns
// the outcome as POST /api/chat does.
func (h *Handlers) apiRetry(c *fiber.Ctx) error {
	start := time.Now()
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	turn, err := h.agents.Retry(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	return h.apiTurnAnswer(c, turn, start)
}
