package models

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"
)

func TestListExchangesKeysetWalk(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		type row struct {
			id int64
			at time.Time
		}
		var want []row
		for i := range 25 {
			ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: fmt.Sprintf("question %d", i)}, fmt.Sprintf("answer %d", i))
			// Groups of three share one instant, so the id must break the
			// tie; the others differ by a microsecond or by hours.
			at := base.Add(-time.Duration(i/3) * time.Hour)
			if i%3 == 2 {
				at = at.Add(time.Microsecond)
			}
			if i == 24 {
				at = base.Add(time.Hour) // the newest, created last
			}
			setUpdatedAt(t, s, ex.ID, at)
			want = append(want, row{ex.ID, at})
		}
		sort.Slice(want, func(i, j int) bool {
			if !want[i].at.Equal(want[j].at) {
				return want[i].at.After(want[j].at)
			}
			return want[i].id > want[j].id
		})
		// Noise that must not show: another user's, and other scopes.
		for i := range 3 {
			mustTurn(t, s, TurnStart{UserID: bob.ID, Query: fmt.Sprintf("bob %d", i)}, "b")
		}
		page := mustPage(t, s, ann.ID, "P")
		mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &page.ID, Query: "about the page"}, "p")
		job := "5"
		mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeJob, JobID: &job, Query: "about the job"}, "j")

		for _, limit := range []int{1, 4, 7, 25, 50} {
			var got []int64
			var before *Cursor
			for pages := 0; ; pages++ {
				if pages > 30 {
					t.Fatalf("limit %d: the walk does not end", limit)
				}
				items, err := s.ListExchanges(ctx, ann.ID, ExchangeQuery{Scope: ScopeGeneral, Before: before, Limit: limit})
				if err != nil {
					t.Fatal(err)
				}
				if len(items) > limit {
					t.Fatalf("limit %d: got %d items", limit, len(items))
				}
				for _, it := range items {
					got = append(got, it.ID)
				}
				if len(items) < limit {
					break
				}
				// Through the opaque token, as a client would carry it; on
				// odd batches straight from the item, in another time zone.
				c := items[len(items)-1].Cursor()
				if pages%2 == 0 {
					var err error
					if c, err = ParseCursor(c.String()); err != nil {
						t.Fatal(err)
					}
				} else {
					c.At = c.At.In(time.FixedZone("UTC-5", -5*3600))
				}
				before = &c
			}
			wantIDs := make([]int64, len(want))
			for i, r := range want {
				wantIDs[i] = r.id
			}
			if !slices.Equal(got, wantIDs) {
				t.Errorf("limit %d: walked %v\nwant %v", limit, got, wantIDs)
			}
		}
	})
}

func TestListExchangesSummaries(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")

		rated, _, a1 := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "first q"}, "first a")
		_, _, a2 := mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: rated.ID, Query: "second q"}, "second a")
		if _, err := s.SetFeedback(ctx, ann.ID, a1.ID, ptr[int64](FeedbackDown), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetFeedback(ctx, ann.ID, a2.ID, ptr[int64](FeedbackUp), nil); err != nil {
			t.Fatal(err)
		}
		failed, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "doomed"})
		if _, err := s.FailTurn(ctx, failed.ID, *failed.TurnOwner, "boom"); err != nil {
			t.Fatal(err)
		}
		// failed is the most recent activity now; then new activity on rated
		// brings it back to the top.
		items, err := s.ListExchanges(ctx, ann.ID, ExchangeQuery{Scope: ScopeGeneral, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 2 || items[0].ID != failed.ID || items[1].ID != rated.ID {
			t.Fatalf("order = %v, want [failed, rated]", ids(items))
		}
		r := items[1]
		if r.Query != "first q" || r.Response != "first a" || r.AgentResponse == nil || r.AgentResponse.Content != "first a" {
			t.Errorf("summary of rated: query %q response %q agent_response %+v; want the first turn", r.Query, r.Response, r.AgentResponse)
		}
		if r.Feedback == nil || *r.Feedback != FeedbackUp {
			t.Errorf("summary feedback = %v, want the latest reply's (1)", r.Feedback)
		}
		if r.TurnCount != 2 || r.Title != "first q" {
			t.Errorf("summary turn_count %d title %q", r.TurnCount, r.Title)
		}
		f := items[0]
		if f.Query != "doomed" || f.Response != "" || f.AgentResponse != nil || f.Feedback != nil {
			t.Errorf("summary of the failed exchange = %+v", f)
		}

		mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: rated.ID, Query: "third q"}, "third a")
		items, _ = s.ListExchanges(ctx, ann.ID, ExchangeQuery{Scope: ScopeGeneral, Limit: 10})
		if len(items) != 2 || items[0].ID != rated.ID {
			t.Errorf("after new activity order = %v, want rated first", ids(items))
		}
		if items[0].Feedback != nil {
			t.Errorf("feedback = %v, want the new latest reply's (none)", *items[0].Feedback)
		}

		items, err = s.ListExchanges(ctx, bob.ID, ExchangeQuery{Scope: ScopeGeneral, Limit: 10})
		if err != nil || len(items) != 0 {
			t.Errorf("bob sees %v, %v; want nothing", ids(items), err)
		}
	})
}

