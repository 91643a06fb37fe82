package models

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"palaver/migrations"
)

// forkFixture is a family of three:
//
//	root: u@0 "alpha", a@1 "bravo", u@2 "charlie", error "delta", u@3 "echo", a@4 "foxtrot"
//	f1 = fork(root, 3): root's u@0 a@1 u@2 error, then u@3 "golf", a@4 "hotel"
//	f2 = fork(f1, 4):   f1's u@0 a@1 u@2 error u@3, then u@4 "india", a@5 "juliet"
type forkFixture struct {
	ann, bob     *User
	root, f1, f2 *Exchange
}

func newForkFixture(t *testing.T, s *Store) forkFixture {
	t.Helper()
	ctx := context.Background()
	f := forkFixture{ann: mustUser(t, s, "ann"), bob: mustUser(t, s, "bob")}
	f.root, _, _ = mustTurn(t, s, TurnStart{UserID: f.ann.ID, Query: "alpha words"}, "bravo words")
	if _, err := s.SetExchangeFeedback(ctx, f.ann.ID, f.root.ID, FeedbackUp); err != nil {
		t.Fatal(err)
	}
	ex, _ := mustStart(t, s, TurnStart{UserID: f.ann.ID, ExchangeID: f.root.ID, Query: "charlie words"})
	if _, err := s.FailTurn(ctx, ex.ID, *ex.TurnOwner, "delta words"); err != nil {
		t.Fatal(err)
	}
	mustTurn(t, s, TurnStart{UserID: f.ann.ID, ExchangeID: f.root.ID, Query: "echo words"}, "foxtrot words")
	var err error
	if f.f1, err = s.Fork(ctx, f.ann.ID, f.root.ID, 3); err != nil {
		t.Fatalf("fork root at 3: %v", err)
	}
	mustTurn(t, s, TurnStart{UserID: f.ann.ID, ExchangeID: f.f1.ID, Query: "golf words"}, "hotel words")
	if f.f2, err = s.Fork(ctx, f.ann.ID, f.f1.ID, 4); err != nil {
		t.Fatalf("fork f1 at 4: %v", err)
	}
	mustTurn(t, s, TurnStart{UserID: f.ann.ID, ExchangeID: f.f2.ID, Query: "india words"}, "juliet words")
	return f
}

// logOf is an exchange's log as a reader sees it, without row ids.
func logOf(t *testing.T, s *Store, userID, exchangeID int64) []string {
	t.Helper()
	return logLines(t, mustMessages(t, s, userID, exchangeID))
}

// wantBytesRight checks every exchange's stored_bytes against a sum of its
// log made afresh.
func wantBytesRight(t *testing.T, s *Store) {
	t.Helper()
	size := "length(CAST(content AS BLOB)) + COALESCE(length(CAST(agent_response AS BLOB)), 0) + COALESCE(length(CAST(tool AS BLOB)), 0)"
	if s.Dialect() == "postgres" {
		size = "octet_length(content) + COALESCE(octet_length(agent_response), 0) + COALESCE(octet_length(tool), 0)"
	}
	var rows []struct {
		ID          int64
		StoredBytes int64
		Sum         int64
	}
	err := s.db.Raw(`SELECT e.id, e.stored_bytes, (SELECT COALESCE(SUM(` + size + `), 0) FROM messages m WHERE m.exchange_id = e.id) AS sum
		FROM exchanges e ORDER BY e.id`).Scan(&rows).Error
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.StoredBytes != r.Sum {
			t.Errorf("exchange %d: stored_bytes %d, its log holds %d", r.ID, r.StoredBytes, r.Sum)
		}
	}
}

// messageHits searches the user's messages for word (title hits left out)
// and returns the exchanges of the hits.
func messageHits(t *testing.T, s *Store, userID int64, word string) []int64 {
	t.Helper()
	hits, err := s.Search(context.Background(), userID, SearchQuery{Terms: ParseSearch(word), Limit: 50})
	if err != nil {
		t.Fatalf("search %q: %v", word, err)
	}
	var out []int64
	for _, h := range hits {
		if h.Role != RoleTitle {
			out = append(out, h.ExchangeID)
		}
	}
	return out
}

// wantFoundOnce checks that each word is found in exactly one message, and
// that each of gone is found nowhere.
func wantFoundOnce(t *testing.T, s *Store, userID int64, words []string, gone ...string) {
	t.Helper()
	for _, w := range words {
		if hits := messageHits(t, s, userID, w); len(hits) != 1 {
			t.Errorf("search %q: hits in exchanges %v, want exactly one", w, hits)
		}
	}
	for _, w := range gone {
		if hits := messageHits(t, s, userID, w); len(hits) != 0 {
			t.Errorf("search %q: hits in exchanges %v, want none", w, hits)
		}
	}
}

