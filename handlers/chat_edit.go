package handlers

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// Branches in the chat screen (issue 11): editing a user message and
// regenerating a reply both fork the conversation there and run a turn in
// the fork; the original stays as it was. htmx tabs get the new branch's
// screen at once (the reply streams over /live), its address pushed;
// without JavaScript the answer waits for the reply and goes there (303).

// sessBranchNotice holds, for a browser without JavaScript, the notice the
// next chat screen shows: why it is on a new branch.
const sessBranchNotice = "branch_notice"

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

// chatToBranch takes the tab to the branch a turn runs in, with a notice.
// Without JavaScript it waits for the reply first, so that the page it
// goes to shows it.
func (h *Handlers) chatToBranch(c *fiber.Ctx, turn *agents.Turn, notice string) error {
	if _, err := h.awaitTurn(c, turn); err != nil {
		return err
	}
	return h.chatBranchScreen(c, turn.Exchange.ID, notice)
}

// chatBranchScreen shows the branch exchangeID, new to the tab, with a
// notice, and makes it the current conversation. htmx swaps the whole
// screen in and pushes its address; without JavaScript the browser goes
// there (303) and the notice waits in the session.
func (h *Handlers) chatBranchScreen(c *fiber.Ctx, exchangeID int64, notice string) error {
	ctx := c.UserContext()
	h.sessions.Put(ctx, sessExchange, exchangeID)
	target := paths.Chat(exchangeID)
	screen := func() error {
		s, err := h.chatScreen(c, exchangeID, "")
		if err != nil {
			return err
		}
		s.Conversation.Notice = notice
		c.Set("HX-Retarget", "body")
		c.Set("HX-Reswap", "innerHTML")
		c.Set("HX-Push-Url", target)
		return render(c, fiber.StatusOK, views.Chat(s))
	}
	if !inPlace(c, screen) { // the browser goes there: the notice waits for it
		h.sessions.Put(ctx, sessBranchNotice, notice)
	}
	return done(c, target, screen)
}
