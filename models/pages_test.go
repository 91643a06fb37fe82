package models

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestPagesCRUDAndRevisions(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		p, err := s.CreatePage(ctx, ann.ID, "Trip", "# Trip\n")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.Page(ctx, ann.ID, p.ID); err != nil || got.Title != "Trip" || got.Content != "# Trip\n" {
			t.Fatalf("page %+v, %v", got, err)
		}
		if _, err := s.Page(ctx, bob.ID, p.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob reads ann's page: %v", err)
		}

		title := "Trip plans"
		if _, err := s.UpdatePage(ctx, ann.ID, p.ID, &title, "# Trip\n\nv2\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdatePage(ctx, ann.ID, p.ID, nil, "# Trip\n\nv3\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdatePage(ctx, bob.ID, p.ID, nil, "pwned"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob updates ann's page: %v", err)
		}
		revs, err := s.Revisions(ctx, ann.ID, p.ID)
		if err != nil || len(revs) != 3 {
			t.Fatalf("revisions %+v, %v", revs, err)
		}
		for i, r := range revs {
			if r.EditSource != EditUser || r.MessageID != nil || r.PageID != p.ID || (i > 0 && r.ID <= revs[i-1].ID) {
				t.Fatalf("revision %d: %+v", i, r)
			}
		}
		if _, err := s.Revisions(ctx, bob.ID, p.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob lists ann's revisions: %v", err)
		}

		// Restore the first: new content, a new revision marked restore.
		got, err := s.RestoreRevision(ctx, ann.ID, p.ID, revs[0].ID)
		if err != nil || got.Content != "# Trip\n" || got.Title != "Trip plans" {
			t.Fatalf("restore %+v, %v", got, err)
		}
		revs, _ = s.Revisions(ctx, ann.ID, p.ID)
		if len(revs) != 4 || revs[3].EditSource != EditRestore {
			t.Fatalf("after restore: %+v", revs)
		}
		if _, err := s.RestoreRevision(ctx, bob.ID, p.ID, revs[0].ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob restores ann's revision: %v", err)
		}
		other, _ := s.CreatePage(ctx, ann.ID, "Other", "o")
		if _, err := s.RestoreRevision(ctx, ann.ID, other.ID, revs[0].ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a revision restored onto another page: %v", err)
		}
		if cur, _ := s.Page(ctx, ann.ID, other.ID); cur.Content != "o" {
			t.Fatalf("the other page changed: %q", cur.Content)
		}

		list, err := s.ListPages(ctx, ann.ID)
		if err != nil || len(list) != 2 || list[0].ID != other.ID || list[1].ID != p.ID || list[1].Revisions != 4 || list[0].Revisions != 1 {
			t.Fatalf("list %+v, %v", list, err)
		}
		if list[1].Title != "Trip plans" || list[1].Content != "# Trip\n" || list[1].UserID != ann.ID {
			t.Fatalf("list item %+v", list[1].Page)
		}
		if list, _ := s.ListPages(ctx, bob.ID); len(list) != 0 {
			t.Fatalf("bob lists %+v", list)
		}
	})
}

// Deleting a page soft-deletes it and hard-deletes its chats, in one
// transaction; from then on it answers not found everywhere.
func TestDeletePage(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		p, _ := s.CreatePage(ctx, ann.ID, "Doomed", "# D\n")
		keep, _ := s.CreatePage(ctx, ann.ID, "Kept", "# K\n")
		chat1, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &p.ID, Query: "q1"}, "a1")
		mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: chat1.ID, Query: "q2"}, "a2")
		mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &p.ID, Query: "q3"}, "a3")
		kept, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &keep.ID, Query: "k"}, "k")
		general, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "g"}, "g")

		if _, _, err := s.DeletePage(ctx, bob.ID, p.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob deletes ann's page: %v", err)
		}
		if n := count(t, s, "exchanges", "page_id = ?", p.ID); n != 2 {
			t.Fatalf("a refused delete removed chats: %d left", n)
		}
		exs, msgs, err := s.DeletePage(ctx, ann.ID, p.ID)
		if err != nil || exs != 2 || msgs != 6 {
			t.Fatalf("delete: %d exchanges, %d messages, %v", exs, msgs, err)
		}
		if n := count(t, s, "exchanges", "page_id = ?", p.ID); n != 0 {
			t.Fatalf("%d exchanges of the page left", n)
		}
		if n := count(t, s, "messages", "exchange_id = ?", chat1.ID); n != 0 {
			t.Fatalf("%d messages of its chats left", n)
		}
		if n := count(t, s, "pages", "id = ? AND deleted_at IS NOT NULL", p.ID); n != 1 {
			t.Fatal("the page row is not soft-deleted")
		}
		// Its text goes: the row keeps only its id (never given again).
		if n := count(t, s, "page_revisions", "page_id = ?", p.ID); n != 0 {
			t.Fatalf("revisions of a deleted page: %d", n)
		}
		if n := count(t, s, "pages", "id = ? AND title = '' AND content = ''", p.ID); n != 1 {
			t.Fatal("the deleted page keeps its title or text")
		}
		for _, id := range []int64{kept.ID, general.ID} {
			if _, err := s.Exchange(ctx, ann.ID, id); err != nil {
				t.Fatalf("exchange %d went with the page: %v", id, err)
			}
		}
		if _, err := s.Page(ctx, ann.ID, p.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted page still read: %v", err)
		}
		if _, err := s.UpdatePage(ctx, ann.ID, p.ID, nil, "x"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted page updated: %v", err)
		}
		if _, err := s.Revisions(ctx, ann.ID, p.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted page's revisions listed: %v", err)
		}
		if _, _, err := s.DeletePage(ctx, ann.ID, p.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted twice: %v", err)
		}
		if list, _ := s.ListPages(ctx, ann.ID); len(list) != 1 || list[0].ID != keep.ID {
			t.Fatalf("list after delete %+v", list)
		}
	})
}

func TestPageContentRoundTrip(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		content := "# Ünïcode 😀\r\n\r\nCRLF kept\r\n" + strings.Repeat("x", 100_000)
		p, err := s.CreatePage(ctx, ann.ID, "Big", content)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Page(ctx, ann.ID, p.ID)
		if err != nil || got.Content != content {
			t.Fatalf("content changed on the way: %v", err)
		}
	})
}