func TestListExchangesByScope(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		p, q := mustPage(t, s, ann.ID, "P"), mustPage(t, s, ann.ID, "Q")
		p1, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &p.ID, Query: "p1"}, "r")
		p2, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &p.ID, Query: "p2"}, "r")
		q1, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &q.ID, Query: "q1"}, "r")
		job := "9"
		j1, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeJob, JobID: &job, Query: "j"}, "r")
		g1, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "g"}, "r")
		for _, tc := range []struct {
			user int64
			q    ExchangeQuery
			want []int64
		}{
			{ann.ID, ExchangeQuery{Scope: ScopePage, PageID: p.ID, Limit: 10}, []int64{p2.ID, p1.ID}},
			{ann.ID, ExchangeQuery{Scope: ScopePage, PageID: q.ID, Limit: 10}, []int64{q1.ID}},
			{ann.ID, ExchangeQuery{Scope: ScopeJob, Limit: 10}, []int64{j1.ID}},
			{ann.ID, ExchangeQuery{Scope: ScopeGeneral, Limit: 10}, []int64{g1.ID}},
			{bob.ID, ExchangeQuery{Scope: ScopePage, PageID: p.ID, Limit: 10}, nil},
		} {
			items, err := s.ListExchanges(ctx, tc.user, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(items), tc.want) {
				t.Errorf("user %d %+v = %v, want %v", tc.user, tc.q, ids(items), tc.want)
			}
			for _, it := range items {
				wantListedHeader(t, s, it.Exchange, fmt.Sprintf("%+v", tc.q))
			}
		}
	})
}

// TestListExchangesPinnedArchived: the pinned and archived filters, each
// with the keyset, and the flags on the items as their rows hold them.
func TestListExchangesPinnedArchived(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		var exs []*Exchange
		for i := range 5 {
			ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: fmt.Sprint("q", i)}, fmt.Sprint("a", i))
			exs = append(exs, ex)
		}
		yes, no := true, false
		// 0 and 3 pinned, 1 archived, 4 pinned and archived.
		for i, u := range map[int]ExchangeUpdate{0: {Pinned: &yes}, 3: {Pinned: &yes}, 1: {Archived: &yes}, 4: {Pinned: &yes, Archived: &yes}} {
			if _, err := s.UpdateExchange(ctx, ann.ID, exs[i].ID, u); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			q    ExchangeQuery
			want []int64
		}{
			{ExchangeQuery{}, []int64{exs[3].ID, exs[2].ID, exs[0].ID}},
			{ExchangeQuery{Pinned: &yes}, []int64{exs[3].ID, exs[0].ID}},
			{ExchangeQuery{Pinned: &no}, []int64{exs[2].ID}},
			{ExchangeQuery{Archived: true}, []int64{exs[4].ID, exs[1].ID}},
			{ExchangeQuery{Archived: true, Pinned: &no}, []int64{exs[1].ID}},
		} {
			tc.q.Scope = ScopeGeneral
			var got []int64
			var before *Cursor
			for { // one item a batch: every batch after the first goes by the keyset
				tc.q.Limit, tc.q.Before = 1, before
				items, err := s.ListExchanges(ctx, ann.ID, tc.q)
				if err != nil {
					t.Fatal(err)
				}
				if len(items) == 0 {
					break
				}
				it := items[0]
				wantListedHeader(t, s, it.Exchange, fmt.Sprintf("%+v", tc.q))
				if it.Archived != tc.q.Archived || (tc.q.Pinned != nil && it.Pinned != *tc.q.Pinned) {
					t.Errorf("%+v lists %d (pinned %v, archived %v)", tc.q, it.ID, it.Pinned, it.Archived)
				}
				got = append(got, it.ID)
				c := it.Cursor()
				before = &c
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%+v = %v, want %v", tc.q, got, tc.want)
			}
		}
	})
}

