package models

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// FamilyHeads: one head per family and list (the member active last, of
// the same scope, pinned and archived state), the family's size, and
// nothing for another user's exchanges; on both dialects.
func TestFamilyHeads(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newForkFixture(t, s)
		lone, _, _ := mustTurn(t, s, TurnStart{UserID: f.ann.ID, Query: "alone"}, "yes")
		bobs, _, _ := mustTurn(t, s, TurnStart{UserID: f.bob.ID, Query: "bob's"}, "his")
		base := time.Now().Add(-time.Hour)
		setUpdatedAt(t, s, f.root.ID, base)
		setUpdatedAt(t, s, f.f1.ID, base.Add(2*time.Minute))
		setUpdatedAt(t, s, f.f2.ID, base.Add(time.Minute))

		ids := []int64{f.root.ID, f.f1.ID, f.f2.ID, lone.ID, bobs.ID}
		heads, err := s.FamilyHeads(ctx, f.ann.ID, ids)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]FamilyHead{
			f.root.ID: {RootID: f.root.ID, Branches: 3},
			f.f1.ID:   {RootID: f.root.ID, Branches: 3, Head: true},
			f.f2.ID:   {RootID: f.root.ID, Branches: 3},
			lone.ID:   {RootID: lone.ID, Branches: 1, Head: true},
		}
		if len(heads) != len(want) {
			t.Fatalf("heads %+v, want %+v (nothing of bob's)", heads, want)
		}
		for id, w := range want {
			if heads[id] != w {
				t.Errorf("exchange %d: %+v, want %+v", id, heads[id], w)
			}
		}

		// A pinned branch is in another list: it heads the Pinned group,
		// and the family's unpinned head is the next most active.
		pinned := true
		if _, err := s.UpdateExchange(ctx, f.ann.ID, f.f1.ID, ExchangeUpdate{Pinned: &pinned}); err != nil {
			t.Fatal(err)
		}
		setUpdatedAt(t, s, f.f1.ID, base.Add(2*time.Minute))
		heads, err = s.FamilyHeads(ctx, f.ann.ID, ids)
		if err != nil {
			t.Fatal(err)
		}
		if !heads[f.f1.ID].Head || !heads[f.f2.ID].Head || heads[f.root.ID].Head {
			t.Fatalf("after pinning f1: %+v", heads)
		}

		// Deleting the root keeps the family whole, under a new root.
		if _, err := s.DeleteExchange(ctx, f.ann.ID, f.root.ID); err != nil {
			t.Fatal(err)
		}
		heads, err = s.FamilyHeads(ctx, f.ann.ID, []int64{f.f1.ID, f.f2.ID})
		if err != nil {
			t.Fatal(err)
		}
		if heads[f.f1.ID].RootID != f.f1.ID || heads[f.f2.ID].RootID != f.f1.ID || heads[f.f2.ID].Branches != 2 {
			t.Fatalf("after deleting the root: %+v", heads)
		}

		got, err := s.MessagesAtSeqs(ctx, f.ann.ID, f.f2.ID, []int64{4, 0, 9})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || *got[0].Seq != 0 || got[1].Content != "india words" {
			t.Fatalf("messages at 0, 4 and 9: %v", seqs(got))
		}
		if _, err := s.MessagesAtSeqs(ctx, f.bob.ID, f.f2.ID, []int64{0}); err == nil {
			t.Fatal("bob read ann's messages")
		}
	})
}

// TestFamilyHeadsReadNoOtherChats: the members' read finds a family's
// forks by their parent's id and reads no chat outside the family, however
// the planner weighs a big history (it once scanned every chat at every
// live event: 26 ms a call in 100,000 chats).
func TestFamilyHeadsReadNoOtherChats(t *testing.T) {
	s := newSQLite(t, Options{})
	u := mustUser(t, s, "plan")
	conn := planConn(t, s,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
		 INSERT INTO exchanges (uid, user_id, scope, title, agent_type, turn_count, created_at, updated_at)
		 SELECT 'x-' || i, `+fmt.Sprint(u.ID)+`, 'general', 'chat ' || i, 'router', 1, datetime('now'), datetime('now') FROM n`,
		`ANALYZE`)
	stmt := strings.Replace(familyMembersSQL(s.orderedJoin()), "IN ?", "IN (?)", 1)
	plan := strings.Join(queryPlan(t, conn, stmt, 1, u.ID, MaxForkDepth), "\n")
	if strings.Contains(plan, "SCAN e") || strings.Contains(plan, "SCAN exchanges") ||
		!strings.Contains(plan, "SEARCH e USING INDEX exchanges_forked_from (forked_from_id=?)") {
		t.Fatalf("the family's members are read by a scan:\n%s", plan)
	}
}
