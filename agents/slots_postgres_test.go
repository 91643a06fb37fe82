package agents

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"palaver/internal/pgtest"
	"palaver/models"
)

// slotProcess is one server process's slots on the shared test database:
// its own pool and holder.
func slotProcess(t *testing.T, holder string) (*PostgresSlots, *sql.DB) {
	t.Helper()
	store, err := models.Open(pgtest.DSN(t), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	db, err := store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPostgresSlots(context.Background(), db, nil, holder, defaultLimits(), SlotLeaseTTL, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop() })
	return p, db
}

// TestPostgresSlotsAcrossProcesses: a user's 4 turns are counted over every
// process; a slot given back on one is free on the other; racing requests
// on both let exactly the limit in.
func TestPostgresSlotsAcrossProcesses(t *testing.T) {
	pgtest.Fresh(t)
	ctx := context.Background()
	a, _ := slotProcess(t, "host-a/1/x")
	b, _ := slotProcess(t, "host-b/1/y")
	var releases []func()
	for i := range MaxTurnsPerUser {
		p := a
		if i == 3 {
			p = b
		}
		release, err := p.Acquire(ctx, SlotTurn, 7)
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		releases = append(releases, release)
	}
	for _, p := range []*PostgresSlots{a, b} {
		if _, err := p.Acquire(ctx, SlotTurn, 7); !errors.Is(err, ErrTooManyTurns) {
			t.Fatalf("a 5th turn on %s: %v, want ErrTooManyTurns", p.holder, err)
		}
	}
	// Another user, and another kind of slot, are counted apart.
	if _, err := b.Acquire(ctx, SlotTurn, 8); err != nil {
		t.Fatalf("another user's turn: %v", err)
	}
	if _, err := b.Acquire(ctx, SlotSocket, 7); err != nil {
		t.Fatalf("a websocket beside 4 turns: %v", err)
	}
	// Given back on a (twice: the second does nothing): one free on b.
	releases[0]()
	releases[0]()
	if _, err := b.Acquire(ctx, SlotTurn, 7); err != nil {
		t.Fatalf("after a release on the other process: %v", err)
	}
	if _, err := a.Acquire(ctx, SlotTurn, 7); !errors.Is(err, ErrTooManyTurns) {
		t.Fatalf("a 5th turn again: %v", err)
	}

	// 24 streams asked for at once over both: 32 are allowed, 20 taken
	// first, so exactly 12 of the 24 get one.
	for i := range 20 {
		if _, err := []*PostgresSlots{a, b}[i%2].Acquire(ctx, SlotStream, 7); err != nil {
			t.Fatal(err)
		}
	}
	var got, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := []*PostgresSlots{a, b}[i%2].Acquire(ctx, SlotStream, 7)
			switch {
			case err == nil:
				got.Add(1)
			case errors.Is(err, ErrTooManyStreams):
				refused.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got.Load() != 12 || refused.Load() != 12 {
		t.Fatalf("racing streams: %d taken, %d refused; want 12 and 12", got.Load(), refused.Load())
	}
}

// TestPostgresSlotsOfADeadProcess: a process that dies holding slots (no
// release, no Close) stops holding them when its lease runs out, and the
// next renewal of a live process deletes them; a process judged dead that
// turns out to live registers again when it next takes a slot.
func TestPostgresSlotsOfADeadProcess(t *testing.T) {
	pgtest.Fresh(t)
	ctx := context.Background()
	a, db := slotProcess(t, "host-a/1/x")
	b, _ := slotProcess(t, "host-b/1/y")
	for range MaxTurnsPerUser {
		if _, err := a.Acquire(ctx, SlotTurn, 7); err != nil {
			t.Fatal(err)
		}
	}
	a.stop() // a dies: nothing renews its lease any more
	<-a.done
	if _, err := b.Acquire(ctx, SlotTurn, 7); !errors.Is(err, ErrTooManyTurns) {
		t.Fatalf("while a's lease lasts: %v, want ErrTooManyTurns", err)
	}
	// Its lease runs out (SlotLeaseTTL after its last renewal; moved here
	// rather than waited for).
	if _, err := db.ExecContext(ctx, `UPDATE slot_holders SET expires_at = clock_timestamp() - interval '1 second' WHERE holder = $1`, a.holder); err != nil {
		t.Fatal(err)
	}
	for i := range MaxTurnsPerUser {
		if _, err := b.Acquire(ctx, SlotTurn, 7); err != nil {
			t.Fatalf("turn %d after a's lease ran out: %v", i+1, err)
		}
	}
	if err := b.renew(ctx); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM user_slots WHERE holder = $1`, a.holder).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d of the dead process's slots left after the sweep", left)
	}
	// a was only slow: its next Acquire registers it again (and counts
	// b's 4).
	if _, err := a.Acquire(ctx, SlotTurn, 7); !errors.Is(err, ErrTooManyTurns) {
		t.Fatalf("a back: %v, want ErrTooManyTurns", err)
	}
	if _, err := a.Acquire(ctx, SlotSocket, 7); err != nil {
		t.Fatalf("a back, a websocket: %v", err)
	}
	// Close gives back every slot of the process.
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Acquire(ctx, SlotTurn, 7); err != nil {
		t.Fatalf("after b closed: %v", err)
	}
}

// TestPostgresSlotsGivenBackWhileTheDatabaseIsAway: a slot given back while
// the database is away is kept and deleted at the next renewal once it is
// back, not leaked; taking a slot meanwhile fails with the database's error.
func TestPostgresSlotsGivenBackWhileTheDatabaseIsAway(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	store, err := models.Open(cluster.DSN, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ctx := context.Background()
	if _, err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil)) // the releases that wait are logged
	p, err := newPostgresSlots(ctx, db, quiet, "host-a/1/x", defaultLimits(), SlotLeaseTTL, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop() })
	var releases []func()
	for range MaxTurnsPerUser {
		release, err := p.Acquire(ctx, SlotTurn, 7)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}

	cluster.Stop()
	if _, err := p.Acquire(ctx, SlotSocket, 7); !models.Unavailable(err) {
		t.Fatalf("a slot taken while the database is away: %v, want its unavailability", err)
	}
	releases[0]()
	releases[1]()
	cluster.Start()

	if _, err := p.Acquire(ctx, SlotTurn, 7); !errors.Is(err, ErrTooManyTurns) {
		t.Fatalf("before the renewal: %v, want ErrTooManyTurns (the releases are still to be written)", err)
	}
	if err := p.renew(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := p.Acquire(ctx, SlotTurn, 7); err != nil {
			t.Fatalf("turn %d after the renewal wrote the releases: %v", i+1, err)
		}
	}
	if _, err := p.Acquire(ctx, SlotTurn, 7); !errors.Is(err, ErrTooManyTurns) {
		t.Fatalf("a 5th: %v", err)
	}
}
