package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
)

// proposalAccept applies a proposal to its page on the server: all of it,
// or for a section patch the checked sections (the form's pick=1 says a
// choice was made, so that checking none is refused rather than taken for
// all). A stale proposal answers 409 and changes nothing. Without
// JavaScript it answers 303 to the proposal; htmx gets the editor's text,
// preview, revisions and every card of the chat out of band (the accepted
// one now a note that it was applied).
func (h *Handlers) proposalAccept(c *fiber.Ctx) error {
	p, err := h.pageParam(c)
	if err != nil {
		return err
	}
	messageID, err := pathID(c, "msg")
	if err != nil {
		return err
	}
	var chosen []string
	if c.FormValue("pick") == "1" {
		chosen = formValues(c, "sections")
	}
	p, err = h.store.AcceptProposal(c.UserContext(), currentUser(c).ID, p.ID, messageID,
		func(content string, m *models.Message) (string, error) {
			return agents.ApplyProposal(content, m, chosen)
		})
	if err != nil {
		return err
	}
	h.publishPage(currentUser(c).ID, p.ID)
	return done(c, paths.AtMessage(paths.PageEdit(p.ID), messageID), func() error {
		return h.pageSaved(c, p, pageStatus("Applied"), true)
	})
}

// formValues are all the values of a repeated form field (never nil).
func formValues(c *fiber.Ctx, name string) []string {
	out := []string{}
	for _, v := range c.Request().PostArgs().PeekMulti(name) {
		out = append(out, string(v)) // a copy: fasthttp reuses its buffers
	}
	return out
}
