package models

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// Reading a log both ways from any window, of any size, puts the whole
// log together: every entry and every error row once, in its place.
func TestMessagesPagesCoverTheLogOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newForkFixture(t, s)
		for _, ex := range []*Exchange{f.root, f.f2} {
			all := seqs(mustMessages(t, s, f.ann.ID, ex.ID))
			last, err := s.LastSeq(ctx, f.ann.ID, ex.ID)
			if err != nil {
				t.Fatal(err)
			}
			for limit := 1; limit <= 4; limit++ {
				for start := int64(0); start <= last+1; start++ {
					page, err := s.MessagesBefore(ctx, f.ann.ID, ex.ID, &start, limit)
					if err != nil {
						t.Fatal(err)
					}
					got := seqs(page)
					first, end := start, start-1
					if len(page) > 0 {
						first, end = seqSpanOf(page)
					}
					for first > 0 {
						older, err := s.MessagesBefore(ctx, f.ann.ID, ex.ID, &first, limit)
						if err != nil {
							t.Fatal(err)
						}
						got = append(seqs(older), got...)
						first, _ = seqSpanOf(older)
					}
					for end < last {
						newer, err := s.MessagesAfter(ctx, f.ann.ID, ex.ID, end, limit)
						if err != nil {
							t.Fatal(err)
						}
						if len(newer) == 0 {
							t.Fatalf("no page after %d of %d", end, last)
						}
						got = append(got, seqs(newer)...)
						_, end = seqSpanOf(newer)
					}
					if !slices.Equal(got, all) {
						t.Fatalf("exchange %d, limit %d, window before %d: pages give %v, the log is %v", ex.ID, limit, start, got, all)
					}
				}
			}
		}
		if _, err := s.MessagesAfter(ctx, f.bob.ID, f.root.ID, -1, 10); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another user's page after: %v", err)
		}
		if _, err := s.LastSeq(ctx, f.bob.ID, f.root.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another user's last seq: %v", err)
		}
	})
}

func seqSpanOf(msgs []Message) (first, last int64) {
	first, last = -1, -1
	for _, m := range msgs {
		if m.Seq != nil {
			if first < 0 {
				first = *m.Seq
			}
			last = *m.Seq
		}
	}
	return first, last
}

// The tree's view of a family: each branch's length, where it parts from
// its parent and the entry it parts with; where any two part; other
// families and other users' exchanges are not found.
func TestFamilyBranchesAndParting(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newForkFixture(t, s)
		bs, err := s.FamilyBranches(ctx, f.ann.ID, f.f1.ID)
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			id, length, parts int64
			first             string
		}
		var got []row
		for _, b := range bs {
			r := row{id: b.ID, length: b.Length, parts: b.Parts}
			if b.First != nil {
				r.first = b.First.Role + ":" + b.First.Content
			}
			got = append(got, r)
		}
		want := []row{{f.root.ID, 5, 0, "user:alpha words"}, {f.f1.ID, 5, 3, "user:golf words"}, {f.f2.ID, 6, 4, "user:india words"}}
		if !slices.Equal(got, want) {
			t.Fatalf("branches %+v, want %+v", got, want)
		}
		for _, c := range []struct{ a, b, common int64 }{
			{f.root.ID, f.f1.ID, 3}, {f.root.ID, f.f2.ID, 3}, {f.f1.ID, f.f2.ID, 4}, {f.f2.ID, f.f1.ID, 4}, {f.f2.ID, f.f2.ID, 6},
		} {
			p, err := s.Parting(ctx, f.ann.ID, c.a, c.b)
			if err != nil {
				t.Fatal(err)
			}
			if p.Common != c.common || p.A.ID != c.a || p.B.ID != c.b {
				t.Fatalf("parting of %d and %d: %d in common, want %d", c.a, c.b, p.Common, c.common)
			}
		}
		lone, _, _ := mustTurn(t, s, TurnStart{UserID: f.ann.ID, Query: "alone"}, "yes")
		bobs, _, _ := mustTurn(t, s, TurnStart{UserID: f.bob.ID, Query: "bob's"}, "yes")
		for _, c := range [][2]int64{{f.root.ID, lone.ID}, {f.root.ID, bobs.ID}, {bobs.ID, f.root.ID}} {
			if _, err := s.Parting(ctx, f.ann.ID, c[0], c[1]); !errors.Is(err, ErrNotFound) {
				t.Fatalf("parting of %d and %d: %v, want not found", c[0], c[1], err)
			}
		}
		if _, err := s.FamilyBranches(ctx, f.bob.ID, f.root.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another user's family: %v", err)
		}
	})
}
