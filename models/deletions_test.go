package models

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// toldDeletions collects what OnDeleted tells, one line per deletion:
// "deleted family→heir" (heir 0: none).
type toldDeletions struct{ lines []string }

func (h *toldDeletions) listen(s *Store) {
	s.OnDeleted(func(ds []Deletion) {
		for _, d := range ds {
			heir := int64(0)
			if d.Heir != nil {
				heir = d.Heir.ID
				if d.Heir.UserID != d.UserID {
					panic("another user's heir")
				}
			}
			h.lines = append(h.lines, fmt.Sprintf("%d %d→%d", d.ExchangeID, d.Family, heir))
		}
	})
}

func (h *toldDeletions) take() []string {
	out := h.lines
	h.lines = nil
	sort.Strings(out)
	return out
}

// Each way of deleting tells, once committed, each exchange that went, the
// family it was of, and the branch that stands for the family now: the
// member active last in the deleted one's list, else in its scope; none
// when the family went with it. A refused deletion tells nothing.
func TestDeletionsNameTheHeir(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		var h toldDeletions
		h.listen(s)
		f := newForkFixture(t, s) // root ← f1@3 ← f2@4
		base := time.Now().Add(-time.Hour)
		setUpdatedAt(t, s, f.root.ID, base.Add(3*time.Minute)) // the root was active last
		setUpdatedAt(t, s, f.f1.ID, base.Add(1*time.Minute))
		setUpdatedAt(t, s, f.f2.ID, base.Add(2*time.Minute))

		// Another user's id: nothing goes, nothing is told.
		if _, err := s.DeleteExchanges(ctx, f.bob.ID, []int64{f.f1.ID}); err != nil {
			t.Fatal(err)
		}
		if got := h.take(); len(got) != 0 {
			t.Fatalf("another user's delete told %v", got)
		}

		// A middle member: the root heads the family.
		if _, err := s.DeleteExchange(ctx, f.ann.ID, f.f1.ID); err != nil {
			t.Fatal(err)
		}
		if got, want := h.take(), []string{fmt.Sprintf("%d %d→%d", f.f1.ID, f.root.ID, f.root.ID)}; !slices.Equal(got, want) {
			t.Fatalf("told %v, want %v", got, want)
		}

		// A pinned branch goes: the heir is of its list when one is left.
		other, _, _ := mustTurn(t, s, TurnStart{UserID: f.ann.ID, Query: "kilo"}, "lima")
		third, err := s.Fork(ctx, f.ann.ID, f.root.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []int64{f.f2.ID, third.ID} {
			if err := s.db.Model(&Exchange{}).Where("id = ?", id).Update("pinned", true).Error; err != nil {
				t.Fatal(err)
			}
		}
		setUpdatedAt(t, s, third.ID, base.Add(time.Minute)) // older than the root, but pinned as f2 is
		if _, err := s.DeleteExchange(ctx, f.ann.ID, f.f2.ID); err != nil {
			t.Fatal(err)
		}
		if got, want := h.take(), []string{fmt.Sprintf("%d %d→%d", f.f2.ID, f.root.ID, third.ID)}; !slices.Equal(got, want) {
			t.Fatalf("told %v, want %v", got, want)
		}

		// The root goes: its fork is the heir (and the family's root now).
		if _, err := s.DeleteExchange(ctx, f.ann.ID, f.root.ID); err != nil {
			t.Fatal(err)
		}
		if got, want := h.take(), []string{fmt.Sprintf("%d %d→%d", f.root.ID, f.root.ID, third.ID)}; !slices.Equal(got, want) {
			t.Fatalf("told %v, want %v", got, want)
		}

		// Clearing the history: every one goes, no heir is left.
		n, _, err := s.ClearExchanges(ctx, f.ann.ID, ScopeGeneral, 0)
		if err != nil || n != 2 {
			t.Fatalf("clear: %d, %v", n, err)
		}
		want := []string{fmt.Sprintf("%d %d→0", other.ID, other.ID), fmt.Sprintf("%d %d→0", third.ID, third.ID)}
		sort.Strings(want)
		if got := h.take(); !slices.Equal(got, want) {
			t.Fatalf("clear told %v, want %v", got, want)
		}
	})
}