func familyIDs(t *testing.T, s *Store, userID, exchangeID int64) []string {
	t.Helper()
	fam, err := s.Family(context.Background(), userID, exchangeID)
	if err != nil {
		t.Fatalf("family of %d: %v", exchangeID, err)
	}
	out := make([]string, len(fam))
	for i, e := range fam {
		out[i] = fmt.Sprint(e.ID)
		if e.ForkedFromID != nil {
			out[i] += fmt.Sprintf("<%d@%d", *e.ForkedFromID, *e.ForkedAtSeq)
		}
	}
	return out
}

var forkWords = []string{"alpha", "bravo", "charlie", "echo", "foxtrot", "golf", "hotel", "india", "juliet"}

func TestForkCopiesThePrefix(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newForkFixture(t, s)
		want := []string{"user@0", "assistant@1", "user@2", "error@-", "user@3", "assistant@4"}
		got := seqs(mustMessages(t, s, f.ann.ID, f.f1.ID))
		if !slices.Equal(got, want) {
			t.Fatalf("f1's log %v, want %v", got, want)
		}
		// The copied prefix reads as the parent's log did at seq 2
		// (time travel), error row in its place.
		at := int64(2)
		past, err := s.Messages(ctx, f.ann.ID, f.root.ID, &at)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logOf(t, s, f.ann.ID, f.f2.ID)[1], "feedback=1") {
			t.Errorf("the rating of bravo was not copied: %v", logOf(t, s, f.ann.ID, f.f2.ID))
		}
		if gotPrefix := logOf(t, s, f.ann.ID, f.f1.ID)[:4]; !slices.Equal(gotPrefix, logLines(t, past)) {
			t.Errorf("f1's prefix\n%v\nwant root at seq 2\n%v", gotPrefix, logLines(t, past))
		}
		if wantF2 := []string{"alpha", "bravo", "charlie", "delta", "golf", "india", "juliet"}; !slices.Equal(words(mustMessages(t, s, f.ann.ID, f.f2.ID)), wantF2) {
			t.Errorf("f2's log %v, want %v", words(mustMessages(t, s, f.ann.ID, f.f2.ID)), wantF2)
		}
		ex, err := s.Exchange(ctx, f.ann.ID, f.f2.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ex.ForkedFromID == nil || *ex.ForkedFromID != f.f1.ID || *ex.ForkedAtSeq != 4 || ex.Title != f.root.Title ||
			ex.Scope != ScopeGeneral || ex.TurnCount != 4 || ex.TurnStatus != TurnIdle {
			t.Errorf("f2 = %+v, want a general fork of %d at 4 titled %q with 4 turns, idle", ex, f.f1.ID, f.root.Title)
		}
		// An agent's context for a fork is exactly the fork's log.
		recent, err := s.RecentContext(ctx, f.ann.ID, f.f2.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"alpha", "bravo", "charlie", "golf", "india", "juliet"}; !slices.Equal(words(recent), want) {
			t.Errorf("f2's context %v, want %v", words(recent), want)
		}
		wantFoundOnce(t, s, f.ann.ID, forkWords, "delta")
		wantBytesRight(t, s)
		// The history's first turn of a fork is its copied first turn.
		list, err := s.ListExchanges(ctx, f.ann.ID, ExchangeQuery{Scope: ScopeGeneral, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, sum := range list {
			if sum.Query != "alpha words" || sum.Response != "bravo words" {
				t.Errorf("history item %d: %q / %q", sum.ID, sum.Query, sum.Response)
			}
		}
		alone, _, _ := mustTurn(t, s, TurnStart{UserID: f.ann.ID, Query: "alone"}, "yes")
		heads, err := s.FamilyHeads(ctx, f.ann.ID, []int64{f.root.ID, f.f2.ID, alone.ID, 9999})
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range map[int64]FamilyHead{
			f.root.ID: {f.root.ID, 3, false}, f.f2.ID: {f.root.ID, 3, true}, alone.ID: {alone.ID, 1, true},
		} {
			if heads[id] != want {
				t.Errorf("family of %d: %+v, want %+v", id, heads[id], want)
			}
		}
		if len(heads) != 3 {
			t.Errorf("families %v, want three entries", heads)
		}
		if other, err := s.FamilyHeads(ctx, f.bob.ID, []int64{f.root.ID}); err != nil || len(other) != 0 {
			t.Errorf("bob's view of ann's families: %v, %v", other, err)
		}
		if got, want := familyIDs(t, s, f.ann.ID, f.f1.ID), []string{
			fmt.Sprint(f.root.ID), fmt.Sprintf("%d<%d@3", f.f1.ID, f.root.ID), fmt.Sprintf("%d<%d@4", f.f2.ID, f.f1.ID),
		}; !slices.Equal(got, want) {
			t.Errorf("family %v, want %v", got, want)
		}
	})
}

