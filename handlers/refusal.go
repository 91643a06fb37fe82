package handlers

import (
	"errors"
	"slices"

	"github.com/gofiber/fiber/v2"

	"palaver/views"
)

// Refusal is an input refused, returned by a handler like any error: the
// status, the reason a person reads and, for some, a detail folded away
// (what an import's reader found). The error handler alone answers it, as
// the request needs: the JSON error for the API, the alert for htmx, the
// form's screen again (or the error page) without JavaScript; it logs it
// once, as a 4xx. A handler whose form says the reason in place gives the
// hook for that surface (onPage, onFragment, onAPI); nothing is stored.
type Refusal struct {
	Status int
	Reason string
	Detail string
	Cause  error // what was refused, for the log; may be nil

	page, fragment, api func(*Refusal) error
}

// refuse is a refusal with this status and reason.
func refuse(status int, reason string) *Refusal { return &Refusal{Status: status, Reason: reason} }

// refusalOf is err as a refusal when the error handler would answer it with
// one of statuses (the status and words classify gives it), else nil.
func refusalOf(err error, statuses ...int) *Refusal {
	if err == nil {
		return nil
	}
	if r := asRefusal(err); r != nil {
		return r
	}
	status, msg := classify(err)
	if !slices.Contains(statuses, status) {
		return nil
	}
	return &Refusal{Status: status, Reason: msg, Cause: err}
}

// asRefusal is the refusal err is, or nil.
func asRefusal(err error) *Refusal {
	var r *Refusal
	if errors.As(err, &r) {
		return r
	}
	return nil
}

func (r *Refusal) Error() string {
	if r.Cause != nil {
		return r.Reason + ": " + r.Cause.Error()
	}
	return r.Reason
}

func (r *Refusal) Unwrap() error { return r.Cause }

// because records what was refused, for the log.
func (r *Refusal) because(err error) *Refusal { r.Cause = err; return r }

// detailed adds the detail folded away under the reason.
func (r *Refusal) detailed(d string) *Refusal { r.Detail = d; return r }

// onPage answers a request without JavaScript: the form's screen again
// with the reason, or a redirect with it as a flash (admin).
func (r *Refusal) onPage(f func(*Refusal) error) *Refusal { r.page = f; return r }

// onFragment answers htmx where the form says the reason in place (search's
// results region) rather than in the alert.
func (r *Refusal) onFragment(f func(*Refusal) error) *Refusal { r.fragment = f; return r }

// onAPI answers the API in a shape of its own (POST /api/chat's
// ChatResponse) rather than the error shape.
func (r *Refusal) onAPI(f func(*Refusal) error) *Refusal { r.api = f; return r }

// answer writes the error handler's answer to r for this request: its
// hook for the request's surface, else the JSON error, the alert or the
// error page. A hook that fails (the screen's own reads) is answered as any
// error.
func (h *Handlers) answer(c *fiber.Ctx, r *Refusal) error {
	var hook func(*Refusal) error
	switch {
	case isAPI(c):
		if hook = r.api; hook == nil {
			return c.Status(r.Status).JSON(apiError{ErrMsg: r.Reason, ErrCode: r.Status})
		}
	case isFragment(c):
		if hook = r.fragment; hook == nil {
			c.Set("HX-Reswap", "none")
			return render(c, r.Status, views.Alert(r.Reason))
		}
	default:
		if hook = r.page; hook == nil {
			return render(c, r.Status, views.Error(views.ErrorScreen{Base: h.base(c, "Error", ""), Status: r.Status, Message: r.Reason}))
		}
	}
	if err := hook(r); err != nil {
		if again := asRefusal(err); again != nil { // a hook answers; its own refusal gets the plain answer
			return h.answer(c, &Refusal{Status: again.Status, Reason: again.Reason, Detail: again.Detail, Cause: again.Cause})
		}
		return h.errorHandler(c, err)
	}
	return nil
}
