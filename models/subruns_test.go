package models

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// mustSubRun starts a sub-run of ex spawned at seq, with the parent's owner
// as its lease holder.
func mustSubRun(t *testing.T, s *Store, ex *Exchange, seq int64, task string) *Exchange {
	t.Helper()
	sub, run, err := s.StartSubRun(context.Background(), SubRunStart{
		UserID: ex.UserID, ParentID: ex.ID, ParentSeq: seq, Agent: "search", Task: task, Owner: "owner-1",
	})
	if err != nil {
		t.Fatalf("start sub-run: %v", err)
	}
	if run.Status != SubRunRunning || run.ExchangeID != sub.ID || run.FinishedAt != nil {
		t.Fatalf("new sub-run %+v", run)
	}
	return sub
}

func TestSubRunIsRecordedAndHidden(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		parent, q := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "search my chats for zebras"})
		if _, _, err := s.StartSubRun(ctx, SubRunStart{UserID: bob.ID, ParentID: parent.ID, ParentSeq: 0, Agent: "search", Owner: "x"}); !isNotFound(err) {
			t.Fatalf("a sub-run of another user's exchange: %v", err)
		}
		sub := mustSubRun(t, s, parent, *q.Seq, "zebras")
		if sub.Scope != ScopeSubRun || *sub.ParentID != parent.ID || *sub.ParentSeq != *q.Seq || sub.UserID != ann.ID {
			t.Fatalf("sub-run exchange %+v", sub)
		}
		// Its log is written like a turn's, then it ends.
		if _, err := s.AppendEntry(ctx, sub.ID, "owner-1", &Message{Role: RoleToolResult, Content: "zebras stripes result",
			Tool: &ToolFields{CallID: "c", Name: "search"}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		run, err := s.FinishSubRun(ctx, sub.ID, "owner-1", SubRunOK, "1 hit", assistant("found 1"))
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != SubRunOK || run.Result != "1 hit" || run.FinishedAt == nil || !run.FinishedAt.After(run.StartedAt) || run.Agent != "search" || run.Task != "zebras" {
			t.Fatalf("finished sub-run %+v", run)
		}
		msgs, err := s.Messages(ctx, ann.ID, sub.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := seqs(msgs); !slices.Equal(got, []string{"user@0", "tool_result@1", "assistant@2"}) {
			t.Fatalf("sub-run log %v", got)
		}
		if _, err := s.FinishSubRun(ctx, sub.ID, "owner-1", SubRunOK, "again"); !isLeaseLost(err) {
			t.Fatalf("finishing twice: %v", err)
		}

		// Listed under its parent, for its owner and the admin only.
		for _, list := range [][]SubRunView{mustList(t)(s.SubRuns(ctx, ann.ID, parent.ID)), mustList(t)(s.AdminSubRuns(ctx, parent.ID))} {
			if len(list) != 1 || list[0].ExchangeID != sub.ID || list[0].ParentSeq != *q.Seq || list[0].Status != SubRunOK || list[0].Entries != 3 {
				t.Fatalf("sub-runs %+v", list)
			}
		}
		if list := mustList(t)(s.SubRuns(ctx, bob.ID, parent.ID)); len(list) != 0 {
			t.Fatalf("bob sees ann's sub-runs: %+v", list)
		}
		if v, err := s.SubRunOf(ctx, ann.ID, sub.ID); err != nil || v.ParentID != parent.ID {
			t.Fatalf("sub-run of = %+v, %v", v, err)
		}
		if _, err := s.SubRunOf(ctx, bob.ID, sub.ID); !isNotFound(err) {
			t.Fatalf("bob reads ann's sub-run: %v", err)
		}

		// Out of the history, the search and the admin's list.
		hist, err := s.ListExchanges(ctx, ann.ID, ExchangeQuery{Scope: ScopeGeneral, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != 1 || hist[0].ID != parent.ID {
			t.Fatalf("history %+v", hist)
		}
		for _, hit := range search(t, s, ann.ID, "stripes") {
			t.Fatalf("the search finds a sub-run's entry: %+v", hit)
		}
		for _, hit := range search(t, s, ann.ID, "zebras") {
			if hit.ExchangeID == sub.ID {
				t.Fatalf("the search finds the sub-run: %+v", hit)
			}
		}
		if got := search(t, s, ann.ID, "zebras", func(q *SearchQuery) { q.Exclude = parent.ID }); len(got) != 0 {
			t.Fatalf("the excluded exchange is found: %+v", got)
		}
		rows, _, err := s.AdminListExchanges(ctx, AdminExchangeFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].ID != parent.ID {
			t.Fatalf("admin list %+v", rows)
		}
		if n, err := s.AdminCountExchanges(ctx, AdminExchangeFilter{}); err != nil || n != 1 {
			t.Fatalf("admin count %d, %v", n, err)
		}

		// Deleting the parent deletes its sub-runs, their logs and records.
		if _, err := s.DeleteExchange(ctx, ann.ID, parent.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "exchanges", "id = ?", sub.ID) + count(t, s, "sub_runs", "1 = 1") + count(t, s, "messages", "exchange_id = ?", sub.ID); n != 0 {
			t.Fatalf("%d rows of the sub-run outlive its parent", n)
		}
	})
}

func TestSubRunsNestAndCascade(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		parent, q := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "delegate"})
		sub := mustSubRun(t, s, parent, *q.Seq, "first")
		subsub := mustSubRun(t, s, sub, 0, "second")
		if _, err := s.FinishSubRun(ctx, subsub.ID, "owner-1", SubRunFailed, "it broke"); err != nil {
			t.Fatal(err)
		}
		if ex := reload(t, s, subsub.ID); ex.TurnStatus != TurnFailed {
			t.Fatalf("failed sub-run's turn state %q", ex.TurnStatus)
		}
		// A sub-run is not retried by hand (its parent's agent decides),
		// nor forked.
		if _, _, err := s.RetryTurn(ctx, ann.ID, subsub.ID, "owner-2", 5); !isNothingToRetry(err) {
			t.Fatalf("retry of a sub-run: %v", err)
		}
		if _, err := s.Fork(ctx, ann.ID, sub.ID, 1); !isNotFound(err) {
			t.Fatalf("fork of a sub-run: %v", err)
		}
		// A fork of the parent is an exchange of its own: the parent's
		// sub-runs stay the parent's.
		fork, err := s.Fork(ctx, ann.ID, parent.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if runs := mustList(t)(s.SubRuns(ctx, ann.ID, fork.ID)); len(runs) != 0 {
			t.Fatalf("the fork has sub-runs %+v", runs)
		}
		if _, err := s.DeleteExchange(ctx, ann.ID, parent.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "exchanges", "id <> ?", fork.ID) + count(t, s, "sub_runs", "1 = 1") + count(t, s, "messages", "exchange_id <> ?", fork.ID); n != 0 {
			t.Fatalf("%d rows left after deleting the root", n)
		}
	})
}

