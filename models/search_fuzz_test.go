package models

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSearchQuery: whatever is typed, the parsed search is bounded, holds
// only words, and its FTS5 query is one the engine accepts (run against a
// real index, with the tokenizer search uses).
func FuzzSearchQuery(f *testing.F) {
	for _, seed := range []string{
		"pelican", `"warm coasts"`, "coa*", `"unbalanced`, "AND OR NOT NEAR", "(a OR b)", "col:val", "*", `\"`,
		"NEAR(a b, 2)", "-a +b ^c", `"a"*`, `"a b"* c*`, "é🦜\u200b\u202e", "\x00\x01", strings.Repeat("w ", 100),
	} {
		f.Add(seed)
	}
	s := newSQLite(f, Options{})
	u := mustUser(f, s, "fuzz")
	mustTurn(f, s, TurnStart{UserID: u.ID, Query: "pelicans near the warm coasts"}, "a reply")
	f.Fuzz(func(t *testing.T, q string) {
		terms := ParseSearch(q)
		if len(terms) > searchMaxTerms {
			t.Fatalf("%d terms", len(terms))
		}
		words := 0
		for _, term := range terms {
			if len(term.Words) == 0 {
				t.Fatalf("a term without words: %+v", terms)
			}
			for _, w := range term.Words {
				words++
				if w == "" || utf8.RuneCountInString(w) > searchMaxWordRunes || strings.IndexFunc(w, func(r rune) bool { return !isWordRune(r) }) >= 0 {
					t.Fatalf("word %q of %q", w, q)
				}
			}
		}
		if words > searchMaxWords {
			t.Fatalf("%d words", words)
		}
		if _, err := s.Search(context.Background(), u.ID, SearchQuery{Terms: terms, Limit: 5}); err != nil {
			t.Fatalf("search %q (fts %s): %v", q, ftsQuery(terms), err)
		}
	})
}
