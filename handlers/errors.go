package handlers

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
)

// apiError is the JSON API's error shape.
type apiError struct {
	ErrMsg  string `json:"err_msg"`
	ErrCode int    `json:"err_code"`
}

// classify maps an error to the status and message a client sees. Only typed
// and sentinel errors say more than "something went wrong".
func classify(err error) (int, string) {
	var fe *fiber.Error
	var ie *agents.InputError
	var inv *models.InvalidError
	switch {
	case asRefusal(err) != nil:
		return asRefusal(err).Status, asRefusal(err).Reason
	case errors.As(err, &fe) && fe.Code == fiber.StatusNotFound:
		return fe.Code, "Not found" // not fiber's "Cannot GET /path"
	case errors.As(err, &fe):
		return fe.Code, fe.Message
	case errors.As(err, &ie):
		return fiber.StatusBadRequest, ie.Msg
	case errors.Is(err, models.ErrNotFound):
		return fiber.StatusNotFound, "Not found"
	case errors.As(err, &inv):
		return fiber.StatusBadRequest, inv.Msg
	case errors.Is(err, models.ErrExchangeGone):
		return fiber.StatusGone, goneMessage
	case tooMany(err) != nil:
		return fiber.StatusTooManyRequests, tooMany(err).Error()
	case conflict(err) != nil:
		return fiber.StatusConflict, conflict(err).Error() // the sentinel's own text, without the operation prefixes
	case errors.Is(err, models.ErrBadCursor):
		return fiber.StatusBadRequest, "Invalid cursor"
	case errors.Is(err, models.ErrBadSeq):
		return fiber.StatusBadRequest, models.ErrBadSeq.Error()
	case storeRefusal(err) != nil:
		msg := storeRefusal(err).Error() // a Go error's words, made a sentence
		return fiber.StatusConflict, strings.ToUpper(msg[:1]) + msg[1:] + "."
	case errors.Is(err, models.ErrRetentionDays):
		return fiber.StatusUnprocessableEntity, "Keep conversations for 1 to " + strconv.Itoa(models.MaxRetentionDays) + " days."
	case errors.Is(err, models.ErrBlobStoreDown):
		return fiber.StatusServiceUnavailable, blobStoreDownMessage
	case models.Unavailable(err):
		return fiber.StatusServiceUnavailable, unavailableMessage
	default:
		return fiber.StatusInternalServerError, "Something went wrong on our side. It has been logged; please try again."
	}
}

// goneMessage answers a request that waited for a reply in a conversation
// deleted meanwhile: by another tab, with its page, or with the account.
const goneMessage = "This conversation was deleted (or your account was) while the reply was being written."

// conflicts are the errors that answer 409: the request clashes with the
// state of the conversation or page.
var conflicts = []error{models.ErrTurnRunning, models.ErrSeqTaken, models.ErrNoAssistantMessage,
	models.ErrStale, models.ErrAlreadyApplied, models.ErrRetryLimit, models.ErrNothingToRetry,
	agents.ErrNotRunning, agents.ErrNotHere, models.ErrNothingWaiting, models.ErrFileInUse, models.ErrFileInProject,
	models.ErrProjectNameTaken, models.ErrMemoryFull,
	models.ErrReadOnly, models.ErrNameTaken}

// refusals are the admin actions the store refuses to protect the service
// itself (the last administrator, one's own account): 409, said as a sentence.
var refusals = []error{models.ErrLastAdmin, models.ErrOwnAccount}

// storeRefusal is the store's refusal err is, or nil.
func storeRefusal(err error) error { return firstOf(refusals, err) }

// limits are the errors of a user at a per-user limit: they answer 429.
var limits = []error{agents.ErrTooManyTurns, agents.ErrTooManySockets, agents.ErrTooManyStreams}

// tooMany is the limit err meets, or nil.
func tooMany(err error) error { return firstOf(limits, err) }

// conflict is the conflict err is, or nil.
func conflict(err error) error { return firstOf(conflicts, err) }

// firstOf is the first of sentinels that err is, or nil.
func firstOf(sentinels []error, err error) error {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s
		}
	}
	return nil
}

// errorHandler is the one place errors become responses: JSON for the API,
// an alert fragment for htmx, an error page otherwise (answer), or what a
// Refusal's form says for the request.
func (h *Handlers) errorHandler(c *fiber.Ctx, err error) error {
	err = headTooLarge(err)
	h.setSecurityHeaders(c) // fasthttp's own refusals reach here without the middleware
	status, msg := classify(err)
	if status >= 500 {
		h.log.Error("request failed", "method", c.Method(), "path", c.Path(), "status", status, "err", err)
	} else {
		h.log.Warn("request refused", "method", c.Method(), "path", c.Path(), "status", status, "err", err)
	}
	c.Vary("HX-Request")
	if status == fiber.StatusServiceUnavailable {
		c.Set(fiber.HeaderRetryAfter, unavailableRetryAfter)
	}
	r := asRefusal(err)
	if r == nil {
		if refusedUnread(err, status) {
			lingerOnClose(c) // the client may still be sending (handlers/limits.go)
			return c.Status(status).JSON(apiError{ErrMsg: msg, ErrCode: status})
		}
		r = &Refusal{Status: status, Reason: msg, Cause: err}
	}
	return h.answer(c, r)
}

// isAPI says whether the request is for the JSON API.
func isAPI(c *fiber.Ctx) bool {
	return strings.HasPrefix(c.Path(), "/api/") || c.Path() == "/api"
}

// refusedUnread says whether the server refused the request before reading
// it (a body over the limit, or a request line and headers over the read
// buffer, errHeadTooLarge): its path may be lost by then, so it gets the JSON
// error shape, which any client can read.
func refusedUnread(err error, status int) bool {
	return status == fiber.StatusRequestEntityTooLarge || errors.Is(err, errHeadTooLarge)
}
