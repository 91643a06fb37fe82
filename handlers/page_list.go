package handlers

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/agents/sections"
	"palaver/paths"
	"palaver/views"
)

// pagesList shows the user's pages and the form that creates one.
func (h *Handlers) pagesList(c *fiber.Ctx) error {
	p, err := h.pagesPage(c, views.PageForm{})
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.Pages(p))
}

// pageCreate creates a page from the form and opens it in the editor; a
// form without a title comes back with the reason and what was typed.
func (h *Handlers) pageCreate(c *fiber.Ctx) error {
	title := strings.TrimSpace(c.FormValue("title"))
	// Browsers send a text area's lines with CRLF; a new page gets LF.
	content := sections.WithLineEnding(c.FormValue("content"), "\n")
	if msg := pageTitleProblem(title); msg != "" {
		p, err := h.pagesPage(c, views.PageForm{Title: title, Content: content, Error: msg})
		if err != nil {
			return err
		}
		return render(c, fiber.StatusUnprocessableEntity, views.Pages(p))
	}
	page, err := h.store.CreatePage(c.UserContext(), currentUser(c).ID, title, content)
	if err != nil {
		return err
	}
	return redirect(c, paths.PageEdit(page.ID))
}

// pagesPage builds the /pages screen around the create form f.
func (h *Handlers) pagesPage(c *fiber.Ctx, f views.PageForm) (views.PagesPage, error) {
	pages, err := h.store.ListPages(c.UserContext(), currentUser(c).ID)
	if err != nil {
		return views.PagesPage{}, err
	}
	now := time.Now()
	p := views.PagesPage{Base: h.base(c, "Pages", "pages"), Form: f}
	p.Form.CSRF = p.CSRF
	for _, pg := range pages {
		p.Pages = append(p.Pages, views.PageListItem{
			ID: pg.ID, Title: pg.Title, Revisions: pg.Revisions,
			Updated: views.RelativeTime(pg.UpdatedAt, now), UpdatedFull: pg.UpdatedAt.In(now.Location()).Format(time.RFC3339),
		})
	}
	return p, nil
}

// pageTitleProblem says what is wrong with a page title, or "".
func pageTitleProblem(title string) string {
	switch {
	case title == "":
		return "Give the page a title."
	case utf8.RuneCountInString(title) > maxTitleLength:
		return fmt.Sprintf("A title can be at most %d characters.", maxTitleLength)
	}
	return ""
}