func mustMessages(t *testing.T, s *Store, userID, exchangeID int64) []Message {
	t.Helper()
	msgs, err := s.Messages(context.Background(), userID, exchangeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// words is the first word of each entry.
func words(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i], _, _ = cutSpace(m.Content)
	}
	return out
}

func cutSpace(s string) (string, string, bool) {
	for i, r := range s {
		if r == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func logLines(t *testing.T, msgs []Message) []string {
	t.Helper()
	out := seqs(msgs)
	for i, m := range msgs {
		out[i] += fmt.Sprintf(" %q %s", m.Content, m.CreatedAt.UTC().Format("15:04:05.000000"))
		if m.Feedback != nil {
			out[i] += fmt.Sprintf(" feedback=%d", *m.Feedback)
		}
		if m.AgentResponse != nil {
			out[i] += " resp=" + m.AgentResponse.Content
		}
	}
	return out
}

func TestDeleteRootKeepsTheForks(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newForkFixture(t, s)
		before1, before2 := logOf(t, s, f.ann.ID, f.f1.ID), logOf(t, s, f.ann.ID, f.f2.ID)
		if _, err := s.DeleteExchange(ctx, f.ann.ID, f.root.ID); err != nil {
			t.Fatal(err)
		}
		if got := logOf(t, s, f.ann.ID, f.f1.ID); !slices.Equal(got, before1) {
			t.Errorf("f1 after deleting the root:\n%v\nwant\n%v", got, before1)
		}
		if got := logOf(t, s, f.ann.ID, f.f2.ID); !slices.Equal(got, before2) {
			t.Errorf("f2 after deleting the root:\n%v\nwant\n%v", got, before2)
		}
		// The root's own entries are gone; the shared ones are found once.
		wantFoundOnce(t, s, f.ann.ID, []string{"alpha", "bravo", "charlie", "golf", "hotel", "india", "juliet"}, "echo", "foxtrot")
		wantBytesRight(t, s)
		// The family holds together: f1, the oldest fork, is its root.
		if got, want := familyIDs(t, s, f.ann.ID, f.f2.ID), []string{
			fmt.Sprint(f.f1.ID), fmt.Sprintf("%d<%d@4", f.f2.ID, f.f1.ID),
		}; !slices.Equal(got, want) {
			t.Errorf("family %v, want %v", got, want)
		}
		// Then the new root: f2 keeps everything, still found once.
		if _, err := s.DeleteExchange(ctx, f.ann.ID, f.f1.ID); err != nil {
			t.Fatal(err)
		}
		if got := logOf(t, s, f.ann.ID, f.f2.ID); !slices.Equal(got, before2) {
			t.Errorf("f2 after deleting f1 too:\n%v\nwant\n%v", got, before2)
		}
		wantFoundOnce(t, s, f.ann.ID, []string{"alpha", "bravo", "charlie", "golf", "india", "juliet"}, "hotel")
		wantBytesRight(t, s)
		if got, want := familyIDs(t, s, f.ann.ID, f.f2.ID), []string{fmt.Sprint(f.f2.ID)}; !slices.Equal(got, want) {
			t.Errorf("family %v, want %v", got, want)
		}
	})
}

func TestDeleteMiddleKeepsTheFamily(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newForkFixture(t, s)
		beforeRoot, before2 := logOf(t, s, f.ann.ID, f.root.ID), logOf(t, s, f.ann.ID, f.f2.ID)
		if _, err := s.DeleteExchange(ctx, f.ann.ID, f.f1.ID); err != nil {
			t.Fatal(err)
		}
		if got := logOf(t, s, f.ann.ID, f.root.ID); !slices.Equal(got, beforeRoot) {
			t.Errorf("root after deleting f1:\n%v\nwant\n%v", got, beforeRoot)
		}
		if got := logOf(t, s, f.ann.ID, f.f2.ID); !slices.Equal(got, before2) {
			t.Errorf("f2 after deleting f1:\n%v\nwant\n%v", got, before2)
		}
		wantFoundOnce(t, s, f.ann.ID, []string{"alpha", "bravo", "charlie", "echo", "foxtrot", "golf", "india", "juliet"}, "hotel")
		wantBytesRight(t, s)
		// f2 shares with the root what f1 shared: the entries before 3.
		if got, want := familyIDs(t, s, f.ann.ID, f.f2.ID), []string{
			fmt.Sprint(f.root.ID), fmt.Sprintf("%d<%d@3", f.f2.ID, f.root.ID),
		}; !slices.Equal(got, want) {
			t.Errorf("family %v, want %v", got, want)
		}
	})
}

func TestDeleteSeveralMembersAtOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newForkFixture(t, s)
		before2 := logOf(t, s, f.ann.ID, f.f2.ID)
		n, err := s.DeleteExchanges(ctx, f.ann.ID, []int64{f.root.ID, f.f1.ID})
		if err != nil || n != 2 {
			t.Fatalf("delete root and f1: %d, %v", n, err)
		}
		if got := logOf(t, s, f.ann.ID, f.f2.ID); !slices.Equal(got, before2) {
			t.Errorf("f2 after deleting root and f1:\n%v\nwant\n%v", got, before2)
		}
		wantFoundOnce(t, s, f.ann.ID, []string{"alpha", "bravo", "charlie", "golf", "india", "juliet"}, "echo", "hotel")
		wantBytesRight(t, s)
	})
}

func TestForkRefusals(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newForkFixture(t, s)
		exchanges := count(t, s, "exchanges", "1 = 1")
		messages := count(t, s, "messages", "1 = 1")
		for _, seq := range []int64{6, 7, -1} { // root's log is u@0 … a@4: 5 is its next seq
			_, err := s.Fork(ctx, f.ann.ID, f.root.ID, seq)
			wantErr(t, err, ErrBadSeq, fmt.Sprintf("fork at %d", seq))
		}
		_, err := s.Fork(ctx, f.bob.ID, f.root.ID, 2)
		wantErr(t, err, ErrNotFound, "fork of another user's exchange")
		_, _, err = s.StartFork(ctx, ForkStart{UserID: f.bob.ID, ExchangeID: f.root.ID, Seq: 2, Query: "mine", Owner: "o"})
		wantErr(t, err, ErrNotFound, "edit in another user's exchange")
		// A regeneration must end its prefix with a user message.
		_, _, err = s.StartFork(ctx, ForkStart{UserID: f.ann.ID, ExchangeID: f.root.ID, Seq: 2, Owner: "o"})
		wantErr(t, err, ErrBadSeq, "regenerate after a reply")
		_, _, err = s.StartFork(ctx, ForkStart{UserID: f.ann.ID, ExchangeID: f.root.ID, Seq: 0, Owner: "o"})
		wantErr(t, err, ErrBadSeq, "regenerate before the log")
		if n := count(t, s, "exchanges", "1 = 1"); n != exchanges {
			t.Errorf("%d exchanges after refused forks, want %d", n, exchanges)
		}
		if n := count(t, s, "messages", "1 = 1"); n != messages {
			t.Errorf("%d messages after refused forks, want %d", n, messages)
		}
		// At the next seq: a copy of the whole log.
		whole, err := s.Fork(ctx, f.ann.ID, f.root.ID, 5)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := words(mustMessages(t, s, f.ann.ID, whole.ID)), words(mustMessages(t, s, f.ann.ID, f.root.ID)); !slices.Equal(got, want) {
			t.Errorf("whole copy %v, want %v", got, want)
		}
		// At 0: an empty exchange of the family.
		empty, err := s.Fork(ctx, f.ann.ID, f.root.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(mustMessages(t, s, f.ann.ID, empty.ID)); n != 0 || empty.TurnCount != 0 {
			t.Errorf("fork at 0: %d messages, %d turns", n, empty.TurnCount)
		}
		wantBytesRight(t, s)
	})
}

func TestConcurrentForksOfOneExchange(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newForkFixture(t, s)
		want := words(mustMessages(t, s, f.ann.ID, f.root.ID))
		const n = 8
		ids := make([]int64, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ex, err := s.Fork(ctx, f.ann.ID, f.root.ID, 5)
				if err == nil {
					ids[i] = ex.ID
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		seen := map[int64]bool{}
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("fork %d: %v", i, errs[i])
			}
			if seen[ids[i]] {
				t.Fatalf("two forks got exchange %d", ids[i])
			}
			seen[ids[i]] = true
			if got := words(mustMessages(t, s, f.ann.ID, ids[i])); !slices.Equal(got, want) {
				t.Errorf("fork %d reads %v, want %v", ids[i], got, want)
			}
		}
		wantFoundOnce(t, s, f.ann.ID, forkWords)
		wantBytesRight(t, s)
	})
}

func TestForkOfAJobChatIsGeneral(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		job, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Scope: ScopeJob, JobID: ptr("42"), Query: "why did my job fail"}, "a reason")
		fk, err := s.Fork(ctx, u.ID, job.ID, 2)
		if err != nil {
			t.Fatal(err)
		}
		if fk.Scope != ScopeGeneral || fk.JobID != nil || *fk.ForkedFromID != job.ID {
			t.Errorf("fork of a job chat: scope %s, job %v, forked from %v", fk.Scope, fk.JobID, fk.ForkedFromID)
		}
		if again, err := s.JobExchange(ctx, u.ID, "42"); err != nil || again.ID != job.ID {
			t.Errorf("the job's exchange is %v (%v), want %d", again, err, job.ID)
		}
		page := mustPage(t, s, u.ID, "Notes")
		pc, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Scope: ScopePage, PageID: &page.ID, Query: "tidy it"}, "done")
		pf, err := s.Fork(ctx, u.ID, pc.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if pf.Scope != ScopePage || pf.PageID == nil || *pf.PageID != page.ID {
			t.Errorf("fork of a page chat: scope %s, page %v", pf.Scope, pf.PageID)
		}
	})
}

