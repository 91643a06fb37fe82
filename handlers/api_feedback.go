package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
)

// apiFeedbackResponse confirms an exchange's rating.
type apiFeedbackResponse struct {
	Message  string `json:"message"`
	Feedback int64  `json:"feedback"`
}

// apiMessageFeedbackPayload is the body of PUT /api/chat/message/{id}/feedback.
type apiMessageFeedbackPayload struct {
	Feedback json.RawMessage `json:"feedback"` // nil when the key is missing, "null" to clear
	Comment  *string         `json:"comment"`
}

// apiExchangeFeedback rates the latest reply of an exchange. The body is a
// bare 0 (down) or 1 (up), as Galaxy's client sends it.
func (h *Handlers) apiExchangeFeedback(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var fb *int64
	if err := apiDecode(c, &fb); err != nil {
		return err
	}
	if fb == nil || (*fb != models.FeedbackDown && *fb != models.FeedbackUp) {
		return fiber.NewError(fiber.StatusBadRequest, "The body must be 0 (thumbs down) or 1 (thumbs up)")
	}
	if _, err := h.store.SetExchangeFeedback(c.UserContext(), currentUser(c).ID, id, *fb); err != nil {
		return err // ErrNoAssistantMessage: 409
	}
	return c.JSON(apiFeedbackResponse{Message: "Feedback saved", Feedback: *fb})
}

// apiMessageFeedback rates one assistant reply (null clears the rating) and
// sets or clears its comment; it answers with the message.
func (h *Handlers) apiMessageFeedback(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var p apiMessageFeedbackPayload
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	fb, comment, err := p.values()
	if err != nil {
		return err
	}
	m, err := h.store.SetFeedback(c.UserContext(), currentUser(c).ID, id, fb, comment)
	if errors.Is(err, models.ErrNotFound) {
		return h.apiNotRateable(c, id, err)
	}
	if err != nil {
		return err
	}
	return c.JSON(newAPIMessage(m))
}

// values checks the payload: feedback must be present and 0, 1 or null; an
// empty comment means none.
func (p apiMessageFeedbackPayload) values() (*int64, *string, error) {
	var fb *int64
	if p.Feedback == nil || json.Unmarshal(p.Feedback, &fb) != nil ||
		(fb != nil && *fb != models.FeedbackDown && *fb != models.FeedbackUp) {
		return nil, nil, fiber.NewError(fiber.StatusBadRequest, `"feedback" is required and must be 0, 1 or null`)
	}
	if p.Comment == nil || strings.TrimSpace(*p.Comment) == "" {
		return fb, nil, nil
	}
	if n := utf8.RuneCountInString(*p.Comment); n > maxComment {
		return nil, nil, fiber.NewError(fiber.StatusBadRequest,
			fmt.Sprintf("The comment is %d characters long; the limit is %d", n, maxComment))
	}
	return fb, p.Comment, nil
}

// apiNotRateable explains why SetFeedback found nothing to rate: the user's own
// message that is not a reply is a 400; anything else stays a 404, so that
// another user's message is indistinguishable from a missing one.
func (h *Handlers) apiNotRateable(c *fiber.Ctx, id int64, notFound error) error {
	m, err := h.store.Message(c.UserContext(), currentUser(c).ID, id)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return notFound
	case err != nil:
		return err
	}
	return fiber.NewError(fiber.StatusBadRequest,
		fmt.Sprintf("Only assistant replies can be rated, not %s messages", m.Role))
}
