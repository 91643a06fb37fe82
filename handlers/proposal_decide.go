package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
)

// proposalDecide is the answer to a proposal of the page assistant, the
// Accept or the Reject of its card. Accept applies it to its page on the
// server: all of it, or for a section patch the checked sections (the
// form's pick=1 says a choice was made, so that checking none is refused
// rather than taken for all); a stale proposal answers 409 and changes
// nothing. Reject dismisses it, stale ones included: the rejection is
// recorded for good (and in the session), so no reload brings the card
// back. Either leaves a short note where the card was ("Applied",
// "Rejected"), in every tab that shows it. Without JavaScript it answers
// 303 to the proposal; htmx gets the editor's status, preview, revisions
// and every card of the chat out of band, and the editor's text once
// accepted.
func (h *Handlers) proposalDecide(accept bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, err := h.pageParam(c)
		if err != nil {
			return err
		}
		messageID, err := pathID(c, "msg")
		if err != nil {
			return err
		}
		ctx, userID, status := c.UserContext(), currentUser(c).ID, "Rejected"
		if accept {
			status = "Applied"
			p, err = h.store.AcceptProposal(ctx, userID, p.ID, messageID, func(content string, m *models.Message) (string, error) {
				return agents.ApplyProposal(content, m, proposalSections(c))
			})
		} else if err = h.store.RejectProposal(ctx, userID, p.ID, messageID); err == nil {
			h.dismiss(ctx, p.ID, messageID)
		}
		if err != nil {
			return err
		}
		h.publishPage(userID, p.ID)
		return done(c, paths.AtMessage(paths.PageEdit(p.ID), messageID), func() error {
			return h.pageSaved(c, p, pageStatus(status), accept)
		})
	}
}

// proposalSections are the sections an Accept applies: the checked ones
// when the form made a choice (pick=1), else nil (all of them).
func proposalSections(c *fiber.Ctx) []string {
	if c.FormValue("pick") != "1" {
		return nil
	}
	return formValues(c, "sections")
}

// formValues are all the values of a repeated form field (never nil).
func formValues(c *fiber.Ctx, name string) []string {
	out := []string{}
	for _, v := range c.Request().PostArgs().PeekMulti(name) {
		out = append(out, string(v)) // a copy: fasthttp reuses its buffers
	}
	return out
}