func TestStartForkEditsAndRegenerates(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newForkFixture(t, s)
		// Edit the user message at 3 of the root ("echo").
		ed, q, err := s.StartFork(ctx, ForkStart{UserID: f.ann.ID, ExchangeID: f.root.ID, Seq: 3, Query: "kilo words", AgentType: "router", Owner: "o1"})
		if err != nil {
			t.Fatal(err)
		}
		if q.Seq == nil || *q.Seq != 3 || q.Content != "kilo words" || q.CopyOf != nil {
			t.Errorf("edited message %+v, want kilo words at 3", q)
		}
		if ed.TurnStatus != TurnRunning || ed.TurnOwner == nil || *ed.TurnOwner != "o1" || ed.TurnCount != 3 {
			t.Errorf("edit fork %+v, want running for o1 with 3 turns", ed)
		}
		if got := reload(t, s, ed.ID); got.TurnStatus != TurnRunning || got.TurnCount != 3 {
			t.Errorf("stored edit fork %+v", got)
		}
		if err := s.FinishTurn(ctx, ed.ID, "o1", assistant("lima words")); err != nil {
			t.Fatal(err)
		}
		if got, want := words(mustMessages(t, s, f.ann.ID, ed.ID)), []string{"alpha", "bravo", "charlie", "delta", "kilo", "lima"}; !slices.Equal(got, want) {
			t.Errorf("edit fork %v, want %v", got, want)
		}
		// Regenerate the reply at 4 of the root ("foxtrot"): the fork ends
		// with the copied "echo", which the turn answers.
		at, err := s.RegenerateSeq(ctx, f.ann.ID, f.root.ID, ptr(int64(4)))
		if err != nil || at != 4 {
			t.Fatalf("regenerate seq = %d, %v; want 4", at, err)
		}
		if last, err := s.RegenerateSeq(ctx, f.ann.ID, f.root.ID, nil); err != nil || last != 4 {
			t.Errorf("regenerate the last reply: %d, %v; want 4", last, err)
		}
		for _, bad := range []int64{0, 2, 3, 9} {
			_, err := s.RegenerateSeq(ctx, f.ann.ID, f.root.ID, &bad)
			wantErr(t, err, ErrBadSeq, fmt.Sprintf("regenerate at %d", bad))
		}
		_, err = s.RegenerateSeq(ctx, f.bob.ID, f.root.ID, nil)
		wantErr(t, err, ErrNotFound, "regenerate another user's")
		rg, q2, err := s.StartFork(ctx, ForkStart{UserID: f.ann.ID, ExchangeID: f.root.ID, Seq: at, Owner: "o2"})
		if err != nil {
			t.Fatal(err)
		}
		if q2.Content != "echo words" || q2.ExchangeID != rg.ID || q2.CopyOf == nil {
			t.Errorf("regenerated question %+v, want the copy of echo in %d", q2, rg.ID)
		}
		recent, err := s.RecentContext(ctx, f.ann.ID, rg.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := words(recent), []string{"alpha", "bravo", "charlie", "echo"}; !slices.Equal(got, want) {
			t.Errorf("regenerate's context %v, want %v", got, want)
		}
		if err := s.FinishTurn(ctx, rg.ID, "o2", assistant("mike words")); err != nil {
			t.Fatal(err)
		}
		// The old answer stays in the root.
		if got, want := words(mustMessages(t, s, f.ann.ID, f.root.ID)), []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}; !slices.Equal(got, want) {
			t.Errorf("root after regenerate %v, want %v", got, want)
		}
		wantFoundOnce(t, s, f.ann.ID, append(forkWords, "kilo", "lima", "mike"))
		wantBytesRight(t, s)
	})
}

