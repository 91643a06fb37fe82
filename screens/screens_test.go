package screens_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"palaver/accounts"
	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

func newStore(t *testing.T) (*models.Store, *models.User) {
	t.Helper()
	ctx := context.Background()
	s, err := models.Open(filepath.Join(t.TempDir(), "palaver.db"), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	hash, _ := accounts.HashPassword("correct horse")
	u, err := s.CreateUser(ctx, "ada", hash, false)
	if err != nil {
		t.Fatal(err)
	}
	return s, u
}

// failedTurn stores a turn whose agent failed: the user message, then the
// error row that ends it.
func failedTurn(t *testing.T, s *models.Store, start models.TurnStart) *models.Exchange {
	t.Helper()
	ctx := context.Background()
	start.Owner, start.AgentType = "test", "router"
	ex, _, err := s.StartTurn(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.FailTurn(ctx, ex.ID, "test", "the agent fell over"); err != nil {
		t.Fatal(err)
	}
	if ex, err = s.Exchange(ctx, start.UserID, ex.ID); err != nil {
		t.Fatal(err)
	}
	return ex
}

// The page editor is built once, whether a request shows the screen or a
// page event refreshes an open tab (PageChanged, for the live connection
// and the htmx answer to a save): the same editor both ways.
func TestOneEditorForEveryPath(t *testing.T) {
	ctx := context.Background()
	s, u := newStore(t)
	p, err := s.CreatePage(ctx, u.ID, "Plan", "# Plan\n\nSteps.\n")
	if err != nil {
		t.Fatal(err)
	}
	sc := screens.New(s, s, views.NewMarkdown())
	v := screens.Viewer{UserID: u.ID, CSRF: "tok"}
	screen, err := sc.PageEdit(ctx, v, p, screens.PanelState{})
	if err != nil {
		t.Fatal(err)
	}
	changed, err := sc.PageChanged(ctx, v, p, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(screen.Editor, changed.Editor) {
		t.Fatalf("the screen's editor\n%+v\nand the refresh's\n%+v", screen.Editor, changed.Editor)
	}
	if screen.Title != "Plan" || screen.Nav != "pages" || screen.CSRF != "tok" {
		t.Fatalf("chrome %+v", screen.Base)
	}
}

// A panel whose current chat is gone (deleted in another tab, or through
// the API) shows a new chat, and says so by its ExchangeID 0, which the
// handlers then keep in the session; a closed panel reads nothing.
func TestPanelOfAGoneChatIsANewChat(t *testing.T) {
	ctx := context.Background()
	s, u := newStore(t)
	p, err := s.CreatePage(ctx, u.ID, "Plan", "# Plan\n")
	if err != nil {
		t.Fatal(err)
	}
	ex := failedTurn(t, s, models.TurnStart{UserID: u.ID, Scope: models.ScopePage, PageID: &p.ID, Query: "hi"})
	sc := screens.New(s, s, views.NewMarkdown())
	v := screens.Viewer{UserID: u.ID, CSRF: "tok"}

	panel, err := sc.Panel(ctx, v, p, screens.PanelState{Open: true, Current: ex.ID})
	if err != nil {
		t.Fatal(err)
	}
	if panel.ExchangeID != ex.ID || len(panel.Entries) != 2 || len(panel.Chats) != 1 {
		t.Fatalf("panel on its chat: exchange %d, %d entries, %d chats", panel.ExchangeID, len(panel.Entries), len(panel.Chats))
	}
	if _, err := s.DeleteExchange(ctx, u.ID, ex.ID); err != nil {
		t.Fatal(err)
	}
	panel, err = sc.Panel(ctx, v, p, screens.PanelState{Open: true, Current: ex.ID})
	if err != nil {
		t.Fatal(err)
	}
	if panel.ExchangeID != 0 || panel.Composer.ExchangeID != 0 || len(panel.Entries) != 0 {
		t.Fatalf("panel on a gone chat: exchange %d, composer %d, %d entries", panel.ExchangeID, panel.Composer.ExchangeID, len(panel.Entries))
	}
	if panel, err = sc.Panel(ctx, v, p, screens.PanelState{Current: ex.ID}); err != nil || panel.Open || panel.Chats != nil {
		t.Fatalf("closed panel: %+v, %v", panel, err)
	}
}

// The error row that ended a failed chat turn offers Retry on the chat
// screen and on the live connection alike (OfferRetry): only when it is
// the newest entry, and only in a general chat.
func TestRetryIsOfferedOnTheLastErrorOfAFailedChat(t *testing.T) {
	ctx := context.Background()
	s, u := newStore(t)
	ex := failedTurn(t, s, models.TurnStart{UserID: u.ID, Scope: models.ScopeGeneral, Query: "hi"})
	sc := screens.New(s, s, views.NewMarkdown())
	v := screens.Viewer{UserID: u.ID, CSRF: "tok"}

	conv, err := sc.Conversation(ctx, v, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := conv.Messages[len(conv.Messages)-1]
	if last.Role != views.RoleError || last.Retry != (views.RetryView{Action: paths.ChatRetry(ex.ID), CSRF: "tok"}) {
		t.Fatalf("last entry %+v", last)
	}
	entries := []views.ChatMessage{{ID: last.ID, Role: views.RoleError}}
	screens.OfferRetry(v, entries, ex, last.ID+1) // a newer entry exists: not the turn's end
	if entries[0].Retry.Shown() {
		t.Fatal("Retry offered on an error row that is not the newest entry")
	}
	pageChat := *ex
	pageChat.Scope = models.ScopePage
	screens.OfferRetry(v, entries, &pageChat, last.ID)
	if entries[0].Retry.Shown() {
		t.Fatal("Retry offered in a page chat")
	}
	screens.OfferRetry(v, entries, ex, last.ID)
	if !entries[0].Retry.Shown() {
		t.Fatal("no Retry on the failed turn's error row")
	}
}
