package models

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"palaver/internal/dbtest"
)

// importMarker is in every imported message below, for search.
const importMarker = "zebraquokka"

// importChat is an imported exchange of two entries holding importMarker;
// parent, when set, makes it a fork at seq 1 of that exchange (whose first
// entry it copies).
func importChat(n int, parent *ExportedExchange) *ExportedExchange {
	at := time.Date(2024, 5, 1, 12, 0, n, 0, time.UTC)
	e := &ExportedExchange{Exchange: Exchange{UID: newUID(), Scope: ScopeGeneral, Title: fmt.Sprintf("chat %d", n),
		AgentType: "router", CreatedAt: at, UpdatedAt: at}}
	first := fmt.Sprintf("%s question %d", importMarker, n)
	if parent != nil {
		first = parent.Messages[0].Content
		e.ParentUID, e.ForkedAtSeq = &parent.UID, ptr(int64(1))
	}
	e.Messages = []Message{
		{UID: newUID(), Seq: ptr(int64(0)), Role: RoleUser, Content: first, CreatedAt: at},
		{UID: newUID(), Seq: ptr(int64(1)), Role: RoleAssistant, Content: fmt.Sprintf("%s answer %d", importMarker, n), CreatedAt: at},
	}
	return e
}

// An import that fails halfway, after batches were committed (their
// messages already in the search index, their forks in their families),
// leaves nothing of itself: no exchange, message, page, search entry or
// fork family; what the account had stays.
func TestImportFailingHalfwayLeavesNothing(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		job := "job-7"
		had, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeJob, JobID: &job, Query: "about the job"}, "the job's answer")
		before := map[string]int64{
			"exchanges": count(t, s, "exchanges", "user_id = ?", ann.ID),
			"messages":  count(t, s, "messages", "1 = 1"),
			"pages":     count(t, s, "pages", "user_id = ?", ann.ID),
		}
		const fail = importBatchItems + 30 // in the second batch
		var prev *ExportedExchange
		n := 0
		committed := false
		_, err := s.Import(ctx, ann.ID, func() (*ImportItem, error) {
			n++
			where := fmt.Sprintf("line %d", n+1)
			switch {
			case n == 1:
				at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
				p := &ExportedPage{Page: Page{UID: newUID(), Title: "notes", Content: importMarker + " page", CreatedAt: at, UpdatedAt: at}}
				p.Revisions = []ExportedRevision{{PageRevision: PageRevision{UID: newUID(), Content: importMarker + " page", EditSource: "user", CreatedAt: at}}}
				return &ImportItem{Page: p, Where: where}, nil
			case n == importBatchItems+2:
				// The first batch is committed: index it now, so that the
				// undo must take its entries out of the index.
				if err := s.CatchUpSearch(ctx); err != nil {
					return nil, err
				}
				hits, err := s.Search(ctx, ann.ID, SearchQuery{Terms: ParseSearch(importMarker), Limit: 5})
				if err != nil {
					return nil, err
				}
				committed = len(hits) > 0 && count(t, s, "exchanges", "user_id = ? AND forked_from_id IS NOT NULL", ann.ID) > 0
			case n == fail:
				e := importChat(n, nil)
				e.Scope, e.JobID = ScopeJob, &job // the account has a chat about that job
				return &ImportItem{Exchange: e, Where: where}, nil
			case n > fail:
				return nil, io.EOF
			}
			var parent *ExportedExchange
			if n%3 == 0 {
				parent = prev
			}
			prev = importChat(n, parent)
			return &ImportItem{Exchange: prev, Where: where}, nil
		})
		var refused *ImportError
		if !errors.As(err, &refused) || !errors.Is(err, ErrImport) {
			t.Fatalf("the import: %v, want an *ImportError", err)
		}
		if refused.Where != fmt.Sprintf("line %d", fail+1) {
			t.Errorf("refused at %q", refused.Where)
		}
		if !committed {
			t.Fatal("no batch was committed, searchable and forked before the failure: the test would prove nothing")
		}
		after := map[string]int64{
			"exchanges": count(t, s, "exchanges", "user_id = ?", ann.ID),
			"messages":  count(t, s, "messages", "1 = 1"),
			"pages":     count(t, s, "pages", "user_id = ?", ann.ID),
		}
		for k := range before {
			if before[k] != after[k] {
				t.Errorf("%s: %d before the import, %d after it failed", k, before[k], after[k])
			}
		}
		if n := count(t, s, "page_revisions", "1 = 1"); n != 0 {
			t.Errorf("%d revisions left", n)
		}
		if err := s.CatchUpSearch(ctx); err != nil {
			t.Fatal(err)
		}
		hits, err := s.Search(ctx, ann.ID, SearchQuery{Terms: ParseSearch(importMarker), Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 0 {
			t.Errorf("search still finds %d hits of the undone import", len(hits))
		}
		if s.dialect == "sqlite" {
			indexIntact(t, s)
			if n := count(t, s, "fork_families", "exchange_id NOT IN (SELECT id FROM exchanges) OR family_id NOT IN (SELECT id FROM exchanges)"); n != 0 {
				t.Errorf("%d fork_families rows name exchanges that are gone", n)
			}
		}
		if _, err := s.Exchange(ctx, ann.ID, had.ID); err != nil {
			t.Errorf("the account's own chat: %v", err)
		}
	})
}

