package handlers

import (
	"errors"
	"math"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// chatCurrent goes to the current conversation (303 to its address, with
// ?before=, so that the address says where the next message goes), or
// shows a new, empty chat when there is none.
func (h *Handlers) chatCurrent(c *fiber.Ctx) error {
	ctx, id := c.UserContext(), h.chatCurrentID(c)
	if _, err := chatCursor(c.Query("before")); err != nil {
		return err // refused here, not after a redirect
	}
	if id != 0 {
		_, err := h.screens.GeneralExchange(ctx, currentUser(c).ID, id)
		if err == nil {
			return c.Redirect(paths.ChatListedFrom(id, c.Query("before")), fiber.StatusSeeOther)
		}
		if !errors.Is(err, models.ErrNotFound) {
			return err
		}
		h.sessions.Put(ctx, sessExchange, int64(0)) // deleted meanwhile (another tab, the API)
	}
	s, err := h.chatScreen(c, 0, c.Query("before"))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.Chat(s))
}

// chatOpen shows one of the user's general conversations and makes it the
// current one, on its latest batch of messages; ?seq= opens it on a window
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
	if err := h.markSeen(c, id); err != nil {
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

// chatCurrentID is the current conversation (0: a new chat): the one this
// session last opened or wrote in. Never one it did not (the latest after
// a sign-in, an import, another device's): the composer would append to a
// conversation the person did not choose.
func (h *Handlers) chatCurrentID(c *fiber.Ctx) int64 {
	return h.sessions.GetInt64(c.UserContext(), sessExchange)
}

// viewer is who the request's screens are for: the signed-in user, with
// the chrome of a full screen.
func (h *Handlers) viewer(c *fiber.Ctx) screens.Viewer {
	return screens.Viewer{UserID: currentUser(c).ID, CSRF: h.csrfToken(c), Chrome: h.base(c, "", "")}
}

// chatCursor reads a ?before= cursor; "" is the first batch.
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