func TestForkWhileTheParentsTurnRuns(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: "first"}, "reply")
		ex, _ = mustStart(t, s, TurnStart{UserID: u.ID, ExchangeID: ex.ID, Query: "second"})
		fk, err := s.Fork(ctx, u.ID, ex.ID, 3)
		if err != nil {
			t.Fatal(err)
		}
		if fk.TurnStatus != TurnIdle {
			t.Errorf("fork of a running exchange is %s, want idle", fk.TurnStatus)
		}
		if err := s.FinishTurn(ctx, ex.ID, *ex.TurnOwner, assistant("second reply")); err != nil {
			t.Fatal(err)
		}
		if got, want := contents(mustMessages(t, s, u.ID, fk.ID)), []string{"first", "reply", "second"}; !slices.Equal(got, want) {
			t.Errorf("fork %v, want %v", got, want)
		}
		if got, want := contents(mustMessages(t, s, u.ID, ex.ID)), []string{"first", "reply", "second", "second reply"}; !slices.Equal(got, want) {
			t.Errorf("parent %v, want %v", got, want)
		}
	})
}

func TestStartTurnAfterSeq(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: "first"}, "reply")
		before := count(t, s, "messages", "1 = 1")
		_, _, err := s.StartTurn(ctx, TurnStart{UserID: u.ID, ExchangeID: ex.ID, Scope: ScopeGeneral, AgentType: "router",
			Query: "an answer to first", Owner: "o", AfterSeq: ptr(int64(0))})
		wantErr(t, err, ErrLogMoved, "send after seq 0 of a log at 1")
		if n := count(t, s, "messages", "1 = 1"); n != before {
			t.Errorf("%d messages, want %d", n, before)
		}
		if got := reload(t, s, ex.ID); got.TurnStatus != TurnIdle {
			t.Errorf("turn %s after a refused send", got.TurnStatus)
		}
		if _, msg, err := s.StartTurn(ctx, TurnStart{UserID: u.ID, ExchangeID: ex.ID, Scope: ScopeGeneral, AgentType: "router",
			Query: "next", Owner: "o", AfterSeq: ptr(int64(1))}); err != nil || *msg.Seq != 2 {
			t.Errorf("send after the last seq: %v, %v", msg, err)
		}
	})
}

func TestBranchPoints(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		// root: u@0 a@1 u@2 a@3; edit: u@2' a@3'; regen: u@2 a@3''.
		root, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: "q0"}, "a1")
		mustTurn(t, s, TurnStart{UserID: u.ID, ExchangeID: root.ID, Query: "q2"}, "a3")
		edit, _, err := s.StartFork(ctx, ForkStart{UserID: u.ID, ExchangeID: root.ID, Seq: 2, Query: "q2 edited", Owner: "o"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.FinishTurn(ctx, edit.ID, "o", assistant("a3 to the edit")); err != nil {
			t.Fatal(err)
		}
		regen, _, err := s.StartFork(ctx, ForkStart{UserID: u.ID, ExchangeID: root.ID, Seq: 3, Owner: "o"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.FinishTurn(ctx, regen.ID, "o", assistant("a3 again")); err != nil {
			t.Fatal(err)
		}
		show := func(ps []BranchPoint) string {
			out := ""
			for _, p := range ps {
				out += fmt.Sprintf("@%d %v #%d; ", p.Seq, p.Branches, p.Current)
			}
			return out
		}
		for _, tc := range []struct {
			of   int64
			want []BranchPoint
		}{
			{root.ID, []BranchPoint{{2, []int64{root.ID, edit.ID}, 0}, {3, []int64{root.ID, regen.ID}, 0}}},
			// From the edit, the other message at 2 is the root's and
			// the regeneration's: the one used last stands for it.
			{edit.ID, []BranchPoint{{2, []int64{regen.ID, edit.ID}, 1}}},
			{regen.ID, []BranchPoint{{2, []int64{regen.ID, edit.ID}, 0}, {3, []int64{root.ID, regen.ID}, 1}}},
		} {
			got, err := s.BranchPoints(ctx, u.ID, tc.of)
			if err != nil {
				t.Fatal(err)
			}
			if show(got) != show(tc.want) {
				t.Errorf("branch points of %d: %s, want %s", tc.of, show(got), show(tc.want))
			}
		}
		alone, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: "alone"}, "yes")
		if got, err := s.BranchPoints(ctx, u.ID, alone.ID); err != nil || len(got) != 0 {
			t.Errorf("branch points of a lone exchange: %v, %v", got, err)
		}
		_, err = s.BranchPoints(ctx, mustUser(t, s, "bob").ID, root.ID)
		wantErr(t, err, ErrNotFound, "another user's branch points")
	})
}

// TestForksMigration: messages written before migration 00008 stay found
// once, their exchanges' sizes stay right, and they can be forked.
func TestForksMigration(t *testing.T) {
	eachEmptyDB(t, checkForksMigration)
}