func ids(items []ExchangeSummary) []int64 {
	var out []int64
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

func TestRenameExchange(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "original"}, "r")
		at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
		setUpdatedAt(t, s, ex.ID, at)

		got, err := s.RenameExchange(ctx, ann.ID, ex.ID, "Renamed")
		if err != nil || got.Title != "Renamed" {
			t.Fatalf("RenameExchange = %+v, %v", got, err)
		}
		// A rename is not activity: the exchange keeps its place in the history.
		if !got.UpdatedAt.Equal(at) {
			t.Errorf("rename moved updated_at from %v to %v", at, got.UpdatedAt)
		}
		_, err = s.RenameExchange(ctx, bob.ID, ex.ID, "Stolen")
		wantErr(t, err, ErrNotFound, "another user's rename")
		_, err = s.RenameExchange(ctx, ann.ID, 424242, "x")
		wantErr(t, err, ErrNotFound, "renaming a missing exchange")
		if got := reload(t, s, ex.ID); got.Title != "Renamed" {
			t.Errorf("title = %q after another user's attempt", got.Title)
		}
		// A later turn does not overwrite a title that is set.
		mustStart(t, s, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Query: "next"})
		if got := reload(t, s, ex.ID); got.Title != "Renamed" {
			t.Errorf("title = %q after a new turn", got.Title)
		}
	})
}

func TestDeleteExchange(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "q"}, "a")
		keep, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "keep"}, "a")

		wantErr(t, errOf(s.DeleteExchange(ctx, bob.ID, ex.ID)), ErrNotFound, "another user's delete")
		if n := count(t, s, "messages", "exchange_id = ?", ex.ID); n != 2 {
			t.Fatalf("another user's delete removed messages (%d left)", n)
		}
		if _, err := s.DeleteExchange(ctx, ann.ID, ex.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "exchanges", "id = ?", ex.ID); n != 0 {
			t.Error("exchange still there")
		}
		if n := count(t, s, "messages", "exchange_id = ?", ex.ID); n != 0 {
			t.Errorf("%d messages left by the cascade", n)
		}
		if n := count(t, s, "messages", "exchange_id = ?", keep.ID); n != 2 {
			t.Errorf("the other exchange lost messages: %d left", n)
		}
		wantErr(t, errOf(s.DeleteExchange(ctx, ann.ID, ex.ID)), ErrNotFound, "deleting twice")
		_, err := s.Exchange(ctx, ann.ID, ex.ID)
		wantErr(t, err, ErrNotFound, "reading a deleted exchange")
	})
}

func TestDeleteExchanges(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		a1, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "1"}, "a")
		a2, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "2"}, "a")
		a3, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "3"}, "a")
		b1, _, _ := mustTurn(t, s, TurnStart{UserID: bob.ID, Query: "b"}, "a")

		n, err := s.DeleteExchanges(ctx, ann.ID, []int64{a1.ID, a2.ID, b1.ID, 424242})
		if err != nil || n != 2 {
			t.Fatalf("DeleteExchanges = %d, %v; want 2 (others' and missing ids skipped)", n, err)
		}
		if n := count(t, s, "exchanges", "id IN (?, ?)", a1.ID, a2.ID); n != 0 {
			t.Error("deleted exchanges still there")
		}
		if n := count(t, s, "messages", "exchange_id IN (?, ?)", a1.ID, a2.ID); n != 0 {
			t.Errorf("%d messages of deleted exchanges left", n)
		}
		if n := count(t, s, "exchanges", "id IN (?, ?)", a3.ID, b1.ID); n != 2 {
			t.Error("an exchange that was not asked for (or bob's) went")
		}
		if n, err := s.DeleteExchanges(ctx, ann.ID, nil); err != nil || n != 0 {
			t.Errorf("DeleteExchanges(none) = %d, %v", n, err)
		}
	})
}

