package throttle_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"palaver/internal/pgtest"
	"palaver/models"
	"palaver/throttle"
)

// onPostgres makes Postgres throttles on a fresh shared test database.
func onPostgres(t *testing.T, now func() time.Time) throttle.Throttle {
	store := pgtest.Fresh(t)
	db, err := store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	return throttle.NewPostgres(db, now)
}

func TestPostgresWindow(t *testing.T)       { testWindow(t, onPostgres) }
func TestPostgresKeysTogether(t *testing.T) { testKeysTogether(t, onPostgres) }

// TestPostgresSharedByProcesses: two processes (two pools on one database,
// on the database's clock) share the counts, and attempts racing from both
// let in exactly Max.
func TestPostgresSharedByProcesses(t *testing.T) {
	pgtest.Fresh(t)
	var throttles []throttle.Throttle
	for range 2 {
		store, err := models.Open(pgtest.DSN(t), models.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		db, err := store.SQL()
		if err != nil {
			t.Fatal(err)
		}
		throttles = append(throttles, throttle.NewPostgres(db, nil))
	}
	ctx := context.Background()
	limit := throttle.Limit{Name: "race", Max: 5, Window: time.Hour}
	key := throttle.Key{Limit: limit, ID: "ann"}
	var let atomic.Int32
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait, err := throttles[i%2].Take(ctx, key)
			if err != nil {
				t.Error(err)
			} else if wait == 0 {
				let.Add(1)
			} else if wait <= 59*time.Minute || wait > time.Hour {
				t.Errorf("refused with wait %v, want just under an hour", wait)
			}
		}()
	}
	wg.Wait()
	if n := let.Load(); n != 5 {
		t.Fatalf("%d of 24 racing attempts let in, want 5", n)
	}
	// Undo in one process is seen by the other; Reset too.
	if err := throttles[0].Undo(ctx, key); err != nil {
		t.Fatal(err)
	}
	if wait, err := throttles[1].Take(ctx, key); err != nil || wait != 0 {
		t.Fatalf("after an Undo elsewhere: wait %v, err %v", wait, err)
	}
	if wait, _ := throttles[1].Take(ctx, key); wait == 0 {
		t.Fatal("a 6th let in")
	}
	if err := throttles[1].Reset(ctx, key); err != nil {
		t.Fatal(err)
	}
	if wait, err := throttles[0].Take(ctx, key); err != nil || wait != 0 {
		t.Fatalf("after a Reset elsewhere: wait %v, err %v", wait, err)
	}
}
