package handlers

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
)

// turnWaitGrace is how long a wait goes on past the turn timeout: a turn
// that timed out still commits the error row saying so.
const turnWaitGrace = 30 * time.Second

// awaitTurn is the one place that decides whether a request waits for the
// turn it started, and how. An htmx tab follows the reply live (/live), so
// it gets what is known at once. Everything else waits for the reply: the
// JSON API answers with it, and a form without JavaScript goes to a page
// that shows it.
//
// The wait is not database work: it runs free of the request's database
// deadline (a real model may write for minutes), bounded by the turn
// timeout, by which the turn has ended one way or another. What follows a
// wait reads no database (the answer is built from the outcome; a form's
// page is the next request), so the spent deadline does not matter then.
func (h *Handlers) awaitTurn(c *fiber.Ctx, turn *agents.Turn) (*agents.TurnResult, error) {
	if followsLive(c) {
		return turn.Started()
	}
	ctx, cancel := context.WithTimeout(untimed(c), h.agents.TurnTimeout()+turnWaitGrace)
	defer cancel()
	return turn.Wait(ctx)
}

// sendTurn starts a turn for a message and answers as awaitTurn decides.
func (h *Handlers) sendTurn(c *fiber.Ctx, req agents.SendRequest) (*agents.TurnResult, error) {
	turn, err := h.agents.Start(c.UserContext(), req)
	if err != nil {
		return nil, err
	}
	return h.awaitTurn(c, turn)
}