func checkForksMigration(t *testing.T, s *Store) {
	ctx := context.Background()
	sqlDB, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrations.UpTo(ctx, sqlDB, s.dialect, 7); err != nil {
		t.Fatal(err)
	}
	// Raw rows: the models already know copy_of, which 00007 lacks.
	at := now()
	var userID, exID int64
	if err := s.db.Raw("INSERT INTO users (username, password_hash, is_admin, created_at) VALUES ('ann', 'h', false, ?) RETURNING id", at).Scan(&userID).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.db.Raw("INSERT INTO exchanges (user_id, scope, title, agent_type, turn_count, created_at, updated_at) VALUES (?, 'general', 'old', 'router', 1, ?, ?) RETURNING id",
		userID, at, at).Scan(&exID).Error; err != nil {
		t.Fatal(err)
	}
	for seq, c := range []string{"oscar words", "papa words"} {
		role := []string{RoleUser, RoleAssistant}[seq]
		if err := s.db.Exec("INSERT INTO messages (exchange_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)", exID, seq, role, c, at).Error; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate to 00008: %v", err)
	}
	wantFoundOnce(t, s, userID, []string{"oscar", "papa"})
	wantBytesRight(t, s)
	fk, err := s.Fork(ctx, userID, exID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteExchange(ctx, userID, exID); err != nil {
		t.Fatal(err)
	}
	if got := contents(mustMessages(t, s, userID, fk.ID)); !slices.Equal(got, []string{"oscar words"}) {
		t.Errorf("fork of an old exchange reads %v", got)
	}
	wantFoundOnce(t, s, userID, []string{"oscar"}, "papa")
	wantBytesRight(t, s)
}

// TestForksRaceDeletes forks a fork while the exchange its entries were
// copied from is deleted, then deletes the fork that was copied: every
// entry must still be found exactly once, in the forks that remain. On
// PostgreSQL a fork that copied before the delete's promotion committed
// would otherwise keep copies of rows that are gone and lose them from
// search once the promoted rows went too: without the advisory lock of
// 00008 this test fails there, words found nowhere.
func TestForksRaceDeletes(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		// Entries: on PostgreSQL a copy that takes a while, so that forks
		// and the delete overlap; SQLite runs one writer at a time anyway.
		n := int64(1000)
		if s.Dialect() == "sqlite" {
			n = 400
		}
		var names []string
		for round := range 4 {
			root, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: fmt.Sprintf("root%d question", round)}, fmt.Sprintf("root%d reply", round))
			err := s.db.Exec(`INSERT INTO messages (exchange_id, seq, role, content, created_at)
				WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
				SELECT ?, i, 'user', 'w' || ? || 'x' || i || ' words', ? FROM n`, n-1, root.ID, fmt.Sprint(round), now()).Error
			if err != nil {
				t.Fatal(err)
			}
			for i := int64(100); i < n; i += n / 10 {
				names = append(names, fmt.Sprintf("w%dx%d", round, i))
			}
			mid, err := s.Fork(ctx, u.ID, root.ID, n)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 6)
			for k := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if k == 3 {
						errs <- errOf(s.DeleteExchange(ctx, u.ID, root.ID))
						return
					}
					_, err := s.Fork(ctx, u.ID, mid.ID, n)
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.DeleteExchange(ctx, u.ID, mid.ID); err != nil {
				t.Fatal(err)
			}
		}
		wantFoundOnce(t, s, u.ID, names)
		wantBytesRight(t, s)
	})
}

// TestForkedProposalsShareTheirState: a proposal copied into a fork of a
// page chat is the same proposal: accepted in the parent, it is applied in
// the fork (and cannot be applied again there); dismissed in a fork, it is
// dismissed in the parent.
func TestForkedProposalsShareTheirState(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		p, err := s.CreatePage(ctx, ann.ID, "P", "v1")
		if err != nil {
			t.Fatal(err)
		}
		accepted := proposalTurn(t, s, ann.ID, p.ID, EditFullReplacement, "v2")
		dismissed := proposalTurn(t, s, ann.ID, p.ID, EditFullReplacement, "v3")
		fa, err := s.Fork(ctx, ann.ID, accepted.ExchangeID, 2)
		if err != nil {
			t.Fatal(err)
		}
		fd, err := s.Fork(ctx, ann.ID, dismissed.ExchangeID, 2)
		if err != nil {
			t.Fatal(err)
		}
		copyOf := func(ex *Exchange) int64 {
			msgs := mustMessages(t, s, ann.ID, ex.ID)
			if len(msgs) != 2 || msgs[1].EditMode == nil || msgs[1].CopyOf == nil {
				t.Fatalf("fork %d: %+v", ex.ID, msgs)
			}
			return msgs[1].ID
		}
		acceptedCopy, dismissedCopy := copyOf(fa), copyOf(fd)
		if _, err := s.AcceptProposal(ctx, ann.ID, p.ID, accepted.ID, replaceWith("v1")); err != nil {
			t.Fatal(err)
		}
		if err := s.RejectProposal(ctx, ann.ID, p.ID, dismissedCopy); err != nil {
			t.Fatal(err)
		}
		all := []int64{accepted.ID, acceptedCopy, dismissed.ID, dismissedCopy}
		applied, rejected, err := s.ProposalStates(ctx, ann.ID, p.ID, all)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range all {
			wantApplied := id == accepted.ID || id == acceptedCopy
			if applied[id] != wantApplied || rejected[id] == wantApplied {
				t.Errorf("message %d: applied %v, rejected %v", id, applied[id], rejected[id])
			}
		}
		_, err = s.AcceptProposal(ctx, ann.ID, p.ID, acceptedCopy, replaceWith("v2"))
		wantErr(t, err, ErrAlreadyApplied, "accept the fork's copy of an applied proposal")
	})
}

