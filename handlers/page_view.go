package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// What the page screens show at most.
const (
	pageRevisionsShown = 50 // in the editor's history menu, newest first
	pageChatsShown     = 50 // in the panel's list of the page's chats
)

// pageParam is the signed-in user's page that the :id route parameter
// names. Another user's, a deleted or a missing page: 404.
func (h *Handlers) pageParam(c *fiber.Ctx) (*models.Page, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return nil, err
	}
	return h.store.Page(c.UserContext(), currentUser(c).ID, id)
}

// pageEditPage builds the whole /pages/{id}/edit screen.
func (h *Handlers) pageEditPage(c *fiber.Ctx, p *models.Page) (views.PageEditPage, error) {
	ed, err := h.pageEditor(c, p)
	if err != nil {
		return views.PageEditPage{}, err
	}
	panel, err := h.pagePanel(c, p)
	if err != nil {
		return views.PageEditPage{}, err
	}
	return views.PageEditPage{Base: h.base(c, p.Title, "pages"), Editor: ed, Panel: panel}, nil
}

// pageEditor builds the editor for p: its text, preview and revisions.
func (h *Handlers) pageEditor(c *fiber.Ctx, p *models.Page) (views.PageEditor, error) {
	return h.pageEditorOf(c.UserContext(), currentUser(c).ID, p, h.csrfToken(c))
}

// pageEditorOf builds the editor for the user's page p, for a request or a
// live connection.
func (h *Handlers) pageEditorOf(ctx context.Context, userID int64, p *models.Page, csrf string) (views.PageEditor, error) {
	revs, err := h.store.Revisions(ctx, userID, p.ID)
	if err != nil {
		return views.PageEditor{}, err
	}
	e := views.PageEditor{
		ID: p.ID, Title: p.Title, Content: p.Content, Preview: h.pagePreviewHTML(p.Content), CSRF: csrf,
	}
	now := time.Now()
	for i := len(revs) - 1; i >= 0 && len(e.Revisions) < pageRevisionsShown; i-- {
		r := revs[i]
		it := views.RevisionItem{
			ID: r.ID, Source: r.EditSource, Current: i == len(revs)-1,
			When: views.RelativeTime(r.CreatedAt, now), WhenFull: r.CreatedAt.In(now.Location()).Format(time.RFC3339),
		}
		if r.EditSource == models.EditAgent && r.MessageID != nil && r.ExchangeID != nil {
			it.MessageURL = paths.AtMessage(paths.PageChatOpen(p.ID, *r.ExchangeID), *r.MessageID)
		}
		e.Revisions = append(e.Revisions, it)
	}
	e.OlderRevisions = len(revs) - len(e.Revisions)
	return e, nil
}

// pagePreviewHTML renders page content for the preview: Markdown, sanitised.
func (h *Handlers) pagePreviewHTML(content string) string {
	if strings.TrimSpace(content) == "" {
		return ""
	}
	return h.markdown.HTML(content)
}

// pagePanel builds the chat panel of p, showing the page's current
// conversation (a new chat when the session's one is gone).
func (h *Handlers) pagePanel(c *fiber.Ctx, p *models.Page) (views.PagePanel, error) {
	csrf := h.csrfToken(c)
	panel := views.PagePanel{
		PageID: p.ID, Open: h.panelOpen(c), CSRF: csrf,
		Composer: views.Composer{MaxLength: agents.MaxQueryLength, CSRF: csrf},
	}
	if !panel.Open {
		return panel, nil
	}
	ctx, userID := c.UserContext(), currentUser(c).ID
	current, err := h.pageCurrentExchange(c, p.ID)
	if err != nil {
		return panel, err
	}
	if current != 0 {
		ex, err := h.pageExchange(c, p, current)
		switch {
		case errors.Is(err, models.ErrNotFound):
			// Deleted meanwhile (another tab, the API): start a new chat.
			current = 0
			h.setPageExchange(c, p.ID, 0)
		case err != nil:
			return panel, err
		default:
			msgs, err := h.store.Messages(ctx, userID, ex.ID, nil)
			if err != nil {
				return panel, err
			}
			if panel.Entries, err = h.pageEntries(c, p, msgs); err != nil {
				return panel, err
			}
			panel.Title, panel.TurnStatus = chatTitle(ex), ex.TurnStatus
		}
	}
	panel.ExchangeID = current
	panel.Composer.ExchangeID = current
	if panel.Chats, err = h.pageChats(c, p, current); err != nil {
		return panel, err
	}
	return panel, nil
}

// pageChats lists the page's conversations, most recent first.
func (h *Handlers) pageChats(c *fiber.Ctx, p *models.Page, current int64) ([]views.PageChatItem, error) {
	sums, err := h.store.ListExchanges(c.UserContext(), currentUser(c).ID,
		models.ExchangeQuery{Scope: models.ScopePage, PageID: p.ID, Limit: pageChatsShown})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]views.PageChatItem, len(sums))
	for i := range sums {
		ex := &sums[i].Exchange
		out[i] = views.PageChatItem{
			ID: ex.ID, Title: chatTitle(ex), Turns: ex.TurnCount, Current: ex.ID == current,
			When: views.RelativeTime(ex.UpdatedAt, now), WhenFull: ex.UpdatedAt.In(now.Location()).Format(time.RFC3339),
		}
	}
	return out, nil
}