// Retention tells what it deleted too, with the heirs of the branches it
// took (a pinned branch stays, and heads the family).
func TestRetentionTellsItsDeletions(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		var h toldDeletions
		h.listen(s)
		ann := mustUser(t, s, "ann")
		root, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "old"}, "reply")
		fork, err := s.Fork(ctx, ann.ID, root.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.db.Model(&Exchange{}).Where("id = ?", fork.ID).Update("pinned", true).Error; err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-400 * 24 * time.Hour)
		setUpdatedAt(t, s, root.ID, old)
		setUpdatedAt(t, s, fork.ID, old)
		run, err := s.RunRetention(ctx, RetentionRequest{Source: RetentionManual, Now: time.Now(), Days: 0})
		if err != nil {
			t.Fatal(err)
		}
		if run.DeletedExchanges != 1 {
			t.Fatalf("retention deleted %d, want the root only", run.DeletedExchanges)
		}
		if got, want := h.take(), []string{fmt.Sprintf("%d %d→%d", root.ID, root.ID, fork.ID)}; !slices.Equal(got, want) {
			t.Fatalf("told %v, want %v", got, want)
		}
	})
}

// On PostgreSQL the deletion of a branch notifies the other processes of
// its heir first, in the deleting transaction, then (at commit) the
// reparented fork's change and the deletion itself; a deletion without an
// heir sends only its own.
func TestDeletionNotifiesTheHeirFirst(t *testing.T) {
	s := newPostgres(t)
	ctx := context.Background()
	conn := listenPostgres(t)
	u := mustUser(t, s, "ann")
	root, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: "q"}, "a")
	fork, err := s.Fork(ctx, u.ID, root.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	heard(t, s, conn)
	if _, err := s.DeleteExchange(ctx, u.ID, root.ID); err != nil {
		t.Fatal(err)
	}
	wantNotices(t, "delete the root", heard(t, s, conn),
		Notice{Kind: NotifyFamily, Exchange: root.ID, User: u.ID, Heir: fork.ID, Root: root.ID},
		Notice{Kind: NotifyExchange, Exchange: fork.ID, User: u.ID, Status: TurnIdle},
		Notice{Kind: NotifyExchange, Exchange: root.ID, User: u.ID, Status: TurnIdle})
	if _, err := s.DeleteExchange(ctx, u.ID, fork.ID); err != nil {
		t.Fatal(err)
	}
	wantNotices(t, "delete the last", heard(t, s, conn),
		Notice{Kind: NotifyExchange, Exchange: fork.ID, User: u.ID, Status: TurnIdle})
}

// Clearing a history larger than one statement's chunk of ids tells every
// exchange once, and the forks among them with no heir left.
func TestClearingAManyExchangesTellsEachOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		var h toldDeletions
		h.listen(s)
		ann := mustUser(t, s, "ann")
		n := deletionChunk*2 + 5
		rows := make([]Exchange, n)
		at := time.Now().UTC()
		for i := range rows {
			rows[i] = Exchange{UserID: ann.ID, Scope: ScopeGeneral, Title: fmt.Sprint("x", i), AgentType: "router",
				TurnStatus: TurnIdle, CreatedAt: at, UpdatedAt: at}
		}
		if err := s.db.CreateInBatches(&rows, 500).Error; err != nil {
			t.Fatal(err)
		}
		fork, err := s.Fork(ctx, ann.ID, rows[deletionChunk+3].ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got, _, err := s.ClearExchanges(ctx, ann.ID, ScopeGeneral, 0); err != nil || got != int64(n+1) {
			t.Fatalf("cleared %d, %v; want %d", got, err, n+1)
		}
		told := h.take()
		if len(told) != n+1 {
			t.Fatalf("told %d deletions, want %d", len(told), n+1)
		}
		seen := map[string]bool{}
		for _, l := range told {
			if seen[l] || !strings.HasSuffix(l, "→0") {
				t.Fatalf("told %q twice, or with an heir", l)
			}
			seen[l] = true
		}
		want := fmt.Sprintf("%d %d→0", fork.ID, rows[deletionChunk+3].ID)
		if !seen[want] {
			t.Fatalf("the fork's deletion %q not told as of its family", want)
		}
	})
}
