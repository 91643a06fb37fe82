package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// chatPin pins a conversation, all its branches (pinned=1) or unpins it (pinned=0; absent:
// the other way round from now). Without JavaScript the browser goes back
// where it was; htmx gets the sidebar's lists again, the item in its new
// place (the Pinned group, or back among the others by its last activity).
func (h *Handlers) chatPin(c *fiber.Ctx) error {
	ex, err := h.chatExchange(c)
	if err != nil {
		return err
	}
	pinned, err := formToggle(c, "pinned", ex.Pinned)
	if err != nil {
		return err
	}
	if ex, err = h.store.UpdateFamily(c.UserContext(), currentUser(c).ID, ex.ID, models.ExchangeUpdate{Pinned: &pinned}); err != nil {
		return err
	}
	h.publishRegroup(ex)
	return done(c, chatBackTo(c, paths.Chat(ex.ID)), func() error {
		side, err := h.chatSidebar(c)
		if err != nil {
			return err
		}
		return render(c, fiber.StatusOK, views.HistoryNav(side))
	})
}

// chatArchive archives a conversation, all its branches (archived=1: out
// of the sidebar and the search) or brings it back (archived=0; absent: the other way round).
// Without JavaScript the browser goes back where it was; htmx removes the
// item where it is (hx-swap="delete"), and the user's tabs draw their
// sidebars again (publishRegroup). One brought back (from the archive's
// page, which has no live connection) comes with the sidebar, out of band.
func (h *Handlers) chatArchive(c *fiber.Ctx) error {
	ex, err := h.chatExchange(c)
	if err != nil {
		return err
	}
	archived, err := formToggle(c, "archived", ex.Archived)
	if err != nil {
		return err
	}
	if ex, err = h.store.UpdateFamily(c.UserContext(), currentUser(c).ID, ex.ID, models.ExchangeUpdate{Archived: &archived}); err != nil {
		return err
	}
	h.publishRegroup(ex)
	if archived {
		return done(c, chatBackTo(c, paths.Chat(ex.ID)), removed(c))
	}
	return done(c, chatBackTo(c, paths.Chat(ex.ID)), func() error {
		side, err := h.screens.Sidebar(c.UserContext(), h.viewer(c), 0, nil) // nothing on screen there
		if err != nil {
			return err
		}
		return render(c, fiber.StatusOK, views.HistoryNavOOB(side))
	})
}

// formToggle reads a form's 1/0 field; absent, it is the opposite of now.
func formToggle(c *fiber.Ctx, name string, now bool) (bool, error) {
	switch c.FormValue(name) {
	case "":
		return !now, nil
	case "1":
		return true, nil
	case "0":
		return false, nil
	}
	return false, fiber.NewError(fiber.StatusBadRequest, name+" must be 1 or 0.")
}
