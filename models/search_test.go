package models

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// search runs a search of q for the user, first batch, and returns the hits.
func search(t *testing.T, s *Store, userID int64, q string, opts ...func(*SearchQuery)) []SearchHit {
	t.Helper()
	sq := SearchQuery{Terms: ParseSearch(q), Limit: 50}
	for _, o := range opts {
		o(&sq)
	}
	hits, err := s.Search(context.Background(), userID, sq)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return hits
}

// hitRoles lists the hits as "role:exchange" (titles) or "role:message".
func hitRoles(hits []SearchHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		if h.MessageID == nil {
			out[i] = fmt.Sprintf("%s:%d", h.Role, h.ExchangeID)
		} else {
			out[i] = fmt.Sprintf("%s:%d", h.Role, *h.MessageID)
		}
	}
	slices.Sort(out)
	return out
}

func TestSearchFoldsCaseAccentsAndStems(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		ex, q, a := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "Where do pelicans winter?"},
			"They are running to the warm coasts near the Café Olé.")
		mustTurn(t, s, TurnStart{UserID: bob.ID, Query: "pelicans and cafés for bob"}, "running warm coasts")
		title := fmt.Sprintf("title:%d", ex.ID)
		user, reply := fmt.Sprintf("user:%d", q.ID), fmt.Sprintf("assistant:%d", a.ID)
		for _, tc := range []struct {
			q    string
			want []string
		}{
			{"pelican", []string{title, user}},  // the stem of pelicans, in the title and the message
			{"PELICANS", []string{title, user}}, // any case
			{"run", []string{reply}},            // "running" stems to run
			{"cafe ole", []string{reply}},       // accents folded
			{`"warm coasts"`, []string{reply}},  // a phrase
			{`"coasts warm"`, nil},              // in that order only
			{"coa*", []string{reply}},           // a prefix
			{"pelican coasts", nil},             // every word, in one message
			{"penguins", nil},                   //
			{"bob", nil},                        // another user's words are not found
			{"winter pelicans", []string{title, user}},
		} {
			if got := hitRoles(search(t, s, ann.ID, tc.q)); !slices.Equal(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) {
				t.Errorf("search %q: %v, want %v", tc.q, got, tc.want)
			}
		}
	})
}

func TestSearchTakesAnyStringAsText(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ann := mustUser(t, s, "ann")
		mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "NEAR the AND gate: (x OR y) NOT z"}, "ok")
		for _, q := range []string{
			`"unbalanced`, `AND OR NOT NEAR`, `(gate)`, `gate:`, `*`, `**`, `\`, `a\"b`, `"`, `""`, `" "*`,
			"\x00\x01\x02", `NEAR(gate, x)`, `-gate`, `^gate`, `+gate`, `gate*  *`, `{gate}`, `[gate]`, `'gate'`,
			`col:gate`, `gate -- ; DROP TABLE messages`, strings.Repeat("é", 3000), strings.Repeat("🦜", 500),
			strings.Repeat(`"a" `, 200), "\u200b\u202e", "gate\x7f", `!@#$%^&*()`,
		} {
			if _, err := s.Search(context.Background(), ann.ID, SearchQuery{Terms: ParseSearch(q), Limit: 20}); err != nil {
				t.Errorf("search %q: %v", q, err)
			}
		}
		// What the engines call operators is found as words.
		if got := search(t, s, ann.ID, "NEAR AND"); len(got) != 2 { // the title and the message
			t.Errorf("NEAR AND: %d hits, want 2", len(got))
		}
		if got := search(t, s, ann.ID, "(x OR y)"); len(got) != 2 {
			t.Errorf("(x OR y): %d hits, want 2", len(got))
		}
	})
}

func TestSearchSnippetsAreEscapedWithMarks(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ann := mustUser(t, s, "ann")
		mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "hello"},
			"the <script>alert(1)</script> pelican \x01sneaky\x02 & more \x02")
		hits := search(t, s, ann.ID, "pelican")
		if len(hits) != 1 {
			t.Fatalf("%d hits, want 1", len(hits))
		}
		sn := hits[0].Snippet
		// (PostgreSQL's headline leaves out what its parser reads as tags;
		// SQLite keeps them, escaped.)
		if !strings.Contains(sn, "<mark>pelican</mark>") || strings.Contains(sn, "<script") ||
			s.Dialect() == "sqlite" && !strings.Contains(sn, "&lt;script&gt;") {
			t.Errorf("snippet %q", sn)
		}
		if strings.Count(sn, "<mark>") != strings.Count(sn, "</mark>") {
			t.Errorf("unbalanced marks in %q", sn)
		}
		rest := strings.NewReplacer("<mark>", "", "</mark>", "").Replace(sn)
		if strings.ContainsAny(rest, "<>") {
			t.Errorf("markup besides <mark> in %q", sn)
		}
	})
}

