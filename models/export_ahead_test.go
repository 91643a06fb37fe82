package models

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestExportExchangesReadAhead: read ahead of their writing, the exchanges
// still come whole and in order, past several batches; the first error of
// the writer ends the export with it, the reader stopped.
func TestExportExchangesReadAhead(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		n := exportBatch + 2*exportAhead + 3
		for i := range n {
			mustTurn(t, s, TurnStart{UserID: u.ID, Scope: ScopeGeneral, Query: fmt.Sprintf("question %d", i), Owner: "t"}, fmt.Sprintf("answer %d", i))
		}
		var got []string
		err := s.ExportExchanges(ctx, u.ID, func(ex *ExportedExchange) error {
			if len(ex.Messages) != 2 {
				return fmt.Errorf("exchange %d came with %d messages", ex.ID, len(ex.Messages))
			}
			got = append(got, ex.Messages[0].Content+"/"+ex.Messages[1].Content)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d exchanges exported, want %d", len(got), n)
		}
		for i, g := range got {
			if want := fmt.Sprintf("question %d/answer %d", i, i); g != want {
				t.Fatalf("exchange %d: %q, want %q", i, g, want)
			}
		}
		stop := errors.New("the client went away")
		calls := 0
		err = s.ExportExchanges(ctx, u.ID, func(*ExportedExchange) error {
			if calls++; calls == 3 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || calls != 3 {
			t.Fatalf("the writer's error: %v after %d calls, want %v after 3", err, calls, stop)
		}
	})
}
