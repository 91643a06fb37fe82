package handlers

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
)

// apiExchangeUpdatePayload is what PATCH /api/chat/exchange/{id} may change;
// absent fields stay as they are.
type apiExchangeUpdatePayload struct {
	Title    *string `json:"title"`
	Pinned   *bool   `json:"pinned"`
	Archived *bool   `json:"archived"`
	// ProjectID moves the chat (its family) into a project of the user's,
	// or out with null; Temporary false keeps a temporary chat.
	ProjectID optionalID `json:"project_id"`
	Temporary *bool      `json:"temporary"`
}

// apiExchangeUpdate renames, pins or archives one of the user's exchanges
// and answers with its history item.
func (h *Handlers) apiExchangeUpdate(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var p apiExchangeUpdatePayload
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	if p.Title != nil {
		title := strings.TrimSpace(*p.Title)
		if title == "" || utf8.RuneCountInString(title) > maxTitleLength {
			return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf(`"title" must have 1 to %d characters`, maxTitleLength))
		}
		p.Title = &title
	}
	if p.Temporary != nil && *p.Temporary {
		return fiber.NewError(fiber.StatusBadRequest, `"temporary" can only become false: a chat is made temporary when it starts`)
	}
	userID := currentUser(c).ID
	ex, err := h.store.UpdateExchange(c.UserContext(), userID, id, models.ExchangeUpdate{Title: p.Title, Pinned: p.Pinned, Archived: p.Archived})
	if err != nil {
		return err
	}
	if p.ProjectID.Set {
		if ex, err = h.store.MoveToProject(c.UserContext(), userID, id, p.ProjectID.ID); err != nil {
			return err
		}
	}
	if p.Temporary != nil {
		if ex, err = h.store.KeepExchange(c.UserContext(), userID, id); err != nil {
			return err
		}
	}
	if p.Pinned != nil || p.Archived != nil || p.ProjectID.Set || p.Temporary != nil {
		h.publishRegroup(ex)
	} else {
		h.publishHeader(ex)
	}
	sum, err := h.store.Summary(c.UserContext(), userID, ex.ID)
	if err != nil {
		return err
	}
	unread, err := h.store.Unread(c.UserContext(), userID)
	if err != nil {
		return err
	}
	it := newAPIHistoryItem(sum)
	it.Unread = unread[sum.ID]
	return c.JSON(it)
}