// TestForkFamiliesMigration makes, at migration 00015, a root, a fork of it
// and a fork of that fork as the store made them then (copies naming their
// originals, nothing else), migrates, and deletes the root and then the
// middle fork: on SQLite the copies are found through the families 00016
// fills in, and every entry is still found once, in the logs that remain.
// A fork made after the migration joins the same family.
func TestForkFamiliesMigration(t *testing.T) {
	eachEmptyDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		sqlDB, err := s.SQL()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := migrations.UpTo(ctx, sqlDB, s.dialect, 15); err != nil {
			t.Fatal(err)
		}
		at := now()
		var userID int64
		if err := s.db.Raw("INSERT INTO users (username, password_hash, is_admin, created_at) VALUES ('ann', 'h', false, ?) RETURNING id", at).Scan(&userID).Error; err != nil {
			t.Fatal(err)
		}
		exchange := func(parent *int64, seq int64) int64 {
			var id int64
			if err := s.db.Raw(`INSERT INTO exchanges (user_id, scope, title, agent_type, turn_count, created_at, updated_at, forked_from_id, forked_at_seq)
				VALUES (?, 'general', 'old', 'router', 1, ?, ?, ?, ?) RETURNING id`, userID, at, at, parent, seq).Scan(&id).Error; err != nil {
				t.Fatal(err)
			}
			return id
		}
		message := func(exID, seq int64, content string, copyOf *int64) int64 {
			var id int64
			role := []string{RoleUser, RoleAssistant}[seq%2]
			if err := s.db.Raw("INSERT INTO messages (exchange_id, seq, role, content, created_at, copy_of) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
				exID, seq, role, content, at, copyOf).Scan(&id).Error; err != nil {
				t.Fatal(err)
			}
			return id
		}
		root := exchange(nil, 0)
		kilo, lima := message(root, 0, "kilo words", nil), message(root, 1, "lima words", nil)
		a := exchange(&root, 2)
		message(a, 0, "kilo words", &kilo)
		message(a, 1, "lima words", &lima)
		mike := message(a, 2, "mike words", nil)
		b := exchange(&a, 3)
		message(b, 0, "kilo words", &kilo)
		message(b, 1, "lima words", &lima)
		message(b, 2, "mike words", &mike)
		message(b, 3, "november words", nil)
		// As the fork of then added its copies' bytes once.
		if err := s.db.Exec("UPDATE exchanges SET stored_bytes = (SELECT SUM(length(content)) FROM messages WHERE exchange_id = exchanges.id)").Error; err != nil {
			t.Fatal(err)
		}
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate to 00016: %v", err)
		}
		wantFoundOnce(t, s, userID, []string{"kilo", "lima", "mike", "november"})
		c, err := s.Fork(ctx, userID, b, 2)
		if err != nil {
			t.Fatal(err)
		}
		logB, logC := logOf(t, s, userID, b), logOf(t, s, userID, c.ID)
		for _, gone := range []int64{root, a} {
			if _, err := s.DeleteExchange(ctx, userID, gone); err != nil {
				t.Fatal(err)
			}
			if got := logOf(t, s, userID, b); !slices.Equal(got, logB) {
				t.Errorf("b after deleting %d:\n%v\nwant\n%v", gone, got, logB)
			}
			if got := logOf(t, s, userID, c.ID); !slices.Equal(got, logC) {
				t.Errorf("c after deleting %d:\n%v\nwant\n%v", gone, got, logC)
			}
			wantFoundOnce(t, s, userID, []string{"kilo", "lima", "mike", "november"})
			wantBytesRight(t, s)
		}
		// b holds the originals now; deleting it leaves c's copies found.
		if _, err := s.DeleteExchange(ctx, userID, b); err != nil {
			t.Fatal(err)
		}
		if got := logOf(t, s, userID, c.ID); !slices.Equal(got, logC) {
			t.Errorf("c after deleting b:\n%v\nwant\n%v", got, logC)
		}
		wantFoundOnce(t, s, userID, []string{"kilo", "lima"}, "mike", "november")
	})
}
