package handlers

import (
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
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
	p, err := h.chatPage(c, id, c.Query("before"))
	if errors.Is(err, models.ErrNotFound) && id != 0 {
		// Deleted meanwhile (another tab, the API): start a new chat.
		h.sessions.Put(c.UserContext(), sessExchange, int64(0))
		p, err = h.chatPage(c, 0, c.Query("before"))
	}
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.Chat(p))
}

// chatOpen shows one of the user's general conversations and makes it the
// current one. Another user's, a missing one, or a page or job chat: 404.
func (h *Handlers) chatOpen(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	p, err := h.chatPage(c, id, c.Query("before"))
	if err != nil {
		return err
	}
	h.sessions.Put(c.UserContext(), sessExchange, id)
	return render(c, fiber.StatusOK, views.Chat(p))
}

// chatCurrentID is the exchange /chat shows: the session's, or when the
// session has none yet, the user's most recent general exchange (0: none).
func (h *Handlers) chatCurrentID(c *fiber.Ctx) (int64, error) {
	ctx := c.UserContext()
	if h.sessions.Exists(ctx, sessExchange) {
		return h.sessions.GetInt64(ctx, sessExchange), nil
	}
	latest, err := h.store.ListExchanges(ctx, currentUser(c).ID,
		models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 1})
	if err != nil || len(latest) == 0 {
		return 0, err
	}
	return latest[0].ID, nil
}

// chatPage builds the chat screen for exchange id (0: a new chat), its
// sidebar starting after the cursor before ("": at the top).
func (h *Handlers) chatPage(c *fiber.Ctx, id int64, before string) (views.ChatPage, error) {
	cursor, err := chatCursor(before)
	if err != nil {
		return views.ChatPage{}, err
	}
	conv, err := h.chatConversation(c, id)
	if err != nil {
		return views.ChatPage{}, err
	}
	list, err := h.chatHistoryList(c, id, cursor, cursor != nil)
	if err != nil {
		return views.ChatPage{}, err
	}
	title := conv.Title
	if title == "" {
		title = "New chat"
	}
	return views.ChatPage{
		Base:         h.base(c, title, "chat"),
		Conversation: conv,
		History:      list,
		Composer: views.Composer{ExchangeID: id, MaxLength: agents.MaxQueryLength, CSRF: h.csrfToken(c),
			TurnStatus: conv.TurnStatus},
	}, nil
}

// chatConversation loads a general exchange and its log for the transcript.
func (h *Handlers) chatConversation(c *fiber.Ctx, id int64) (views.Conversation, error) {
	if id == 0 {
		return views.Conversation{}, nil
	}
	ctx, userID := c.UserContext(), currentUser(c).ID
	ex, err := h.chatGeneral(c, id)
	if err != nil {
		return views.Conversation{}, err
	}
	msgs, err := h.store.Messages(ctx, userID, id, nil)
	if err != nil {
		return views.Conversation{}, err
	}
	seen, err := h.store.ExchangeAdminViews(ctx, userID, id)
	if err != nil {
		return views.Conversation{}, err
	}
	conv := views.Conversation{ID: id, Title: chatTitle(ex), Messages: h.chatMessages(c, msgs),
		AdminViewed: adminViewed(seen), TurnStatus: ex.TurnStatus}
	if n := len(conv.Messages); n > 0 && ex.TurnStatus == models.TurnFailed && conv.Messages[n-1].Role == views.RoleError {
		conv.Messages[n-1].Retry = views.RetryView{Action: paths.ChatRetry(id), CSRF: h.csrfToken(c)}
	}
	return conv, nil
}

// chatGeneral loads one of the user's general exchanges: page and job
// chats are not shown or changed through /chat, and answer 404 like others'.
func (h *Handlers) chatGeneral(c *fiber.Ctx, id int64) (*models.Exchange, error) {
	ex, err := h.store.Exchange(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return nil, err
	}
	if ex.Scope != models.ScopeGeneral {
		return nil, fmt.Errorf("chat: exchange %d is a %s chat: %w", id, ex.Scope, models.ErrNotFound)
	}
	return ex, nil
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
