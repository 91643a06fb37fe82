package screens

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// What the page screens show at most.
const (
	RevisionsShown = 50 // in the editor's history menu, newest first
	PageChatsShown = 50 // in the panel's list of the page's chats
)

// Pages builds the /pages screen around the create form f.
func (s *Screens) Pages(ctx context.Context, v Viewer, f views.PageForm) (views.PagesScreen, error) {
	pages, err := s.store.ListPages(ctx, v.UserID)
	if err != nil {
		return views.PagesScreen{}, err
	}
	now := time.Now()
	out := views.PagesScreen{Base: v.base("Pages", "pages"), Form: f}
	out.Form.CSRF = v.CSRF
	for _, pg := range pages {
		it := views.PageListItem{ID: pg.ID, Title: pg.Title, Revisions: pg.Revisions}
		it.Updated, it.UpdatedFull = when(pg.UpdatedAt, now)
		out.Pages = append(out.Pages, it)
	}
	return out, nil
}

// PanelState is what the session keeps about a page's chat panel.
type PanelState struct {
	Open bool
	// Current is the conversation the panel shows (0: a new chat).
	Current int64
	// Dismissed are the proposals dismissed in this session (nil: none
	// known); their cards are not shown.
	Dismissed map[int64]bool
}

// PageEdit builds the whole /pages/{id}/edit screen: the editor and the
// chat panel. A current conversation that is gone (deleted meanwhile, in
// another tab or through the API) shows as a new chat: the panel's
// ExchangeID is then 0.
func (s *Screens) PageEdit(ctx context.Context, v Viewer, p *models.Page, st PanelState) (views.PageEditScreen, error) {
	ed, err := s.Editor(ctx, v, p)
	if err != nil {
		return views.PageEditScreen{}, err
	}
	panel, err := s.Panel(ctx, v, p, st)
	if err != nil {
		return views.PageEditScreen{}, err
	}
	return views.PageEditScreen{Base: v.base(p.Title, "pages"), Editor: ed, Panel: panel}, nil
}

// Editor builds the editor for the user's page p: its text, preview and
// revisions.
func (s *Screens) Editor(ctx context.Context, v Viewer, p *models.Page) (views.PageEditor, error) {
	revs, err := s.store.Revisions(ctx, v.UserID, p.ID)
	if err != nil {
		return views.PageEditor{}, err
	}
	e := views.PageEditor{ID: p.ID, Title: p.Title, Content: p.Content, Preview: s.Preview(p.Content), CSRF: v.CSRF}
	now := time.Now()
	for i := len(revs) - 1; i >= 0 && len(e.Revisions) < RevisionsShown; i-- {
		r := revs[i]
		it := views.RevisionItem{ID: r.ID, Source: r.EditSource, Current: i == len(revs)-1}
		it.When, it.WhenFull = when(r.CreatedAt, now)
		if r.EditSource == models.EditAgent && r.MessageID != nil && r.ExchangeID != nil {
			it.MessageURL = paths.AtMessage(paths.PageChatOpen(p.ID, *r.ExchangeID), *r.MessageID)
		}
		e.Revisions = append(e.Revisions, it)
	}
	e.OlderRevisions = len(revs) - len(e.Revisions)
	return e, nil
}

// RevisionDiff sets a revision of the page against its text now: what a
// restore would change.
func (s *Screens) RevisionDiff(ctx context.Context, v Viewer, p *models.Page, revisionID int64) (views.RevisionDiff, error) {
	r, err := s.store.Revision(ctx, v.UserID, p.ID, revisionID)
	if err != nil {
		return views.RevisionDiff{}, err
	}
	d := views.RevisionDiff{PageID: p.ID, RevisionID: r.ID, Title: p.Title, Source: r.EditSource, CSRF: v.CSRF,
		Diff: views.UnifiedDiff(p.Content, r.Content)}
	d.When, d.WhenFull = when(r.CreatedAt, time.Now())
	return d, nil
}

// Preview renders page content for the preview: Markdown, sanitised.
func (s *Screens) Preview(content string) string {
	if strings.TrimSpace(content) == "" {
		return ""
	}
	return s.markdown.HTML(content)
}

// Panel builds the chat panel of p, showing the conversation st names (a
// new chat when it is gone).
func (s *Screens) Panel(ctx context.Context, v Viewer, p *models.Page, st PanelState) (views.PagePanel, error) {
	panel := views.PagePanel{
		PageID: p.ID, Open: st.Open, CSRF: v.CSRF,
		Composer: views.Composer{MaxLength: agents.MaxQueryLength, CSRF: v.CSRF},
	}
	if !panel.Open {
		return panel, nil
	}
	if err := s.composerBudget(ctx, v, &panel.Composer); err != nil {
		return panel, err
	}
	current := st.Current
	if current != 0 {
		ex, err := s.PageExchange(ctx, v.UserID, p, current)
		switch {
		case errors.Is(err, models.ErrNotFound):
			current = 0 // deleted meanwhile: a new chat
		case err != nil:
			return panel, err
		default:
			msgs, err := s.store.Messages(ctx, v.UserID, ex.ID, nil)
			if err != nil {
				return panel, err
			}
			if panel.Entries, err = s.PageEntries(ctx, v, p, msgs, st.Dismissed); err != nil {
				return panel, err
			}
			panel.Title, panel.TurnStatus = ChatTitle(ex), ex.TurnStatus
		}
	}
	panel.ExchangeID = current
	panel.Composer.ExchangeID = current
	panel.Composer.Models = s.modelChoices(ctx, v.UserID, current)
	var err error
	panel.Chats, err = s.PageChats(ctx, v, p, current)
	return panel, err
}

