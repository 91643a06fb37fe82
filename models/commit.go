package models

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"gorm.io/gorm"
)

// Group commit. SQLite has one writer at a time, and with synchronous=FULL
// every commit waits for the disk. The turn writes (a user message, a reply,
// a tool entry, a failure, a heartbeat) therefore go through one committer
// goroutine: it takes every write that is waiting, runs them one after the
// other in one transaction and commits them together, so concurrent turns
// share one sync instead of queueing for one each. A lone write is committed
// at once: nothing waits for company. Each write keeps its own outcome: when
// one fails, the group runs again with a savepoint per write, so that only
// the failing one is undone (commit). A failed commit fails the whole group.
// PostgreSQL runs concurrent writers itself and writes directly.

// groupLimit bounds how many writes share one commit.
const groupLimit = 64

// write is one write waiting for the committer.
type write struct {
	ctx  context.Context
	fn   func(tx *gorm.DB) error
	done chan error
}

// committer is the goroutine that runs grouped writes.
type committer struct {
	db      *gorm.DB
	queue   chan *write
	closed  chan struct{} // Close was called
	stopped chan struct{} // run has returned: nothing more is committed
	groups  atomic.Int64  // transactions committed or rolled back (each attempt), for the tests
	onGroup func(writes int)
}

func newCommitter(db *gorm.DB, onGroup func(writes int)) *committer {
	if onGroup == nil {
		onGroup = func(int) {}
	}
	c := &committer{db: db, queue: make(chan *write, groupLimit), closed: make(chan struct{}), stopped: make(chan struct{}), onGroup: onGroup}
	go c.run()
	return c
}

// transact runs fn in a transaction: on SQLite in the next group commit, on
// PostgreSQL in one of its own. It returns once the outcome is durable.
func (s *Store) transact(ctx context.Context, fn func(tx *gorm.DB) error) error {
	if s.group == nil {
		return s.db.WithContext(ctx).Transaction(fn)
	}
	w := &write{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case s.group.queue <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.group.closed:
		return errStoreClosed
	}
	// Once queued, the write's outcome is waited for even if ctx ends: the
	// caller must know whether it was committed.
	select {
	case err := <-w.done:
		return err
	case <-s.group.stopped:
		select {
		case err := <-w.done:
			return err
		default:
			return errStoreClosed
		}
	}
}

func (c *committer) run() {
	defer close(c.stopped)
	for {
		var first *write
		select {
		case first = <-c.queue:
		case <-c.closed:
			return
		}
		group := []*write{first}
	gather:
		for len(group) < groupLimit {
			select {
			case w := <-c.queue:
				group = append(group, w)
			default:
				break gather
			}
		}
		c.commit(group)
		c.onGroup(len(group))
	}
}

// commit runs a group of writes in one transaction and reports to each.
// It first runs them one after the other as they are; if one fails, that
// attempt is rolled back and the group runs again with each write in a
// savepoint of its own, so that only the failing one is undone. (Failures
// are rare: a send while a turn runs, a lost lease. Savepoints cost a
// quarter of the committer's time, so they are only paid for then.)
func (c *committer) commit(group []*write) {
	errs := make([]error, len(group))
	if !c.attempt(group, errs, false) && len(group) > 1 {
		c.attempt(group, errs, true)
	}
	for i, w := range group {
		w.done <- errs[i]
	}
}

// attempt runs the group in one transaction and sets errs. Without
// savepoints, the first write that fails rolls everything back and attempt
// says false (errs then holds only that failure, which is the outcome of a
// lone write); with a savepoint per write, a failing write is undone alone
// and the others are committed.
func (c *committer) attempt(group []*write, errs []error, savepoints bool) bool {
	tx := c.db.Begin()
	if tx.Error != nil {
		fill(errs, tx.Error)
		return true
	}
	applied := 0
	for i, w := range group {
		if errs[i] = w.ctx.Err(); errs[i] != nil {
			continue // the caller gave up before its turn came
		}
		// The write runs to its end whatever becomes of its context: a
		// statement cut short would leave its savepoint unrolled.
		fn := w.fn
		if savepoints {
			fn = func(tx *gorm.DB) error { return tx.Transaction(w.fn) }
		}
		if errs[i] = apply(tx, fn); errs[i] != nil {
			if !savepoints {
				tx.Rollback()
				c.groups.Add(1)
				return false
			}
			continue
		}
		applied++
	}
	c.end(tx, applied, errs)
	return true
}

// end commits what was applied (or rolls back when nothing was) and gives
// a failed commit to every write that had succeeded.
func (c *committer) end(tx *gorm.DB, applied int, errs []error) {
	c.groups.Add(1)
	var err error
	if applied == 0 {
		err = tx.Rollback().Error
	} else {
		err = tx.Commit().Error
	}
	if err != nil {
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
// stop the committer (its savepoint is rolled back by gorm on the way).
func apply(tx *gorm.DB, fn func(tx *gorm.DB) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("write panicked: %v", r)
		}
	}()
	return fn(tx)
}

// errStoreClosed is a write sent after the store was closed.
var errStoreClosed = errors.New("the store is closed")

// close stops the committer once the group being committed is done.
func (c *committer) close() {
	close(c.closed)
	<-c.stopped
}
