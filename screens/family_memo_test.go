package screens_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

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
