package handlers

import (
	"fmt"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
)

// apiJobFeedback rates the latest reply of the user's chat about a job, as
// Galaxy's job-chat route takes it: PUT /api/chat/{job_id}/feedback with
// feedback=0 or 1 in the query string.
func (h *Handlers) apiJobFeedback(c *fiber.Ctx) error {
	fb, err := apiQueryInt(c, "feedback", models.FeedbackDown, models.FeedbackUp, "0 (thumbs down) or 1 (thumbs up)")
	if err != nil {
		return err
	}
	if fb == nil {
		return fiber.NewError(fiber.StatusBadRequest, "feedback must be 0 (thumbs down) or 1 (thumbs up)")
	}
	jobID, err := pathJobID(c)
	if err != nil {
		return err
	}
	if _, err := h.store.SetJobFeedback(c.UserContext(), currentUser(c).ID, jobID, *fb); err != nil {
		return err // ErrNoAssistantMessage: 409
	}
	return c.JSON(apiFeedbackResponse{Message: "Feedback saved", Feedback: *fb})
}

// pathJobID reads the job id from the path, where a client percent-encodes
// the characters a path cannot hold. Anything that is not a job id names no
// chat, so it answers 404 exactly as a job without one does.
func pathJobID(c *fiber.Ctx) (string, error) {
	id, err := url.PathUnescape(c.Params("job_id"))
	if err != nil || !validJobID(id) {
		return "", fmt.Errorf("job %q: %w", c.Params("job_id"), models.ErrNotFound)
	}
	return id, nil
}
