package models

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestStartTurnNewExchange(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ann := mustUser(t, s, "ann")
		query := "\n   \n  Plan   my\ttrip to Lisbon  \nwith the details below"
		ex, msg := mustStart(t, s, TurnStart{UserID: ann.ID, Query: query, AgentType: "router", Owner: "proc-a"})

		if ex.ID == 0 || ex.UserID != ann.ID || ex.Scope != ScopeGeneral {
			t.Errorf("exchange = %+v", ex)
		}
		if ex.Title != "Plan my trip to Lisbon" {
			t.Errorf("title = %q, want the first non-empty line, collapsed", ex.Title)
		}
		if ex.TurnCount != 1 || ex.TurnStatus != TurnRunning || ex.AgentType != "router" {
			t.Errorf("turn_count %d, status %q, agent %q; want 1, running, router", ex.TurnCount, ex.TurnStatus, ex.AgentType)
		}
		if ex.TurnOwner == nil || *ex.TurnOwner != "proc-a" || ex.TurnHeartbeatAt == nil {
			t.Errorf("lease owner %v, heartbeat %v; want proc-a and a time", ex.TurnOwner, ex.TurnHeartbeatAt)
		}
		if msg.Seq == nil || *msg.Seq != 0 || msg.Role != RoleUser || msg.Content != query || msg.ExchangeID != ex.ID {
			t.Errorf("user message = %+v (seq %v), want seq 0 holding the whole query", msg, msg.Seq)
		}
		// And it is all in the database, not only in the returned values.
		stored := reload(t, s, ex.ID)
		if stored.TurnStatus != TurnRunning || stored.TurnCount != 1 || stored.Title != ex.Title {
			t.Errorf("stored exchange = %+v", stored)
		}
		if n := count(t, s, "messages", "exchange_id = ? AND seq = 0 AND role = 'user' AND content = ?", ex.ID, query); n != 1 {
			t.Errorf("%d stored user messages at seq 0, want 1", n)
		}
	})
}

