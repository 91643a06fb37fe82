package models

import (
	"context"
	"slices"
	"testing"
)

// TestAdminFamilyFilter: the admin list narrowed to one exchange's family
// holds its root and every fork, counted alike, with each fork's parent
// title and each exchange's fork count.
func TestAdminFamilyFilter(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		root, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: "root"}, "reply")
		fork, err := s.Fork(ctx, u.ID, root.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		deeper, err := s.Fork(ctx, u.ID, fork.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		mustTurn(t, s, TurnStart{UserID: u.ID, Query: "alone"}, "reply")
		f := AdminExchangeFilter{Family: deeper.ID, Limit: 10}
		rows, _, err := s.AdminListExchanges(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range rows {
			ids = append(ids, r.ID)
			switch r.ID {
			case root.ID:
				if r.Forks != 1 || r.ParentTitle != nil {
					t.Errorf("root: %d forks, parent %v", r.Forks, r.ParentTitle)
				}
			case fork.ID:
				if r.Forks != 1 || r.ParentTitle == nil || *r.ParentTitle != root.Title {
					t.Errorf("fork: %d forks, parent %v", r.Forks, r.ParentTitle)
				}
			}
		}
		slices.Sort(ids)
		if !slices.Equal(ids, []int64{root.ID, fork.ID, deeper.ID}) {
			t.Fatalf("family rows %v", ids)
		}
		if n, err := s.AdminCountExchanges(ctx, f); err != nil || n != 3 {
			t.Fatalf("family count %d, %v", n, err)
		}
	})
}
