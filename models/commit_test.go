package models

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"
)

// holdCommitter occupies the committer with a write that waits until the
// returned function is called, so that the writes sent meanwhile queue up
// and form the next group (and no background search batch joins them).
func holdCommitter(t *testing.T, s *Store) (release func()) {
	t.Helper()
	s.index.close()
	started, gate, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.transact(context.Background(), func(*gorm.DB) error {
			close(started)
			<-gate
			return nil
		})
	}()
	<-started
	return func() {
		close(gate)
		if err := <-done; err != nil {
			t.Errorf("holding write: %v", err)
		}
	}
}

// waitQueued waits until n writes are queued behind the one being committed.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); s.group.queued() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", s.group.queued(), n)
		}
	}
}

// TestGroupCommitKeepsEachWritesOutcome sends four turn writes that share one
// commit: two succeed, one fails and one panics. The two are committed; the
// other two leave nothing behind and report their own error.
func TestGroupCommitKeepsEachWritesOutcome(t *testing.T) {
	s := newSQLite(t, Options{})
	ctx := context.Background()
	ann := mustUser(t, s, "ann")
	exs := make([]*Exchange, 4)
	for i := range exs {
		exs[i], _, _ = mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "start"}, "ok")
	}
	insert := func(i int, content string) func(tx *gorm.DB) error {
		return func(tx *gorm.DB) error {
			_, err := appendEntry(tx, exs[i].ID, &Message{Role: RoleUser, Content: content})
			return err
		}
	}
	errRefused := errors.New("refused after writing")
	writes := []func(tx *gorm.DB) error{
		insert(0, "first"),
		func(tx *gorm.DB) error {
			if err := insert(1, "second, rolled back")(tx); err != nil {
				return err
			}
			return errRefused
		},
		func(tx *gorm.DB) error {
			if err := insert(2, "third, rolled back")(tx); err != nil {
				return err
			}
			panic("a bug in a write")
		},
		insert(3, "fourth"),
	}

	before := s.group.groups.Load()
	release := holdCommitter(t, s)
	results := make([]chan error, len(writes))
	for i, fn := range writes {
		results[i] = make(chan error, 1)
		go func() { results[i] <- s.transact(ctx, fn) }()
		waitQueued(t, s, i+1) // in order
	}
	release()
	errs := make([]error, len(writes))
	for i := range results {
		errs[i] = <-results[i]
	}
	// The holding write; the group of 4 together, rolled back when the
	// second failed; the group again, a savepoint each.
	if got := s.group.groups.Load() - before; got != 3 {
		t.Fatalf("%d transactions, want 3: the holding write, the group together, the group a savepoint each", got)
	}
	if errs[0] != nil || errs[3] != nil {
		t.Fatalf("the good writes failed: %v, %v", errs[0], errs[3])
	}
	if !errors.Is(errs[1], errRefused) {
		t.Fatalf("failing write reported %v", errs[1])
	}
	if errs[2] == nil || errs[2].Error() != "write panicked: a bug in a write" {
		t.Fatalf("panicking write reported %v", errs[2])
	}
	want := []int{3, 2, 2, 3} // start, ok, and the committed writes
	for i, ex := range exs {
		msgs, err := s.Messages(ctx, ann.ID, ex.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != want[i] {
			t.Errorf("exchange %d holds %d messages (%s), want %d", i, len(msgs), seqs(msgs), want[i])
		}
	}
	// The committer lives on.
	mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: exs[1].ID, Query: "after"}, "fine")
}

// TestGroupCommitSkipsAWriteItsCallerLeft: a write whose context ends while
// it waits in the queue is not applied, and says so.
func TestGroupCommitSkipsAWriteItsCallerLeft(t *testing.T) {
	s := newSQLite(t, Options{})
	ann := mustUser(t, s, "ann")
	ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "start"}, "ok")
	release := holdCommitter(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	go func() {
		result <- s.transact(ctx, func(tx *gorm.DB) error {
			_, err := appendEntry(tx, ex.ID, &Message{Role: RoleUser, Content: "never"})
			return err
		})
	}()
	waitQueued(t, s, 1)
	cancel()
	release()
	if err := <-result; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned write reported %v", err)
	}
	if msgs, _ := s.Messages(context.Background(), ann.ID, ex.ID, nil); len(msgs) != 2 {
		t.Fatalf("exchange holds %d messages, want 2", len(msgs))
	}
}

// TestGroupCommitAfterClose: a write sent to a closed store fails at once.
func TestGroupCommitAfterClose(t *testing.T) {
	s := newSQLite(t, Options{})
	ann := mustUser(t, s, "ann")
	ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "start"}, "ok")
	s.group.close()
	err := s.Heartbeat(context.Background(), ex.ID, "anyone")
	if !errors.Is(err, errStoreClosed) {
		t.Fatalf("write after close: %v", err)
	}
	s.group = nil // Close (in the cleanup) closes the pool only
}

// TestGroupCommitSharesOneTransaction: writes that queue up behind one
// being committed are committed together, in the order they came.
func TestGroupCommitSharesOneTransaction(t *testing.T) {
	s := newSQLite(t, Options{})
	ctx := context.Background()
	ann := mustUser(t, s, "ann")
	ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "start"}, "ok")
	before := s.group.groups.Load()
	release := holdCommitter(t, s)
	const writes = 5
	results := make([]chan error, writes)
	for i := range writes {
		results[i] = make(chan error, 1)
		go func() {
			results[i] <- s.transact(ctx, func(tx *gorm.DB) error {
				_, err := appendEntry(tx, ex.ID, &Message{Role: RoleUser, Content: fmt.Sprintf("queued %d", i)})
				return err
			})
		}()
		waitQueued(t, s, i+1)
	}
	release()
	for i := range results {
		if err := <-results[i]; err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if got := s.group.groups.Load() - before; got != 2 {
		t.Fatalf("%d transactions for the holding write and %d queued ones, want 2", got, writes)
	}
	msgs, err := s.Messages(ctx, ann.ID, ex.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2+writes {
		t.Fatalf("%d messages, want %d", len(msgs), 2+writes)
	}
	for i, m := range msgs[2:] {
		if m.Content != fmt.Sprintf("queued %d", i) || *m.Seq != int64(2+i) {
			t.Fatalf("entry %d is %q at seq %d", 2+i, m.Content, *m.Seq)
		}
	}
}
