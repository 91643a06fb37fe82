package handlers

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// pageChatSend runs one turn of the page's chat with the page assistant,
// which sees the page as saved. Without JavaScript it answers 303 to the
// editor; htmx gets the user message at once, the pending reply cell (the
// reply, a proposal with its card, follows live) and, out of band, the composer's exchange, the chat's title and the page's chats.
func (h *Handlers) pageChatSend(c *fiber.Ctx) error {
	p, err := h.pageParam(c)
	if err != nil {
		return err
	}
	exchangeID, err := chatFormID(c.FormValue("exchange_id"))
	if err != nil {
		return err
	}
	model, err := composerModel(c)
	if err != nil {
		return err
	}
	query := c.FormValue("query")
	files, err := h.composerAttachments(c, query)
	if err != nil {
		return err
	}
	res, err := h.sendTurn(c, agents.SendRequest{
		UserID: currentUser(c).ID, PageID: &p.ID, ExchangeID: exchangeID, AgentType: agents.AgentAuto, Query: query,
		Attachments: files, Model: model,
	})
	if err != nil {
		return formRefusal(err, func(status int, reason string) error { return h.pageChatRefused(c, status, p, query, reason) })
	}
	h.setPageExchange(c, p.ID, res.Exchange.ID)
	return done(c, paths.PageEdit(p.ID), func() error { return h.pageChatSent(c, p, res) })
}

// pageChatSent is the htmx answer to a page chat's send.
func (h *Handlers) pageChatSent(c *fiber.Ctx, p *models.Page, res *agents.TurnResult) error {
	var msgs []models.Message
	for _, m := range []*models.Message{res.Query, res.Reply} {
		if m != nil {
			msgs = append(msgs, *m)
		}
	}
	ctx, v := c.UserContext(), h.viewer(c)
	entries, err := h.screens.PageEntries(ctx, v, p, msgs, h.dismissed(ctx, p.ID))
	if err != nil {
		return err
	}
	panel := views.PagePanel{PageID: p.ID, ExchangeID: res.Exchange.ID, Title: screens.ChatTitle(res.Exchange), CSRF: v.CSRF}
	if panel.Chats, err = h.screens.PageChats(ctx, v, p, res.Exchange.ID); err != nil {
		return err
	}
	var pending *int64
	if res.Reply == nil && res.Query != nil { // still being written: it follows live
		pending = &res.Query.ID
	}
	return render(c, fiber.StatusOK, views.PageChatSent(panel, entries, pending))
}

// pageChatRefused shows the editor again with the reason next to the
// panel's composer and the typed text kept (a send without JavaScript).
func (h *Handlers) pageChatRefused(c *fiber.Ctx, status int, p *models.Page, query, reason string) error {
	v, err := h.pageEditScreen(c, p)
	if err != nil {
		return err
	}
	if strings.TrimSpace(query) == "" {
		reason = "Type a message before sending."
	}
	v.Panel.Open = true
	v.Panel.Composer.Query, v.Panel.Composer.Error = query, reason
	return render(c, status, views.PageEdit(v))
}

// pageChatNew starts a new chat about the page.
func (h *Handlers) pageChatNew(c *fiber.Ctx) error {
	p, err := h.pageParam(c)
	if err != nil {
		return err
	}
	h.setPageExchange(c, p.ID, 0)
	return h.pagePanelAnswer(c, p)
}

// pageChatOpen makes one of the page's chats the one its panel shows, the
// panel open; ?seq= highlights that message (a search hit's).
// Another page's chat, a general one or another user's: 404.
func (h *Handlers) pageChatOpen(c *fiber.Ctx) error {
	p, ex, err := h.pageChatParams(c)
	if err != nil {
		return err
	}
	h.setPageExchange(c, p.ID, ex.ID)
	// Opening a chat shows it: a link here (a search hit, a revision's
	// proposal) opens the panel if it was closed.
	h.sessions.Put(c.UserContext(), sessPanelClosed, false)
	seq, highlight := seqParam(c)
	return fragmentOrFull(c, func() error { return h.pagePanelFragment(c, p) }, func() error {
		v, err := h.pageEditScreen(c, p)
		if err != nil {
			return err
		}
		if highlight {
			screens.HighlightEntries(v.Panel.Entries, seq)
		}
		return render(c, fiber.StatusOK, views.PageEdit(v))
	})
}

// pageChatDelete deletes one of the page's chats once confirmed.
func (h *Handlers) pageChatDelete(c *fiber.Ctx) error {
	p, ex, err := h.pageChatParams(c)
	if err != nil {
		return err
	}
	edit := paths.PageEdit(p.ID)
	if !confirmed(c) {
		return render(c, fiber.StatusOK, views.ConfirmScreen(views.ChatConfirm{
			Base: h.base(c, "Delete chat", "pages"), Heading: "Delete this chat?",
			Message: "“" + screens.ChatTitle(ex) + "” and all its messages will be deleted. This cannot be undone.",
			Action:  paths.PageChatDelete(p.ID, ex.ID), Confirm: "Delete", Cancel: edit,
		}))
	}
	current, err := h.pageCurrentExchange(c, p.ID)
	if err != nil {
		return err
	}
	if _, err := h.store.DeleteExchange(c.UserContext(), currentUser(c).ID, ex.ID); err != nil {
		return err
	}
	if current == ex.ID {
		h.setPageExchange(c, p.ID, 0)
	}
	return h.pagePanelAnswer(c, p)
}

// pageChatClear deletes all the page's chats once confirmed.
func (h *Handlers) pageChatClear(c *fiber.Ctx) error {
	p, err := h.pageParam(c)
	if err != nil {
		return err
	}
	if !confirmed(c) {
		return render(c, fiber.StatusOK, views.ConfirmScreen(views.ChatConfirm{
			Base: h.base(c, "Delete the page's chats", "pages"), Heading: "Delete all the chats about this page?",
			Message: "Every chat about “" + p.Title + "” will be deleted. The page and its history stay. This cannot be undone.",
			Action:  paths.PageChatClear(p.ID), Confirm: "Delete all", Cancel: paths.PageEdit(p.ID),
		}))
	}
	if _, _, err := h.store.ClearExchanges(c.UserContext(), currentUser(c).ID, models.ScopePage, p.ID); err != nil {
		return err
	}
	h.setPageExchange(c, p.ID, 0)
	return h.pagePanelAnswer(c, p)
}

// pageChatParams are the page and the chat of it that :id and :ex name.
func (h *Handlers) pageChatParams(c *fiber.Ctx) (*models.Page, *models.Exchange, error) {
	p, err := h.pageParam(c)
	if err != nil {
		return nil, nil, err
	}
	id, err := pathID(c, "ex")
	if err != nil {
		return nil, nil, err
	}
	ex, err := h.screens.PageExchange(c.UserContext(), currentUser(c).ID, p, id)
	if err != nil {
		return nil, nil, err
	}
	return p, ex, nil
}

// pagePanelAnswer ends a panel action: 303 to the editor without
// JavaScript, the panel in its new state for htmx.
func (h *Handlers) pagePanelAnswer(c *fiber.Ctx, p *models.Page) error {
	return done(c, paths.PageEdit(p.ID), func() error { return h.pagePanelFragment(c, p) })
}
