package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/views"
)

// pageRevision shows an earlier revision against the page's text now, so
// that a person sees what a restore changes before making it: a fragment
// for the editor's revision list (htmx), a page of its own without
// JavaScript.
func (h *Handlers) pageRevision(c *fiber.Ctx) error {
	p, err := h.pageParam(c)
	if err != nil {
		return err
	}
	rev, err := pathID(c, "rev")
	if err != nil {
		return err
	}
	d, err := h.screens.RevisionDiff(c.UserContext(), h.viewer(c), p, rev)
	if err != nil {
		return err
	}
	if isFragment(c) {
		return render(c, fiber.StatusOK, views.RevisionReview(d))
	}
	return render(c, fiber.StatusOK, views.RevisionPage(views.RevisionScreen{Base: h.base(c, "Revision of "+p.Title, "pages"), Diff: d}))
}