func TestTurnLifecycle(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		ex, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "first question", Owner: "proc-a"})

		// A second message while the reply is being written is refused, and
		// nothing is written.
		_, _, err := s.StartTurn(ctx, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Scope: ScopeGeneral,
			AgentType: "router", Query: "impatient", Owner: "proc-b"})
		wantErr(t, err, ErrTurnRunning, "StartTurn while running")
		if n := count(t, s, "messages", "exchange_id = ?", ex.ID); n != 1 {
			t.Errorf("%d messages after a refused turn, want 1", n)
		}
		if got := reload(t, s, ex.ID); got.TurnCount != 1 || *got.TurnOwner != "proc-a" {
			t.Errorf("refused turn changed the exchange: %+v", got)
		}

		// Only the lease holder may finish or fail the turn.
		err = s.FinishTurn(ctx, ex.ID, "proc-b", assistant("hijack"))
		wantErr(t, err, ErrLeaseLost, "FinishTurn by another owner")
		_, err = s.FailTurn(ctx, ex.ID, "proc-b", "hijack")
		wantErr(t, err, ErrLeaseLost, "FailTurn by another owner")
		if n := count(t, s, "messages", "exchange_id = ?", ex.ID); n != 1 {
			t.Errorf("%d messages after writes by a non-owner, want 1", n)
		}
		if got := reload(t, s, ex.ID); got.TurnStatus != TurnRunning {
			t.Errorf("status %q after a non-owner's attempts, want running", got.TurnStatus)
		}

		// The owner finishes: entries take the next seqs, the lease goes.
		agent := "router"
		call := &Message{Role: RoleToolCall, Content: "lookup", Tool: &ToolFields{CallID: "c1", Name: "search", Arguments: map[string]any{"q": "x"}}}
		result := &Message{Role: RoleToolResult, Content: "found", Tool: &ToolFields{CallID: "c1", Name: "search", Result: "ok"}}
		reply := assistant("first answer")
		if err := s.FinishTurn(ctx, ex.ID, "proc-a", call, result, reply); err != nil {
			t.Fatal(err)
		}
		got := reload(t, s, ex.ID)
		if got.TurnStatus != TurnIdle || got.TurnOwner != nil || got.TurnHeartbeatAt != nil {
			t.Errorf("after FinishTurn: status %q owner %v heartbeat %v; want idle, nil, nil", got.TurnStatus, got.TurnOwner, got.TurnHeartbeatAt)
		}
		msgs, err := s.Messages(ctx, ann.ID, ex.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"user@0", "tool_call@1", "tool_result@2", "assistant@3"}; !slices.Equal(seqs(msgs), want) {
			t.Fatalf("log = %v, want %v", seqs(msgs), want)
		}
		last := msgs[3]
		if last.AgentType == nil || *last.AgentType != agent || last.AgentResponse == nil ||
			last.AgentResponse.Content != "first answer" || last.AgentResponse.Metadata["provider"] != "test" {
			t.Errorf("assistant entry did not round-trip: %+v %+v", last, last.AgentResponse)
		}
		if msgs[1].Tool == nil || msgs[1].Tool.CallID != "c1" || msgs[1].Tool.Arguments["q"] != "x" || msgs[2].Tool.Result != "ok" {
			t.Errorf("tool fields did not round-trip: %+v %+v", msgs[1].Tool, msgs[2].Tool)
		}
		// Finishing twice is refused: the lease is gone.
		err = s.FinishTurn(ctx, ex.ID, "proc-a", assistant("again"))
		wantErr(t, err, ErrLeaseLost, "FinishTurn after the turn ended")

		// The next turn continues the log and the count, keeps the title.
		ex2, q2 := mustStart(t, s, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Query: "second question", AgentType: "other", Owner: "proc-c"})
		if ex2.ID != ex.ID || ex2.TurnCount != 2 || ex2.Title != "first question" || ex2.AgentType != "other" || *ex2.TurnOwner != "proc-c" {
			t.Errorf("exchange after the second StartTurn = %+v", ex2)
		}
		if *q2.Seq != 4 {
			t.Errorf("second user message at seq %d, want 4", *q2.Seq)
		}

		// A failed turn leaves an error row outside the log.
		row, err := s.FailTurn(ctx, ex.ID, "proc-c", "the agent broke")
		if err != nil {
			t.Fatal(err)
		}
		if row.Role != RoleError || row.Seq != nil || row.Content != "the agent broke" {
			t.Errorf("error row = %+v", row)
		}
		got = reload(t, s, ex.ID)
		if got.TurnStatus != TurnFailed || got.TurnOwner != nil {
			t.Errorf("after FailTurn: status %q owner %v; want failed, nil", got.TurnStatus, got.TurnOwner)
		}
		if n := count(t, s, "messages", "exchange_id = ? AND role = 'error' AND seq IS NULL", ex.ID); n != 1 {
			t.Errorf("%d error rows with NULL seq, want 1", n)
		}

		// A failed exchange takes the next turn; the error row took no seq.
		ex3, q3 := mustStart(t, s, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Query: "retry", Owner: "proc-d"})
		if ex3.TurnStatus != TurnRunning || ex3.TurnCount != 3 || *q3.Seq != 5 {
			t.Errorf("after a failure: status %q, count %d, seq %d; want running, 3, 5", ex3.TurnStatus, ex3.TurnCount, *q3.Seq)
		}
	})
}

func TestStartTurnScopes(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ann := mustUser(t, s, "ann")
		page := mustPage(t, s, ann.ID, "Notes")
		pex, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &page.ID, Query: "q"})
		if pex.Scope != ScopePage || pex.PageID == nil || *pex.PageID != page.ID {
			t.Errorf("page exchange = %+v", pex)
		}
		job := "77"
		jex, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Scope: ScopeJob, JobID: &job, Query: "q"})
		if jex.Scope != ScopeJob || jex.JobID == nil || *jex.JobID != job {
			t.Errorf("job exchange = %+v", jex)
		}
		got, err := s.JobExchange(context.Background(), ann.ID, job)
		if err != nil || got.ID != jex.ID {
			t.Errorf("JobExchange = %+v, %v; want exchange %d", got, err, jex.ID)
		}
		// One exchange per job and user: a second one (a request that raced
		// the first) is refused as the busy conversation it is.
		_, _, err = s.StartTurn(context.Background(), TurnStart{UserID: ann.ID, Scope: ScopeJob, JobID: &job, Query: "q", Owner: "o"})
		wantErr(t, err, ErrTurnRunning, "a second exchange for the same job")
		if n := count(t, s, "exchanges", "job_id = ?", job); n != 1 {
			t.Errorf("%d exchanges for the job, want 1", n)
		}
		// Another user has a job of the same id to themselves.
		bob := mustUser(t, s, "bob")
		mustStart(t, s, TurnStart{UserID: bob.ID, Scope: ScopeJob, JobID: &job, Query: "q"})
		// A page exchange without its page breaks the schema's rule.
		_, _, err = s.StartTurn(context.Background(), TurnStart{UserID: ann.ID, Scope: ScopePage, Query: "q", Owner: "o"})
		if err == nil {
			t.Error("a page exchange without a page was created")
		}
	})
}

