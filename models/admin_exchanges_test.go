package models

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// adminSpecs is a known mix of users, scopes, agents, ratings, errors and
// proposals, with ties in every sort key so that the id tie-break is tested.
func adminSpecs() []*seedSpec {
	return []*seedSpec{
		{user: "ann", agent: "router", query: "Alpha plan", turns: 1, ago: time.Hour},
		{user: "ann", agent: "router", query: "beta notes", turns: 3, down: true, ago: 2 * time.Hour},
		{user: "ann", scope: ScopePage, page: "Roadmap", agent: "page_assistant", query: "Edit roadmap", turns: 2,
			proposals: []string{"accepted", "rejected", "open"}, ago: 2 * time.Hour},
		{user: "bob", agent: "router", query: "Gamma", turns: 2, failLast: true, ago: 72 * time.Hour},
		{user: "bob", scope: ScopeJob, job: "7", agent: "router", query: "Job seven question", turns: 1, up: true, ago: 240 * time.Hour},
		{user: "bob", agent: "coder", query: "ALPHA again", turns: 2, down: true, failLast: true, ago: time.Hour},
		{user: "cy", agent: "router", query: "100% done_ok", turns: 1, ago: 960 * time.Hour},
		{user: "cy", agent: "router", query: "Delta plan", turns: 1, ago: 0, pinned: true},
	}
}

func TestAdminListExchangesFiltersAndPages(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		sd := seedExchanges(t, s, adminSpecs())
		ctx := context.Background()
		bytes := map[int64]int64{}
		for _, sp := range sd.specs {
			bytes[sp.id] = reload(t, s, sp.id).StoredBytes
		}
		from := adminBase.Add(-48 * time.Hour)
		before := adminBase.Add(-90 * time.Minute)
		for _, tc := range []struct {
			name   string
			filter AdminExchangeFilter
			match  func(*seedSpec) bool
		}{
			{"everything", AdminExchangeFilter{}, func(*seedSpec) bool { return true }},
			{"user", AdminExchangeFilter{UserID: sd.users["bob"].ID}, func(sp *seedSpec) bool { return sp.user == "bob" }},
			{"scope page", AdminExchangeFilter{Scope: ScopePage}, func(sp *seedSpec) bool { return sp.scope == ScopePage }},
			{"scope job", AdminExchangeFilter{Scope: ScopeJob}, func(sp *seedSpec) bool { return sp.scope == ScopeJob }},
			{"scope general", AdminExchangeFilter{Scope: ScopeGeneral}, func(sp *seedSpec) bool { return sp.scopeOrGeneral() == ScopeGeneral }},
			{"agent", AdminExchangeFilter{Agent: "coder"}, func(sp *seedSpec) bool { return sp.agent == "coder" }},
			{"active from", AdminExchangeFilter{ActiveFrom: &from}, func(sp *seedSpec) bool { return sp.ago <= 48*time.Hour }},
			{"active range", AdminExchangeFilter{ActiveFrom: &from, ActiveBefore: &before},
				func(sp *seedSpec) bool { return sp.ago <= 48*time.Hour && sp.ago > 90*time.Minute }},
			{"negative feedback", AdminExchangeFilter{NegativeFeedback: true}, func(sp *seedSpec) bool { return sp.down }},
			{"errors", AdminExchangeFilter{HasErrors: true}, func(sp *seedSpec) bool { return sp.failLast }},
			{"title, any case", AdminExchangeFilter{Title: "alpha"}, func(sp *seedSpec) bool { return strings.Contains(strings.ToLower(sp.query), "alpha") }},
			{"title with %", AdminExchangeFilter{Title: "%"}, func(sp *seedSpec) bool { return strings.Contains(sp.query, "%") }},
			{"title with _", AdminExchangeFilter{Title: "_"}, func(sp *seedSpec) bool { return strings.Contains(sp.query, "_") }},
			{"user, errors and negative feedback", AdminExchangeFilter{UserID: sd.users["bob"].ID, HasErrors: true, NegativeFeedback: true},
				func(sp *seedSpec) bool { return sp.user == "bob" && sp.failLast && sp.down }},
			{"general since from", AdminExchangeFilter{Scope: ScopeGeneral, ActiveFrom: &from},
				func(sp *seedSpec) bool { return sp.scopeOrGeneral() == ScopeGeneral && sp.ago <= 48*time.Hour }},
			{"nothing matches", AdminExchangeFilter{UserID: sd.users["cy"].ID, HasErrors: true}, func(*seedSpec) bool { return false }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var match []*seedSpec
				for _, sp := range sd.specs {
					if tc.match(sp) {
						match = append(match, sp)
					}
				}
				n, err := s.AdminCountExchanges(ctx, tc.filter)
				if err != nil || n != int64(len(match)) {
					t.Fatalf("count = %d, %v; want %d", n, err, len(match))
				}
				for sort, key := range map[string]func(*seedSpec) int64{
					AdminSortActivity: func(sp *seedSpec) int64 { return adminBase.Add(-sp.ago).UnixMicro() },
					AdminSortTurns:    func(sp *seedSpec) int64 { return int64(sp.turns) },
					AdminSortSize:     func(sp *seedSpec) int64 { return bytes[sp.id] },
				} {
					want := sortedIDs(match, key)
					for _, size := range []int{1, 2, 3, 50} {
						f := tc.filter
						f.Sort = sort
						if got := walkAdmin(t, s, f, size); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
							t.Fatalf("by %s, pages of %d: %v, want %v", sort, size, got, want)
						}
					}
				}
			})
		}
	})
}

