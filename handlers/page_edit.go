package handlers

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents/sections"
	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// pageOpen sends /pages/{id} to the page's editor.
func (h *Handlers) pageOpen(c *fiber.Ctx) error {
	p, err := h.pageParam(c)
	if err != nil {
		return err
	}
	return redirect(c, paths.PageEdit(p.ID))
}

// pageEdit shows the editor and, beside it, the chat panel on the page's
// current conversation.
func (h *Handlers) pageEdit(c *fiber.Ctx) error {
	p, err := h.pageParam(c)
	if err != nil {
		return err
	}
	v, err := h.pageEditScreen(c, p)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.PageEdit(v))
}

// pageSave saves the editor: content and title, as a revision by the user.
// Without JavaScript it answers 303 to the editor; htmx gets the status,
// preview, revisions and proposal cards out of band (the text being typed
// is left alone).
func (h *Handlers) pageSave(c *fiber.Ctx) error {
	p, err := h.pageParam(c)
	if err != nil {
		return err
	}
	if !c.Request().PostArgs().Has("content") {
		return fiber.NewError(fiber.StatusBadRequest, "The form has no content field.")
	}
	// Browsers send a text area's lines with CRLF: keep the page's own.
	content := sections.WithLineEnding(c.FormValue("content"), sections.LineEnding(p.Content))
	title := p.Title
	if c.Request().PostArgs().Has("title") {
		title = strings.TrimSpace(c.FormValue("title"))
	}
	if msg := pageTitleProblem(title); msg != "" {
		return refuse(fiber.StatusUnprocessableEntity, msg).onPage(func(r *Refusal) error {
			v, err := h.pageEditScreen(c, p)
			if err != nil {
				return err
			}
			v.Editor.Title, v.Editor.Content, v.Editor.Error = title, content, r.Reason
			return render(c, r.Status, views.PageEdit(v))
		})
	}
	status := "No changes to save"
	if content != p.Content || title != p.Title {
		if p, err = h.store.UpdatePage(c.UserContext(), currentUser(c).ID, p.ID, &title, content); err != nil {
			return err
		}
		h.publishPage(currentUser(c).ID, p.ID)
		status = pageStatus("Saved")
	}
	return done(c, paths.PageEdit(p.ID), func() error { return h.pageSaved(c, p, status, false) })
}

// pagePreview renders the posted text as the preview shows it, without
// saving anything (htmx asks for it while the person types).
func (h *Handlers) pagePreview(c *fiber.Ctx) error {
	if _, err := h.pageParam(c); err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.PagePreviewBody(h.screens.Preview(c.FormValue("content"))))
}

// pageRestore makes an earlier revision the page's content again, recorded
// as a revision of its own (edit source restore).
func (h *Handlers) pageRestore(c *fiber.Ctx) error {
	p, err := h.pageParam(c)
	if err != nil {
		return err
	}
	rev, err := pathID(c, "rev")
	if err != nil {
		return err
	}
	if p, err = h.store.RestoreRevision(c.UserContext(), currentUser(c).ID, p.ID, rev); err != nil {
		return err
	}
	h.publishPage(currentUser(c).ID, p.ID)
	return done(c, paths.PageEdit(p.ID), func() error { return h.pageSaved(c, p, pageStatus("Restored"), true) })
}

// pageDelete deletes a page with all its chats once confirmed (htmx
// confirms with the browser's dialog; a plain form first gets a
// confirmation page).
func (h *Handlers) pageDelete(c *fiber.Ctx) error {
	p, err := h.pageParam(c)
	if err != nil {
		return err
	}
	if !confirmed(c) {
		return render(c, fiber.StatusOK, views.ConfirmScreen(views.ChatConfirm{
			Base: h.base(c, "Delete page", "pages"), Heading: "Delete this page?",
			Message: "“" + p.Title + "”, its history and all the chats about it will be deleted. This cannot be undone.",
			Action:  paths.PageDelete(p.ID), Confirm: "Delete page", Cancel: paths.PageEdit(p.ID),
		}))
	}
	if _, _, err := h.store.DeletePage(c.UserContext(), currentUser(c).ID, p.ID); err != nil {
		return err
	}
	h.forgetPage(c.UserContext(), p.ID)
	return redirect(c, paths.Pages)
}

// pagePanelToggle opens or closes the chat panel (for every page: it is
// where the person wants it). htmx gets the panel in its new state.
func (h *Handlers) pagePanelToggle(c *fiber.Ctx) error {
	p, err := h.pageParam(c)
	if err != nil {
		return err
	}
	switch c.FormValue("panel") {
	case "open":
		h.sessions.Put(c.UserContext(), sessPanelClosed, false)
	case "closed":
		h.sessions.Put(c.UserContext(), sessPanelClosed, true)
	default:
		return fiber.NewError(fiber.StatusBadRequest, "panel must be open or closed.")
	}
	return h.pagePanelAnswer(c, p)
}

// pageParam is the signed-in user's page that the :id route parameter
// names. Another user's, a deleted or a missing page: 404.
func (h *Handlers) pageParam(c *fiber.Ctx) (*models.Page, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return nil, err
	}
	return h.store.Page(c.UserContext(), currentUser(c).ID, id)
}

// pageEditScreen builds the whole /pages/{id}/edit screen.
func (h *Handlers) pageEditScreen(c *fiber.Ctx, p *models.Page) (views.PageEditScreen, error) {
	st, err := h.panelState(c, p.ID)
	if err != nil {
		return views.PageEditScreen{}, err
	}
	s, err := h.screens.PageEdit(c.UserContext(), h.viewer(c), p, st)
	h.panelShown(c, p.ID, st, s.Panel)
	return s, err
}

// pagePanelFragment renders the chat panel alone.
func (h *Handlers) pagePanelFragment(c *fiber.Ctx, p *models.Page) error {
	st, err := h.panelState(c, p.ID)
	if err != nil {
		return err
	}
	panel, err := h.screens.Panel(c.UserContext(), h.viewer(c), p, st)
	if err != nil {
		return err
	}
	h.panelShown(c, p.ID, st, panel)
	return render(c, fiber.StatusOK, views.PageChat(panel))
}

// panelShown forgets the page's current conversation when the panel found
// it gone (deleted meanwhile, in another tab or through the API): the
// panel showed a new chat instead.
func (h *Handlers) panelShown(c *fiber.Ctx, pageID int64, st screens.PanelState, panel views.PagePanel) {
	if st.Open && st.Current != 0 && panel.ExchangeID == 0 {
		h.setPageExchange(c, pageID, 0)
	}
}

// pageSaved is the htmx answer after the page changed: status, preview,
// revisions and the cards of the panel's conversation; with content, the
// editor's text too.
func (h *Handlers) pageSaved(c *fiber.Ctx, p *models.Page, status string, content bool) error {
	current, err := h.pageCurrentExchange(c, p.ID)
	if err != nil {
		return err
	}
	saved, err := h.screens.PageChanged(c.UserContext(), h.viewer(c), p, current, h.dismissed(c.UserContext(), p.ID))
	if err != nil {
		return err
	}
	saved.Editor.Status, saved.Content = status, content
	return render(c, fiber.StatusOK, views.PageSavedResult(saved))
}

// pageStatus says what just happened to the page, and when.
func pageStatus(what string) string { return what + " at " + time.Now().Format("15:04") }
