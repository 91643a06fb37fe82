package handlers

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
)

// apiAcceptPayload is the optional body of a proposal accept.
type apiAcceptPayload struct {
	Sections *[]string `json:"sections"` // nil: the whole proposal
}

// apiProposalAccept applies a proposal to its page: the whole of it, or for
// a section patch the sections named in {sections: [...]} (headings, with
// or without '#', or "(preamble)"). 200 with the page. A message that is not
// a proposal made in one of this page's chats names no proposal: 404, like a
// missing one. Stale, or applied before: 409. Sections on a full
// replacement, an empty list or a heading the proposal does not change: 400.
func (h *Handlers) apiProposalAccept(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	messageID, err := pathID(c, "message_id")
	if err != nil {
		return err
	}
	var in apiAcceptPayload
	if len(strings.TrimSpace(string(c.Body()))) > 0 {
		if err := apiDecode(c, &in); err != nil {
			return err
		}
	}
	var chosen []string
	if in.Sections != nil {
		chosen = append([]string{}, *in.Sections...)
	}
	p, err := h.store.AcceptProposal(c.UserContext(), currentUser(c).ID, id, messageID,
		func(content string, m *models.Message) (string, error) {
			return agents.ApplyProposal(content, m, chosen)
		})
	if err != nil {
		return err
	}
	h.publishPage(currentUser(c).ID, p.ID)
	return c.JSON(newAPIPage(p))
}
