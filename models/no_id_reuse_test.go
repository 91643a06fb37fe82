package models

import (
	"context"
	"testing"
)

// TestDeletedTopIDsAreNeverGivenAgain deletes the newest account, page,
// revision, key, exchange and message, and makes the next of each: every
// one gets a new id (issue 22: SQLite without AUTOINCREMENT gave the
// deleted top id again, and a session of the deleted account, which names
// its user by id, spoke as the next one to register).
func TestDeletedTopIDsAreNeverGivenAgain(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustUser(t, s, "ann")
		old := mustUser(t, s, "bob")
		page := mustPage(t, s, old.ID, "Trip")
		if _, err := s.UpdatePage(ctx, old.ID, page.ID, nil, "# Trip\nmore"); err != nil {
			t.Fatal(err)
		}
		var oldRev int64
		if err := s.db.Raw("SELECT MAX(id) FROM page_revisions WHERE page_id = ?", page.ID).Scan(&oldRev).Error; err != nil || oldRev == 0 {
			t.Fatalf("no revision (%v)", err)
		}
		oldKey, err := s.CreateAPIKey(ctx, old.ID, "k", "hash-bob")
		if err != nil {
			t.Fatal(err)
		}
		oldEx, _, oldReply := mustTurn(t, s, TurnStart{UserID: old.ID, Query: "hello"}, "hi")

		if _, err := s.DeleteOwnAccount(ctx, old.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "users", "id >= ?", old.ID); n != 0 {
			t.Fatalf("%d rows of the deleted account remain", n)
		}

		next := mustUser(t, s, "cy")
		if next.ID <= old.ID {
			t.Errorf("the next account got id %d; the deleted one had %d", next.ID, old.ID)
		}
		p2 := mustPage(t, s, next.ID, "Other")
		if p2.ID <= page.ID {
			t.Errorf("the next page got id %d; the deleted one had %d", p2.ID, page.ID)
		}
		if _, err := s.UpdatePage(ctx, next.ID, p2.ID, nil, "# Other\nmore"); err != nil {
			t.Fatal(err)
		}
		var newRev int64
		if err := s.db.Raw("SELECT MAX(id) FROM page_revisions WHERE page_id = ?", p2.ID).Scan(&newRev).Error; err != nil {
			t.Fatal(err)
		}
		if newRev <= oldRev {
			t.Errorf("the next revision got id %d; the deleted one had %d", newRev, oldRev)
		}
		k2, err := s.CreateAPIKey(ctx, next.ID, "k", "hash-cy")
		if err != nil {
			t.Fatal(err)
		}
		if k2.ID <= oldKey.ID {
			t.Errorf("the next key got id %d; the deleted one had %d", k2.ID, oldKey.ID)
		}
		ex2, q2, _ := mustTurn(t, s, TurnStart{UserID: next.ID, Query: "hello"}, "hi")
		if ex2.ID <= oldEx.ID {
			t.Errorf("the next exchange got id %d; the deleted one had %d", ex2.ID, oldEx.ID)
		}
		if q2.ID <= oldReply.ID {
			t.Errorf("the next message got id %d; the deleted ones went up to %d", q2.ID, oldReply.ID)
		}

		// An exchange alone, the newest, deleted by its owner.
		ex3, _, r3 := mustTurn(t, s, TurnStart{UserID: next.ID, Query: "again"}, "yes")
		if _, err := s.DeleteExchange(ctx, next.ID, ex3.ID); err != nil {
			t.Fatal(err)
		}
		ex4, q4, _ := mustTurn(t, s, TurnStart{UserID: next.ID, Query: "once more"}, "ok")
		if ex4.ID <= ex3.ID || q4.ID <= r3.ID {
			t.Errorf("after deleting exchange %d (messages to %d) the next got %d (message %d)", ex3.ID, r3.ID, ex4.ID, q4.ID)
		}
	})
}
