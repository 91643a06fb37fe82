package handlers

import (
	"errors"
	"math"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/screens"
	"palaver/views"
)

// chatCurrent shows the current conversation: the one the session names, a
// new chat when it names 0, or the latest one when it names none (a fresh
// sign-in), with the history sidebar starting at ?before=.
func (h *Handlers) chatCurrent(c *fiber.Ctx) error {
	id, err := h.chatCurrentID(c)
	if err != nil {
		return err
	}
	s, err := h.chatScreen(c, id, c.Query("before"))
	if errors.Is(err, models.ErrNotFound) && id != 0 {
		// Deleted meanwhile (another tab, the API): start a new chat.
		h.sessions.Put(c.UserContext(), sessExchange, int64(0))
		s, err = h.chatScreen(c, 0, c.Query("before"))
	}
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.Chat(s))
}

// chatOpen shows one of the user's general conversations and makes it the
// current one, on its latest page of messages; ?seq= opens it on a window
// around that message, highlighted (a search hit's); ?before_seq= on the
// page before that seq (older messages without JavaScript); ?at= as it
// was at that message, counted from 1, read-only (time travel; beyond the
// log: 400).
// Another user's, a missing one, or a page or job chat: 404.
func (h *Handlers) chatOpen(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var win screens.Window
	if win.At, err = timeTravelAt(c); err != nil {
		return err
	}
	if win.Before, err = apiQueryInt(c, "before_seq", 0, math.MaxInt64, "a message's seq: an integer of at least 0"); err != nil {
		return err
	}
	if seq, ok := seqParam(c); ok {
		win.Around = &seq
	}
	cursor, err := chatCursor(c.Query("before"))
	if err != nil {
		return err
	}
	s, err := h.screens.ChatWindow(c.UserContext(), h.viewer(c), id, cursor, win)
	if err != nil {
		return err
	}
	if win.At == nil {
		h.sessions.Put(c.UserContext(), sessExchange, id)
		s.Conversation.Notice = h.sessions.PopString(c.UserContext(), sessBranchNotice)
	}
	return render(c, fiber.StatusOK, views.Chat(s))
}

// timeTravelAt reads time travel's ?at=, the number of the entry as the
// screen counts it (from 1; paths.ChatAt), and returns its seq (nil: none).
func timeTravelAt(c *fiber.Ctx) (*int64, error) {
	n, err := apiQueryInt(c, "at", 1, math.MaxInt64, "a message's number: an integer of at least 1")
	if err != nil || n == nil {
		return nil, err
	}
	seq := *n - 1
	return &seq, nil
}

// seqParam reads ?seq=, the message a search hit opens a conversation on.
// Anything but a seq is no seq: the conversation opens as usual.
func seqParam(c *fiber.Ctx) (int64, bool) {
	seq, err := strconv.ParseInt(c.Query("seq"), 10, 64)
	return seq, err == nil && seq >= 0
}

// chatScreen builds the chat screen for exchange id (0: a new chat), its
// sidebar starting after the cursor before ("": at the top).
func (h *Handlers) chatScreen(c *fiber.Ctx, id int64, before string) (views.ChatScreen, error) {
	cursor, err := chatCursor(before)
	if err != nil {
		return views.ChatScreen{}, err
	}
	return h.screens.Chat(c.UserContext(), h.viewer(c), id, cursor)
}

// chatCurrentID is the exchange /chat shows: the session's, or when the
// session has none yet, the user's most recent general exchange (0: none).
func (h *Handlers) chatCurrentID(c *fiber.Ctx) (int64, error) {
	ctx := c.UserContext()
	if h.sessions.Exists(ctx, sessExchange) {
		return h.sessions.GetInt64(ctx, sessExchange), nil
	}
	return h.screens.LatestChat(ctx, currentUser(c).ID)
}

// viewer is who the request's screens are for: the signed-in user, with
// the chrome of a full screen.
func (h *Handlers) viewer(c *fiber.Ctx) screens.Viewer {
	return screens.Viewer{UserID: currentUser(c).ID, CSRF: h.csrfToken(c), Chrome: h.base(c, "", "")}
}

// chatCursor reads a ?before= cursor; "" is the first page.
func chatCursor(before string) (*models.Cursor, error) {
	if before == "" {
		return nil, nil
	}
	cur, err := models.ParseCursor(before)
	if err != nil {
		return nil, err
	}
	return &cur, nil
}
