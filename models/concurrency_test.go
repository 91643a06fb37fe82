package models

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// checkLog asserts an exchange's log is user/assistant pairs at seqs 0..n-1
// with no gap or duplicate, and that its turn count matches.
func checkLog(t *testing.T, s *Store, userID, exchangeID int64, turns int) []Message {
	t.Helper()
	msgs, err := s.Messages(context.Background(), userID, exchangeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2*turns {
		t.Fatalf("exchange %d has %d messages, want %d", exchangeID, len(msgs), 2*turns)
	}
	for i, m := range msgs {
		wantRole := RoleUser
		if i%2 == 1 {
			wantRole = RoleAssistant
		}
		if m.Seq == nil || *m.Seq != int64(i) || m.Role != wantRole {
			t.Fatalf("exchange %d entry %d = %s, want %s@%d", exchangeID, i, seqs(msgs[i:i+1]), wantRole, i)
		}
	}
	if ex := reload(t, s, exchangeID); ex.TurnCount != int64(turns) || ex.TurnStatus != TurnIdle {
		t.Fatalf("exchange %d: turn_count %d status %q, want %d idle", exchangeID, ex.TurnCount, ex.TurnStatus, turns)
	}
	return msgs
}

// TestConcurrentTurnsOnDistinctExchanges runs whole turns from many
// goroutines through the real connection pool: none may fail (no "database
// is locked"), and every log comes out whole.
func TestConcurrentTurnsOnDistinctExchanges(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		const workers, turns = 8, 5
		exIDs := make([]int64, workers)
		errs := make(chan error, workers*turns)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				owner := fmt.Sprintf("worker-%d", w)
				for i := range turns {
					ex, _, err := s.StartTurn(ctx, TurnStart{UserID: ann.ID, ExchangeID: exIDs[w], Scope: ScopeGeneral,
						AgentType: "router", Query: fmt.Sprintf("w%d q%d", w, i), Owner: owner})
					if err != nil {
						errs <- fmt.Errorf("worker %d StartTurn %d: %w", w, i, err)
						return
					}
					exIDs[w] = ex.ID
					if err := s.FinishTurn(ctx, ex.ID, owner, assistant(fmt.Sprintf("w%d a%d", w, i))); err != nil {
						errs <- fmt.Errorf("worker %d FinishTurn %d: %w", w, i, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if t.Failed() {
			return
		}
		for w, id := range exIDs {
			msgs := checkLog(t, s, ann.ID, id, turns)
			if msgs[0].Content != fmt.Sprintf("w%d q0", w) {
				t.Errorf("worker %d's exchange holds %q", w, msgs[0].Content)
			}
		}
	})
}

// TestConcurrentTurnsOnOneExchange has many goroutines (two tabs, two
// servers) send to one exchange at once: a turn in progress refuses the others
// with ErrTurnRunning; no seq is duplicated and no accepted message is lost.
func TestConcurrentTurnsOnOneExchange(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "start"}, "ok")
		const workers, attempts = 8, 10
		var (
			mu       sync.Mutex
			accepted = map[string]bool{}
			refused  int
			failures []error
		)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				owner := fmt.Sprintf("tab-%d", w)
				for i := range attempts {
					query := fmt.Sprintf("tab %d attempt %d", w, i)
					_, msg, err := s.StartTurn(ctx, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Scope: ScopeGeneral,
						AgentType: "router", Query: query, Owner: owner})
					if errors.Is(err, ErrTurnRunning) {
						mu.Lock()
						refused++
						mu.Unlock()
						time.Sleep(time.Millisecond)
						continue
					}
					if err == nil && msg.Content != query {
						err = fmt.Errorf("StartTurn returned message %q", msg.Content)
					}
					if err == nil {
						time.Sleep(2 * time.Millisecond) // hold the lease while others try
						err = s.FinishTurn(ctx, ex.ID, owner, assistant("reply to "+query))
					}
					mu.Lock()
					if err != nil {
						failures = append(failures, fmt.Errorf("%s: %w", query, err))
					} else {
						accepted[query] = true
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for _, err := range failures {
			t.Error(err)
		}
		if refused == 0 {
			t.Error("no attempt was refused: the turns did not overlap, the test proves nothing")
		}
		if len(accepted)+refused != workers*attempts {
			t.Errorf("%d accepted + %d refused != %d attempts", len(accepted), refused, workers*attempts)
		}
		msgs := checkLog(t, s, ann.ID, ex.ID, len(accepted)+1)
		for i := 2; i < len(msgs); i += 2 {
			q := msgs[i].Content
			if !accepted[q] {
				t.Errorf("stored user message %q was not reported accepted", q)
			}
			if msgs[i+1].Content != "reply to "+q {
				t.Errorf("reply after %q is %q: turns interleaved", q, msgs[i+1].Content)
			}
			delete(accepted, q)
		}
		for q := range accepted {
			t.Errorf("accepted message %q is missing from the log", q)
		}
	})
}

