package screens_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"palaver/agents"
	"palaver/models"
	"palaver/screens"
	"palaver/views"
)

// countingStore is the real store, counting its family lookups.
type countingStore struct {
	*models.Store
	lookups atomic.Int64
}

func (c *countingStore) FamilyHeads(ctx context.Context, userID int64, ids []int64) (map[int64]models.FamilyHead, error) {
	c.lookups.Add(1)
	return c.Store.FamilyHeads(ctx, userID, ids)
}

// Every open tab of a user shows a turn event's sidebar item: the tabs on
// one conversation share one family lookup per event, and the next event
// (another header) reads afresh, so a branch made in between is counted.
func TestOneFamilyLookupPerEvent(t *testing.T) {
	ctx := context.Background()
	s, u := newStore(t)
	ex, _, err := s.StartTurn(ctx, models.TurnStart{UserID: u.ID, Scope: models.ScopeGeneral, Query: "hello", Owner: "test", AgentType: "router"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishTurn(ctx, ex.ID, "test", &models.Message{Role: models.RoleAssistant, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fork(ctx, u.ID, ex.ID, 1); err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{Store: s}
	sc := screens.New(s, cs, views.NewMarkdown())
	v := screens.Viewer{UserID: u.ID}

	tabs := func(event *models.Exchange) []views.HistoryItem {
		items := make([]views.HistoryItem, 50)
		var wg sync.WaitGroup
		for i := range items {
			wg.Go(func() {
				it, err := sc.FamilyItem(ctx, v, event, event.ID)
				if err != nil {
					t.Error(err)
				}
				items[i] = it
			})
		}
		wg.Wait()
		return items
	}
	event, err := s.Exchange(ctx, u.ID, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range tabs(event) {
		if it.Branches != 2 || it.ID != ex.ID {
			t.Fatalf("tab %d: item %d with %d branches, want %d with 2", i, it.ID, it.Branches, ex.ID)
		}
	}
	if n := cs.lookups.Load(); n != 1 {
		t.Errorf("50 tabs hearing one event made %d family lookups, want 1", n)
	}

	if _, err := s.Fork(ctx, u.ID, ex.ID, 1); err != nil {
		t.Fatal(err)
	}
	next, err := s.Exchange(ctx, u.ID, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range tabs(next) {
		if it.Branches != 3 {
			t.Fatalf("tab %d after a new branch: %d branches, want 3", i, it.Branches)
		}
	}
	if n := cs.lookups.Load(); n != 2 {
		t.Errorf("two events made %d family lookups, want 2", n)
	}
}

// A turn publishes two headers within a millisecond (started, finished),
// and tabs that fall behind hear the first while others hear the second:
// tabs going back and forth between two events still make one lookup each.
func TestFamilyLookupSharedAcrossInterleavedEvents(t *testing.T) {
	ctx := context.Background()
	s, u := newStore(t)
	ex, _, err := s.StartTurn(ctx, models.TurnStart{UserID: u.ID, Scope: models.ScopeGeneral, Query: "hello", Owner: "test", AgentType: "router"})
	if err != nil {
		t.Fatal(err)
	}
	started, err := s.Exchange(ctx, u.ID, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishTurn(ctx, ex.ID, "test", &models.Message{Role: models.RoleAssistant, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	finished, err := s.Exchange(ctx, u.ID, ex.ID)
	if err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{Store: s}
	sc := screens.New(s, cs, views.NewMarkdown())
	v := screens.Viewer{UserID: u.ID}
	for tab := range 20 {
		for _, event := range []*models.Exchange{started, finished} {
			it, err := sc.FamilyItem(ctx, v, event, ex.ID)
			if err != nil {
				t.Fatal(err)
			}
			if it.ID != ex.ID || it.TurnStatus != event.TurnStatus {
				t.Fatalf("tab %d: item %d %q, want %d %q", tab, it.ID, it.TurnStatus, ex.ID, event.TurnStatus)
			}
		}
	}
	if n := cs.lookups.Load(); n != 2 {
		t.Errorf("20 tabs hearing two events in turn made %d family lookups, want 2", n)
	}
}

// Tabs hearing one new entry share its tail, built once per event and
// viewer: every tab gets the entries as a lone tab does, their forms
// carrying its own viewer's token.
func TestTabsShareAnEventsTail(t *testing.T) {
	ctx := context.Background()
	s, u := newStore(t)
	watched := liveChat(t, s, u.ID, "first")
	type tab struct {
		sc  *screens.Screens
		v   screens.Viewer
		tab *screens.LiveTab
	}
	shared := screens.New(s, s, views.NewMarkdown())
	var lone, tabs []tab
	for i := range 22 {
		tb := tab{sc: shared, v: screens.Viewer{UserID: u.ID, CSRF: []string{"one", "two"}[i%2]}, tab: &screens.LiveTab{}}
		if i < 2 {
			tb.sc = screens.New(s, s, views.NewMarkdown()) // a lone tab, screens of its own
		}
		if _, err := tb.sc.LiveWatch(ctx, tb.v, tb.tab, watched.ID, 1, 0, nil); err != nil { // has the first turn
			t.Fatal(err)
		}
		if i < 2 {
			lone = append(lone, tb)
		} else {
			tabs = append(tabs, tb)
		}
	}
	ex, _, err := s.StartTurn(ctx, models.TurnStart{UserID: u.ID, ExchangeID: watched.ID, AgentType: "router", Query: "and then?", Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	reply := &models.Message{Role: models.RoleAssistant, Content: "this"}
	header, err := s.FinishTurnHeader(ctx, ex.ID, "test", reply)
	if err != nil {
		t.Fatal(err)
	}
	event := agents.Event{Kind: agents.EventEntry, UserID: u.ID, ExchangeID: ex.ID, Exchange: header, Entry: reply}
	want := map[string][]views.ChatMessage{}
	for _, tb := range lone {
		up, err := tb.sc.LiveEvent(ctx, tb.v, tb.tab, event, false)
		if err != nil {
			t.Fatal(err)
		}
		n := len(up.Entries)
		if n == 0 || !strings.Contains(string(up.Entries[n-1].HTML), "this") || up.Entries[n-1].Feedback.CSRF != tb.v.CSRF {
			t.Fatalf("a lone tab (%s) got %+v, want the reply with its token", tb.v.CSRF, up.Entries)
		}
		want[tb.v.CSRF] = up.Entries
	}
	var wg sync.WaitGroup
	for i, tb := range tabs {
		wg.Go(func() {
			up, err := tb.sc.LiveEvent(ctx, tb.v, tb.tab, event, false)
			if err != nil {
				t.Error(err)
			}
			if !reflect.DeepEqual(up.Entries, want[tb.v.CSRF]) {
				t.Errorf("tab %d (%s) got\n%+v\nwant\n%+v", i, tb.v.CSRF, up.Entries, want[tb.v.CSRF])
			}
		})
	}
	wg.Wait()
}
