package handlers

import (
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
)

// apiPageOut is a page as the API shows it.
type apiPageOut struct {
	ID          int64     `json:"id"`
	Title       string    `json:"title"`
	Content     string    `json:"content"`
	ContentHash string    `json:"content_hash"` // DJB2, as proposals' original_content_hash
	UpdatedAt   time.Time `json:"updated_at"`
}

func newAPIPage(p *models.Page) apiPageOut {
	return apiPageOut{ID: p.ID, Title: p.Title, Content: p.Content, ContentHash: agents.DJB2(p.Content), UpdatedAt: p.UpdatedAt}
}

// apiRevisionOut is a page revision as the API lists it.
type apiRevisionOut struct {
	ID         int64     `json:"id"`
	EditSource string    `json:"edit_source"`
	MessageID  *int64    `json:"message_id"`
	CreatedAt  time.Time `json:"created_at"`
}

// apiPagePayload is the body of POST /api/pages and PUT /api/pages/{id}.
// Pointers tell a missing field from an empty one. Content is stored byte for
// byte: line endings included.
type apiPagePayload struct {
	Title   *string `json:"title"`
	Content *string `json:"content"`
}

// apiPageCreate creates a page: 201 with the page. A missing or blank title
// is a 400; a missing content is an empty page.
func (h *Handlers) apiPageCreate(c *fiber.Ctx) error {
	var in apiPagePayload
	if err := apiDecode(c, &in); err != nil {
		return err
	}
	if in.Title == nil {
		return fiber.NewError(fiber.StatusBadRequest, `"title" is required`)
	}
	title, err := apiPageTitle(*in.Title)
	if err != nil {
		return err
	}
	content := ""
	if in.Content != nil {
		content = *in.Content
	}
	p, err := h.store.CreatePage(c.UserContext(), currentUser(c).ID, title, content)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(newAPIPage(p))
}

// apiPage reads one of the user's pages.
func (h *Handlers) apiPage(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	p, err := h.store.Page(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(newAPIPage(p))
}

// apiPageUpdate saves a page's content (and title, when sent) as a revision
// of edit source user.
func (h *Handlers) apiPageUpdate(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var in apiPagePayload
	if err := apiDecode(c, &in); err != nil {
		return err
	}
	if in.Content == nil {
		return fiber.NewError(fiber.StatusBadRequest, `"content" is required`)
	}
	var title *string
	if in.Title != nil {
		t, err := apiPageTitle(*in.Title)
		if err != nil {
			return err
		}
		title = &t
	}
	p, err := h.store.UpdatePage(c.UserContext(), currentUser(c).ID, id, title, *in.Content)
	if err != nil {
		return err
	}
	h.publishPage(currentUser(c).ID, p.ID)
	return c.JSON(newAPIPage(p))
}

// apiPageDelete deletes one of the user's pages and its chats with it.
func (h *Handlers) apiPageDelete(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	exchanges, messages, err := h.store.DeletePage(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(apiNotice{Message: fmt.Sprintf("Deleted the page with %d chat exchanges and %d messages", exchanges, messages)})
}

// apiPageRevisions lists a page's revisions, oldest first.
func (h *Handlers) apiPageRevisions(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	revs, err := h.store.Revisions(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	out := make([]apiRevisionOut, len(revs)) // never null
	for i, r := range revs {
		out[i] = apiRevisionOut{ID: r.ID, EditSource: r.EditSource, MessageID: r.MessageID, CreatedAt: r.CreatedAt}
	}
	return c.JSON(out)
}

// apiPageHistory lists one batch (by keyset) of a page's chats, as
// /api/chat/history lists the general ones.
func (h *Handlers) apiPageHistory(c *fiber.Ctx) error {
	id, err := pathID(c, "page_id")
	if err != nil {
		return err
	}
	q, err := apiHistoryQuery(c, models.ExchangeQuery{Scope: models.ScopePage, PageID: id})
	if err != nil {
		return err
	}
	if _, err := h.store.Page(c.UserContext(), currentUser(c).ID, id); err != nil {
		return err
	}
	return h.apiHistoryItems(c, q)
}

// apiPageClearHistory deletes all of a page's chats; the page stays.
func (h *Handlers) apiPageClearHistory(c *fiber.Ctx) error {
	id, err := pathID(c, "page_id")
	if err != nil {
		return err
	}
	ctx, userID := c.UserContext(), currentUser(c).ID
	if _, err := h.store.Page(ctx, userID, id); err != nil {
		return err
	}
	exchanges, messages, err := h.store.ClearExchanges(ctx, userID, models.ScopePage, id)
	if err != nil {
		return err
	}
	return c.JSON(apiNotice{Message: fmt.Sprintf("Cleared %d chat exchanges with %d messages", exchanges, messages)})
}

// apiPageTitle checks a page title sent to the API.
func apiPageTitle(title string) (string, error) {
	title = strings.TrimSpace(title)
	if msg := pageTitleProblem(title); msg != "" {
		return "", fiber.NewError(fiber.StatusBadRequest, msg)
	}
	return title, nil
}
