package views

import (
	"fmt"
	"strings"
)

// Diff line kinds.
const (
	DiffContext = ' '
	DiffAdd     = '+'
	DiffDelete  = '-'
	DiffHunk    = '@'
)

// DiffLine is one line of a unified diff.
type DiffLine struct {
	Kind byte // DiffContext, DiffAdd, DiffDelete or DiffHunk (the "@@" header)
	Text string
}

// Diff is a line-based unified diff between two texts.
type Diff struct {
	Lines   []DiffLine // hunks with their headers and context
	Added   int        // lines added
	Deleted int        // lines deleted
	// Truncated counts the diff lines left out of Lines (a diff too long to
	// show whole in a card).
	Truncated int
}

// diffContext is how many unchanged lines surround each change.
const diffContext = 3

// diffMaxEdit bounds the edit distance the exact search explores: beyond it
// (a page rewritten from end to end) the diff becomes "everything removed,
// everything added", which is what it nearly is anyway, and the search stays
// cheap in time and memory whatever the page size.
const diffMaxEdit = 1000

// diffMaxLines bounds the lines a card shows.
const diffMaxLines = 400

// UnifiedDiff compares a with b line by line (Myers' algorithm) and returns
// the changes with diffContext lines of context, as `diff -u` shows them.
// Line breaks do not count: "a\r\n" and "a\n" are the same line, and a
// missing final line break is no change.
func UnifiedDiff(a, b string) Diff {
	x, y := splitLines(a), splitLines(b)
	ops := editScript(x, y)
	var d Diff
	for _, o := range ops {
		switch o.kind {
		case DiffAdd:
			d.Added++
		case DiffDelete:
			d.Deleted++
		}
	}
	d.Lines = hunks(ops)
	if len(d.Lines) > diffMaxLines {
		d.Truncated = len(d.Lines) - diffMaxLines
		d.Lines = d.Lines[:diffMaxLines]
	}
	return d
}

// splitLines splits text into lines without their line breaks.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// op is one step of an edit script: keep, add or delete a line. ai and bi
// are the line's index in a and b (the one that applies).
type op struct {
	kind   byte
	text   string
	ai, bi int
}

// editScript is a shortest edit script from a to b (Myers, "An O(ND)
// difference algorithm", 1986), after trimming the common ends.
func editScript(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []op
	for i := 0; i < pre; i++ {
		out = append(out, op{DiffContext, a[i], i, i})
	}
	mid := myers(a[pre:len(a)-suf], b[pre:len(b)-suf])
	for _, o := range mid {
		o.ai += pre
		o.bi += pre
		out = append(out, o)
	}
	for i := suf; i > 0; i-- {
		out = append(out, op{DiffContext, a[len(a)-i], len(a) - i, len(b) - i})
	}
	return out
}

// myers finds a shortest edit script, or when it is longer than diffMaxEdit,
// deletes all of a and adds all of b.
func myers(a, b []string) []op {
	n, m := len(a), len(b)
	max := n + m
	if max == 0 {
		return nil
	}
	limit := min(max, diffMaxEdit)
	off := max + 1
	v := make([]int, 2*max+3)
	var trace [][]int // v[off-d .. off+d] after step d
	found := -1
	for d := 0; d <= limit && found < 0; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: an insertion
			} else {
				x = v[off+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
	}
	if found < 0 {
		out := make([]op, 0, max)
		for i, l := range a {
			out = append(out, op{DiffDelete, l, i, 0})
		}
		for j, l := range b {
			out = append(out, op{DiffAdd, l, n, j})
		}
		return out
	}
	// Walk back from (n, m) through the saved steps.
	get := func(d, k int) int { return trace[d][k+d] }
	var rev []op
	x, y := n, m
	for d := found; d > 0; d-- {
		k := x - y
		var prevK int
		if k == -d || (k != d && get(d-1, k-1) < get(d-1, k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := get(d-1, prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, op{DiffContext, a[x], x, y})
		}
		if x == prevX {
			y--
			rev = append(rev, op{DiffAdd, b[y], x, y})
		} else {
			x--
			rev = append(rev, op{DiffDelete, a[x], x, y})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, op{DiffContext, a[x], x, y})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// hunks groups an edit script into unified-diff hunks.
func hunks(ops []op) []DiffLine {
	var out []DiffLine
	i := 0
	for i < len(ops) {
		// Find the next change.
		for i < len(ops) && ops[i].kind == DiffContext {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(0, i-diffContext)
		// Extend while changes are closer than 2*context lines apart.
		end := i
		for end < len(ops) {
			if ops[end].kind != DiffContext {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == DiffContext {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = run
		}
		out = append(out, hunkHeader(ops[start:end]))
		for _, o := range ops[start:end] {
			out = append(out, DiffLine{Kind: o.kind, Text: o.text})
		}
		i = end
	}
	return out
}

// hunkHeader is the "@@ -a,b +c,d @@" line of a hunk.
func hunkHeader(ops []op) DiffLine {
	var aStart, bStart, aLen, bLen int
	aStart, bStart = -1, -1
	for _, o := range ops {
		if o.kind != DiffAdd {
			if aStart < 0 {
				aStart = o.ai
			}
			aLen++
		}
		if o.kind != DiffDelete {
			if bStart < 0 {
				bStart = o.bi
			}
			bLen++
		}
	}
	if aStart < 0 {
		aStart = ops[0].ai - 1 // no old lines: the position before
	}
	if bStart < 0 {
		bStart = ops[0].bi - 1
	}
	return DiffLine{Kind: DiffHunk, Text: fmt.Sprintf("@@ -%s +%s @@", hunkRange(aStart, aLen), hunkRange(bStart, bLen))}
}

// hunkRange writes a 0-based start and a length as diff -u does (1-based;
// a single line without its length; an empty range at the line before it).
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start+1)
	case 1:
		return fmt.Sprintf("%d", start+1)
	default:
		return fmt.Sprintf("%d,%d", start+1, n)
	}
}

// String renders the diff as text, one line per DiffLine (for tests and
// plain-text views).
func (d Diff) String() string {
	var b strings.Builder
	for _, l := range d.Lines {
		if l.Kind == DiffHunk {
			b.WriteString(l.Text)
		} else {
			b.WriteByte(l.Kind)
			b.WriteString(l.Text)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Counts is the "+A / -D" summary of a diff.
func (d Diff) Counts() string { return fmt.Sprintf("+%d / -%d", d.Added, d.Deleted) }

// diffLineClass colours a diff line by its kind.
func diffLineClass(kind byte) string {
	switch kind {
	case DiffAdd:
		return "bg-emerald-50 text-emerald-900"
	case DiffDelete:
		return "bg-rose-50 text-rose-900"
	case DiffHunk:
		return "bg-slate-100 text-slate-600"
	default:
		return "text-slate-600"
	}
}

// diffLineText is a diff line as shown: its marker, then its text.
func diffLineText(l DiffLine) string {
	if l.Kind == DiffHunk {
		return l.Text
	}
	return string(rune(l.Kind)) + l.Text
}
