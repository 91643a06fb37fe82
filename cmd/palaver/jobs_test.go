package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"palaver/models"
)

// TestRetainPeriodically runs the retention job on a real database: while
// the policy is off it deletes and logs nothing; once an administrator turns
// it on, the next tick deletes the old conversation (not the pinned or the
// recent one), logs the run, and the job stops with its context.
func TestRetainPeriodically(t *testing.T) {
	ctx := context.Background()
	store, err := models.Open(filepath.Join(t.TempDir(), "p.db"), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	u, err := store.CreateUser(ctx, "ann", "hash", false)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := store.SQL()
	exchange := func(query string, ago time.Duration, pinned bool) int64 {
		ex, _, err := store.StartTurn(ctx, models.TurnStart{UserID: u.ID, Scope: models.ScopeGeneral, AgentType: "router", Query: query, Owner: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.FinishTurn(ctx, ex.ID, "t", &models.Message{Role: models.RoleAssistant, Content: "ok"}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("UPDATE exchanges SET updated_at = ?, pinned = ? WHERE id = ?", time.Now().UTC().Add(-ago), pinned, ex.ID); err != nil {
			t.Fatal(err)
		}
		return ex.ID
	}
	old := exchange("old", 100*24*time.Hour, false)
	pinned := exchange("pinned", 100*24*time.Hour, true)
	recent := exchange("recent", time.Hour, false)
	rows := func(q string, args ...any) int {
		var n int
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	jobCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { retainPeriodically(jobCtx, store, 20*time.Millisecond, log); close(done) }()

	time.Sleep(100 * time.Millisecond) // several ticks while off
	if n := rows("SELECT COUNT(*) FROM retention_runs"); n != 0 {
		t.Fatalf("%d runs logged while the policy is off", n)
	}
	if n := rows("SELECT COUNT(*) FROM exchanges"); n != 3 {
		t.Fatalf("%d exchanges left while the policy is off", n)
	}
	if _, err := store.AdminSetRetention(ctx, true, 30); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for rows("SELECT COUNT(*) FROM retention_runs WHERE deleted_exchanges = 1") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the job never ran once the policy was on")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the job did not stop with its context")
	}
	for id, want := range map[int64]int{old: 0, pinned: 1, recent: 1} {
		if n := rows("SELECT COUNT(*) FROM exchanges WHERE id = ?", id); n != want {
			t.Errorf("exchange %d: %d rows, want %d", id, n, want)
		}
	}
	if n := rows("SELECT COUNT(*) FROM messages WHERE exchange_id = ?", old); n != 0 {
		t.Errorf("%d messages of the deleted exchange left", n)
	}
	if n := rows("SELECT COUNT(*) FROM retention_runs WHERE source = 'schedule' AND finished_at IS NOT NULL"); n < 1 {
		t.Errorf("%d finished scheduled runs logged", n)
	}
	if !strings.Contains(logs.String(), "retention deleted old conversations") {
		t.Errorf("the run was not logged: %s", logs.String())
	}
}

// TestSweepTemporaryGoesByTheClock: a temporary chat goes once the injected
// clock is 24 hours past its last activity; a normal chat stays.
func TestSweepTemporaryGoesByTheClock(t *testing.T) {
	ctx := context.Background()
	store, err := models.Open(filepath.Join(t.TempDir(), "p.db"), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	u, err := store.CreateUser(ctx, "ann", "h", false)
	if err != nil {
		t.Fatal(err)
	}
	start := func(temporary bool) int64 {
		ex, _, err := store.StartTurn(ctx, models.TurnStart{UserID: u.ID, Scope: models.ScopeGeneral, AgentType: "router", Query: "q", Owner: "t", Temporary: temporary})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.FinishTurn(ctx, ex.ID, "t", &models.Message{Role: models.RoleAssistant, Content: "ok"}); err != nil {
			t.Fatal(err)
		}
		return ex.ID
	}
	tmp, kept := start(true), start(false)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	jobCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		sweepTemporary(jobCtx, store, 10*time.Millisecond, clock, slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(done)
	}()
	time.Sleep(50 * time.Millisecond)
	if _, err := store.Exchange(ctx, u.ID, tmp); err != nil {
		t.Fatalf("gone before its time: %v", err)
	}
	mu.Lock()
	now = now.Add(25 * time.Hour)
	mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := store.Exchange(ctx, u.ID, tmp); errors.Is(err, models.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the temporary chat outlived its 24 hours")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := store.Exchange(ctx, u.ID, kept); err != nil {
		t.Errorf("a normal chat went: %v", err)
	}
	stop()
	<-done
}
