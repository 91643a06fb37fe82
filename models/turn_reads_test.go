package models

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestStartTurnReadsWhatTheTurnWouldRead: what StartTurnReading reads with
// the user message is what the turn would read after it by itself (its
// context, its instructions, its model preferences, its budget); what it
// cannot read there (a text not kept yet, a project's files) it leaves to
// the turn. PostgreSQL leaves it all.
func TestStartTurnReadsWhatTheTurnWouldRead(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		if _, err := s.SetInstructions(ctx, ann.ID, "I garden.", "Short answers.", true); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddMemory(ctx, ann.ID, "likes tea", nil); err != nil {
			t.Fatal(err)
		}
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "first"}, "one")
		mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Query: "second"}, "two")
		start := func(ts TurnStart) (*Exchange, *Message, *TurnReads) {
			t.Helper()
			ts.UserID, ts.Scope, ts.AgentType, ts.Owner = ann.ID, ScopeGeneral, "router", "reads"
			got, msg, reads, err := s.StartTurnReading(ctx, ts, 3)
			if err != nil {
				t.Fatal(err)
			}
			return got, msg, reads
		}
		finish := func(ex *Exchange) {
			t.Helper()
			if err := s.FinishTurn(ctx, ex.ID, "reads", assistant("ok")); err != nil {
				t.Fatal(err)
			}
		}

		// The instructions' text is not kept yet: left to the turn.
		got, msg, reads := start(TurnStart{ExchangeID: ex.ID, Query: "third"})
		if s.dialect == "postgres" {
			if reads != nil {
				t.Fatalf("PostgreSQL read %+v in the transaction", reads)
			}
			finish(got)
			return
		}
		if reads == nil {
			t.Fatal("SQLite read nothing with the message")
		}
		recent, err := s.RecentContext(ctx, ann.ID, ex.ID, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(reads.Recent, recent) || len(recent) != 3 || recent[2].ID != msg.ID {
			t.Errorf("context read with the message %+v; read after it %+v", reads.Recent, recent)
		}
		if reads.Composed != nil {
			t.Errorf("a text not kept yet was taken as composed: %+v", reads.Composed)
		}
		prefs, err := s.ModelPreferencesOf(ctx, ann.ID, ex.ID, nil)
		if err != nil || reads.Prefs != prefs {
			t.Errorf("preferences %+v; ModelPreferencesOf %+v, %v", reads.Prefs, prefs, err)
		}
		if !reads.Unlimited || reads.Attached {
			t.Errorf("no budget, no files: %+v", reads)
		}
		composed, err := s.ComposeInstructions(ctx, ann.ID, ex.ID) // keeps the text
		if err != nil {
			t.Fatal(err)
		}
		finish(got)

		// Kept now: composed with the message, with a budget to check and
		// a file attached.
		if err := s.SetBudget(ctx, BudgetDefault, nil, 1000, 0); err != nil {
			t.Fatal(err)
		}
		f := mustFile(t, s, ann.ID, "notes.txt", []byte("notes"))
		got, _, reads = start(TurnStart{ExchangeID: ex.ID, Query: "fourth", Attachments: []int64{f.ID}})
		if reads == nil || reads.Composed == nil || !reflect.DeepEqual(*reads.Composed, composed) {
			t.Fatalf("composed with the message %+v; ComposeInstructions %+v", reads, composed)
		}
		if reads.Unlimited || !reads.Attached {
			t.Errorf("a budget and a file: %+v", reads)
		}
		finish(got)

		// A project with a file: its instructions are left to the turn
		// (a project's files may be on an S3 server).
		name := "garden"
		p, err := s.CreateProject(ctx, ann.ID, ProjectInput{Name: &name})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddProjectFile(ctx, ann.ID, p.ID, f.ID); err != nil {
			t.Fatal(err)
		}
		pid := p.ID
		got, _, reads = start(TurnStart{Query: "in the project", ProjectID: &pid})
		if reads == nil || reads.Composed != nil || len(reads.Recent) != 1 {
			t.Errorf("a project with files: %+v", reads)
		}
		finish(got)
	})
}

// TestFinishReplyMarksInItsCommit: on SQLite the reply's commit records it
// in the read mark, as ReplyFinished would after it; on PostgreSQL it says
// it did not, and the caller marks.
func TestFinishReplyMarksInItsCommit(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		finish := func(exchangeID int64, seen bool) bool {
			t.Helper()
			ts := TurnStart{UserID: ann.ID, ExchangeID: exchangeID, Query: "hello"}
			ex, _ := mustStart(t, s, ts)
			_, marked, err := s.FinishReply(ctx, ex.ID, *ex.TurnOwner, &seen, assistant("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if !marked {
				if err := s.ReplyFinished(ctx, ann.ID, ex.ID, seen, time.Now().UTC()); err != nil {
					t.Fatal(err)
				}
			}
			if want := s.dialect != "postgres"; marked != want {
				t.Errorf("marked = %v on %s", marked, s.dialect)
			}
			return marked
		}
		unseen, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "a"}, "b")
		seen, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "c"}, "d")
		finish(unseen.ID, false)
		finish(seen.ID, true)
		if u, err := s.Unread(ctx, ann.ID); err != nil || !u[unseen.ID] || u[seen.ID] {
			t.Fatalf("unread = %v, %v; want only %d", u, err, unseen.ID)
		}
		// Seen after all: the mark moves to the log's end.
		finish(unseen.ID, true)
		if u, err := s.Unread(ctx, ann.ID); err != nil || len(u) != 0 {
			t.Fatalf("after the seen reply: unread = %v, %v", u, err)
		}
	})
}

// TestStartTurnChecksTheScope: with CheckScope, a message to an exchange
// of another scope gives a ScopeError and writes nothing; another user's
// exchange is not found.
func TestStartTurnChecksTheScope(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		page := mustPage(t, s, ann.ID, "Notes")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &page.ID, Query: "a"}, "b")
		_, _, err := s.StartTurn(ctx, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Scope: ScopeGeneral, CheckScope: true,
			AgentType: "router", Query: "c", Owner: "o"})
		var se *ScopeError
		if !errors.As(err, &se) || se.Scope != ScopePage {
			t.Fatalf("a general message to a page's chat: %v", err)
		}
		after, err := s.Exchange(ctx, ann.ID, ex.ID)
		if err != nil || after.TurnCount != ex.TurnCount || after.TurnStatus != TurnIdle {
			t.Fatalf("the refused message changed the header: %+v, %v", after, err)
		}
		if msgs, err := s.Messages(ctx, ann.ID, ex.ID, nil); err != nil || len(msgs) != 2 {
			t.Fatalf("the log holds %d entries (%v), want 2", len(msgs), err)
		}
		_, _, err = s.StartTurn(ctx, TurnStart{UserID: bob.ID, ExchangeID: ex.ID, Scope: ScopeGeneral, CheckScope: true,
			AgentType: "router", Query: "c", Owner: "o"})
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob's message to ann's chat: %v", err)
		}
	})
}