// A turn's reply is kept when another connection holds the writer for
// longer than the busy timeout: the commit waits its turn rather than fail
// "finish turn: database is locked".
func TestFinishTurnOutwaitsAHeldWriter(t *testing.T) {
	const busy = 200 * time.Millisecond
	s := newSQLite(t, Options{BusyTimeout: busy})
	ctx := context.Background()
	ann := mustUser(t, s, "ann")
	ex, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "hello", Owner: "o"})
	released := dbtest.HoldWriter(t, s, 5*busy)
	start := time.Now()
	if err := s.FinishTurn(ctx, ex.ID, "o", assistant("the reply")); err != nil {
		t.Fatalf("the reply, after %s with the writer held: %v", time.Since(start).Round(time.Millisecond), err)
	}
	<-released
	if got := time.Since(start); got < 4*busy {
		t.Fatalf("the commit took %s: the writer was not held", got)
	}
	msgs, err := s.Messages(ctx, ann.ID, ex.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[1].Content != "the reply" {
		t.Fatalf("the log: %v", seqs(msgs))
	}
}

// Rows forming a fork cycle (A forked from B, B from A: data no fork
// makes, written here directly) do not make any family walk loop: each
// read of the family, and the delete, answers at once.
func TestForkCycleWalksEnd(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ann := mustUser(t, s, "ann")
		a, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "a"}, "a's reply")
		b, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "b"}, "b's reply")
		c, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "c"}, "c's reply")
		for _, link := range [][2]int64{{a.ID, b.ID}, {b.ID, a.ID}, {c.ID, a.ID}} {
			if err := s.db.Exec("UPDATE exchanges SET forked_from_id = ?, forked_at_seq = 1 WHERE id = ?", link[1], link[0]).Error; err != nil {
				t.Fatal(err)
			}
		}
		step := func(what string, fn func() error) {
			t.Helper()
			start := time.Now()
			if err := fn(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("%s took %s", what, d)
			}
		}
		for _, id := range []int64{a.ID, b.ID, c.ID} {
			step("family", func() error { _, err := s.Family(ctx, ann.ID, id); return err })
			step("family branches", func() error { _, err := s.FamilyBranches(ctx, ann.ID, id); return err })
			step("branch points", func() error { _, err := s.BranchPoints(ctx, ann.ID, id); return err })
		}
		step("family heads", func() error { _, err := s.FamilyHeads(ctx, ann.ID, []int64{a.ID, b.ID, c.ID}); return err })
		step("delete", func() error { return errOf(s.DeleteExchange(ctx, ann.ID, a.ID)) })
		step("delete the rest", func() error { _, err := s.DeleteExchanges(ctx, ann.ID, []int64{b.ID, c.ID}); return err })
	})
}
