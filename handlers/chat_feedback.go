package handlers

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// chatFeedback rates one of the user's assistant replies: value up, down or
// none (clears the rating), and, from the comment form, a comment. A form
// without a comment field keeps the comment there was. htmx gets the
// re-rendered control; a plain form goes back to the reply.
func (h *Handlers) chatFeedback(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	value, err := chatFeedbackValue(c.FormValue("value"))
	if err != nil {
		return err
	}
	ctx, userID := c.UserContext(), currentUser(c).ID
	m, err := h.store.Message(ctx, userID, id)
	if err != nil {
		return err
	}
	comment := m.FeedbackComment
	if c.Request().PostArgs().Has("comment") {
		if comment, err = chatFeedbackComment(c.FormValue("comment")); err != nil {
			return err
		}
	}
	if m, err = h.store.SetFeedback(ctx, userID, id, value, comment); err != nil {
		return err
	}
	back, err := h.feedbackBackTo(c, m)
	if err != nil {
		return err
	}
	return done(c, paths.AtMessage(back, m.ID), func() error {
		return render(c, fiber.StatusOK, views.Feedback(screens.Feedback(h.viewer(c), m)))
	})
}

// feedbackBackTo is where a plain rating form goes back to: a page chat's
// reply to that chat in the page's editor, any other reply to its chat page
// (the one it was posted from, keeping its history cursor).
func (h *Handlers) feedbackBackTo(c *fiber.Ctx, m *models.Message) (string, error) {
	ex, err := h.store.Exchange(c.UserContext(), currentUser(c).ID, m.ExchangeID)
	if err != nil {
		return "", err
	}
	if ex.Scope == models.ScopePage && ex.PageID != nil {
		return paths.PageChatOpen(*ex.PageID, ex.ID), nil
	}
	return chatBackTo(c, paths.Chat(ex.ID)), nil
}

// chatFeedbackValue reads a posted rating: up, down, or none (nil).
func chatFeedbackValue(s string) (*int64, error) {
	var v int64
	switch s {
	case views.FeedbackUp:
		v = models.FeedbackUp
	case views.FeedbackDown:
		v = models.FeedbackDown
	case views.FeedbackNone:
		return nil, nil
	default:
		return nil, fiber.NewError(fiber.StatusBadRequest, "Feedback must be up, down or none.")
	}
	return &v, nil
}

// chatFeedbackComment reads a posted comment: trimmed, nil when empty.
func chatFeedbackComment(s string) (*string, error) {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > maxComment {
		return nil, fiber.NewError(fiber.StatusUnprocessableEntity,
			fmt.Sprintf("A comment can be at most %d characters.", maxComment))
	}
	if s == "" {
		return nil, nil
	}
	return &s, nil
}