func TestAdminListExchangesFacts(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		sd := seedExchanges(t, s, adminSpecs())
		rows, _, err := s.AdminListExchanges(context.Background(), AdminExchangeFilter{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		byID := map[int64]AdminExchangeRow{}
		for _, r := range rows {
			byID[r.ID] = r
		}
		for _, sp := range sd.specs {
			r, ok := byID[sp.id]
			if !ok {
				t.Fatalf("exchange %d (%s) not listed", sp.id, sp.query)
			}
			var up, down int64
			if sp.up {
				up = 1
			}
			if sp.down {
				down = 1
			}
			want := AdminExchangeFacts{
				FeedbackUp: up, FeedbackDown: down, Errors: sp.errors(),
				ProposalsAccepted: sp.count("accepted"), ProposalsRejected: sp.count("rejected"), ProposalsOpen: sp.count("open"),
			}
			if r.AdminExchangeFacts != want {
				t.Errorf("%s: facts %+v, want %+v", sp.query, r.AdminExchangeFacts, want)
			}
			if r.Username != sp.user || r.Scope != sp.scopeOrGeneral() || r.AgentType != sp.agent || r.TurnCount != int64(sp.turns) {
				t.Errorf("%s: user %q scope %q agent %q turns %d", sp.query, r.Username, r.Scope, r.AgentType, r.TurnCount)
			}
			if msgs := count(t, s, "messages", "exchange_id = ?", sp.id); r.Messages != msgs {
				t.Errorf("%s: %d messages, want %d", sp.query, r.Messages, msgs)
			}
			if sp.scope == ScopePage && (r.PageTitle == nil || *r.PageTitle != sp.page || r.PageDeleted) {
				t.Errorf("%s: page title %v (deleted %v), want %q", sp.query, r.PageTitle, r.PageDeleted, sp.page)
			}
			if sp.scope != ScopePage && r.PageTitle != nil {
				t.Errorf("%s: page title %q on a %s exchange", sp.query, *r.PageTitle, r.Scope)
			}
		}
	})
}

