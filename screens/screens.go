// Package screens builds the view models of Palaver's screens and of their
// parts from the store: the chat (transcript, history sidebar), the pages
// list and the page editor with its chat panel and proposal cards. The HTTP
// handlers render what it builds, and so does the live connection
// (LiveEvent, live.go), through the same functions: a part looks the same
// whichever way it reaches the tab. It reads the store and nothing else: the
// handlers bring what the session keeps (Viewer, PanelState, LiveTab).
package screens

import (
	"context"
	"time"

	"palaver/models"
	"palaver/views"
)

// Store is what the screens read of models.Store, every read scoped by the
// user.
type Store interface {
	Exchange(ctx context.Context, userID, id int64) (*models.Exchange, error)
	ListExchanges(ctx context.Context, userID int64, q models.ExchangeQuery) ([]models.ExchangeSummary, error)
	Messages(ctx context.Context, userID, exchangeID int64, at *int64) ([]models.Message, error)
	MessagesBefore(ctx context.Context, userID, exchangeID int64, beforeSeq *int64, limit int) ([]models.Message, error)
	MessagesAfter(ctx context.Context, userID, exchangeID, afterSeq int64, limit int) ([]models.Message, error)
	LastSeq(ctx context.Context, userID, exchangeID int64) (int64, error)
	FamilyBranches(ctx context.Context, userID, exchangeID int64) ([]models.Branch, error)
	Parting(ctx context.Context, userID, a, b int64) (*models.Parting, error)
	ExchangeAdminViews(ctx context.Context, userID, exchangeID int64) (models.AdminViews, error)
	Page(ctx context.Context, userID, id int64) (*models.Page, error)
	ListPages(ctx context.Context, userID int64) ([]models.PageSummary, error)
	Revisions(ctx context.Context, userID, pageID int64) ([]models.RevisionSummary, error)
	Revision(ctx context.Context, userID, pageID, revisionID int64) (*models.PageRevision, error)
	Search(ctx context.Context, userID int64, q models.SearchQuery) ([]models.SearchHit, error)
	CopiedIn(ctx context.Context, userID int64, messageIDs []int64) (map[int64]int, error)
	SubRunOf(ctx context.Context, userID, exchangeID int64) (*models.SubRunView, error)
	ProposalStates(ctx context.Context, userID, pageID int64, messageIDs []int64) (map[int64]bool, map[int64]bool, error)
	FamilyBranchPoints(ctx context.Context, userID, exchangeID int64) ([]models.Exchange, []models.BranchPoint, error)
	Family(ctx context.Context, userID, exchangeID int64) ([]models.Exchange, error)
	FamilyHeads(ctx context.Context, userID int64, ids []int64) (map[int64]models.FamilyHead, error)
	MessagesAtSeqs(ctx context.Context, userID, exchangeID int64, seqs []int64) ([]models.Message, error)
	Attachments(ctx context.Context, userID int64, messageIDs []int64) (map[int64][]models.File, error)
}

// Screens builds the view models. Safe for concurrent use.
type Screens struct {
	store    Store
	admin    AdminStore
	markdown *views.Markdown
	families familyMemo // one family lookup per live event (family_memo.go)
}

// New builds screens over store (admin: the admin area's reads), rendering
// Markdown with markdown.
func New(store Store, admin AdminStore, markdown *views.Markdown) *Screens {
	return &Screens{store: store, admin: admin, markdown: markdown}
}

// Viewer is who a screen is built for.
type Viewer struct {
	UserID int64
	CSRF   string // for the forms in the screen
	// Chrome is the frame of a full screen (the signed-in user, the
	// assets), which the screen completes with its title and nav. The live
	// connection sends parts only, and leaves it empty.
	Chrome views.Base
}

// base is the viewer's chrome for a screen titled title under nav.
func (v Viewer) base(title, nav string) views.Base {
	b := v.Chrome
	b.Title, b.Nav, b.CSRF = title, nav, v.CSRF
	return b
}

// Markdown renders a text as the transcript and the preview show it.
func (s *Screens) Markdown(text string) string { return s.markdown.HTML(text) }

// DisplayTitle is a conversation's title as every screen shows it.
func DisplayTitle(title string) string {
	if title == "" {
		return "Untitled"
	}
	return title
}

// ChatTitle is the exchange's title, or "Untitled".
func ChatTitle(ex *models.Exchange) string { return DisplayTitle(ex.Title) }

// Heading names the conversation a chat screen shows (nil: a new chat)
// where the screen names it: above the transcript, in the browser tab's
// title, and on the composer of a conversation it continues. The loaded
// screen, a send's answer and the live connection (a rename) all build it
// here, so that they name it alike.
func Heading(v Viewer, ex *models.Exchange) views.ChatHeading {
	if ex == nil {
		return views.ChatHeading{CSRF: v.CSRF}
	}
	return views.ChatHeading{ExchangeID: ex.ID, Title: ChatTitle(ex), CSRF: v.CSRF}
}

// when is a time as the lists show it: relative, and in full (RFC 3339).
func when(t, now time.Time) (string, string) {
	return views.RelativeTime(t, now), t.In(now.Location()).Format(time.RFC3339)
}
