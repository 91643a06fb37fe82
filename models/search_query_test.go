package models

import (
	"reflect"
	"testing"
)

func TestParseSearch(t *testing.T) {
	w := func(words ...string) SearchTerm { return SearchTerm{Words: words} }
	p := func(words ...string) SearchTerm { return SearchTerm{Words: words, Prefix: true} }
	for _, tc := range []struct {
		q    string
		want []SearchTerm
		fts  string
	}{
		{"Pelican", []SearchTerm{w("pelican")}, `"pelican"`},
		{"  warm   coasts ", []SearchTerm{w("warm"), w("coasts")}, `"warm" "coasts"`},
		{`"warm coasts" near`, []SearchTerm{w("warm", "coasts"), w("near")}, `"warm coasts" "near"`},
		{`coa* "warm co"*`, []SearchTerm{p("coa"), p("warm", "co")}, `"coa" * "warm co" *`},
		{`"unbalanced phrase`, []SearchTerm{w("unbalanced", "phrase")}, `"unbalanced phrase"`},
		{"foo-bar", []SearchTerm{w("foo", "bar")}, `"foo bar"`}, // one word to a reader, a phrase to the index
		{"col:val (a OR b)", []SearchTerm{w("col", "val"), w("a"), w("or"), w("b")}, `"col val" "a" "or" "b"`},
		{"* ** - ( ) \\", nil, ""},
		{"abc-*", []SearchTerm{w("abc")}, `"abc"`}, // a star after punctuation is no prefix
		{"Café Olé", []SearchTerm{w("café"), w("olé")}, `"café" "olé"`},
	} {
		got := ParseSearch(tc.q)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSearch(%q) = %+v, want %+v", tc.q, got, tc.want)
		}
		if fts := ftsQuery(got); fts != tc.fts {
			t.Errorf("ftsQuery(%q) = %s, want %s", tc.q, fts, tc.fts)
		}
	}
}

func TestParseSearchIsBounded(t *testing.T) {
	many := ""
	for range 100 {
		many += "word "
	}
	if got := ParseSearch(many); len(got) != searchMaxTerms {
		t.Errorf("%d terms from 100 words, want %d", len(got), searchMaxTerms)
	}
	long := ""
	for range 200 {
		long += "x"
	}
	if got := ParseSearch(long); len([]rune(got[0].Words[0])) != searchMaxWordRunes {
		t.Errorf("a 200-letter word kept %d letters", len(got[0].Words[0]))
	}
}
