package views

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	for _, tc := range []struct {
		name, a, b, want string
		added, deleted   int
	}{
		{"same", "a\nb\n", "a\nb\n", "", 0, 0},
		{"line breaks do not count", "a\r\nb", "a\nb\n", "", 0, 0},
		{"one changed line in the middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n",
			"@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n", 1, 1},
		{"from empty", "", "x\ny\n", "@@ -0,0 +1,2 @@\n+x\n+y\n", 2, 0},
		{"to empty", "x\n", "", "@@ -1 +0,0 @@\n-x\n", 0, 1},
		{"append", "a\nb\n", "a\nb\nc\n", "@@ -1,2 +1,3 @@\n a\n b\n+c\n", 1, 0},
		{"two hunks far apart", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "X\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nY\n",
			"@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+Y\n", 2, 2},
		{"close changes share a hunk", "1\n2\n3\n4\n5\n", "X\n2\n3\n4\nY\n",
			"@@ -1,5 +1,5 @@\n-1\n+X\n 2\n 3\n 4\n-5\n+Y\n", 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := UnifiedDiff(tc.a, tc.b)
			if got := d.String(); got != tc.want {
				t.Fatalf("diff\n got %q\nwant %q", got, tc.want)
			}
			if d.Added != tc.added || d.Deleted != tc.deleted {
				t.Fatalf("counts %s, want +%d / -%d", d.Counts(), tc.added, tc.deleted)
			}
		})
	}
}

// The edit script always turns a into b, and is as short as the longest
// common subsequence allows.
func TestEditScriptRandom(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	words := []string{"a", "b", "c", "d"}
	gen := func() []string {
		n := r.Intn(12)
		out := make([]string, n)
		for i := range out {
			out[i] = words[r.Intn(len(words))]
		}
		return out
	}
	for i := 0; i < 2000; i++ {
		a, b := gen(), gen()
		ops := editScript(a, b)
		var gotA, gotB []string
		edits := 0
		for _, o := range ops {
			if o.kind != DiffAdd {
				gotA = append(gotA, o.text)
			}
			if o.kind != DiffDelete {
				gotB = append(gotB, o.text)
			}
			if o.kind != DiffContext {
				edits++
			}
		}
		if fmt.Sprint(gotA) != fmt.Sprint(a) || fmt.Sprint(gotB) != fmt.Sprint(b) {
			t.Fatalf("script %v does not turn %v into %v", ops, a, b)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("%v → %v: %d edits, the shortest has %d", a, b, edits, want)
		}
	}
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// A rewrite beyond the search bound still gives a correct (if long) diff,
// and a huge one is cut for display but counted whole.
func TestUnifiedDiffLarge(t *testing.T) {
	var a, b strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&a, "old line %d\n", i)
		fmt.Fprintf(&b, "new line %d\n", i)
	}
	d := UnifiedDiff(a.String(), b.String())
	if d.Added != 3000 || d.Deleted != 3000 {
		t.Fatalf("counts %s", d.Counts())
	}
	if len(d.Lines) != diffMaxLines || d.Truncated != 6001-diffMaxLines {
		t.Fatalf("%d lines shown, %d truncated", len(d.Lines), d.Truncated)
	}
}