func TestSearchSkipsErrorRowsAndFollowsDeletes(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ann := mustUser(t, s, "ann")
		ex, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "first question"})
		if _, err := s.FailTurn(context.Background(), ex.ID, *ex.TurnOwner, "the quetzalcoatl server failed"); err != nil {
			t.Fatal(err)
		}
		if got := search(t, s, ann.ID, "quetzalcoatl"); len(got) != 0 {
			t.Errorf("an error row is found: %v", hitRoles(got))
		}
		_, _, a := mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Query: "second"}, "the axolotl answer")
		if got := search(t, s, ann.ID, "axolotl"); len(got) != 1 || *got[0].MessageID != a.ID {
			t.Fatalf("axolotl: %v", hitRoles(got))
		}
		if _, err := s.RenameExchange(context.Background(), ann.ID, ex.ID, "Axolotl notes"); err != nil {
			t.Fatal(err)
		}
		if got := search(t, s, ann.ID, "axolotl"); len(got) != 2 {
			t.Fatalf("after the rename: %v, want the title too", hitRoles(got))
		}
		if got := search(t, s, ann.ID, "first question"); len(got) != 1 { // the old title is gone
			t.Fatalf("after the rename, the old title: %v", hitRoles(got))
		}
		if _, err := s.DeleteExchange(context.Background(), ann.ID, ex.ID); err != nil {
			t.Fatal(err)
		}
		if got := search(t, s, ann.ID, "axolotl"); len(got) != 0 {
			t.Fatalf("after the delete: %v", hitRoles(got))
		}
	})
}

func TestSearchFilters(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ann := mustUser(t, s, "ann")
		p := mustPage(t, s, ann.ID, "Notes")
		gen, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "zebra general"}, "ok")
		pg, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopePage, PageID: &p.ID, AgentType: "page_assistant", Query: "zebra page"}, "ok")
		old, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "zebra archived"}, "ok")
		if err := s.db.Exec("UPDATE exchanges SET archived = ? WHERE id = ?", true, old.ID).Error; err != nil {
			t.Fatal(err)
		}
		exchanges := func(hits []SearchHit) []int64 {
			var ids []int64
			for _, h := range hits {
				if !slices.Contains(ids, h.ExchangeID) {
					ids = append(ids, h.ExchangeID)
				}
			}
			slices.Sort(ids)
			return ids
		}
		if got := exchanges(search(t, s, ann.ID, "zebra")); !slices.Equal(got, []int64{gen.ID, pg.ID}) {
			t.Errorf("default: %v, want %v", got, []int64{gen.ID, pg.ID})
		}
		if got := exchanges(search(t, s, ann.ID, "zebra", func(q *SearchQuery) { q.Archived = true })); len(got) != 3 {
			t.Errorf("with archived: %v", got)
		}
		if got := exchanges(search(t, s, ann.ID, "zebra", func(q *SearchQuery) { q.Scope = ScopePage })); !slices.Equal(got, []int64{pg.ID}) {
			t.Errorf("scope page: %v", got)
		}
		if got := exchanges(search(t, s, ann.ID, "zebra", func(q *SearchQuery) { q.AgentType = "page_assistant" })); !slices.Equal(got, []int64{pg.ID}) {
			t.Errorf("agent page_assistant: %v", got)
		}
		hits := search(t, s, ann.ID, "zebra", func(q *SearchQuery) { q.Scope = ScopePage })
		if len(hits) == 0 || hits[0].PageID == nil || *hits[0].PageID != p.ID || hits[0].Scope != ScopePage {
			t.Errorf("a page chat's hit does not name its page: %+v", hits)
		}
	})
}

// TestSearchPagesByCursor walks 30 hits 7 at a time: each once, in order,
// the same as one long batch.
func TestSearchPagesByCursor(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ann := mustUser(t, s, "ann")
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "okapi 0"}, "okapi reply 0")
		for i := 1; i < 15; i++ {
			// Varied lengths give varied ranks; equal ones fall back to time and id.
			mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Query: "okapi " + strings.Repeat("word ", i%4)},
				fmt.Sprintf("okapi reply %d", i))
		}
		all := search(t, s, ann.ID, "okapi")
		if len(all) != 31 { // 30 messages and the title
			t.Fatalf("%d hits, want 31", len(all))
		}
		var walked []SearchHit
		var before *SearchCursor
		for range 10 {
			page, err := s.Search(context.Background(), ann.ID, SearchQuery{Terms: ParseSearch("okapi"), Limit: 7, Before: before})
			if err != nil {
				t.Fatal(err)
			}
			walked = append(walked, page...)
			if len(page) < 7 {
				break
			}
			c, err := ParseSearchCursor(page[len(page)-1].Cursor.String())
			if err != nil {
				t.Fatal(err)
			}
			before = &c
		}
		key := func(h SearchHit) string {
			if h.MessageID == nil {
				return fmt.Sprintf("%s/%d", h.Role, h.ExchangeID)
			}
			return fmt.Sprintf("%s/%d/%d", h.Role, h.ExchangeID, *h.MessageID)
		}
		if len(walked) != len(all) {
			t.Fatalf("walked %d hits, want %d", len(walked), len(all))
		}
		for i := range all {
			if key(walked[i]) != key(all[i]) {
				t.Fatalf("hit %d: walked %s, want %s", i, key(walked[i]), key(all[i]))
			}
		}
	})
}

func TestSearchCursorRoundTrips(t *testing.T) {
	for _, c := range []SearchCursor{{Rank: -1.2345e-7, ID: 5}, {Rank: 0, Kind: 1, ID: 1}, {Rank: -3.5, ID: 99}} {
		got, err := ParseSearchCursor(c.String())
		if err != nil || got.Rank != c.Rank || got.ID != c.ID || got.Kind != c.Kind || !got.At.Equal(c.At) {
			t.Errorf("%+v → %+v, %v", c, got, err)
		}
	}
	for _, bad := range []string{"", "x", "bm90IGEgY3Vyc29y", SearchCursor{Rank: 1, Kind: 7, ID: 1}.String(), SearchCursor{Rank: 1}.String()} {
		if _, err := ParseSearchCursor(bad); err == nil {
			t.Errorf("cursor %q accepted", bad)
		}
	}
}
