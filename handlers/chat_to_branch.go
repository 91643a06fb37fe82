package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/paths"
	"palaver/views"
)

// sessBranchNotice holds, for a browser without JavaScript, the notice the
// next chat screen shows: why it is on a new branch.
const sessBranchNotice = "branch_notice"

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
