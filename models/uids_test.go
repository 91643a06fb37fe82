package models

import (
	"context"
	"regexp"
	"testing"
)

// TestEveryRowGetsAUID: whatever way the store makes an exchange, a
// message, a page or a revision (a turn, an error row, a fork's copies, a
// page save, a restore), the row has a uid of its own, in UUID form, and
// uids are never shared.
func TestEveryRowGetsAUID(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: "first"}, "reply")
		mustTurn(t, s, TurnStart{UserID: u.ID, ExchangeID: ex.ID, Query: "second"}, "reply two")
		ex2, _ := mustStart(t, s, TurnStart{UserID: u.ID, Query: "will fail"})
		if _, err := s.FailTurn(ctx, ex2.ID, *ex2.TurnOwner, "it failed"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Fork(ctx, u.ID, ex.ID, 3); err != nil {
			t.Fatal(err)
		}
		p, err := s.CreatePage(ctx, u.ID, "Notes", "# Notes")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdatePage(ctx, u.ID, p.ID, nil, "# Notes\n\nmore"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreatePage(ctx, u.ID, "More", ""); err != nil {
			t.Fatal(err)
		}
		revs, err := s.Revisions(ctx, u.ID, p.ID)
		if err != nil || len(revs) < 2 {
			t.Fatalf("revisions %v: %v", revs, err)
		}
		if _, err := s.RestoreRevision(ctx, u.ID, p.ID, revs[0].ID); err != nil {
			t.Fatal(err)
		}
		form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
		for _, table := range []string{"exchanges", "messages", "pages", "page_revisions"} {
			var uids []string
			if err := s.db.Raw("SELECT uid FROM " + table).Scan(&uids).Error; err != nil {
				t.Fatal(err)
			}
			if len(uids) < 2 {
				t.Fatalf("%s: %d rows, the test made more", table, len(uids))
			}
			seen := map[string]bool{}
			for _, uid := range uids {
				if !form.MatchString(uid) {
					t.Errorf("%s: uid %q is not a UUID", table, uid)
				}
				if seen[uid] {
					t.Errorf("%s: uid %s twice", table, uid)
				}
				seen[uid] = true
			}
		}
	})
}
