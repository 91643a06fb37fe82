package handlers

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/agents/sections"
	"palaver/paths"
	"palaver/views"
)

// pagesList shows the user's pages and the form that creates one.
func (h *Handlers) pagesList(c *fiber.Ctx) error {
	p, err := h.screens.Pages(c.UserContext(), h.viewer(c), views.PageForm{})
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
		return refuse(fiber.StatusUnprocessableEntity, msg).onPage(func(r *Refusal) error {
			p, err := h.screens.Pages(c.UserContext(), h.viewer(c), views.PageForm{Title: title, Content: content, Error: r.Reason})
			if err != nil {
				return err
			}
			return render(c, r.Status, views.Pages(p))
		})
	}
	page, err := h.store.CreatePage(c.UserContext(), currentUser(c).ID, title, content)
	if err != nil {
		return err
	}
	return redirect(c, paths.PageEdit(page.ID))
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
