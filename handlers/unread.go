package handlers

import (
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
)

// Unread marks (issue 28): opening a conversation marks it read on every
// device; the sidebar's menus mark one unread (or read) and all read; the
// JSON API does the same. Each change reaches the user's open tabs as an
// EventRead, which redraws the item (or the sidebar) and the title's count.

// publishRead tells the user's tabs that the read marks of an exchange (0:
// of any number) changed.
func (h *Handlers) publishRead(userID, exchangeID int64) {
	// Other processes' tabs hear it from the store's notification.
	h.hub.Publish(agents.ReadEvent(context.Background(), h.store, userID, exchangeID))
}

// markSeen marks the user's exchange read as it is opened. A missing one
// is left to the screen's own 404.
func (h *Handlers) markSeen(c *fiber.Ctx, exchangeID int64) error {
	userID := currentUser(c).ID
	changed, err := h.store.MarkRead(c.UserContext(), userID, exchangeID, nil, h.now())
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if changed {
		h.publishRead(userID, exchangeID)
	}
	return err
}

// readMarked ends a mark's request: nothing for htmx (the live connection
// redraws every tab), the chat again without JavaScript.
func readMarked(c *fiber.Ctx) error {
	if c.Get("HX-Request") == "true" {
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Redirect(paths.ChatHome, fiber.StatusSeeOther)
}

// chatRead marks a conversation read (its sidebar menu).
func (h *Handlers) chatRead(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	changed, err := h.store.MarkRead(c.UserContext(), currentUser(c).ID, id, nil, h.now())
	if err != nil {
		return err
	}
	if changed {
		h.publishRead(currentUser(c).ID, id)
	}
	return readMarked(c)
}

// chatUnread marks a conversation unread (its sidebar menu).
func (h *Handlers) chatUnread(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.store.MarkUnread(c.UserContext(), currentUser(c).ID, id, h.now()); err != nil {
		return err
	}
	h.publishRead(currentUser(c).ID, id)
	return readMarked(c)
}

// chatReadAll marks every conversation read (the sidebar's foot).
func (h *Handlers) chatReadAll(c *fiber.Ctx) error {
	n, err := h.store.MarkAllRead(c.UserContext(), currentUser(c).ID, h.now())
	if err != nil {
		return err
	}
	if n > 0 {
		h.publishRead(currentUser(c).ID, 0)
	}
	return readMarked(c)
}

// apiRead marks an exchange read up to the body's seq (default: its last
// entry).
func (h *Handlers) apiRead(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var p struct {
		Seq *int64 `json:"seq"`
	}
	if len(c.Body()) > 0 {
		if err := apiDecode(c, &p); err != nil {
			return err
		}
	}
	if p.Seq != nil && *p.Seq < 0 {
		return fiber.NewError(fiber.StatusBadRequest, `"seq" must be an entry's seq: an integer of at least 0`)
	}
	changed, err := h.store.MarkRead(c.UserContext(), currentUser(c).ID, id, p.Seq, h.now())
	if err != nil {
		return err
	}
	if changed {
		h.publishRead(currentUser(c).ID, id)
	}
	return c.JSON(apiNotice{Message: "Marked read"})
}

// apiUnread marks an exchange unread.
func (h *Handlers) apiUnread(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.store.MarkUnread(c.UserContext(), currentUser(c).ID, id, h.now()); err != nil {
		return err
	}
	h.publishRead(currentUser(c).ID, id)
	return c.JSON(apiNotice{Message: "Marked unread"})
}
