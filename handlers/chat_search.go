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
// From inside a project (?project_id=, another's: 404) it searches that
// project's chats, unless "All chats" (?all=1) is ticked.
func (h *Handlers) chatSearch(c *fiber.Ctx) error {
	text := c.Query("q")
	if strings.TrimSpace(text) == "" {
		return fragmentOrFull(c, removed(c), func() error { return redirect(c, paths.ChatHome) })
	}
	project, err := h.projectParam(c)
	if err != nil {
		return err
	}
	var from *views.SearchScope
	if project != nil {
		if from, err = h.screens.SearchScope(c.UserContext(), h.viewer(c), *project); err != nil {
			return err
		}
	}
	q, err := searchQuery(c)
	if err != nil {
		return h.searchRefused(c, text, err)
	}
	scope := from
	if c.Query("all") != "" {
		scope = nil
	}
	if scope != nil {
		q.ProjectID = &scope.ProjectID
	}
	res, err := h.screens.Search(c.UserContext(), h.viewer(c), text, q, scope)
	if err != nil {
		return err
	}
	return h.searchAnswer(c, fiber.StatusOK, res, from)
}

// searchRefused refuses a query the search cannot run (too long: the
// parameters' 400) where the hits would be: in the region for htmx, on the
// results screen without JavaScript. Any other err is returned as it is.
func (h *Handlers) searchRefused(c *fiber.Ctx, text string, err error) error {
	var fe *fiber.Error
	if !errors.As(err, &fe) || fe.Code != fiber.StatusBadRequest {
		return err
	}
	show := func(r *Refusal) error {
		return h.searchAnswer(c, r.Status, views.SearchResults{Query: text, Error: r.Reason + "."}, nil)
	}
	return refuse(fe.Code, fe.Message).because(err).onFragment(show).onPage(show)
}

// searchAnswer shows results: the region for htmx, a screen of its own
// (the list with its frame) otherwise.
func (h *Handlers) searchAnswer(c *fiber.Ctx, status int, res views.SearchResults, from *views.SearchScope) error {
	return fragmentOrFull(c, func() error { return render(c, status, views.SearchResultsView(res)) }, func() error {
		res.More = false
		side, err := h.chatSidebar(c)
		if err != nil {
			return err
		}
		return render(c, status, views.Search(views.SearchScreen{Base: h.base(c, "Search", "chat"), Sidebar: side, Results: res, Project: from}))
	})
}
