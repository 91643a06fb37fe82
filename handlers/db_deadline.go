package handlers

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
)

// requestDBTimeout bounds the database work of one request: a request's
// queries take milliseconds, so a database that has not answered within it
// is away (a lost host, a hung server), and the request answers 503 then
// rather than hanging (errors.go). A connection to a server that is down
// fails at once; a new connection to an unreachable host gives up after the
// pool's connect timeout (models.Open). It does not bound what a request
// waits for beyond the database: see untimed, and awaitTurn for a reply.
// Config.DBDeadline overrides it (tests).
const requestDBTimeout = 15 * time.Second

// unavailableMessage is the 503's message: the database is away.
const unavailableMessage = "The database is not answering just now, so this could not be done. Please try again in a moment."

// blobStoreDownMessage answers a request the S3-compatible file store
// failed (--blob-store): nothing was stored.
const blobStoreDownMessage = "The file store is not answering just now, so nothing was stored. Please try again in a moment."

// unavailableRetryAfter is the Retry-After of a 503, in seconds.
const unavailableRetryAfter = "5"

// dbDeadline gives the request's context the database deadline. What runs
// after the handlers (the error handler, for an error that reached the top,
// and the request log) gets the context as they left it, values and all,
// without the deadline's cancellation: the error page renders with it.
func (h *Handlers) dbDeadline(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), h.cfg.DBDeadline)
	defer cancel()
	c.SetUserContext(ctx)
	err := c.Next()
	c.SetUserContext(context.WithoutCancel(c.UserContext()))
	return err
}

// untimed is the request's context without the database deadline, for what
// is bounded otherwise and may rightly take longer: waiting for a reply to
// be written (bounded by the turn timeout), an administrator's retention
// run over many conversations.
func untimed(c *fiber.Ctx) context.Context { return context.WithoutCancel(c.UserContext()) }