// TestStoredBytesFollowsTheLog checks the triggers that keep stored_bytes:
// after appends, an in-place change and a deletion it equals the sum over the
// rows, counted in bytes (not characters).
func TestStoredBytesFollowsTheLog(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		u := mustUser(t, s, "ann")
		ex, q, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: "héllo wörld ✓"}, "réponse ✓✓")
		check := func(when string) {
			t.Helper()
			got, want := reload(t, s, ex.ID).StoredBytes, storedBytes(t, s, ex.ID)
			if got != want || want == 0 {
				t.Fatalf("%s: stored_bytes %d, want %d", when, got, want)
			}
		}
		check("after a turn")
		mustTurn(t, s, TurnStart{UserID: u.ID, ExchangeID: ex.ID, Query: "again"}, strings.Repeat("é", 100))
		check("after a second turn")
		if err := s.db.Exec("UPDATE messages SET content = ? WHERE id = ?", "edited ✓", q.ID).Error; err != nil {
			t.Fatal(err)
		}
		check("after an edit")
		if err := s.db.Exec("DELETE FROM messages WHERE id = ?", q.ID).Error; err != nil {
			t.Fatal(err)
		}
		check("after a deletion")
		// A fresh exchange starts from zero; another's log does not count.
		other, _, _ := mustTurn(t, s, TurnStart{UserID: u.ID, Query: "x"}, "y")
		if got, want := reload(t, s, other.ID).StoredBytes, storedBytes(t, s, other.ID); got != want {
			t.Fatalf("second exchange: stored_bytes %d, want %d", got, want)
		}
	})
}

func TestAdminCursor(t *testing.T) {
	c := AdminCursor{Sort: AdminSortSize, Key: 1234, ID: 56}
	got, err := ParseAdminCursor(c.String())
	if err != nil || got != c {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	neg := AdminCursor{Sort: AdminSortActivity, Key: -5, ID: 1} // a time before 1970
	if got, err := ParseAdminCursor(neg.String()); err != nil || got != neg {
		t.Fatalf("negative key: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "%%%", "eA", AdminCursor{Sort: "colour", Key: 1, ID: 1}.String(),
		AdminCursor{Sort: AdminSortTurns, Key: 1, ID: 0}.String(), "dHVybnMuMS4x.extra"} {
		if _, err := ParseAdminCursor(bad); err == nil {
			t.Errorf("ParseAdminCursor(%q) accepted", bad)
		}
	}
	s := newSQLite(t, Options{})
	// A cursor made for one sort is refused by another: its key means
	// something else there.
	_, _, err = s.AdminListExchanges(context.Background(), AdminExchangeFilter{Sort: AdminSortTurns, After: &c})
	wantErr(t, err, ErrBadCursor, "size cursor on the turns list")
	_, _, err = s.AdminListExchanges(context.Background(), AdminExchangeFilter{Sort: "colour"})
	if err == nil {
		t.Fatal("an unknown sort was accepted")
	}
}

func TestAdminExchangeAndAgents(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		sd := seedExchanges(t, s, adminSpecs())
		ctx := context.Background()
		page := sd.specs[2]
		r, err := s.AdminExchange(ctx, page.id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Username != "ann" || r.PageTitle == nil || *r.PageTitle != "Roadmap" || r.ProposalsOpen != 1 {
			t.Fatalf("admin exchange: %+v", r)
		}
		_, err = s.AdminExchange(ctx, 424242)
		wantErr(t, err, ErrNotFound, "missing exchange")
		var props []int64
		if err := s.db.Raw("SELECT id FROM messages WHERE exchange_id = ? AND edit_mode IS NOT NULL ORDER BY id", page.id).Scan(&props).Error; err != nil {
			t.Fatal(err)
		}
		_, _, prose := mustTurn(t, s, TurnStart{UserID: sd.users["ann"].ID, Query: "plain"}, "prose")
		states, err := s.AdminProposalStates(ctx, append(props, 424242, prose.ID))
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]string{props[0]: ProposalAccepted, props[1]: ProposalRejected, props[2]: ProposalOpen}
		if len(props) != 3 || !maps.Equal(states, want) {
			t.Fatalf("proposal states %v, want %v", states, want)
		}
		agents, err := s.AdminAgentTypes(ctx)
		if err != nil || !slices.Equal(agents, []string{"coder", "page_assistant", "router"}) {
			t.Fatalf("agents %v, %v", agents, err)
		}
	})
}
