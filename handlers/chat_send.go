package handlers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// chatSend runs one turn from the composer. Without JavaScript it answers
// 303 to the conversation; for htmx, the new entries for the transcript and
// the out-of-band updates (sidebar, title, the composer's exchange).
func (h *Handlers) chatSend(c *fiber.Ctx) error {
	query := c.FormValue("query")
	exchangeID, err := chatFormID(c.FormValue("exchange_id"))
	if err != nil {
		return err
	}
	afterSeq, err := chatAfterSeq(c.FormValue("after_seq"), exchangeID)
	if err != nil {
		return err
	}
	model, err := composerModel(c)
	if err != nil {
		return err
	}
	files, err := h.composerAttachments(c, query)
	if err != nil {
		return err
	}
	res, err := h.sendTurn(c, agents.SendRequest{
		UserID: currentUser(c).ID, ExchangeID: exchangeID, AgentType: agents.AgentAuto, Query: query, AfterSeq: afterSeq,
		Attachments: files, Model: model,
		Temporary: exchangeID == 0 && c.FormValue("temporary") == "1", // a new chat only
	})
	if err != nil {
		return formRefusal(err, func(status int, reason string) error {
			return h.chatSendRefused(c, status, exchangeID, query, reason)
		})
	}
	if res.Forked {
		// The log had moved past what the tab showed: the message started
		// a branch of its own, which the tab moves to.
		return h.chatBranchScreen(c, res.Exchange.ID, views.NoticeStale)
	}
	h.sessions.Put(c.UserContext(), sessExchange, res.Exchange.ID)
	target := paths.Chat(res.Exchange.ID)
	return done(c, target, func() error {
		if !chatTabShows(c, target) {
			c.Set("HX-Push-Url", target)
		}
		sent, err := h.chatSent(c, res, exchangeID == 0)
		if err != nil {
			return err
		}
		return render(c, fiber.StatusOK, views.ChatSendResult(sent))
	})
}

// formRefusal refuses a composer's send (the text, or the user's running
// turns at their limit): htmx gets the alert with the error's own status and
// words; without JavaScript, page shows the screen again with the reason
// beside the composer, 422 (a form to correct) or 429. Any other err is
// returned as it is.
func formRefusal(err error, page func(status int, reason string) error) error {
	var input *agents.InputError
	var status int
	var reason string
	switch {
	case errors.As(err, &input):
		status, reason = fiber.StatusUnprocessableEntity, input.Msg
	case errors.Is(err, agents.ErrTooManyTurns):
		status, reason = fiber.StatusTooManyRequests, tooManyTurnsMessage
	default:
		return err
	}
	return refusalOf(err, fiber.StatusBadRequest, fiber.StatusTooManyRequests).
		onPage(func(*Refusal) error { return page(status, reason) })
}

// chatSendRefused shows the chat page again with the reason next to the
// composer and the typed text kept (a send without JavaScript).
func (h *Handlers) chatSendRefused(c *fiber.Ctx, status int, exchangeID int64, query, reason string) error {
	p, err := h.chatScreen(c, exchangeID, "")
	if errors.Is(err, models.ErrNotFound) {
		p, err = h.chatScreen(c, 0, "")
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
func (h *Handlers) chatSent(c *fiber.Ctx, res *agents.TurnResult, isNew bool) (views.ChatSent, error) {
	v := h.viewer(c)
	item, err := h.screens.FamilyItem(c.UserContext(), v, res.Exchange, res.Exchange.ID) // the family's item, this branch
	if err != nil {
		return views.ChatSent{}, err
	}
	s := views.ChatSent{
		ExchangeID: res.Exchange.ID,
		Heading:    screens.Heading(v, res.Exchange),
		New:        isNew,
		Item:       item,
		Temporary:  res.Exchange.Temporary,
		CSRF:       v.CSRF,
	}
	s.Item.Group = ""                         // it goes right under the Today header
	if res.Reply == nil && res.Query != nil { // still being written: it follows live
		s.Pending = &res.Query.ID
	}
	var msgs []models.Message
	for _, m := range []*models.Message{res.Query, res.Reply} {
		if m != nil {
			msgs = append(msgs, *m)
		}
	}
	s.Messages, _, err = h.screens.NewEntries(c.UserContext(), v, res.Exchange, msgs) // as the live tab and a reload show them
	return s, err
}

// chatAfterSeq reads the composer's after_seq, the last seq its tab shows
// of exchangeID's log: "" (or a new chat) is none; anything but a number
// of at least -1 is a 400.
func chatAfterSeq(s string, exchangeID int64) (*int64, error) {
	if s == "" || exchangeID == 0 {
		return nil, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < -1 {
		return nil, fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("Invalid after_seq %q", s))
	}
	return &n, nil
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

// composerModel is the composer's picked model (0: none picked, the
// default), for the chat's composer and the page panel's alike.
func composerModel(c *fiber.Ctx) (int64, error) {
	m := c.FormValue("model")
	if m == "" {
		return 0, nil
	}
	model, err := strconv.ParseInt(m, 10, 64)
	if err != nil {
		return 0, fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("Invalid model %q", m))
	}
	return model, nil
}
