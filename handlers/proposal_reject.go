package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/paths"
)

// proposalReject dismisses a proposal, stale ones included: its id joins the
// page's dismissed ones in the session, and the rejection is recorded for
// good, so no reload brings the card back. Without JavaScript it answers 303
// to the editor; htmx removes the card (hx-swap="delete").
func (h *Handlers) proposalReject(c *fiber.Ctx) error {
	p, err := h.pageParam(c)
	if err != nil {
		return err
	}
	messageID, err := pathID(c, "msg")
	if err != nil {
		return err
	}
	if err := h.store.RejectProposal(c.UserContext(), currentUser(c).ID, p.ID, messageID); err != nil {
		return err
	}
	h.dismiss(c.UserContext(), p.ID, messageID)
	return done(c, paths.PageEdit(p.ID), removed(c))
}
