package models

import (
	"context"
	"testing"
	"time"
)

// familyCase arranges a family of three, root ← f1 and root ← f2, and
// deletes f2: want names the branch that must stand for the family then
// (0: the root, 1: f1). Each is a case where the three rules the code had
// (the sidebar's, the deletion's heir, the chat delete's own) differed or
// could.
type familyCase struct {
	name string
	// root, f1, f2: minutes ago last active, pinned, archived.
	ago      [3]int
	pinned   [3]bool
	archived [3]bool
	pageF1   bool // f1 is a page's chat (another scope)
	want     int
}

var familyCases = []familyCase{
	{name: "a tie goes to the younger", ago: [3]int{5, 5, 1}, want: 1},
	{name: "a pinned sibling is another list", ago: [3]int{5, 1, 9}, pinned: [3]bool{false, true, false}, want: 0},
	{name: "an archived sibling is not the sidebar's", ago: [3]int{5, 1, 9},
		pinned: [3]bool{true, false, false}, archived: [3]bool{false, true, false}, want: 0},
	{name: "an archived branch's heir is archived", ago: [3]int{1, 5, 9}, archived: [3]bool{false, true, true}, want: 1},
	{name: "a page chat is another scope", ago: [3]int{5, 1, 9}, pageF1: true, want: 0},
}

// arrangeFamily makes a case's family for the user and returns root, f1, f2.
func arrangeFamily(t *testing.T, s *Store, userID int64, c familyCase) [3]int64 {
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
			base.Add(-time.Duration(c.ago[i])*time.Minute).UTC(), c.pinned[i], c.archived[i], id).Error; err != nil {
			t.Fatal(err)
		}
	}
	if c.pageF1 {
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
		for _, c := range familyCases {
			ids := arrangeFamily(t, s, ann.ID, c)
			gone, err := s.DeleteExchange(ctx, ann.ID, ids[2])
			if err != nil {
				t.Fatal(err)
			}
			want := ids[c.want]
			heir := int64(0)
			if gone.Heir != nil {
				heir = gone.Heir.ID
			}
			if heir != want {
				t.Errorf("%s: the heir is %d, want %d", c.name, heir, want)
				continue
			}
			heads, err := s.FamilyHeads(ctx, ann.ID, []int64{want})
			if err != nil {
				t.Fatal(err)
			}
			if !heads[want].Head {
				t.Errorf("%s: the heir %d does not head its list in the sidebar: %+v", c.name, want, heads[want])
			}
		}
	})
}
