package models

import (
	"context"
	"database/sql"
	"sync/atomic"
	"time"
)

// Checkpoints of large writes off the commit path (SQLite). In WAL mode a
// commit appends to the -wal file, and a checkpoint copies what it holds
// back into the database file (and syncs it). The connection whose commit
// takes the log past 1,000 pages runs that checkpoint itself, inside its
// commit. For turns that is right: a turn writes about six pages a commit,
// the checkpoint comes every eighty turns or so and stays small, and a
// goroutine checkpointing beside them costs a turn more than the
// checkpoint it saves (measured: docs/PERFORMANCE.md). A fork of a long
// conversation writes hundreds of pages at once: with the automatic
// checkpoint nearly every one would copy them back, and sync the database
// file, before it returned. Its commit therefore runs without the
// automatic checkpoint (commit.go: a large write), and this goroutine
// checkpoints (PASSIVE: it never blocks a writer, and copies only what no
// reader still needs) once the large writes pause, or a second after the
// first it has not copied, on a connection of its own.

const (
	// checkpointQuiet is how long the log must go without a commit
	// before the checkpoint runs: the commits of a burst (a fork after
	// another, a turn's two) share one, and it does not take a CPU from
	// them while they run.
	checkpointQuiet = 100 * time.Millisecond
	// checkpointLatest bounds the wait under steady writes: a second
	// after the first commit it has not copied, it runs anyway.
	checkpointLatest = time.Second
	// sqliteAutoCheckpoint is SQLite's own automatic checkpoint, in pages,
	// which every connection keeps but for a large write's commit.
	sqliteAutoCheckpoint = 1000
)

// checkpointer runs the background checkpoints. A commit notes its time
// (committed); only the first commit since the last checkpoint wakes the
// goroutine, which then sleeps until the commits pause. Only large writes
// note commits, so an idle or turn-only store never wakes it.
type checkpointer struct {
	db    *sql.DB
	first atomic.Int64  // the first commit not checkpointed since, in Unix nanoseconds; 0: none
	last  atomic.Int64  // the latest commit
	wake  chan struct{} // capacity 1: first or erase was set
	// erase is set by a deletion of user data (erase.go): the next round
	// truncates the log as soon as no reader needs it.
	erase atomic.Bool
	stop  chan struct{}
	done  chan struct{}
}

func newCheckpointer(db *sql.DB) *checkpointer {
	cp := &checkpointer{db: db, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go cp.run()
	return cp
}

// committed notes a commit that added to the log.
func (cp *checkpointer) committed() {
	now := time.Now().UnixNano()
	cp.last.Store(now)
	if cp.first.CompareAndSwap(0, now) {
		select {
		case cp.wake <- struct{}{}:
		default:
		}
	}
}

func (cp *checkpointer) run() {
	defer close(cp.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-cp.stop:
			return
		case <-cp.wake:
		}
		// The commits go on: wait for their pause, up to checkpointLatest
		// after the first. A deletion's wake (no commit noted) waits for
		// the quiet too: it is noted just before its transaction commits.
		woke := time.Now().UnixNano()
		for {
			first, last := cp.first.Load(), max(cp.last.Load(), woke)
			if first == 0 {
				first = woke
			}
			wait := min(last+int64(checkpointQuiet), first+int64(checkpointLatest)) - time.Now().UnixNano()
			if wait <= 0 {
				break
			}
			timer.Reset(time.Duration(wait))
			select {
			case <-cp.stop:
				return
			case <-timer.C:
			}
		}
		// Commits from here on are the next checkpoint's (this one may
		// copy them too).
		cp.first.Store(0)
		if cp.erase.Swap(false) {
			if !cp.truncate() {
				return // stopped
			}
			continue
		}
		// A failure (the database closing, a full disk) is the next
		// commit's to report; the backstop still checkpoints.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, _ = cp.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		cancel()
	}
}

// close stops the goroutine, after the checkpoint under way if any.
func (cp *checkpointer) close() {
	close(cp.stop)
	<-cp.done
}
