package handlers

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/screens"
	"palaver/views"
)

// Branches in the chat screen (issue 11): editing a user message and
// regenerating a reply both fork the conversation there and run a turn in
// the fork; the original stays as it was. htmx tabs get the new branch's
// screen at once (the reply streams over /live), its address pushed;
// without JavaScript the answer waits for the reply and goes there (303).

// chatBranchMessage reads /chat/message/{id}/…: a message of one of the
// user's general chats (another user's, one of a page or job chat, a
// missing one: 404, before anything is made) in its log (an error row has
// no place to branch from) of the role the control acts on (else 400).
func (h *Handlers) chatBranchMessage(c *fiber.Ctx, role string) (*models.Message, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return nil, err
	}
	ctx, userID := c.UserContext(), currentUser(c).ID
	m, err := h.store.Message(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	if _, err := h.screens.GeneralExchange(ctx, userID, m.ExchangeID); err != nil {
		return nil, err
	}
	if m.Seq == nil || m.Role != role {
		what := map[string]string{models.RoleUser: "one of your messages", models.RoleAssistant: "a reply"}[role]
		return nil, fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("Message %d is not %s.", id, what))
	}
	return m, nil
}

// chatEditForm is the form that edits a user message, holding its text:
// for htmx the form alone (put under the message), otherwise a page of its
// own.
func (h *Handlers) chatEditForm(c *fiber.Ctx) error {
	m, err := h.chatBranchMessage(c, models.RoleUser)
	if err != nil {
		return err
	}
	return h.chatEditAnswer(c, fiber.StatusOK, screens.EditForm(h.viewer(c), m, m.Content))
}

// chatEditAnswer shows the edit form: alone for htmx, on a page otherwise.
func (h *Handlers) chatEditAnswer(c *fiber.Ctx, status int, f views.EditForm) error {
	return fragmentOrFull(c,
		func() error { return render(c, status, views.EditMessageForm(f)) },
		func() error { return render(c, status, views.EditScreenView(screens.EditScreen(h.viewer(c), f))) })
}

// chatEdit sends the edited message: a fork at seq that continues with the
// new text, and a turn that answers it. Text a send would refuse (empty,
// over-long) is refused the same way, 400, in the form, and nothing is
// made.
func (h *Handlers) chatEdit(c *fiber.Ctx) error {
	m, err := h.chatBranchMessage(c, models.RoleUser)
	if err != nil {
		return err
	}
	query := c.FormValue("query")
	if err := agents.ValidateQuery(query); err != nil {
		reason := err.Error()
		if strings.TrimSpace(query) == "" {
			reason = "Type the new text of your message before sending." // the API's "No query provided", for people
		}
		show := func(r *Refusal) error {
			f := screens.EditForm(h.viewer(c), m, query)
			f.Error = r.Reason
			return h.chatEditAnswer(c, r.Status, f)
		}
		return refuse(fiber.StatusBadRequest, reason).because(err).onFragment(show).onPage(show)
	}
	turn, _, err := h.agents.StartFork(c.UserContext(), agents.ForkRequest{
		UserID: currentUser(c).ID, ExchangeID: m.ExchangeID, Seq: *m.Seq, Query: query, AgentType: agents.AgentAuto,
	})
	if err != nil {
		return err
	}
	return h.chatToBranch(c, turn, views.NoticeEdited)
}
