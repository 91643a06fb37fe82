package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"
)

// Group commit. SQLite has one writer at a time, and with synchronous=FULL
// every commit waits for the disk. The turn writes (a user message, a reply,
// a tool entry, a failure, a heartbeat) therefore share commits: each write
// joins a list of pending writes, and whoever finds no commit under way
// leads: it takes every write that is pending, runs them one after the
// other in one transaction and commits them together, then hands the lead
// on. Writes that arrive while a group commits wait, and the next leader
// (one of them) commits them all together: concurrent turns share one sync
// instead of queueing for one each. A lone write is committed at once, by
// its own goroutine: nothing waits for company, and no other goroutine is
// woken for it (a hand-off to a committer goroutine and back, beside
// database/sql's goroutine per transaction, would make each commit wait
// for a CPU at every hop on a busy machine). The leader writes on a
// connection kept for the group commit, with plain BEGIN IMMEDIATE and
// COMMIT.
//
// Each write keeps its own outcome: when one fails, the group runs again
// with a savepoint per write, so that only the failing one is undone
// (commit). A failed commit fails the whole group. A write must not open a
// transaction of its own (tx.Transaction): it runs inside the group's.
// PostgreSQL runs concurrent writers itself and writes directly.

// groupLimit bounds how many writes share one commit.
const groupLimit = 64

// write is one write waiting for its group's commit.
type write struct {
	ctx   context.Context
	fn    func(tx *gorm.DB) error
	done  chan error
	large bool // writes many pages (a fork): its checkpoint is left to the background (checkpoint.go)
}

// committer runs grouped writes.
type committer struct {
	db      *gorm.DB
	mu      sync.Mutex // guards pending and closed
	pending []*write
	closed  bool
	lead    chan struct{} // holds a token while a leader commits (capacity 1)
	conn    *sql.Conn     // the leaders' connection, opened by the first
	groups  atomic.Int64  // transactions committed or rolled back (each attempt), for the tests
	onGroup func(writes int)
	ckpt    *checkpointer // checkpoints the log off the commit path (checkpoint.go)
	// busyFor is how long the group tries again to begin while another
	// connection holds SQLite's writer (each try waits the busy timeout).
	busyFor time.Duration
}

// busyTries is how many busy timeouts a group waits for the writer before
// it gives up: a turn's reply is not lost because an import, a delete or a
// backup held the writer for longer than one.
const busyTries = 12

// newCommitter makes the group commit of db; onGroup (never nil) hears
// each group's size.
func newCommitter(db *gorm.DB, busy time.Duration, onGroup func(writes int)) *committer {
	c := &committer{db: db, lead: make(chan struct{}, 1), onGroup: onGroup, busyFor: busyTries * busy}
	if sqlDB, err := db.DB(); err == nil {
		c.ckpt = newCheckpointer(sqlDB)
	}
	return c
}

// transact runs fn in a transaction: on SQLite in the next group commit, on
// PostgreSQL in one of its own. It returns once the outcome is durable.
func (s *Store) transact(ctx context.Context, fn func(tx *gorm.DB) error) error {
	if s.group == nil {
		return s.db.WithContext(ctx).Transaction(fn)
	}
	return s.group.transact(ctx, fn, false)
}

// transactLarge is transact for a write of many pages (a fork's copy): on
// SQLite its commit leaves the checkpoint of what it wrote to the
// background (checkpoint.go).
func (s *Store) transactLarge(ctx context.Context, fn func(tx *gorm.DB) error) error {
	if s.group == nil {
		return s.db.WithContext(ctx).Transaction(fn)
	}
	return s.group.transact(ctx, fn, true)
}

func (c *committer) transact(ctx context.Context, fn func(tx *gorm.DB) error, large bool) error {
	w := &write{ctx: ctx, fn: fn, done: make(chan error, 1), large: large}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return errStoreClosed
	case ctx.Err() != nil:
		c.mu.Unlock()
		return ctx.Err()
	}
	c.pending = append(c.pending, w)
	c.mu.Unlock()
	// Once pending, the write's outcome is waited for even if ctx ends: the
	// caller must know whether it was committed. Either a leader commits it
	// (done), or this goroutine takes the lead and commits it itself.
	select {
	case err := <-w.done:
		return err
	case c.lead <- struct{}{}:
	}
	for {
		group := c.take()
		if len(group) == 0 {
			break // committed by the leader before
		}
		c.commit(group)
		c.onGroup(len(group))
		if slices.Contains(group, w) {
			break
		}
	}
	<-c.lead
	return <-w.done
}

// take removes up to groupLimit pending writes, oldest first.
func (c *committer) take() []*write {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(c.pending), groupLimit)
	group := slices.Clone(c.pending[:n])
	c.pending = slices.Delete(c.pending, 0, n)
	return group
}