func TestClearExchanges(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		p, q := mustPage(t, s, ann.ID, "P"), mustPage(t, s, ann.ID, "Q")
		job := "3"
		g1, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "g1"}, "a") // 2 messages
		mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: g1.ID, Query: "g1b"}, "a")
		failed, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "g2"}) // 2 messages (user + error)
		if _, err := s.FailTurn(ctx, failed.ID, *failed.TurnOwner, "boom"); err != nil {
			t.Fatal(err)
		}
		pex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &p.ID, Query: "p"}, "a")
		qex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &q.ID, Query: "q"}, "a")
		jex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeJob, JobID: &job, Query: "j"}, "a")
		bex, _, _ := mustTurn(t, s, TurnStart{UserID: bob.ID, Query: "b"}, "a")

		exs, msgs, err := s.ClearExchanges(ctx, ann.ID, ScopeGeneral, 0)
		if err != nil || exs != 2 || msgs != 6 {
			t.Fatalf("ClearExchanges(general) = %d, %d, %v; want 2 exchanges, 6 messages", exs, msgs, err)
		}
		if n := count(t, s, "messages", "exchange_id IN (?, ?)", g1.ID, failed.ID); n != 0 {
			t.Errorf("%d messages of cleared exchanges left", n)
		}
		for _, id := range []int64{pex.ID, qex.ID, jex.ID, bex.ID} {
			if n := count(t, s, "messages", "exchange_id = ?", id); n != 2 {
				t.Errorf("exchange %d lost messages to the general clear (%d left)", id, n)
			}
		}

		exs, msgs, err = s.ClearExchanges(ctx, ann.ID, ScopePage, p.ID)
		if err != nil || exs != 1 || msgs != 2 {
			t.Fatalf("ClearExchanges(page P) = %d, %d, %v; want 1, 2", exs, msgs, err)
		}
		if n := count(t, s, "exchanges", "id IN (?, ?, ?)", qex.ID, jex.ID, bex.ID); n != 3 {
			t.Error("the page clear took other exchanges")
		}
		// Another user clearing ann's page changes nothing.
		exs, msgs, err = s.ClearExchanges(ctx, bob.ID, ScopePage, q.ID)
		if err != nil || exs != 0 || msgs != 0 {
			t.Errorf("bob clearing ann's page = %d, %d, %v", exs, msgs, err)
		}
		if n := count(t, s, "exchanges", "id = ?", qex.ID); n != 1 {
			t.Error("bob cleared ann's page chat")
		}
		// Nothing left to clear: zero, not an error.
		if exs, msgs, err := s.ClearExchanges(ctx, ann.ID, ScopeGeneral, 0); err != nil || exs != 0 || msgs != 0 {
			t.Errorf("second clear = %d, %d, %v", exs, msgs, err)
		}
	})
}

func TestDeletingAPageDeletesItsChats(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ann := mustUser(t, s, "ann")
		p, q := mustPage(t, s, ann.ID, "P"), mustPage(t, s, ann.ID, "Q")
		pex, _, proposal := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &p.ID, Query: "edit it"}, "proposal")
		mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &p.ID, Query: "again"}, "r")
		qex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &q.ID, Query: "q"}, "r")
		// A revision that points at the accepted proposal.
		rev := &PageRevision{PageID: p.ID, Content: "new", EditSource: "agent", MessageID: &proposal.ID, CreatedAt: now()}
		if err := s.db.Create(rev).Error; err != nil {
			t.Fatal(err)
		}
		// A general chat forked from the page chat must survive, unlinked.
		fork, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "fork"}, "r")
		if err := s.db.Exec("UPDATE exchanges SET forked_from_id = ?, forked_at_seq = 0 WHERE id = ?", pex.ID, fork.ID).Error; err != nil {
			t.Fatal(err)
		}

		if err := s.db.Exec("DELETE FROM pages WHERE id = ?", p.ID).Error; err != nil {
			t.Fatalf("delete page: %v", err)
		}
		if n := count(t, s, "exchanges", "page_id = ?", p.ID); n != 0 {
			t.Errorf("%d exchanges of the deleted page left", n)
		}
		if n := count(t, s, "messages", "exchange_id = ?", pex.ID); n != 0 {
			t.Errorf("%d messages of the deleted page's chat left", n)
		}
		if n := count(t, s, "page_revisions", "page_id = ?", p.ID); n != 0 {
			t.Errorf("%d revisions of the deleted page left", n)
		}
		if n := count(t, s, "messages", "exchange_id = ?", qex.ID); n != 2 {
			t.Errorf("the other page's chat lost messages (%d left)", n)
		}
		if got := reload(t, s, fork.ID); got.ForkedFromID != nil {
			t.Errorf("the fork still points at deleted exchange %d", *got.ForkedFromID)
		}
	})
}

