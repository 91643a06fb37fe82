package models

import (
	"context"
	"testing"
	"time"

	"palaver/internal/familytest"
)

// arrangeFamily makes a case's family for the user and returns root, f1, f2.
func arrangeFamily(t *testing.T, s *Store, userID int64, c familytest.Case) [3]int64 {
	t.Helper()
	ctx := context.Background()
	root, _, _ := mustTurn(t, s, TurnStart{UserID: userID, Query: "the question"}, "the answer")
	ids := [3]int64{root.ID}
	for i := 1; i < 3; i++ {
		f, err := s.Fork(ctx, userID, root.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = f.ID
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i, id := range ids {
		if err := s.db.Exec("UPDATE exchanges SET updated_at = ?, pinned = ?, archived = ? WHERE id = ?",
			base.Add(-time.Duration(c.Ago[i])*time.Minute).UTC(), c.Pinned[i], c.Archived[i], id).Error; err != nil {
			t.Fatal(err)
		}
	}
	if c.PageF1 {
		p := mustPage(t, s, userID, "a page")
		if err := s.db.Exec("UPDATE exchanges SET scope = ?, page_id = ? WHERE id = ?", ScopePage, p.ID, ids[1]).Error; err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// The heir a deletion names is the branch the sidebar shows for the family
// afterwards (it heads its list), by the one rule of Family, in each case.
func TestFamilyHeirIsTheSidebarsHead(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		for _, c := range familytest.Cases {
			ids := arrangeFamily(t, s, ann.ID, c)
			gone, err := s.DeleteExchange(ctx, ann.ID, ids[2])
			if err != nil {
				t.Fatal(err)
			}
			want := ids[c.Want]
			heir := int64(0)
			if gone.Heir != nil {
				heir = gone.Heir.ID
			}
			if heir != want {
				t.Errorf("%s: the heir is %d, want %d", c.Name, heir, want)
				continue
			}
			heads, err := s.FamilyHeads(ctx, ann.ID, []int64{want})
			if err != nil {
				t.Fatal(err)
			}
			if !heads[want].Head {
				t.Errorf("%s: the heir %d does not head its list in the sidebar: %+v", c.Name, want, heads[want])
			}
		}
	})
}
