package models

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// waitingCall is a call that waits for approval.
func waitingCall(id string) *Message {
	return &Message{Role: RoleToolCall, Content: "remember",
		Tool: &ToolFields{CallID: id, Name: "remember", Tier: ToolTierServer, State: ToolAwaitingApproval, Arguments: map[string]any{"text": "x"}}}
}

// TestPausedTurnAnsweredOnce: a paused turn has no lease and is not
// running; of answers racing each other, and a Stop, exactly one wins.
func TestPausedTurnAnsweredOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		ex, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "remember this: x"})
		paused, err := s.PauseTurn(ctx, ex.ID, *ex.TurnOwner, 0, waitingCall("c1"))
		if err != nil {
			t.Fatal(err)
		}
		if paused.RunState() != TurnPaused || paused.TurnOwner != nil {
			t.Fatalf("after pause: %s, owner %v", paused.RunState(), paused.TurnOwner)
		}
		if running, _ := s.RunningTurns(ctx); len(running) != 0 {
			t.Fatalf("running turns: %+v", running)
		}
		approve := func(owner string) error {
			_, _, _, err := s.AnswerTools(ctx, ToolAnswers{UserID: ann.ID, ExchangeID: ex.ID, Owner: owner, CallIDs: []string{"c1"},
				Entries: func(call *Message) ([]*Message, error) {
					return []*Message{{Role: RoleToolCall, Content: "remember", Tool: &ToolFields{CallID: "c1", Name: "remember", State: ToolRunning, By: "person"}}}, nil
				}})
			return err
		}
		if _, _, _, err := s.AnswerTools(ctx, ToolAnswers{UserID: bob.ID, ExchangeID: ex.ID, Owner: "b", CallIDs: []string{"c1"}}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob's answer: %v", err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i == 3 {
					_, _, errs[i] = s.CancelWaiting(ctx, ann.ID, ex.ID, "stopped", nil)
					return
				}
				errs[i] = approve("p" + string(rune('0'+i)))
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, ErrNothingWaiting) && !errors.Is(err, ErrSeqTaken):
				t.Fatalf("a losing answer: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d answers won: %v", won, errs)
		}
		turn, err := s.TurnEntries(ctx, ann.ID, ex.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(turn) != 2 || len(WaitingCalls(turn)) != 0 {
			t.Fatalf("turn entries after the race: %d, waiting %d", len(turn), len(WaitingCalls(turn)))
		}
	})
}