// TestCrossUserIsolation runs every read and write the store offers with
// another user's id: each answers not found, or empty, and changes nothing.
func TestCrossUserIsolation(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, eve := mustUser(t, s, "ann"), mustUser(t, s, "eve")
		job := "1"
		ex, _, reply := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "private"}, "secret")
		jex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeJob, JobID: &job, Query: "job"}, "r")
		p := mustPage(t, s, ann.ID, "P")
		pex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &p.ID, Query: "page"}, "r")
		snapshot := func() string {
			var out []string
			if err := s.db.Raw(`SELECT CAST(id AS TEXT) || ':' || title || ':' || turn_status || ':' || CAST(turn_count AS TEXT)
				FROM exchanges ORDER BY id`).Scan(&out).Error; err != nil {
				t.Fatal(err)
			}
			var msgs []string
			if err := s.db.Raw(`SELECT CAST(id AS TEXT) || ':' || content || ':' || COALESCE(CAST(feedback AS TEXT), '-')
				FROM messages ORDER BY id`).Scan(&msgs).Error; err != nil {
				t.Fatal(err)
			}
			return fmt.Sprint(out, msgs)
		}
		before := snapshot()

		notFound := map[string]error{}
		_, notFound["Exchange"] = s.Exchange(ctx, eve.ID, ex.ID)
		_, notFound["JobExchange"] = s.JobExchange(ctx, eve.ID, job)
		_, notFound["Messages"] = s.Messages(ctx, eve.ID, ex.ID, nil)
		_, notFound["Message"] = s.Message(ctx, eve.ID, reply.ID)
		_, notFound["FirstAnswer"] = s.FirstAnswer(ctx, eve.ID, ex.ID)
		_, notFound["SetFeedback"] = s.SetFeedback(ctx, eve.ID, reply.ID, ptr[int64](0), nil)
		_, notFound["SetExchangeFeedback"] = s.SetExchangeFeedback(ctx, eve.ID, ex.ID, 0)
		_, notFound["RenameExchange"] = s.RenameExchange(ctx, eve.ID, ex.ID, "mine now")
		_, notFound["Summary"] = s.Summary(ctx, eve.ID, ex.ID)
		notFound["DeleteExchange"] = errOf(s.DeleteExchange(ctx, eve.ID, ex.ID))
		_, _, notFound["StartTurn"] = s.StartTurn(ctx, TurnStart{UserID: eve.ID, ExchangeID: ex.ID, Scope: ScopeGeneral, Query: "hi", Owner: "o"})
		for name, err := range notFound {
			wantErr(t, err, ErrNotFound, name+" with another user's id")
		}

		if got, err := s.RecentContext(ctx, eve.ID, ex.ID, 10); err != nil || len(got) != 0 {
			t.Errorf("RecentContext = %v, %v; want nothing", contents(got), err)
		}
		if n, err := s.DeleteExchanges(ctx, eve.ID, []int64{ex.ID, jex.ID, pex.ID}); err != nil || n != 0 {
			t.Errorf("DeleteExchanges = %d, %v; want 0", n, err)
		}
		for _, scope := range []string{ScopeGeneral, ScopeJob} {
			if e, m, err := s.ClearExchanges(ctx, eve.ID, scope, 0); err != nil || e != 0 || m != 0 {
				t.Errorf("ClearExchanges(%s) = %d, %d, %v", scope, e, m, err)
			}
		}
		if e, m, err := s.ClearExchanges(ctx, eve.ID, ScopePage, p.ID); err != nil || e != 0 || m != 0 {
			t.Errorf("ClearExchanges(page) = %d, %d, %v", e, m, err)
		}
		for _, q := range []ExchangeQuery{{Scope: ScopeGeneral}, {Scope: ScopeJob}, {Scope: ScopePage, PageID: p.ID}} {
			q.Limit = 10
			if items, err := s.ListExchanges(ctx, eve.ID, q); err != nil || len(items) != 0 {
				t.Errorf("ListExchanges(%+v) = %v, %v", q, ids(items), err)
			}
		}
		if after := snapshot(); after != before {
			t.Errorf("another user's calls changed the data:\nbefore %s\nafter  %s", before, after)
		}
	})
}