// pageExchange loads one of the conversations of page p; any other exchange
// (a general chat, another page's) is not found.
func (h *Handlers) pageExchange(c *fiber.Ctx, p *models.Page, id int64) (*models.Exchange, error) {
	ex, err := h.store.Exchange(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return nil, err
	}
	if ex.Scope != models.ScopePage || ex.PageID == nil || *ex.PageID != p.ID {
		return nil, fmt.Errorf("page %d: exchange %d is not one of its chats: %w", p.ID, id, models.ErrNotFound)
	}
	return ex, nil
}

// pageEntries maps a page chat's log to transcript entries, each proposal
// with its card: applied ones as a note, dismissed ones (in this session, or
// rejected for good) with none.
func (h *Handlers) pageEntries(c *fiber.Ctx, p *models.Page, msgs []models.Message) ([]views.PageEntry, error) {
	return h.pageEntriesOf(c.UserContext(), currentUser(c).ID, p, msgs, h.dismissed(c.UserContext(), p.ID), h.csrfToken(c))
}

// pageEntriesOf is pageEntries for a request or a live connection: the
// user's page p, the proposals dismissed in the session (nil: none known).
func (h *Handlers) pageEntriesOf(ctx context.Context, userID int64, p *models.Page, msgs []models.Message,
	dismissed map[int64]bool, csrf string) ([]views.PageEntry, error) {
	var ids []int64
	for _, m := range msgs {
		if m.EditMode != nil {
			ids = append(ids, m.ID)
		}
	}
	applied, rejected, err := h.store.ProposalStates(ctx, userID, p.ID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]views.PageEntry, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		v, ok := h.chatMessage(m, csrf)
		if !ok {
			continue
		}
		e := views.PageEntry{Message: v}
		if m.EditMode != nil && !dismissed[m.ID] && !rejected[m.ID] {
			e.Proposal = proposalCard(p, m, applied[m.ID], csrf)
		}
		out = append(out, e)
	}
	return out, nil
}

// pageCards are the proposal cards of the page's current conversation, for
// an out-of-band refresh after the page changed (staleness is decided on
// the server, so every card is rendered again).
func (h *Handlers) pageCards(c *fiber.Ctx, p *models.Page) ([]views.ProposalCard, error) {
	current, err := h.pageCurrentExchange(c, p.ID)
	if err != nil || current == 0 {
		return nil, err
	}
	if _, err := h.pageExchange(c, p, current); err != nil {
		if errors.Is(err, models.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	msgs, err := h.store.Messages(c.UserContext(), currentUser(c).ID, current, nil)
	if err != nil {
		return nil, err
	}
	entries, err := h.pageEntries(c, p, msgs)
	if err != nil {
		return nil, err
	}
	return entryCards(entries), nil
}

// entryCards are the proposal cards among transcript entries.
func entryCards(entries []views.PageEntry) []views.ProposalCard {
	var cards []views.ProposalCard
	for _, e := range entries {
		if e.Proposal != nil {
			cards = append(cards, *e.Proposal)
		}
	}
	return cards
}

// pageStatus says what just happened to the page, and when.
func pageStatus(what string) string { return what + " at " + time.Now().Format("15:04") }

// proposalCard maps a proposal to its card against the page as it is now;
// nil when the message holds no well-formed proposal.
func proposalCard(p *models.Page, m *models.Message, applied bool, csrf string) *views.ProposalCard {
	prop, ok := agents.ProposalOf(m.AgentResponse)
	if !ok {
		return nil
	}
	card := &views.ProposalCard{
		PageID: p.ID, MessageID: m.ID, Mode: prop.Mode, Reasoning: prop.Reasoning, Applied: applied, CSRF: csrf,
	}
	if applied {
		return card
	}
	card.Stale = prop.Stale(p.Content)
	if prop.Mode == models.EditFullReplacement {
		card.Diff = views.UnifiedDiff(p.Content, prop.Content)
		card.Added, card.Deleted = card.Diff.Added, card.Diff.Deleted
		return card
	}
	for _, ch := range prop.Changes(p.Content) {
		// The blank lines that end a section only separate it from the next:
		// they are no change to show (sections.Compare ignores them too).
		d := views.UnifiedDiff(strings.TrimRight(ch.Before, " \t\r\n"), strings.TrimRight(ch.After, " \t\r\n"))
		card.Sections = append(card.Sections, views.SectionBlock{Key: ch.Key(), Name: ch.Name, Kind: ch.Kind, Diff: d})
		card.Added += d.Added
		card.Deleted += d.Deleted
	}
	return card
}

// pageSaved is the htmx answer after the page changed: status, preview,
// revisions and cards; with content, the editor's text too.
func (h *Handlers) pageSaved(c *fiber.Ctx, p *models.Page, status string, content bool) error {
	ed, err := h.pageEditor(c, p)
	if err != nil {
		return err
	}
	ed.Status = status
	cards, err := h.pageCards(c, p)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.PageSavedResult(views.PageSaved{Editor: ed, Content: content, Cards: cards}))
}