// A page's chat is created only while the page is there and the user's:
// checked in the transaction that creates it, so a page deleted after the
// caller looked cannot be left with a chat (DeletePage takes the page's
// chats with it).
func TestStartTurnNeedsItsPage(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		page := mustPage(t, s, ann.ID, "Notes")
		_, _, err := s.StartTurn(ctx, TurnStart{UserID: bob.ID, Scope: ScopePage, PageID: &page.ID, AgentType: "page_assistant", Query: "q", Owner: "o"})
		wantErr(t, err, ErrNotFound, "a chat on another user's page")
		if _, _, err := s.DeletePage(ctx, ann.ID, page.ID); err != nil {
			t.Fatal(err)
		}
		_, _, err = s.StartTurn(ctx, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &page.ID, AgentType: "page_assistant", Query: "q", Owner: "o"})
		wantErr(t, err, ErrNotFound, "a chat on a deleted page")
		if n := count(t, s, "exchanges", "page_id = ?", page.ID); n != 0 {
			t.Errorf("%d exchanges on the deleted page, want 0", n)
		}
		if n := count(t, s, "messages", "1 = 1"); n != 0 {
			t.Errorf("%d messages stored, want 0", n)
		}
	})
}

func TestStartTurnOtherUsersExchange(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "mine"}, "reply")
		for _, id := range []int64{ex.ID, 987_654} {
			_, _, err := s.StartTurn(ctx, TurnStart{UserID: bob.ID, ExchangeID: id, Scope: ScopeGeneral, Query: "sneaky", Owner: "o"})
			wantErr(t, err, ErrNotFound, "StartTurn on another user's or a missing exchange")
		}
		if n := count(t, s, "messages", "content = 'sneaky'"); n != 0 {
			t.Errorf("%d messages stored by the refused turns", n)
		}
		if got := reload(t, s, ex.ID); got.TurnStatus != TurnIdle || got.TurnCount != 1 {
			t.Errorf("another user's attempt changed the exchange: %+v", got)
		}
	})
}

// TestSeqTakenIsNeverOverwritten makes another writer take the seq a reply
// was about to use, inside the same instant: the reply must fail with
// ErrSeqTaken and its whole transaction roll back.
func TestSeqTakenIsNeverOverwritten(t *testing.T) {
	s := newSQLite(t, Options{})
	ctx := context.Background()
	ann := mustUser(t, s, "ann")
	ex, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "q", Owner: "proc-a"})
	err := s.db.Exec(`CREATE TRIGGER steal_seq BEFORE INSERT ON messages WHEN NEW.role = 'assistant' BEGIN
		INSERT INTO messages (exchange_id, seq, role, content, created_at)
		VALUES (NEW.exchange_id, NEW.seq, 'tool_call', 'the other writer', NEW.created_at);
	END`).Error
	if err != nil {
		t.Fatal(err)
	}
	err = s.FinishTurn(ctx, ex.ID, "proc-a", assistant("mine"))
	wantErr(t, err, ErrSeqTaken, "append at a taken seq")
	if n := count(t, s, "messages", "exchange_id = ?", ex.ID); n != 1 {
		t.Errorf("%d messages after the failed append, want only the user message", n)
	}
	if got := reload(t, s, ex.ID); got.TurnStatus != TurnRunning || got.TurnOwner == nil {
		t.Errorf("the failed finish still released the lease: %+v", got)
	}
}