// secondStore opens another connection pool on s's database: a second
// server process, as far as the database can tell.
func secondStore(t *testing.T, s *Store) *Store {
	t.Helper()
	dsn := os.Getenv(postgresEnv)
	if s.dialect == "sqlite" {
		if err := s.db.Raw("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&dsn).Error; err != nil {
			t.Fatal(err)
		}
	}
	other, err := Open(dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return other
}

// TestTwoWritersAppendFiveHundredEach has two writers, each with its own
// connection pool (two servers), append 500 turns each to one exchange as
// fast as they can. DESIGN: a message sent while the other writer's turn
// runs is refused (ErrTurnRunning, 409 in the API) and sent again; an
// append at a taken seq fails (ErrSeqTaken), never overwrites. Afterwards
// the log holds all 1,000 turns, each once, at seqs 0..1999 without a gap,
// every reply right after its own question.
func TestTwoWritersAppendFiveHundredEach(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		ex, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "writer 0 turn 0", Owner: "writer-0"})
		if err := s.FinishTurn(ctx, ex.ID, "writer-0", assistant("reply to writer 0 turn 0")); err != nil {
			t.Fatal(err)
		}
		stores := []*Store{s, secondStore(t, s)}
		const appends = 500
		refused := make([]int, len(stores))
		errs := make(chan error, len(stores))
		var failed atomic.Bool // a writer stopped: the other must not wait for it forever
		var wg sync.WaitGroup
		for w, store := range stores {
			wg.Go(func() {
				owner := fmt.Sprintf("writer-%d", w)
				first := 0
				if w == 0 {
					first = 1 // the exchange's first turn was writer 0's
				}
				for i := first; i < appends; {
					query := fmt.Sprintf("writer %d turn %d", w, i)
					_, msg, err := store.StartTurn(ctx, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Scope: ScopeGeneral,
						AgentType: "router", Query: query, Owner: owner})
					if errors.Is(err, ErrTurnRunning) || errors.Is(err, ErrSeqTaken) {
						if failed.Load() {
							return
						}
						refused[w]++
						runtime.Gosched()
						continue // the person sends it again
					}
					if err == nil && msg.Content != query {
						err = fmt.Errorf("StartTurn stored %q", msg.Content)
					}
					if err == nil {
						// The agent runs: the lease is held a moment, as in
						// any real turn, and the other writer's sends meet it.
						time.Sleep(50 * time.Microsecond)
						err = store.FinishTurn(ctx, ex.ID, owner, assistant("reply to "+query))
					}
					if err != nil {
						failed.Store(true)
						errs <- fmt.Errorf("%s: %w", query, err)
						return
					}
					i++
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if refused[0]+refused[1] == 0 {
			t.Fatal("no send was refused: the writers never overlapped, the test proves nothing")
		}
		t.Logf("refused and sent again: writer 0 %d times, writer 1 %d times", refused[0], refused[1])
		msgs := checkLog(t, s, ann.ID, ex.ID, 2*appends)
		seen := map[string]bool{}
		for i := 0; i < len(msgs); i += 2 {
			q := msgs[i].Content
			if seen[q] {
				t.Fatalf("%q is in the log twice", q)
			}
			seen[q] = true
			if msgs[i+1].Content != "reply to "+q {
				t.Fatalf("seq %d answers %q with %q: turns interleaved", i+1, q, msgs[i+1].Content)
			}
		}
		for w := range stores {
			for i := range appends {
				if q := fmt.Sprintf("writer %d turn %d", w, i); !seen[q] {
					t.Errorf("%q is missing", q)
				}
			}
		}
	})
}
