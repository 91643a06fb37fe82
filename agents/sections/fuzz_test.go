package sections

import (
	"strings"
	"testing"
)

// FuzzPatch checks the patcher on any page, target and content: it never
// panics, the parse always covers the page, and patching a section that
// exists leaves every other section byte for byte as it was. Seeds live in
// testdata/fuzz/FuzzPatch; `make test` runs them, and
// go test -tags sqlite_fts5 -run '^$' -fuzz '^FuzzPatch$' -fuzztime 30s ./agents/sections
// searches for more.
func FuzzPatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc, target, content string) {
		before := Parse(doc)
		checkCovers(t, doc, before)

		after := Patch(doc, target, content)
		secs := Parse(after)
		checkCovers(t, after, secs)

		if i := Find(before, target); i >= 0 {
			s := before[i]
			if !strings.HasPrefix(after, doc[:s.Start]) || !strings.HasSuffix(after, doc[s.End:]) {
				t.Fatalf("the text around the target changed:\ndoc   %q\nafter %q", doc, after)
			}
			// The sections before the target and after it are still
			// sections, with the same bytes.
			for j := 0; j < i; j++ {
				if j >= len(secs) || secs[j].Text(after) != before[j].Text(doc) {
					t.Fatalf("section %d before the target changed:\ndoc   %q\nafter %q", j, doc, after)
				}
			}
			for k := 1; k < len(before)-i; k++ {
				bj, aj := len(before)-k, len(secs)-k
				if aj < 0 || secs[aj].Text(after) != before[bj].Text(doc) || secs[aj].Heading != before[bj].Heading {
					t.Fatalf("section %d after the target changed:\ndoc   %q\nafter %q", bj, doc, after)
				}
			}
		}

		changes := Compare(doc, after)
		if got := Merge(doc, after, nil); got != doc {
			t.Fatalf("merging no change altered the page: %q", got)
		}
		merged := Merge(doc, after, changes)
		checkCovers(t, merged, Parse(merged))
		// With duplicate headings, alignment is by occurrence, which a
		// reordering can confuse; without them, merging every change gives
		// the proposed sections.
		if left := Compare(merged, after); len(left) != 0 && unique(doc) && unique(after) {
			t.Fatalf("merging every change leaves %q\ndoc    %q\nafter  %q\nmerged %q", kinds(left), doc, after, merged)
		}
		var picked []string
		for _, c := range changes {
			picked = append(picked, c.Name)
		}
		if got, unknown := Select(changes, picked); len(unknown) != 0 || len(got) != len(changes) {
			t.Fatalf("selecting every change by name: %d of %d, unknown %q", len(got), len(changes), unknown)
		}
	})
}

// checkCovers checks that secs tile doc exactly, and that every section but
// the preamble starts with its heading line.
func checkCovers(t *testing.T, doc string, secs []Section) {
	t.Helper()
	pos := 0
	for i, s := range secs {
		if s.Start != pos || s.End < s.Start {
			t.Fatalf("section %d spans [%d,%d), want it to start at %d: %q", i, s.Start, s.End, pos, doc)
		}
		if s.IsPreamble() && i != 0 {
			t.Fatalf("a preamble at section %d: %q", i, doc)
		}
		if !s.IsPreamble() && !strings.HasPrefix(doc[s.Start:s.End], s.Heading) {
			t.Fatalf("section %d does not start with its heading %q: %q", i, s.Heading, doc)
		}
		pos = s.End
	}
	if pos != len(doc) {
		t.Fatalf("sections end at %d of %d: %q", pos, len(doc), doc)
	}
}

// unique says whether no two sections of doc share a level and heading text.
func unique(doc string) bool {
	seen := map[string]bool{}
	for _, s := range Parse(doc) {
		if seen[base(s)] {
			return false
		}
		seen[base(s)] = true
	}
	return true
}