func TestHeartbeat(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		ex, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "q", Owner: "proc-a"})
		old := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
		if err := s.db.Exec("UPDATE exchanges SET turn_heartbeat_at = ?, updated_at = ? WHERE id = ?", old, old, ex.ID).Error; err != nil {
			t.Fatal(err)
		}
		if err := s.Heartbeat(ctx, ex.ID, "proc-a"); err != nil {
			t.Fatal(err)
		}
		got := reload(t, s, ex.ID)
		if got.TurnHeartbeatAt == nil || time.Since(*got.TurnHeartbeatAt) > time.Minute {
			t.Errorf("heartbeat at %v, want about now", got.TurnHeartbeatAt)
		}
		// A heartbeat is not activity: the history order must not churn
		// while a reply is written.
		if !got.UpdatedAt.Equal(old) {
			t.Errorf("heartbeat moved updated_at from %v to %v", old, got.UpdatedAt)
		}
		wantErr(t, s.Heartbeat(ctx, ex.ID, "proc-b"), ErrLeaseLost, "heartbeat by another owner")
		if err := s.FinishTurn(ctx, ex.ID, "proc-a", assistant("a")); err != nil {
			t.Fatal(err)
		}
		wantErr(t, s.Heartbeat(ctx, ex.ID, "proc-a"), ErrLeaseLost, "heartbeat after the turn")
	})
}

func TestRecoverStaleTurns(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		stale, staleQ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "lost in a crash", Owner: "dead"})
		fresh, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "still going", Owner: "alive"})
		idle, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "done", Owner: "alive"}, "reply")
		old := time.Now().Add(-10 * time.Minute).UTC()
		if err := s.db.Exec("UPDATE exchanges SET turn_heartbeat_at = ? WHERE id = ?", old, stale.ID).Error; err != nil {
			t.Fatal(err)
		}

		failed, err := s.RecoverStaleTurns(ctx, time.Now().Add(-time.Minute), "the server stopped")
		if err != nil || len(failed) != 1 || failed[0].ID != stale.ID || failed[0].UserID != ann.ID || failed[0].TurnAttempts != 1 {
			t.Fatalf("RecoverStaleTurns = %+v, %v; want exchange %d of user %d with 1 attempt", failed, err, stale.ID, ann.ID)
		}
		got := reload(t, s, stale.ID)
		if got.TurnStatus != TurnFailed || got.TurnOwner != nil || got.TurnHeartbeatAt != nil {
			t.Errorf("stale turn after recovery: %+v", got)
		}
		msgs, err := s.Messages(ctx, ann.ID, stale.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"user@0", "error@-"}; !slices.Equal(seqs(msgs), want) {
			t.Fatalf("stale log = %v, want %v", seqs(msgs), want)
		}
		if msgs[0].ID != staleQ.ID || msgs[0].Content != "lost in a crash" || msgs[1].Content != "the server stopped" {
			t.Errorf("stale log = %+v", msgs)
		}
		if got := reload(t, s, fresh.ID); got.TurnStatus != TurnRunning || *got.TurnOwner != "alive" {
			t.Errorf("a fresh turn was touched: %+v", got)
		}
		if got := reload(t, s, idle.ID); got.TurnStatus != TurnIdle {
			t.Errorf("an idle exchange was touched: %+v", got)
		}
		if n := count(t, s, "messages", "role = 'error'"); n != 1 {
			t.Errorf("%d error rows, want 1", n)
		}
		// The dead owner, if it was not dead after all, can no longer write.
		wantErr(t, s.FinishTurn(ctx, stale.ID, "dead", assistant("late")), ErrLeaseLost, "late finish")
		// Recovering again finds nothing.
		if failed, err := s.RecoverStaleTurns(ctx, time.Now().Add(-time.Minute), "again"); err != nil || len(failed) != 0 {
			t.Errorf("second recovery = %v, %v; want none", failed, err)
		}
		// The preserved message can be retried.
		mustStart(t, s, TurnStart{UserID: ann.ID, ExchangeID: stale.ID, Query: "lost in a crash", Owner: "new"})
	})
}

// TestRecoverSparesRenewedLease covers the race in which a turn is judged
// stale but its owner renews the lease before the recovery writes: the turn
// must be left running.
func TestRecoverSparesRenewedLease(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		ex, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "slow", Owner: "slow"})
		staleBefore := time.Now().Add(-time.Minute).UTC()
		// The heartbeat is fresh (StartTurn just set it): the recovery's
		// failing step, given the staleness it judged by, must refuse.
		_, err := s.failTurn(ctx, ex.ID, "slow", "judged dead", &staleBefore)
		wantErr(t, err, ErrLeaseLost, "failing a renewed lease")
		if got := reload(t, s, ex.ID); got.TurnStatus != TurnRunning {
			t.Errorf("renewed turn was failed: %+v", got)
		}
		if n := count(t, s, "messages", "role = 'error'"); n != 0 {
			t.Errorf("%d error rows written for a live turn", n)
		}
	})
}
