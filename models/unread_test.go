package models

import (
	"context"
	"testing"
	"time"

	"palaver/internal/dbtest"
)

// The marks on both dialects: no row is read; a reply finished unseen is
// unread, one seen is not; read up to a seq, unread, all read; a running
// turn is never unread; another user's exchange is ErrNotFound.
func TestUnreadMarks(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx, now := context.Background(), time.Now().UTC()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "hello"}, "hi")
		other, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "again"}, "yes")
		unread := func() map[int64]bool {
			t.Helper()
			m, err := s.Unread(ctx, ann.ID)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		if len(unread()) != 0 {
			t.Fatal("an exchange without a mark is unread")
		}
		if err := s.ReplyFinished(ctx, ann.ID, ex.ID, false, now); err != nil {
			t.Fatal(err)
		}
		if err := s.ReplyFinished(ctx, ann.ID, other.ID, true, now); err != nil {
			t.Fatal(err)
		}
		if u := unread(); !u[ex.ID] || u[other.ID] {
			t.Fatalf("after the replies: %v", u)
		}
		if _, err := s.MarkRead(ctx, bob.ID, ex.ID, nil, now); err == nil {
			t.Fatal("bob marked ann's exchange read")
		}
		wantErr(t, s.MarkUnread(ctx, bob.ID, other.ID, now), ErrNotFound, "bob's mark unread")
		if changed, err := s.MarkRead(ctx, ann.ID, ex.ID, ptr(int64(0)), now); err != nil || changed || !unread()[ex.ID] { // seen up to the question already
			t.Fatalf("read up to 0: %v %v %v", changed, err, unread())
		}
		if changed, err := s.MarkRead(ctx, ann.ID, ex.ID, nil, now); err != nil || !changed || unread()[ex.ID] {
			t.Fatalf("read: %v %v %v", changed, err, unread())
		}
		if changed, _ := s.MarkRead(ctx, ann.ID, ex.ID, nil, now); changed {
			t.Fatal("reading a read exchange changed something")
		}
		if err := s.MarkUnread(ctx, ann.ID, other.ID, now); err != nil || !unread()[other.ID] {
			t.Fatalf("unread: %v %v", err, unread())
		}
		// A turn running on it: not unread until it ends.
		_, _ = mustStart(t, s, TurnStart{UserID: ann.ID, ExchangeID: other.ID, Query: "more"})
		if unread()[other.ID] {
			t.Fatal("a running turn's exchange is unread")
		}
		if err := s.FinishTurn(ctx, other.ID, "owner-1", assistant("done")); err != nil {
			t.Fatal(err)
		}
		if !unread()[other.ID] {
			t.Fatal("the finished turn's exchange is not unread")
		}
		if n, err := s.MarkAllRead(ctx, ann.ID, now); err != nil || n != 1 || len(unread()) != 0 {
			t.Fatalf("all read: %d %v %v", n, err, unread())
		}
	})
}

// TestReplyFinishedLeavesAMarkWithoutTheWriter: a reply that leaves the
// mark as it is (unread already; seen with no mark) writes nothing, so it
// does not wait for SQLite's writer: held elsewhere past the busy
// timeout, the call still succeeds. A mark that changes is still written.
func TestReplyFinishedLeavesAMarkWithoutTheWriter(t *testing.T) {
	ctx, now := context.Background(), time.Now().UTC()
	s := newSQLite(t, Options{BusyTimeout: 50 * time.Millisecond})
	ann := mustUser(t, s, "ann")
	ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "hello"}, "hi")
	other, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "again"}, "yes")
	if err := s.ReplyFinished(ctx, ann.ID, ex.ID, false, now); err != nil {
		t.Fatal(err)
	}
	released := dbtest.HoldWriter(t, s, 2*time.Second)
	if err := s.ReplyFinished(ctx, ann.ID, ex.ID, false, now); err != nil {
		t.Errorf("unread again, the writer held elsewhere: %v", err)
	}
	if err := s.ReplyFinished(ctx, ann.ID, other.ID, true, now); err != nil {
		t.Errorf("seen without a mark, the writer held elsewhere: %v", err)
	}
	<-released
	if u, err := s.Unread(ctx, ann.ID); err != nil || !u[ex.ID] || u[other.ID] {
		t.Fatalf("unread = %v, %v; want only %d", u, err, ex.ID)
	}
	// Seen now: the mark moves to the end.
	if err := s.ReplyFinished(ctx, ann.ID, ex.ID, true, now); err != nil {
		t.Fatal(err)
	}
	if u, err := s.Unread(ctx, ann.ID); err != nil || len(u) != 0 {
		t.Fatalf("after the seen reply: unread = %v, %v", u, err)
	}
}