func TestStaleSubRunEndsFailed(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		parent, q := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "delegate"})
		sub := mustSubRun(t, s, parent, *q.Seq, "work")
		failed, err := s.RecoverStaleTurns(ctx, time.Now().Add(time.Hour), "the server stopped")
		if err != nil {
			t.Fatal(err)
		}
		var sawSub bool
		for _, ex := range failed {
			sawSub = sawSub || ex.ID == sub.ID && ex.Scope == ScopeSubRun
		}
		if !sawSub {
			t.Fatalf("recovered %+v", failed)
		}
		v, err := s.SubRunOf(ctx, ann.ID, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v.Status != SubRunFailed || v.Result != "the server stopped" || v.FinishedAt == nil {
			t.Fatalf("stale sub-run %+v", v)
		}
	})
}

func TestRetentionLeavesSubRunsToTheirParent(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		parent, q, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "delegate"}, "done")
		sub := mustSubRun(t, s, parent, *q.Seq, "work")
		if _, err := s.FinishSubRun(ctx, sub.ID, "owner-1", SubRunOK, "ok"); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-400 * 24 * time.Hour)
		setUpdatedAt(t, s, sub.ID, old)
		if _, err := s.RunRetention(ctx, RetentionRequest{Source: RetentionManual, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "exchanges", "id = ?", sub.ID); n != 1 {
			t.Fatal("retention deleted a sub-run of a live parent")
		}
		setUpdatedAt(t, s, parent.ID, old)
		if _, err := s.RunRetention(ctx, RetentionRequest{Source: RetentionManual, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "exchanges", "1 = 1"); n != 0 {
			t.Fatalf("%d exchanges left after the parent expired", n)
		}
	})
}

func TestReplaceTitleOnlyOverTheExpectedOne(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "how do herons fish"}, "patiently")
		before := reload(t, s, ex.ID)
		got, ok, err := s.ReplaceTitle(ctx, ann.ID, ex.ID, "how do herons fish", "Heron fishing")
		if err != nil || !ok || got.Title != "Heron fishing" {
			t.Fatalf("replace = %+v, %v, %v", got, ok, err)
		}
		if !got.UpdatedAt.Equal(before.UpdatedAt) {
			t.Fatalf("a title from the model is activity: updated_at %v, was %v", got.UpdatedAt, before.UpdatedAt)
		}
		if hits := search(t, s, ann.ID, "heron fishing"); len(hits) == 0 || hits[0].Role != RoleTitle {
			t.Fatalf("the new title is not searchable: %+v", hits)
		}
		if _, err := s.RenameExchange(ctx, ann.ID, ex.ID, "Mine"); err != nil {
			t.Fatal(err)
		}
		got, ok, err = s.ReplaceTitle(ctx, ann.ID, ex.ID, "Heron fishing", "Something else")
		if err != nil || ok || got.Title != "Mine" {
			t.Fatalf("replace over a person's title = %+v, %v, %v", got, ok, err)
		}
	})
}

func mustList(t *testing.T) func([]SubRunView, error) []SubRunView {
	return func(v []SubRunView, err error) []SubRunView {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func isNotFound(err error) bool       { return errors.Is(err, ErrNotFound) }
func isLeaseLost(err error) bool      { return errors.Is(err, ErrLeaseLost) }
func isNothingToRetry(err error) bool { return errors.Is(err, ErrNothingToRetry) }
