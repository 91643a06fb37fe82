package models

import (
	"context"
	"database/sql"
	"time"
)

// Checkpoints off the commit path (SQLite). In WAL mode a commit appends
// to the -wal file, and a checkpoint copies what it holds back into the
// database file (and syncs it). By default the connection whose commit
// takes the log past 1,000 pages runs that checkpoint itself, inside its
// commit: one turn in every eighty or so, or the commit right after a big
// fork, waited for a copy of a thousand pages and a sync of the database
// file on top of its own. Here the group commit's connection leaves that
// to a goroutine of the store's, which checkpoints (PASSIVE: it never
// blocks a writer, and copies only what no reader still needs) a short
// while after commits, on a connection of its own. Commits that arrive
// meanwhile share the next checkpoint. The group commit's connection keeps
// a far larger automatic checkpoint as a backstop, should this one fall
// behind; the pool's other connections keep SQLite's default.

const (
	// checkpointDelay is how long after a commit the checkpoint runs: the
	// commits of a burst share one.
	checkpointDelay = 200 * time.Millisecond
	// committerAutoCheckpoint is the group commit connection's automatic
	// checkpoint, in pages: the backstop (32 MiB of 4 KiB pages).
	committerAutoCheckpoint = 8000
)

// checkpointer runs the background checkpoints.
type checkpointer struct {
	db   *sql.DB
	kick chan struct{} // capacity 1: a commit happened since the last checkpoint began
	stop chan struct{}
	done chan struct{}
}

func newCheckpointer(db *sql.DB) *checkpointer {
	cp := &checkpointer{db: db, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go cp.run()
	return cp
}

// committed tells the checkpointer that a commit added to the log. It
// never blocks.
func (cp *checkpointer) committed() {
	select {
	case cp.kick <- struct{}{}:
	default:
	}
}

func (cp *checkpointer) run() {
	defer close(cp.done)
	for {
		select {
		case <-cp.stop:
			return
		case <-cp.kick:
		}
		select {
		case <-cp.stop:
			return
		case <-time.After(checkpointDelay):
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