// LatestPageChat is the page's most recent conversation (0: none), which
// its panel shows when the session names none.
func (s *Screens) LatestPageChat(ctx context.Context, userID, pageID int64) (int64, error) {
	latest, err := s.store.ListExchanges(ctx, userID,
		models.ExchangeQuery{Scope: models.ScopePage, PageID: pageID, Limit: 1})
	if err != nil || len(latest) == 0 {
		return 0, err
	}
	return latest[0].ID, nil
}

// PageChats lists the page's conversations, most recent first.
func (s *Screens) PageChats(ctx context.Context, v Viewer, p *models.Page, current int64) ([]views.PageChatItem, error) {
	sums, err := s.store.ListExchanges(ctx, v.UserID,
		models.ExchangeQuery{Scope: models.ScopePage, PageID: p.ID, Limit: PageChatsShown})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]views.PageChatItem, len(sums))
	for i := range sums {
		ex := &sums[i].Exchange
		out[i] = views.PageChatItem{ID: ex.ID, Title: ChatTitle(ex), Turns: ex.TurnCount, Current: ex.ID == current}
		out[i].When, out[i].WhenFull = when(ex.UpdatedAt, now)
	}
	return out, nil
}

// PageExchange loads one of the conversations of page p; any other exchange
// (a general chat, another page's) is not found.
func (s *Screens) PageExchange(ctx context.Context, userID int64, p *models.Page, id int64) (*models.Exchange, error) {
	ex, err := s.store.Exchange(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	if ex.Scope != models.ScopePage || ex.PageID == nil || *ex.PageID != p.ID {
		return nil, fmt.Errorf("page %d: exchange %d is not one of its chats: %w", p.ID, id, models.ErrNotFound)
	}
	return ex, nil
}

// PageEntries maps a page chat's log to transcript entries, each proposal
// with its card against the page as it is now: applied ones and dismissed
// ones (in the session, or rejected for good) as a short note.
func (s *Screens) PageEntries(ctx context.Context, v Viewer, p *models.Page, msgs []models.Message,
	dismissed map[int64]bool) ([]views.PageEntry, error) {
	var ids []int64
	for _, m := range msgs {
		if m.EditMode != nil {
			ids = append(ids, m.ID)
		}
	}
	applied, rejected, err := s.store.ProposalStates(ctx, v.UserID, p.ID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]views.PageEntry, 0, len(msgs))
	answered := AnsweredCalls(msgs)
	for i := range msgs {
		m := &msgs[i]
		chat, ok := s.Message(v, m)
		if !ok {
			continue
		}
		if answered[m.ID] {
			chat.Call = views.ToolCard{}
		} else if chat.Call.Waiting != "" {
			chat.Call.Editor = p.ID // its editor's form sends the text without JavaScript
		}
		e := views.PageEntry{Message: chat}
		switch {
		case m.EditMode == nil:
		case !applied[m.ID] && (dismissed[m.ID] || rejected[m.ID]):
			e.Proposal = &views.ProposalCard{PageID: p.ID, MessageID: m.ID, Rejected: true}
		default:
			e.Proposal = ProposalCard(v, p, m, applied[m.ID])
		}
		out = append(out, e)
	}
	chats := make([]views.ChatMessage, len(out))
	for i := range out {
		chats[i] = out[i].Message
	}
	if err := s.WithFiles(ctx, v, chats); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Message.Files = chats[i].Files
	}
	return out, nil
}

// PageChanged is the editor's parts and the proposal cards of the page's
// conversation exchangeID (0: none) after the page changed (a save, a
// restore, an accepted proposal): staleness is decided on the server, so
// every card is built again.
func (s *Screens) PageChanged(ctx context.Context, v Viewer, p *models.Page, exchangeID int64,
	dismissed map[int64]bool) (views.PageSaved, error) {
	ed, err := s.Editor(ctx, v, p)
	if err != nil {
		return views.PageSaved{}, err
	}
	saved := views.PageSaved{Editor: ed}
	if exchangeID == 0 {
		return saved, nil
	}
	if _, err := s.PageExchange(ctx, v.UserID, p, exchangeID); errors.Is(err, models.ErrNotFound) {
		return saved, nil // gone: no cards
	} else if err != nil {
		return saved, err
	}
	msgs, err := s.store.Messages(ctx, v.UserID, exchangeID, nil)
	if err != nil {
		return saved, err
	}
	entries, err := s.PageEntries(ctx, v, p, msgs, dismissed)
	if err != nil {
		return saved, err
	}
	for _, e := range entries {
		if e.Proposal != nil {
			saved.Cards = append(saved.Cards, *e.Proposal)
		}
	}
	return saved, nil
}

// ProposalCard maps a proposal to its card against the page as it is now;
// nil when the message holds no well-formed proposal.
func ProposalCard(v Viewer, p *models.Page, m *models.Message, applied bool) *views.ProposalCard {
	prop, ok := agents.ProposalOf(m.AgentResponse)
	if !ok {
		return nil
	}
	card := &views.ProposalCard{
		PageID: p.ID, MessageID: m.ID, Mode: prop.Mode, Reasoning: prop.Reasoning, Applied: applied, CSRF: v.CSRF,
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
