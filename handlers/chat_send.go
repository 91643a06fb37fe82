package handlers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// chatSend runs one turn from the composer. Without JavaScript it answers
// 303 to the conversation; for htmx, the new entries for the transcript and
// the out-of-band updates (sidebar, title, the composer's exchange).
func (h *Handlers) chatSend(c *fiber.Ctx) error {
	ctx, query := c.UserContext(), c.FormValue("query")
	exchangeID, err := chatFormID(c.FormValue("exchange_id"))
	if err != nil {
		return err
	}
	// htmx tabs get the user message at once and follow the reply live;
	// without JavaScript the answer waits for the reply.
	send := h.agents.Send
	if isFragment(c) {
		send = h.agents.StartResult
	}
	res, err := send(ctx, agents.SendRequest{
		UserID: currentUser(c).ID, ExchangeID: exchangeID, AgentType: agents.AgentAuto, Query: query,
	})
	var input *agents.InputError
	if errors.As(err, &input) && !isFragment(c) {
		return h.chatSendRefused(c, fiber.StatusUnprocessableEntity, exchangeID, query, input.Msg)
	}
	if errors.Is(err, agents.ErrTooManyTurns) && !isFragment(c) {
		return h.chatSendRefused(c, fiber.StatusTooManyRequests, exchangeID, query, tooManyTurnsMessage)
	}
	if err != nil {
		return err
	}
	id := res.Exchange.ID
	h.sessions.Put(ctx, sessExchange, id)
	target := paths.Chat(id)
	if !isFragment(c) {
		return c.Redirect(target, fiber.StatusSeeOther)
	}
	if !chatTabShows(c, target) {
		c.Set("HX-Push-Url", target)
	}
	return render(c, fiber.StatusOK, views.ChatSendResult(h.chatSent(c, res, exchangeID == 0)))
}

// chatSendRefused shows the chat page again with the reason next to the
// composer and the typed text kept (a send without JavaScript).
func (h *Handlers) chatSendRefused(c *fiber.Ctx, status int, exchangeID int64, query, reason string) error {
	p, err := h.chatPage(c, exchangeID, "")
	if errors.Is(err, models.ErrNotFound) {
		p, err = h.chatPage(c, 0, "")
	}
	if err != nil {
		return err
	}
	if strings.TrimSpace(query) == "" {
		reason = "Type a message before sending." // the API's "No query provided", for people
	}
	p.Composer.Query, p.Composer.Error = query, reason
	return render(c, status, views.Chat(p))
}

// tooManyTurnsMessage tells a person at the running-turn limit what to do;
// htmx tabs get the same through the error handler's alert.
const tooManyTurnsMessage = "Four replies are already being written for you. Wait for one to finish, or stop one, then send again; your text is kept here."

// chatSent maps a finished turn to the htmx answer.
func (h *Handlers) chatSent(c *fiber.Ctx, res *agents.TurnResult, isNew bool) views.ChatSent {
	csrf := h.csrfToken(c)
	s := views.ChatSent{
		ExchangeID: res.Exchange.ID,
		Title:      chatTitle(res.Exchange),
		New:        isNew,
		Item:       chatHistoryItem(res.Exchange, res.Exchange.ID, time.Now(), csrf),
	}
	s.Item.Group = ""                         // it goes right under the Today header
	if res.Reply == nil && res.Query != nil { // still being written: it follows live
		s.Pending = &res.Query.ID
	}
	for _, m := range []*models.Message{res.Query, res.Reply} {
		if m == nil {
			continue
		}
		if v, ok := h.chatMessage(m, csrf); ok {
			s.Messages = append(s.Messages, v)
		}
	}
	return s
}

// chatFormID reads an optional id form field: "" or "0" is none.
func chatFormID(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 0 {
		return 0, fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("Invalid exchange_id %q", s))
	}
	return id, nil
}
