package models

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSearchPrefixOtherUsersWords: ann's messages hold 100,000 distinct
// words starting "pel"; bob's prefix search "pel*" finds his own messages
// only, and fast (it took over a second when FTS5 expanded the prefix into
// every term of the index before the owner filter; with the prefix indexes
// of 00018 it takes about a millisecond: the bound here leaves a wide
// margin for a loaded machine).
func TestSearchPrefixOtherUsersWords(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		rng := rand.New(rand.NewSource(1))
		for range 100 {
			var b strings.Builder
			for range 1000 {
				fmt.Fprintf(&b, "pel%08x ", rng.Uint32())
			}
			mustTurn(t, s, TurnStart{UserID: ann.ID, Query: b.String()}, "noted")
		}
		for i := range 30 {
			mustTurn(t, s, TurnStart{UserID: bob.ID, Query: fmt.Sprintf("pelicans over the harbour %d", i)}, "a pelican reply")
		}
		q := SearchQuery{Terms: ParseSearch("pel*"), Limit: 20}
		hits, err := s.Search(ctx, bob.ID, q) // indexes what waits, too
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 20 {
			t.Fatalf("%d hits, want a full page of bob's", len(hits))
		}
		var took []time.Duration
		for range 5 {
			start := time.Now()
			if _, err := s.Search(ctx, bob.ID, q); err != nil {
				t.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		t.Logf("bob's \"pel*\": %v", took)
		if took[2] > 250*time.Millisecond {
			t.Fatalf("bob's prefix search took %v (median of %v) beside ann's 100,000 words", took[2], took)
		}
	})
}

// TestSearchCopiedIn counts the forks that show a hit's message, the
// user's own only.
func TestSearchCopiedIn(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		ex, q, a := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "first"}, "reply")
		mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Query: "second"}, "reply two")
		f1, err := s.Fork(ctx, ann.ID, ex.ID, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Fork(ctx, ann.ID, f1.ID, 2); err != nil { // a fork of a fork
			t.Fatal(err)
		}
		if _, err := s.Fork(ctx, ann.ID, ex.ID, 1); err != nil { // copies the question only
			t.Fatal(err)
		}
		got, err := s.CopiedIn(ctx, ann.ID, []int64{q.ID, a.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got[q.ID] != 3 || got[a.ID] != 2 {
			t.Fatalf("copies %v, want %d: 3 and %d: 2", got, q.ID, a.ID)
		}
		if got, err := s.CopiedIn(ctx, bob.ID, []int64{q.ID}); err != nil || len(got) != 0 {
			t.Fatalf("bob sees ann's copies: %v, %v", got, err)
		}
	})
}