// queued counts the writes waiting for a leader (for the tests).
func (c *committer) queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// commit runs a group of writes in one transaction and reports to each.
// It first runs them one after the other as they are; if one fails, that
// attempt is rolled back and the group runs again with each write in a
// savepoint of its own, so that only the failing one is undone. (Failures
// are rare: a send while a turn runs, a lost lease. Savepoints cost a
// quarter of the commit's time, so they are only paid for then.)
func (c *committer) commit(group []*write) {
	if slices.ContainsFunc(group, func(w *write) bool { return w.large }) && c.ckpt != nil {
		// SQLite would checkpoint inside this commit once the log passes
		// its 1,000 pages, as a large write's commit mostly does: the
		// checkpointer does it instead, off every writer's path.
		if c.autoCheckpoint(0) == nil {
			defer func() {
				_ = c.autoCheckpoint(sqliteAutoCheckpoint)
				c.ckpt.committed()
			}()
		}
	}
	errs := make([]error, len(group))
	if !c.attempt(group, errs, false) && len(group) > 1 {
		c.attempt(group, errs, true)
	}
	for i, w := range group {
		w.done <- errs[i]
	}
}

// exec runs one statement of the group's own on the leaders' connection.
func (c *committer) exec(query string) error {
	_, err := c.conn.ExecContext(context.Background(), query)
	return err
}

// connect opens the leaders' connection if need be.
func (c *committer) connect() error {
	if c.conn != nil {
		return nil
	}
	sqlDB, err := c.db.DB()
	if err != nil {
		return err
	}
	c.conn, err = sqlDB.Conn(context.Background())
	return err
}

// autoCheckpoint sets the leaders' connection's automatic checkpoint, in
// pages (0: none).
func (c *committer) autoCheckpoint(pages int) error {
	if err := c.connect(); err != nil {
		return err
	}
	return c.exec(fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", pages))
}

// begin opens the group's transaction, and the leaders' connection first
// if need be, and returns the session the writes run in. While another
// connection holds the writer past the busy timeout, it tries again, for
// up to busyFor, as long as one of the writes still waits: the writes have
// not run yet, so nothing is lost by waiting, while failing would lose a
// turn's reply.
func (c *committer) begin(group []*write) (*gorm.DB, error) {
	if err := c.connect(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(c.busyFor)
	for {
		err := c.exec("BEGIN IMMEDIATE")
		if err == nil {
			break
		}
		waiting := slices.ContainsFunc(group, func(w *write) bool { return w.ctx.Err() == nil })
		if !busy(err) || !waiting || time.Now().After(deadline) {
			return nil, err
		}
	}
	tx := c.db.Session(&gorm.Session{NewDB: true, Context: context.Background()})
	tx.Statement.ConnPool = c.conn
	return tx, nil
}

// attempt runs the group in one transaction and sets errs. Without
// savepoints, the first write that fails rolls everything back and attempt
// says false (errs then holds only that failure, which is the outcome of a
// lone write); with a savepoint per write, a failing write is undone alone
// and the others are committed.
func (c *committer) attempt(group []*write, errs []error, savepoints bool) bool {
	tx, err := c.begin(group)
	if err != nil {
		fill(errs, err)
		return true
	}
	applied := 0
	for i, w := range group {
		if errs[i] = w.ctx.Err(); errs[i] != nil {
			continue // the caller gave up before its turn came
		}
		// The write runs to its end whatever becomes of its context: a
		// statement cut short would leave its savepoint unrolled.
		if !savepoints {
			if errs[i] = apply(tx, w.fn); errs[i] != nil {
				c.rollback()
				c.groups.Add(1)
				return false
			}
			applied++
			continue
		}
		if errs[i] = c.exec("SAVEPOINT group_write"); errs[i] != nil {
			continue
		}
		if errs[i] = apply(tx, w.fn); errs[i] != nil {
			if err := c.exec("ROLLBACK TO group_write"); err != nil {
				errs[i] = errors.Join(errs[i], err)
			}
		} else {
			applied++
		}
		if err := c.exec("RELEASE group_write"); err != nil && errs[i] == nil {
			errs[i] = err
		}
	}
	c.end(applied, errs)
	return true
}

// rollback ends the group's transaction, undoing it. A connection left
// inside a transaction would fail every later group: it is dropped then.
func (c *committer) rollback() {
	if err := c.exec("ROLLBACK"); err != nil {
		_ = c.conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = c.conn.Close()
		c.conn = nil
	}
}

// end commits what was applied (or rolls back when nothing was) and gives
// a failed commit to every write that had succeeded.
func (c *committer) end(applied int, errs []error) {
	c.groups.Add(1)
	if applied == 0 {
		c.rollback()
		return
	}
	if err := c.exec("COMMIT"); err != nil {
		c.rollback()
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
}

func fill(errs []error, err error) {
	for i := range errs {
		errs[i] = err
	}
}

// apply runs fn, turning a panic into an error so that one bad write cannot
// stop the group commit (its statements are rolled back with the group or
// its savepoint).
func apply(tx *gorm.DB, fn func(tx *gorm.DB) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("write panicked: %v", r)
		}
	}()
	return fn(tx)
}

// busy says whether err is SQLite's writer held by another connection.
func busy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// errStoreClosed is a write sent after the store was closed.
var errStoreClosed = errors.New("the store is closed")

// close waits for the group being committed, fails the writes still
// pending and keeps the lead: nothing more is committed.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.lead <- struct{}{}
	if c.ckpt != nil {
		c.ckpt.close()
	}
	for group := c.take(); len(group) > 0; group = c.take() { // take gives groupLimit at most
		for _, w := range group {
			w.done <- errStoreClosed
		}
	}
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}
