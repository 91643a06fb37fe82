// Package screens builds the view models of Palaver's screens and of their
// parts from the store: the chat (transcript, history sidebar), the pages
// list and the page editor with its chat panel and proposal cards. The HTTP
// handlers render what it builds, and so does the live connection
// (LiveEvent, live.go), through the same functions: a part looks the same
// whichever way it reaches the tab. It reads the store and nothing else: the
// handlers bring what the session keeps (Viewer, PanelState, LiveTab).
//
// Interfaces only where a test has a fake: FamilyHeads, whose calls a test
// counts. Every other read is the concrete *models.Store, so a new query is
// written once.
package screens

import (
	"context"
	"time"

	"palaver/models"
	"palaver/views"
)

// FamilyHeads is the one read the screens take through an interface, the
// family lookup of the history's items: a test counts its calls
// (family_memo_test.go). Every other read is the concrete *models.Store.
type FamilyHeads interface {
	FamilyHeads(ctx context.Context, userID int64, ids []int64) (map[int64]models.FamilyHead, error)
}

// Screens builds the view models. Safe for concurrent use.
type Screens struct {
	store    *models.Store
	heads    FamilyHeads
	markdown *views.Markdown
	// One lookup per live event for all the tabs it reaches (family_memo.go):
	// the family's heads, the transcript's tail of new entries, the budget.
	families eventMemo[int64, map[int64]models.FamilyHead]
	tails    eventMemo[tailKey, tail]
	budgets  eventMemo[int64, views.BudgetWarning] // by user, read once a finished turn
}

// New builds screens over store, its family lookups made by heads (the
// store itself, but for the test that counts them), rendering Markdown
// with markdown.
func New(store *models.Store, heads FamilyHeads, markdown *views.Markdown) *Screens {
	return &Screens{store: store, heads: heads, markdown: markdown}
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
