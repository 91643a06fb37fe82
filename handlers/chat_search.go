package handlers

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"palaver/paths"
	"palaver/views"
)

// chatSearch searches the user's conversations. htmx (the sidebar's box, as
// the person types) gets the results region's content; without JavaScript
// the form lands here and gets the results screen. An empty box is no
// search: htmx gets an empty region (the history shows again), a browser the
// chat. A query the search refuses (too long) is said where the hits would be.
func (h *Handlers) chatSearch(c *fiber.Ctx) error {
	text := c.Query("q")
	if strings.TrimSpace(text) == "" {
		return fragmentOrFull(c, removed(c), func() error { return redirect(c, paths.ChatHome) })
	}
	status := fiber.StatusOK
	var res views.SearchResults
	q, err := searchQuery(c)
	var refused *fiber.Error
	switch {
	case errors.As(err, &refused) && refused.Code == fiber.StatusBadRequest:
		status, res = refused.Code, views.SearchResults{Query: text, Error: refused.Message + "."}
	case err != nil:
		return err
	default:
		if res, err = h.screens.Search(c.UserContext(), h.viewer(c), text, q); err != nil {
			return err
		}
	}
	return fragmentOrFull(c, func() error { return render(c, status, views.SearchResultsView(res)) }, func() error {
		res.More = false // a screen of its own: the list with its frame
		side, err := h.chatSidebar(c)
		if err != nil {
			return err
		}
		return render(c, status, views.Search(views.SearchScreen{Base: h.base(c, "Search", "chat"), Sidebar: side, Results: res}))
	})
}

// chatSidebar is the sidebar of a chat screen that shows no conversation
// (search, archived), the current one marked.
func (h *Handlers) chatSidebar(c *fiber.Ctx) (views.Sidebar, error) {
	current := h.chatCurrentID(c)
	return h.screens.Sidebar(c.UserContext(), h.viewer(c), current, nil)
}
