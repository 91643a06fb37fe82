package handlers

import (
	"math"

	"github.com/gofiber/fiber/v2"

	"palaver/views"
)

// chatMessages is a window of a long transcript, as htmx loads it in place
// of a sentinel: ?before_seq= the entries before that seq (scrolling up),
// or ?after_seq= those after it (down a window opened on a search hit);
// with ?at= (time travel), read-only.
func (h *Handlers) chatMessages(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	const rule = "a message's seq: an integer of at least 0"
	before, err := apiQueryInt(c, "before_seq", 0, math.MaxInt64, rule)
	if err != nil {
		return err
	}
	after, err := apiQueryInt(c, "after_seq", -1, math.MaxInt64, rule)
	if err != nil {
		return err
	}
	if (before == nil) == (after == nil) {
		return fiber.NewError(fiber.StatusBadRequest, "Give before_seq or after_seq: the page before or after a message.")
	}
	at, err := timeTravelAt(c) // time travel's point: read-only entries
	if err != nil {
		return err
	}
	point := int64(-1)
	if at != nil {
		point = *at
	}
	p, err := h.screens.TranscriptMore(c.UserContext(), h.viewer(c), id, before, after, point)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.TranscriptPage(p))
}
